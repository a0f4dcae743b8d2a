/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the connection manager (lib/cm/): the fuzzer's
 * bytes become CM MADs that a peer (192.0.2.2) sends to QP1 of one port,
 * through mwp_queue_rx as any frame, interleaved with what a program on
 * that port does with its events (accept, reject, RTU, disconnect, let an
 * id go), connects of its own, and the clock moving (retries, timeouts,
 * timewait).  The MADs are mostly well formed, with communication IDs
 * taken from what the CM itself sent (so that they reach its ids, in
 * whatever state), and sometimes a header byte changed, cut short, or of
 * an attribute nobody takes.
 *
 * The input, byte by byte:
 *   00..7f  a MAD: attribute (REQ .. SIDR REP, LAP, an unknown one),
 *           which IDs it names (ones the CM sent, the program's ids',
 *           the peer's few, zero, random), service
 *           ID, QPN; 1/8 of them a byte changed, 1/16 cut short
 *   80..9f  the program takes its events and answers each as the next
 *           byte says (accept, reject, RTU, disconnect, nothing)
 *   a0..af  the clock moves 2^(b & 15) ms
 *   b0..b7  the program lets one of its ids go
 *   b8..bf  the program connects (a REQ) or sends a SIDR REQ
 *   other   the end of the input
 *
 * The oracle, after every input:
 *  - every event names an id the program holds (from a REQ event or its
 *    own connect), never one it let go; a REQ event's listener is its
 *  - ids stay within max_ids; once the program lets every id go and the
 *    clock passes what they still owe (retries of a DREQ, 15 at most, at
 *    most 137 s apart whatever the peer said) and timewait, the CM holds
 *    its listener alone
 *  - every mbuf is back in the pool
 * A breach aborts with what it saw.
 *
 * MWP_FUZZ_CM_BREAK=1 makes the harness itself lose track of one id it
 * holds (it never lets it go): the oracle must abort (run-all.sh checks
 * that it does).  At exit the CM's counters are printed: what the inputs
 * reached.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#define MWP_NO_CRITERION
#include "test_eal.h"
#include "mwp_cm_priv.h"
#include "mwp_engine_priv.h"
#include "mwp_verbs.h"
#include "roce_build.h"
#include "roce_parse.h"

#define MAX_IDS	64
#define HELD	128
#define SID	0x0000000001061234ull
#define PEER_MAC "02:00:00:00:00:02"

static struct {
	struct ibv_context *ctx;
	struct mwp_port *port;
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;
	struct mwp_cm *cm;
	struct mwp_cm_id *listener;
	uint64_t now, hz;
	/* ids the program holds */
	struct mwp_cm_id *held[HELD];
	unsigned int nb_held;
	/* comm IDs and TIDs the CM sent: what the peer's MADs name */
	uint32_t seen_ids[16];
	uint64_t seen_tid[16];
	unsigned int nb_seen;
	unsigned int pool_before;
} h;

static bool breakmode;
static const uint8_t *in;
static size_t in_len, in_at;

static uint8_t
get8(void)
{
	return in_at < in_len ? in[in_at++] : 0;
}

static uint32_t
get32(void)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | get8();
	return v;
}

static void
breach(const char *what, unsigned long a, unsigned long b)
{
	fprintf(stderr, "ORACLE BREACH: %s (%#lx, %#lx)\n", what, a, b);
	abort();
}

static bool
held(const struct mwp_cm_id *id)
{
	for (unsigned int i = 0; i < h.nb_held; i++)
		if (h.held[i] == id)
			return true;
	return false;
}

static void
hold(struct mwp_cm_id *id)
{
	if (held(id))
		return;
	if (h.nb_held == HELD)
		breach("more ids held than the CM may have", h.nb_held, 0);
	h.held[h.nb_held++] = id;
}

static void
let_go(unsigned int i)
{
	if (mwp_cm_destroy_id(h.held[i]) != 0)
		breach("an id the program holds could not be let go", i, 0);
	h.held[i] = h.held[--h.nb_held];
}

/* What the port sent: CM MADs' comm IDs and TIDs are kept for the peer. */
static void
sent(struct rte_mbuf **m, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		struct mwp_pkt p;
		const uint8_t *d = rte_pktmbuf_mtod(m[i], const uint8_t *);

		if (mwp_parse(m[i], &p) == MWP_DROP_NONE && p.qpn == ROCE_GSI_QPN &&
		    p.payload_len >= 32) {
			const uint8_t *mad = d + p.payload_off;
			const unsigned int k = h.nb_seen++ % RTE_DIM(h.seen_ids);

			h.seen_ids[k] = mad_get(mad, CM_REP_LOCAL_COMM_ID);
			h.seen_tid[k] = mad_tid(mad);
		}
		rte_pktmbuf_free(m[i]);
	}
}

static void
pump(void)
{
	struct rte_mbuf *tx[64];
	uint16_t n;

	h.now += h.hz / 10000;
	mwp_engine_run(h.eng, h.now);
	n = mwp_queue_tx(h.q, tx, 64);
	sent(tx, n);
	mwp_cm_progress(h.cm, h.now);
}

static void
feed(struct rte_mbuf *m)
{
	struct rte_mbuf *tx[64];
	uint16_t n = mwp_queue_rx(h.q, &m, 1, tx, 64);

	sent(tx, n);
}

/* The peer's ARP request: the port learns its MAC (answers can go). */
static void
peer_arp(void)
{
	static const uint8_t arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x02, 0x08, 0x06,
		0, 1, 8, 0, 6, 4, 0, 1, 0x02, 0, 0, 0, 0, 0x02, 192, 0, 2, 2,
		0, 0, 0, 0, 0, 0, 192, 0, 2, 1,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_mp);

	FIX_ASSERT(m != NULL);
	memcpy(rte_pktmbuf_append(m, sizeof(arp)), arp, sizeof(arp));
	feed(m);
}

/* A comm ID the MAD names: one the CM sent, a peer's, zero or random. */
static uint32_t
some_id(void)
{
	const uint8_t b = get8();

	switch (b & 7) {
	case 0:
	case 1:
		return h.nb_seen != 0 ? h.seen_ids[b % RTE_MIN(h.nb_seen, 16u)] : 0;
	case 2:
	case 3:
		/* an id the program holds, in whatever state (one the CM
		 * never named on the wire yet included) */
		return h.nb_held != 0 ? h.held[b % h.nb_held]->local_id : 0;
	case 4:
	case 5:
		return 0x1000 + (b >> 3);	/* the peer's own few */
	case 6:
		return 0;
	default:
		return get32();
	}
}

static void
mad_frame(uint8_t op)
{
	static const uint16_t attrs[] = {
		ROCE_CM_REQ, ROCE_CM_MRA, ROCE_CM_REJ, ROCE_CM_REP, ROCE_CM_RTU, ROCE_CM_DREQ,
		ROCE_CM_DREP, ROCE_CM_SIDR_REQ, ROCE_CM_SIDR_REP, ROCE_CM_LAP, 0x0030,
		ROCE_CM_REQ, ROCE_CM_REP, ROCE_CM_RTU, ROCE_CM_DREQ, ROCE_CM_REQ,
	};
	const uint16_t attr = attrs[op & 15];
	uint8_t mad[ROCE_MAD_BYTES];
	struct mwp_flow fl = { .ttl = 64, .sport = 0xc001 };
	struct mwp_hdrs hd = { .opcode = ROCE_OP_UD_SEND_ONLY, .dqpn = ROCE_GSI_QPN,
			       .deth = { .qkey = ROCE_GSI_QKEY, .sqpn = 1 } };
	const uint8_t how = get8();
	uint32_t len = ROCE_MAD_BYTES;
	struct rte_mbuf *m;

	memset(mad, 0, sizeof(mad));
	mad_cm_hdr(mad, attr, h.nb_seen != 0 && (how & 1) ? h.seen_tid[how % 16 %
					RTE_MIN(h.nb_seen, 16u)] : get32());
	/* the first two words are every message's comm IDs (SIDR: the
	 * request ID, then status / P_Key) */
	mad_put(mad, CM_REP_LOCAL_COMM_ID, some_id());
	mad_put(mad, CM_REP_REMOTE_COMM_ID, some_id());
	if (attr == ROCE_CM_REQ || attr == ROCE_CM_SIDR_REQ) {
		mad_put64(mad, attr == ROCE_CM_REQ ? CM_REQ_SERVICE_ID : CM_SIDR_REQ_SERVICE_ID,
			  (how & 2) ? SID : get32());
		if (attr == ROCE_CM_REQ) {
			mad_put(mad, CM_REQ_LOCAL_QPN, 0x100 + (get8() & 7));
			mad_put64(mad, CM_REQ_LOCAL_CA_GUID, 0x0200000000000002ull + (how >> 7));
			mad_put(mad, CM_REQ_MTU, get8() & 7);
			mad_put(mad, CM_REQ_MAX_CM_RETRIES, get8() & 15);
			mad_put(mad, CM_REQ_REMOTE_CM_TIMEOUT, get8() & 31);
		}
		/* the RDMA CM's IP header, mostly well formed */
		mad[attr == ROCE_CM_REQ ? CM_REQ_PRIVATE_DATA + 1 :
		    CM_SIDR_REQ_PRIVATE_DATA + 1] = (how & 4) ? 0x40 : get8();
	} else if (attr == ROCE_CM_DREQ) {
		mad_put(mad, CM_DREQ_REMOTE_QPN, (how & 2) ? 0 : get32());
	} else if (attr == ROCE_CM_REP) {
		mad_put(mad, CM_REP_LOCAL_QPN, get32());
	} else if (attr == ROCE_CM_MRA) {
		mad_put(mad, CM_MRA_MESSAGE, get8() & 3);
		mad_put(mad, CM_MRA_SERVICE_TIMEOUT, get8() & 31);
	}
	if ((how & 0x38) == 0x38) {	/* a byte anywhere changed */
		const uint8_t at = get8();

		mad[at] ^= (uint8_t)(get8() | 1);
	}
	if ((how & 0x70) == 0x40)	/* cut short */
		len = get8();
	m = rte_pktmbuf_alloc(test_mp);
	FIX_ASSERT(m != NULL);
	rte_ether_unformat_addr(PEER_MAC, &fl.smac);
	rte_ether_unformat_addr("02:00:00:00:00:01", &fl.dmac);
	inet_pton(AF_INET, "192.0.2.2", &fl.sip4);
	inet_pton(AF_INET, "192.0.2.1", &fl.dip4);
	FIX_ASSERT(mwp_build(m, &fl, &hd, mad, len, NULL) == 0);
	feed(m);
}

/* The program: every event waiting, each answered as the input says. */
static void
program(void)
{
	struct mwp_cm_event ev;
	const struct mwp_cm_conn_param cp = { .qp_num = 0x77, .starting_psn = 5,
					      .responder_resources = 1,
					      .initiator_depth = 1 };

	mwp_cm_progress(h.cm, h.now);
	while (mwp_cm_get_event(h.cm, &ev) == 0) {
		const uint8_t b = get8();

		if (ev.type == MWP_CM_REQ_RECEIVED || ev.type == MWP_CM_SIDR_REQ_RECEIVED) {
			if (ev.listen_id != h.listener)
				breach("a REQ event on no listener of ours", (unsigned long)ev.listen_id,
				       0);
			if (h.cm->nb_ids > MAX_IDS)
				breach("more ids than max_ids", h.cm->nb_ids, MAX_IDS);
			hold(ev.id);
		} else if (!held(ev.id)) {
			breach("an event for an id the program does not hold",
			       (unsigned long)ev.id, ev.type);
		}
		switch (b & 7) {
		case 0:
			mwp_cm_accept(ev.id, &cp);
			break;
		case 1:
			mwp_cm_reject(ev.id, ROCE_REJ_CONSUMER, "no", 2);
			break;
		case 2:
			mwp_cm_rtu(ev.id, NULL, 0);
			break;
		case 3:
			mwp_cm_disconnect(ev.id, NULL, 0);
			break;
		case 4:
			mwp_cm_sidr_rep(ev.id, b >> 6, &cp);
			break;
		default:
			break;
		}
	}
}

static void
connect_out(uint8_t op)
{
	struct mwp_cm_path p = { .hop_limit = 64 };
	const struct mwp_cm_conn_param cp = { .qp_num = 0x88, .qp_type = IBV_QPT_RC,
					      .starting_psn = 9 };
	struct mwp_cm_id *id;
	int ret;

	p.sgid.raw[10] = p.sgid.raw[11] = p.dgid.raw[10] = p.dgid.raw[11] = 0xff;
	inet_pton(AF_INET, "192.0.2.1", &p.sgid.raw[12]);
	inet_pton(AF_INET, "192.0.2.2", &p.dgid.raw[12]);
	if (op & 1)
		ret = mwp_cm_sidr_req(h.cm, SID, &p, NULL, 0, NULL, &id);
	else
		ret = mwp_cm_connect(h.cm, SID, &p, &cp, NULL, &id);
	if (ret == 0)
		hold(id);
	else if (ret != ENOMEM || h.cm->nb_ids < MAX_IDS)
		breach("a connect refused with room for it", (unsigned long)ret, h.cm->nb_ids);
}

/* Move the clock ms on: a pass every 10 ms, or at the next timer due if
 * that is later (what happens between is nothing). */
static void
advance_ms(uint64_t ms)
{
	const uint64_t end = h.now + ms * (h.hz / 1000);

	while (h.now < end) {
		h.now = RTE_MIN(end, RTE_MAX(h.now + h.hz / 100, h.cm->next_due));
		pump();
	}
}

static void
summary(void)
{
	struct mwp_cm_stats st;

	mwp_cm_stats_get(h.cm, &st);
	printf("fuzz_cm: MADs in %lu (REQ %lu, REP %lu, RTU %lu, REJ %lu, MRA %lu, DREQ %lu, "
	       "DREP %lu, SIDR REQ %lu, SIDR REP %lu), out %lu, retries %lu, timeouts %lu; "
	       "rejected: no listener %lu, backlog %lu, no ids %lu, stale %lu; duplicates %lu, "
	       "malformed %lu, unknown attribute %lu, for no id %lu, out of state %lu, "
	       "event queue full %lu, send queue full %lu\n",
	       (unsigned long)st.rx_mads, (unsigned long)st.rx_by_attr[0],
	       (unsigned long)st.rx_by_attr[3], (unsigned long)st.rx_by_attr[4],
	       (unsigned long)st.rx_by_attr[2], (unsigned long)st.rx_by_attr[1],
	       (unsigned long)st.rx_by_attr[5], (unsigned long)st.rx_by_attr[6],
	       (unsigned long)st.rx_by_attr[7], (unsigned long)st.rx_by_attr[8],
	       (unsigned long)st.tx_mads, (unsigned long)st.retries, (unsigned long)st.timeouts,
	       (unsigned long)st.rej_no_listener, (unsigned long)st.rej_backlog,
	       (unsigned long)st.rej_no_ids, (unsigned long)st.rej_stale,
	       (unsigned long)st.duplicates, (unsigned long)st.bad_mads,
	       (unsigned long)st.unknown_attr, (unsigned long)st.unknown_id,
	       (unsigned long)st.out_of_state, (unsigned long)st.event_full,
	       (unsigned long)st.send_full);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct mwp_port_conf pc = { .mtu = 1024, .has_ipv4 = true };
	const struct mwp_cm_attr ca = { .max_ids = MAX_IDS, .recv_depth = 64, .send_depth = 8,
					.event_depth = 16, .timewait_ms = 100 };

	(void)argc;
	(void)argv;
	breakmode = getenv("MWP_FUZZ_CM_BREAK") != NULL;
	test_eal_init();
	rte_log_set_global_level(RTE_LOG_CRIT);
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	h.ctx = mwp_open_device(&(struct mwp_device_attr){ 0 });
	h.port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	FIX_ASSERT(h.ctx != NULL && h.port != NULL);
	mwp_port_set_mempool(h.port, test_mp);
	h.eng = mwp_engine_create(0, SOCKET_ID_ANY);
	h.q = mwp_queue_create(h.eng, h.port, 0, &h.st);
	FIX_ASSERT(h.eng != NULL && h.q != NULL);
	h.cm = mwp_cm_create(h.ctx, h.port, &ca);
	FIX_ASSERT(h.cm != NULL);
	FIX_ASSERT(mwp_cm_listen(h.cm, SID, 0, 8, NULL, &h.listener) == 0);
	mwp_engine_start(h.eng);
	h.hz = rte_get_tsc_hz();
	h.now = rte_rdtsc();
	peer_arp();
	pump();
	h.pool_before = rte_mempool_avail_count(test_mp);
	atexit(summary);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	in = data;
	in_len = size;
	in_at = 0;
	while (in_at < in_len) {
		const uint8_t op = get8();

		if (op < 0x80)
			mad_frame(op);
		else if (op < 0xa0)
			program();
		else if (op < 0xb0)
			advance_ms(UINT64_C(1) << (op & 15));
		else if (op < 0xb8 && h.nb_held != 0)
			let_go(get8() % h.nb_held);
		else if (op >= 0xb8 && op < 0xc0)
			connect_out(op);
		else if (op >= 0xc0)
			break;
		pump();
	}
	/* the program answers what is left and lets every id go; after
	 * timewait (and every retry given up) the listener is alone */
	program();
	if (breakmode && h.nb_held != 0)
		h.held[0] = h.held[--h.nb_held];	/* planted: one id forgotten */
	while (h.nb_held != 0)
		let_go(0);
	/* what the ids let go still owe (a DREQ's retries: at most 15 of
	 * 137 s), then timewait */
	for (int s = 0; s < 4096 && h.cm->nb_ids != 1; s++) {
		/* straight to the next timer due (or 10 ms on) */
		h.now = RTE_MAX(h.now + h.hz / 100,
				h.cm->next_due != UINT64_MAX ? h.cm->next_due : 0);
		pump();
	}
	program();
	if (h.nb_held != 0)
		breach("an event for an id let go", h.nb_held, 0);
	if (h.cm->nb_ids != 1)
		breach("ids left after every one was let go", h.cm->nb_ids, 1);
	if (rte_mempool_avail_count(test_mp) != h.pool_before)
		breach("mbufs not back in the pool", rte_mempool_avail_count(test_mp),
		       h.pool_before);
	return 0;
}
