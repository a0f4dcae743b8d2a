/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the responder: the fuzzer's bytes become frames
 * with valid ICRCs (built, optionally one header byte changed, payload
 * and ICRC made right again) for two QPs of one device -- an RC and a UC
 * QP -- naming a fixed set of keys: regions with and without remote
 * rights, one in another PD, a Type 1 window, Type 2 windows (zero-based
 * and VA-based, bound to one QP or the other) and dead keys.  Between
 * bursts the input may invalidate or rebind a window.  Frames go through
 * mwp_queue_rx, the engine and the queue's tx, as on an lcore.
 *
 * The oracle, after every input:
 *  - memory: every byte of the arena that changed carries the tag of a
 *    frame that could write it there: a WRITE (exactly where its key puts
 *    it, zero-based windows translated), a compare-and-swap (its word) or
 *    a SEND (a receive buffer of its QP), whose key was live at that frame
 *    -- not invalidated (LOCAL_INV, rebind, or SEND with invalidate,
 *    placed by the tag the SEND left in its receive buffer), its QP
 *    allowed to use it, its rights sufficient.  Frames carry their index
 *    as payload bytes, regions start filled with bytes no frame carries.
 *  - reads: a READ response byte that comes from a region or window
 *    (each starts with its own fill) is backed by a READ request naming
 *    a key of it that was live when the response was made.
 *  - mbufs: every one is back in the pool.
 * A breach aborts with the address, the byte and the frame.
 *
 * MWP_FUZZ_RESP_TRACE=1 prints every input's frames and keys.
 * MWP_FUZZ_RESP_BREAK=1 makes the harness itself write one byte outside
 * every window after the first input: the oracle must abort (run-all.sh
 * checks that it does, so the oracle cannot pass vacuously).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MWP_NO_CRITERION
#include "wire_fixture.h"

/* ---- the arena and its objects ---- */

#define ARENA	65536u
#define MTU	1024u
#define NSLOT	8u		/* receive buffers per QP */
#define SLOT	256u
#define MAXF	150u		/* frames per input: tags 1..150 */
#define MAXB	16u		/* frames per burst */
#define MAXCYCLES 24u		/* window invalidations or binds per input */
#define FIRSTS_MAX 64u		/* WRITE FIRST keys remembered per QP */

enum { O_RW, O_RO, O_BIND, O_RECV, O_OTHER, O_W1, O_W2, O_W3, O_W4, O_TAIL, O_GUARD, NOBJ };

struct obj {
	uint32_t off, len;	/* in the arena */
	unsigned int access;	/* remote rights */
	int pd;			/* 0: the QPs' PD */
	int qp;			/* Type 2: the QP it is bound to; else -1 */
	bool zero_based;
	uint8_t fill;		/* its bytes at the start of every input */
};

static const struct obj objs[NOBJ] = {
	[O_RW] = { 4096, 8192, REMOTE_ALL, 0, -1, false, 0xb3 },
	[O_RO] = { 16384, 4096, IBV_ACCESS_REMOTE_READ, 0, -1, false, 0xb0 },
	[O_BIND] = { 24576, 20480, 0, 0, -1, false, 0 },	/* its windows' fills */
	[O_RECV] = { 49152, 2 * NSLOT * SLOT, 0, 0, -1, false, 0xb4 },
	[O_OTHER] = { 57344, 4096, REMOTE_ALL, 1, -1, false, 0xb2 },
	[O_W1] = { 24576, 4096, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		   0, -1, false, 0xa1 },
	[O_W2] = { 24576 + 4096, 4096, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		   0, 0, true, 0xa2 },
	[O_W3] = { 24576 + 8192, 4096, IBV_ACCESS_REMOTE_READ, 0, 0, false, 0xa3 },
	[O_W4] = { 24576 + 12288, 4096, IBV_ACCESS_REMOTE_WRITE, 0, 1, false, 0xa4 },
	[O_TAIL] = { 24576 + 16384, 4096, 0, 0, -1, false, 0xb1 },	/* in no window */
	[O_GUARD] = { 0, 0, 0, 0, -1, false, 0xc0 },	/* everything else */
};

static uint8_t *arena;
static uint8_t init_mem[ARENA];
static struct ibv_mr *mrs[O_OTHER + 1];
static struct ibv_mw *mws[4];		/* W1..W4 */
static struct ibv_qp *qps[2];		/* RC, UC */
static uint32_t prev_key[4];		/* each window's last dead key */
static uint32_t wlen[4];		/* each window's bound length */

static struct {
	struct mwp_port *port;
	struct mwp_engine *eng;
	struct mwp_queue *q;
	struct mwp_stats st;
	uint64_t now, hz;
	unsigned int pool_free;
	/* per QP: receive slots posted; the keys of every WRITE FIRST
	 * since it was last reset (they carry on into later inputs, as the
	 * QP's state does): a later packet goes on with one of them -- which
	 * one the model cannot tell, since a FIRST may never reach the QP
	 * (a blocked source, a changed header) while an earlier message goes
	 * on; past FIRSTS_MAX keys, with any key the QP may use */
	bool posted[2][NSLOT];
	uint32_t first_keys[2][FIRSTS_MAX];
	unsigned int nb_first[2];
	uint32_t next_psn[2];
} h;

/* ---- one input's model ---- */

struct frame {
	bool ok;		/* parsed: the responder may act on it */
	int qpi;		/* 0 RC, 1 UC, -1 none of ours */
	uint32_t mask;
	uint8_t opcode;
	uint32_t rkey;		/* RETH or AtomicETH */
	uint64_t va;
	uint32_t dmalen, plen;
	unsigned int nb_first;	/* WRITE MIDDLE/LAST: FIRST keys before it */
	uint32_t psn;		/* for the report of a breach */
	uint8_t src;		/* the source address's last byte */
};

/* A key's life in this input: usable by frames birth <= k < death. */
struct life {
	uint32_t key;
	int obj;
	uint32_t len;		/* the binding's length (a window may be 0) */
	int birth, death;
};

#define NEVER (1 << 30)

/* The oracle's loops are not the responder: libFuzzer need not trace
 * their comparisons (it spent most of its time there). */
#if defined(__clang__) && __clang_major__ >= 13
#define ORACLE __attribute__((no_sanitize("coverage")))
#else
#define ORACLE
#endif

static struct {
	struct frame f[MAXF];
	unsigned int nf;
	struct life life[64];
	unsigned int nlife;
	const uint8_t *d;
	size_t left;
	unsigned int burst_start;
	unsigned int cycles;
} in;

/* What the inputs reached, printed at exit. */
static struct {
	uint64_t inputs, frames, bytes_written, send_inv, cycles, qp_resets;
} reach;

static uint8_t
get8(void)
{
	if (in.left == 0)
		return 0;
	in.left--;
	return *in.d++;
}

static uint32_t
getn(unsigned int n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | get8();
	return v;
}

/* The input's frames up to frame (all: -1), those of frame's QP. */
static void
print_frames(int frame)
{
	for (int j = 0; j < (int)in.nf && (frame < 0 || j <= frame); j++) {
		const struct frame *f = &in.f[j];

		if (!f->ok || (frame >= 0 && f->qpi != in.f[frame].qpi))
			continue;
		fprintf(stderr, "  frame %d: opcode 0x%02x qp %d psn 0x%06x from .%u rkey 0x%08x "
			"va 0x%lx dmalen %u payload %u\n", j, f->opcode, f->qpi, f->psn, f->src,
			f->rkey, (unsigned long)f->va, f->dmalen, f->plen);
	}
	for (unsigned int i = 0; i < in.nlife; i++)
		fprintf(stderr, "  key 0x%08x object %d length %u live for frames [%d, %d)\n",
			in.life[i].key, in.life[i].obj, in.life[i].len, in.life[i].birth,
			in.life[i].death);
}

static void
breach(const char *what, uintptr_t addr, unsigned int v, int frame)
{
	fprintf(stderr, "fuzz_resp: ORACLE BREACH: %s at arena+%lu (byte 0x%02x, frame %d)\n",
		what, (unsigned long)(addr - (uintptr_t)arena), v, frame);
	print_frames(frame);
	abort();
}

static void
life_add(uint32_t key, int obj, uint32_t len, int birth)
{
	FIX_ASSERT(in.nlife < RTE_DIM(in.life));	/* MAXCYCLES keeps it so */
	in.life[in.nlife++] = (struct life){ key, obj, len, birth, NEVER };
}

static struct life *
life_live(int obj)
{
	for (unsigned int i = in.nlife; i-- > 0;)
		if (in.life[i].obj == obj && in.life[i].death == NEVER)
			return &in.life[i];
	return NULL;
}

/* The entry of key usable at frame k by QP qpi for need, or NULL. */
ORACLE static const struct life *
usable(uint32_t key, int k, int qpi, unsigned int need)
{
	for (unsigned int i = 0; i < in.nlife; i++) {
		const struct life *l = &in.life[i];
		const struct obj *o = &objs[l->obj];

		if (l->key != key || k < l->birth || k >= l->death)
			continue;
		if (o->pd != 0 || (o->qp >= 0 && o->qp != qpi) || l->len == 0 ||
		    (o->access & need) != need)
			continue;
		/* the QP's own rights: the UC QP has remote write only */
		if (qpi == 1 && need != IBV_ACCESS_REMOTE_WRITE)
			continue;
		return l;
	}
	return NULL;
}

/* ---- the device ---- */

static uint16_t
pump(int burst_end);

static void
drain_cq(void);

static void
wait_idle(int burst_end)
{
	drain_cq();	/* a SEND with invalidate's completion first */
	for (int i = 0, idle = 0; i < 256 && idle < 2; i++)
		idle = pump(burst_end) == 0 ? idle + 1 : 0;
	drain_cq();
}

static void
post_recvs(void)
{
	for (int qi = 0; qi < 2; qi++)
		for (unsigned int s = 0; s < NSLOT; s++) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)arena + objs[O_RECV].off + (qi * NSLOT + s) * SLOT,
				.length = SLOT, .lkey = mrs[O_RECV]->lkey,
			};
			struct ibv_recv_wr wr = { .wr_id = (uint64_t)qi << 8 | s,
						  .sg_list = &sge, .num_sge = 1 }, *bad;

			if (h.posted[qi][s])
				continue;
			if (ibv_post_recv(qps[qi], &wr, &bad) == 0)
				h.posted[qi][s] = true;
		}
}

static void
to_rts(int qi)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (qps[qi]->state == IBV_QPS_RTS)
		return;
	FIX_ASSERT(mwp_modify_qp(qps[qi], &a, IBV_QP_STATE) == 0);
	reach.qp_resets++;
	qp_to_rts(qps[qi]);
	memset(h.posted[qi], 0, sizeof(h.posted[qi]));
	h.nb_first[qi] = 0;
	h.next_psn[qi] = 0;
}

/* Bind window w (0..3) over its range; the new key is live from frame k. */
static bool
bind_window(unsigned int w, uint32_t len, int k)
{
	const int o = O_W1 + (int)w;
	struct ibv_mw *mw = mws[w];
	const unsigned int access = objs[o].access |
		(objs[o].zero_based ? IBV_ACCESS_ZERO_BASED : 0);
	const uint64_t addr = (uintptr_t)arena + objs[o].off;
	struct ibv_qp *q = qps[objs[o].qp < 0 ? 0 : objs[o].qp];
	uint32_t old = mw->rkey;
	struct ibv_wc wc;
	int ret;

	if (w == 0)
		ret = bind1(q, mw, mrs[O_BIND], addr, len, access, 0x100 + w);
	else
		ret = post_bind2(q, mw, mrs[O_BIND], addr, len, access,
				 ibv_inc_rkey(mw->rkey) & 0xff, 0x100 + w);
	if (ret != 0) {
		mw->rkey = old;
		return false;
	}
	for (int i = 0; i < 1000; i++) {
		pump(k);
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			break;
		wc.status = IBV_WC_GENERAL_ERR;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		mw->rkey = old;	/* a failed bind leaves the key it had */
		return false;
	}
	wlen[w] = len;
	return true;
}

/* Invalidate (Type 2) or rebind (Type 1, of length len) window w between
 * bursts; k frames have been run.  The model follows the completion. */
static void
cycle_window(unsigned int w, uint32_t len, int k)
{
	const int o = O_W1 + (int)w;
	struct life *l = life_live(o);
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };

	drain_cq();
	reach.cycles++;
	if (w == 0 || l == NULL) {
		uint32_t old = mws[w]->rkey;

		if (w != 0 && l == NULL && bind_window(w, objs[o].len, k)) {
			life_add(mws[w]->rkey, o, objs[o].len, k);
		} else if (w == 0 && bind_window(0, len, k)) {
			if (l != NULL)
				l->death = k;
			prev_key[0] = old;
			life_add(mws[0]->rkey, o, len, k);
		}
		return;
	}
	if (post_local_inv(qps[objs[o].qp], l->key, 0x200 + w, true) != 0)
		return;
	for (int i = 0; i < 1000; i++) {
		pump(k);
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			break;
		wc.status = IBV_WC_GENERAL_ERR;
	}
	if (wc.status == IBV_WC_SUCCESS) {
		l->death = k;
		prev_key[w] = l->key;
	}
}

/* Completions: receives free their slot; a SEND with invalidate kills
 * its key from the frame after the one whose tag ends the data. */
static void
drain_cq(void)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(cq, RTE_DIM(wc), wc)) > 0)
		for (int i = 0; i < n; i++) {
			const unsigned int qi = (wc[i].wr_id >> 8) & 1, s = wc[i].wr_id & 0xff;
			const uint8_t *slot;
			int at = (int)in.nf;	/* unknown: the end of its burst */

			if (!(wc[i].opcode & IBV_WC_RECV) || wc[i].wr_id >= 0x100)
				continue;
			h.posted[qi][s] = false;
			if (wc[i].status != IBV_WC_SUCCESS || !(wc[i].wc_flags & IBV_WC_WITH_INV))
				continue;
			slot = arena + objs[O_RECV].off + (qi * NSLOT + s) * SLOT;
			if (wc[i].byte_len > 0 && wc[i].byte_len <= SLOT &&
			    slot[wc[i].byte_len - 1] >= 1 && slot[wc[i].byte_len - 1] <= in.nf)
				at = slot[wc[i].byte_len - 1];	/* tag = index + 1 */
			for (unsigned int j = 0; j < in.nlife; j++)
				if (in.life[j].key == wc[i].invalidated_rkey &&
				    in.life[j].death == NEVER && in.life[j].obj >= O_W1) {
					in.life[j].death = at;
					reach.send_inv++;
					prev_key[in.life[j].obj - O_W1] = in.life[j].key;
				}
		}
}

/* ---- READ responses ---- */

/* The object whose fill a byte is, or -1 (tags, zeroes). */
static int8_t fill_obj[256];

/* A READ response made while frames [0, end) had run (burst: also made
 * during the burst that started at in.burst_start). */
ORACLE static void
check_read_resp(struct rte_mbuf *m, int end, bool in_burst)
{
	struct mwp_pkt p;
	const uint8_t *d;
	bool known[NOBJ];

	if (mwp_parse(m, &p) != MWP_DROP_NONE || !(p.mask & ROCE_M_RESP) ||
	    !(p.mask & ROCE_M_READ))
		return;
	d = rte_pktmbuf_mtod(m, const uint8_t *) + p.payload_off;
	memset(known, 0, sizeof(known));
	for (unsigned int i = 0; i < p.payload_len; i++) {
		const int o = fill_obj[d[i]];
		bool ok = false;

		if (o < 0 || known[o])
			continue;
		known[o] = true;	/* one verdict per object and response */
		for (int j = 0; j < end && !ok; j++) {
			const struct frame *f = &in.f[j];
			const struct life *l;

			if (!f->ok || f->qpi != 0 || f->opcode != 0x0c)
				continue;
			l = usable(f->rkey, j, 0, IBV_ACCESS_REMOTE_READ);
			if (l == NULL || l->obj != o)
				continue;
			/* read again before each packet: live when made */
			ok = l->death > (in_burst ? (int)in.burst_start : end);
		}
		if (!ok)
			breach("READ response carries memory no live key allowed",
			       (uintptr_t)arena + objs[o].off, d[i], -1);
	}
}

/* One pass of the device, the engine and the queue's tx: the frames it
 * sent (READ responses checked). */
static uint16_t
pump(int burst_end)
{
	struct rte_mbuf *tx[64];
	uint16_t n;

	h.now += h.hz / 1000000;
	mwp_poll(ctx);
	mwp_engine_run(h.eng, h.now);
	n = mwp_queue_tx(h.q, tx, RTE_DIM(tx));
	for (uint16_t i = 0; i < n; i++) {
		check_read_resp(tx[i], burst_end, false);
		rte_pktmbuf_free(tx[i]);
	}
	return n;
}

/* ---- frames ---- */

static const uint8_t ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05,		/* RC SEND */
	0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b,		/* RC WRITE */
	0x0c, 0x0c, 0x13, 0x14, 0x16, 0x17, 0x17,	/* READ, atomics, SEND inv */
	0x0a, 0x0a, 0x0c, 0x06, 0x08,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25,		/* UC SEND */
	0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b,		/* UC WRITE */
	0x2a, 0x2a,
	0x10, 0x11, 0x12, 0x64, 0x81,			/* responses, UD, CNP */
};

static uint32_t
key_choice(uint8_t c)
{
	switch (c & 15) {
	case 0: case 1: case 2: case 3: case 4:
		return mrs[c & 15]->rkey;
	case 5: case 6: case 7: case 8:
		return mws[(c & 15) - 5]->rkey;
	case 9: case 10: case 11: case 12:
		return prev_key[(c & 15) - 9];
	case 13:
		return mrs[O_RW]->rkey ^ 0x01;
	case 14:
		return mws[1]->rkey + 0x100;
	default:
		return getn(4);
	}
}

static uintptr_t
key_base(uint32_t key)
{
	for (int o = O_W1; o <= O_W4; o++)
		if (mws[o - O_W1]->rkey == key)
			return objs[o].zero_based ? 0 : (uintptr_t)arena + objs[o].off;
	for (int o = 0; o <= O_OTHER; o++)
		if (mrs[o]->rkey == key)
			return (uintptr_t)arena + objs[o].off;
	return (uintptr_t)arena + objs[O_RW].off;
}

/* Build frame k from the input; NULL if it could not be built. */
static struct rte_mbuf *
make_frame(unsigned int k)
{
	static uint8_t pay[1600];
	static struct mwp_flow flow;	/* the peer's, made once */
	static bool flow_made;
	const uint8_t tag = (uint8_t)(k + 1);
	const uint8_t ob = get8();
	const uint8_t sel = get8();
	const uint8_t psel = get8();
	const uint32_t key = key_choice(get8());
	const uint16_t off = (uint16_t)getn(2);
	const uint16_t lsel = (uint16_t)getn(2);
	const uint8_t plsel = get8();
	const int qpi = (sel & 3) == 3 ? -1 : (sel & 1);
	/* the opcode of the QP's transport, unless the byte says otherwise */
	const uint8_t opc = ob >= 0xe0 || qpi < 0 || ops[ob % RTE_DIM(ops)] > 0x2b ?
			    ops[ob % RTE_DIM(ops)] :
			    (uint8_t)((ops[ob % RTE_DIM(ops)] & 0x1f) | (qpi == 1 ? 0x20 : 0));
	const struct roce_opcode_info *oi = &roce_opcode[opc];
	struct frame *f = &in.f[k];
	struct mwp_hdrs hd = { .opcode = opc, .ackreq = sel & 0x20 };
	struct wire_frame wf = { .ipv6 = sel & 0x04 };
	struct mwp_flow fl;
	struct mwp_pkt p;
	struct rte_mbuf *m;
	uint32_t plen = 0;

	memset(f, 0, sizeof(*f));
	f->qpi = -1;
	hd.dqpn = qpi >= 0 ? qps[qpi]->qp_num : getn(3);
	if (qpi >= 0) {
		if (psel < 0xf0)
			hd.psn = h.next_psn[qpi]++;
		else
			hd.psn = h.next_psn[qpi] + (uint32_t)(int8_t)(psel - 0xf8);
		hd.psn &= 0xffffff;
	} else {
		hd.psn = psel;
	}
	hd.reth.rkey = hd.atmeth.rkey = hd.ieth_rkey = key;
	hd.reth.va = hd.atmeth.va = (sel & 0xc0) == 0xc0 ? ((uint64_t)getn(4) << 32 | getn(4)) :
				    key_base(key) + (int16_t)off;
	hd.reth.dmalen = lsel == 0xffff ? getn(4) : lsel % 2100u;
	if (opc == 0x13)
		hd.atmeth.compare = (plsel & 1) ? 0 : 0x0101010101010101ull * (plsel >> 1);
	hd.atmeth.swap_add = opc == 0x13 ? 0x0101010101010101ull * tag : 0;
	if (oi->mask & ROCE_M_PAYLOAD) {
		if (plsel >= 0x80)
			plen = (plsel & 0x7f) * 13u;
		else if ((oi->mask & ROCE_M_SEND) || (oi->mask & ROCE_M_RESP))
			plen = 1 + (plsel & 0x3f);
		else if (oi->mask & (ROCE_M_START | ROCE_M_MIDDLE))
			plen = (oi->mask & ROCE_M_END) ? RTE_MIN(hd.reth.dmalen, MTU) : MTU;
		else
			plen = lsel % MTU + 1;
		if ((oi->mask & ROCE_M_SEND) && plen == 0)
			plen = 1;	/* a SEND's last byte names its frame */
	}
	memset(pay, tag, sizeof(pay));
	if (!flow_made) {
		wire_peer_flow(&wf, &flow);
		flow_made = true;
	}
	fl = flow;
	fl.ipv6 = wf.ipv6;
	/* three sources: the guessing defence sees them apart */
	fl.sip4 = htonl(0xc0000202u + ((sel >> 3) & 3) % 3);
	fl.sip6[15] = (uint8_t)(2 + ((sel >> 3) & 3) % 3);
	m = rte_pktmbuf_alloc(test_mp);
	if (m == NULL)
		return NULL;
	if (mwp_build(m, &fl, &hd, pay, RTE_MIN(plen, (uint32_t)sizeof(pay)), &p) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (ob >= 0xf0) {
		/* one header byte changed; the payload keeps its tag and the
		 * ICRC is made right again, so the responder sees it */
		uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *);
		const uint8_t at = get8();

		if (at < p.payload_off)
			b[at] ^= get8() | 1;
		if (mwp_parse(m, &p) != MWP_DROP_NONE)
			return m;	/* dropped as it should be: f->ok false */
		memset(b + p.payload_off, tag, p.payload_len);
		if (p.mask & ROCE_M_ATMETH) {
			/* what an atomic writes stays the model's: a
			 * compare-and-swap its tag, a fetch-and-add nothing */
			uint8_t *sa = (uint8_t *)mwp_pkt_eh(m, &p, ROCE_EH_ATMETH) + 12;

			memset(sa, p.opcode == 0x13 ? tag : 0, 8);
		}
		mwp_icrc_fill(m, &p);
	}
	if (mwp_parse(m, &p) != MWP_DROP_NONE)
		return m;
	f->ok = true;
	f->opcode = p.opcode;
	f->psn = p.psn;
	f->src = rte_pktmbuf_mtod(m, const uint8_t *)[p.l3_off +
		((p.flags & MWP_PKT_IPV6) ? 23 : 15)];
	f->mask = p.mask;
	f->plen = p.payload_len;
	for (int i = 0; i < 2; i++)
		if (p.qpn == qps[i]->qp_num)
			f->qpi = i;
	if (p.mask & ROCE_M_RETH) {
		const struct roce_reth *r = (const void *)mwp_pkt_eh(m, &p, ROCE_EH_RETH);

		f->rkey = reth_rkey(r);
		f->va = reth_va(r);
		f->dmalen = reth_dmalen(r);
	} else if (p.mask & ROCE_M_ATMETH) {
		const struct roce_atmeth *a = (const void *)mwp_pkt_eh(m, &p, ROCE_EH_ATMETH);

		f->rkey = atmeth_rkey(a);
		f->va = atmeth_va(a);
		f->dmalen = 8;
	}
	if (f->qpi >= 0 && (p.mask & ROCE_M_WRITE)) {
		unsigned int *nb = &h.nb_first[f->qpi], i;

		if (p.mask & ROCE_M_START) {
			for (i = 0; i < *nb && i < FIRSTS_MAX; i++)
				if (h.first_keys[f->qpi][i] == f->rkey)
					break;
			if (i == *nb) {
				if (*nb < FIRSTS_MAX)
					h.first_keys[f->qpi][*nb] = f->rkey;
				(*nb)++;
			}
		} else {
			f->nb_first = *nb;
		}
	}
	return m;
}

/* The next burst's frames take their PSNs from what each QP expects. */
static void
next_psns(void)
{
	for (int qi = 0; qi < 2; qi++)
		h.next_psn[qi] = to_mqp(qps[qi])->resp.epsn;
}

static void
run_burst(struct rte_mbuf **m, uint16_t n)
{
	struct rte_mbuf *tx[64];
	uint16_t k;

	if (n == 0)
		return;
	k = mwp_queue_rx(h.q, m, n, tx, RTE_DIM(tx));
	for (uint16_t i = 0; i < k; i++) {
		check_read_resp(tx[i], (int)in.nf, true);
		rte_pktmbuf_free(tx[i]);
	}
	wait_idle((int)in.nf);
	next_psns();
	in.burst_start = in.nf;
}

/* ---- the memory oracle ---- */

/* May frame j have written byte a (an arena address)? */
ORACLE static bool
could_write(int j, uintptr_t a)
{
	const struct frame *f = &in.f[j];
	const uintptr_t recv = (uintptr_t)arena + objs[O_RECV].off;
	const struct life *l;
	uintptr_t lo, eff;
	unsigned int need;

	if (j < 0 || j >= (int)in.nf || !f->ok || f->qpi < 0)
		return false;
	/* an opcode of the other transport is not the QP's */
	if ((f->opcode & 0xe0) != (f->qpi == 0 ? 0x00 : 0x20))
		return false;
	if (f->mask & ROCE_M_SEND)
		return a >= recv + f->qpi * NSLOT * SLOT && a < recv + (f->qpi + 1) * NSLOT * SLOT;
	if (f->mask & ROCE_M_WRITE)
		need = IBV_ACCESS_REMOTE_WRITE;
	else if (f->opcode == 0x13)
		need = IBV_ACCESS_REMOTE_ATOMIC;
	else
		return false;
	if ((f->mask & ROCE_M_WRITE) && !(f->mask & ROCE_M_START)) {
		/* inside what one of the message keys it may go on with
		 * allows, live at this packet */
		for (unsigned int i = 0; i < in.nlife; i++) {
			const struct life *e = &in.life[i];
			bool named = f->nb_first > FIRSTS_MAX;

			for (unsigned int k = 0; k < f->nb_first && !named; k++)
				named = h.first_keys[f->qpi][k] == e->key;
			if (!named || usable(e->key, j, f->qpi, need) != e)
				continue;
			lo = (uintptr_t)arena + objs[e->obj].off;
			if (a >= lo && a < lo + e->len)
				return true;
		}
		return false;
	}
	l = usable(f->rkey, j, f->qpi, need);
	if (l == NULL)
		return false;
	lo = (uintptr_t)arena + objs[l->obj].off;
	eff = objs[l->obj].zero_based ? lo + f->va : f->va;
	if (a < lo || a >= lo + l->len)
		return false;
	return a >= eff && a - eff < (f->opcode == 0x13 ? 8u : f->plen);
}

ORACLE static void
check_memory(void)
{
	/* 256-byte blocks compared first: most of the arena is untouched */
	for (uint32_t b = 0; b < ARENA; b += 256) {
		if (memcmp(arena + b, init_mem + b, 256) == 0)
			continue;
		for (uint32_t i = b; i < b + 256; i++) {
			const uint8_t v = arena[i];

			if (v == init_mem[i])
				continue;
			reach.bytes_written++;
			if (v == 0 || v > in.nf || !could_write(v - 1, (uintptr_t)arena + i))
				breach("byte written that no live key allowed",
				       (uintptr_t)arena + i, v, v - 1);
		}
	}
}

/* ---- what the inputs reached ---- */

static void
print_reach(void)
{
	char drops[512] = "";
	size_t o = 0;

	for (int d = 1; d < MWP_DROP__MAX && o < sizeof(drops) - 64; d++)
		if (h.st.drop[d] != 0)
			o += (size_t)snprintf(drops + o, sizeof(drops) - o, " %s=%lu",
					      mwp_drop_name((enum mwp_drop)d),
					      (unsigned long)h.st.drop[d]);
	fprintf(stderr,
		"fuzz_resp: %lu inputs, %lu frames: accepted %lu, acks %lu, naks 0x61 %lu "
		"0x62 %lu, rnr %lu, duplicates %lu; bytes written %lu, keys killed by "
		"SEND with invalidate %lu, window cycles %lu, QP resets %lu; drops:%s\n",
		(unsigned long)reach.inputs, (unsigned long)reach.frames,
		(unsigned long)h.st.accepted, (unsigned long)h.st.acks,
		(unsigned long)h.st.naks[1], (unsigned long)h.st.naks[2],
		(unsigned long)h.st.rnr_naks, (unsigned long)h.st.duplicates,
		(unsigned long)reach.bytes_written, (unsigned long)reach.send_inv,
		(unsigned long)reach.cycles, (unsigned long)reach.qp_resets, drops);
}

/* ---- set-up and one input ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct mwp_port_conf pc = { .mtu = MTU, .has_ipv4 = true, .has_ipv6 = true,
				    .guess_threshold = 6, .guess_block_ms = 1 };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 16, .max_recv_wr = NSLOT,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	(void)argc;
	(void)argv;
	test_eal_init();
	rte_log_set_global_level(RTE_LOG_CRIT);
	ctx = mwp_open_device(&(struct mwp_device_attr){ 0 });	/* random keys */
	FIX_ASSERT(ctx != NULL);
	pd = mwp_alloc_pd(ctx);
	pd2 = mwp_alloc_pd(ctx);
	cq = mwp_create_cq(ctx, 1024);
	arena = aligned_alloc(4096, ARENA);
	FIX_ASSERT(pd && pd2 && cq && arena);
	for (int o = 0; o <= O_OTHER; o++) {
		unsigned int acc = IBV_ACCESS_LOCAL_WRITE | objs[o].access;

		if (o == O_BIND)
			acc |= IBV_ACCESS_MW_BIND;
		mrs[o] = mwp_reg_mr(objs[o].pd ? pd2 : pd, arena + objs[o].off, objs[o].len, acc);
		FIX_ASSERT(mrs[o] != NULL);
	}
	ia.send_cq = ia.recv_cq = cq;
	qps[1] = make_qp_ia(pd, &ia, true);
	ia.qp_type = IBV_QPT_RC;
	qps[0] = make_qp_ia(pd, &ia, true);
	memset(&h, 0, sizeof(h));
	rte_ether_unformat_addr("02:00:00:00:00:01", &pc.mac);
	inet_pton(AF_INET, "192.0.2.1", &pc.ipv4);
	inet_pton(AF_INET6, "2001:db8::1", pc.ipv6);
	h.port = mwp_port_create(&pc, 0, SOCKET_ID_ANY);
	FIX_ASSERT(h.port != NULL);
	mwp_port_set_mempool(h.port, test_mp);
	h.eng = mwp_engine_create(0, SOCKET_ID_ANY);
	FIX_ASSERT(h.eng != NULL);
	h.q = mwp_queue_create(h.eng, h.port, 0, &h.st);
	FIX_ASSERT(h.q != NULL);
	h.hz = rte_get_tsc_hz();
	h.now = rte_rdtsc();
	mwp_engine_start(h.eng);
	for (int i = 0; i < 2; i++) {
		struct rte_ether_addr mac;

		rte_ether_unformat_addr(PEER_MAC, &mac);
		mwp_engine_stop(h.eng);
		FIX_ASSERT(mwp_qp_set_peer_mac(qps[i], &mac) == 0);
		FIX_ASSERT(mwp_port_attach_qp(h.port, qps[i]) == 0);
		mwp_engine_start(h.eng);
	}
	for (int w = 0; w < 4; w++) {
		mws[w] = ibv_alloc_mw(pd, w == 0 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
		FIX_ASSERT(mws[w] != NULL);
		FIX_ASSERT(bind_window((unsigned int)w, objs[O_W1 + w].len, 0));
		prev_key[w] = mws[w]->rkey ^ 0x80;
	}
	memset(fill_obj, -1, sizeof(fill_obj));
	for (int o = 0; o < NOBJ; o++)
		if (objs[o].fill != 0)
			fill_obj[objs[o].fill] = (int8_t)o;
	for (uint32_t i = 0; i < ARENA; i++)
		init_mem[i] = objs[O_GUARD].fill;
	for (int o = 0; o < NOBJ; o++)
		if (o != O_GUARD && o != O_BIND)
			memset(init_mem + objs[o].off, objs[o].fill, objs[o].len);
	wait_idle(0);
	h.pool_free = rte_mempool_avail_count(test_mp);
	atexit(print_reach);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned int runs;
	struct rte_mbuf *m[MAXB];
	uint16_t n = 0;

	/* the QPs back in RTS, every window bound, every receive posted,
	 * blocks of the guessing defence over */
	h.now += h.hz / 500;
	for (int qi = 0; qi < 2; qi++)
		to_rts(qi);
	memset(&in, 0, sizeof(in));
	for (int o = 0; o <= O_OTHER; o++)
		life_add(mrs[o]->rkey, o, objs[o].len, -1);
	for (unsigned int w = 0; w < 4; w++) {
		const int o = O_W1 + (int)w;

		if (mwp_keys_lookup(mwp_device_keys(ctx), mws[w]->rkey) == NULL ||
		    wlen[w] == 0) {
			const uint32_t old = mws[w]->rkey;

			FIX_ASSERT(bind_window(w, objs[o].len, -1));
			prev_key[w] = old;
		}
		life_add(mws[w]->rkey, o, wlen[w], -1);
	}
	post_recvs();
	wait_idle(0);
	next_psns();
	memcpy(arena, init_mem, ARENA);
	in.d = data;
	in.left = size;
	while (in.left > 0 && in.nf < MAXF) {
		const uint8_t c = get8();

		if (c < 0xe0) {
			struct rte_mbuf *f = make_frame(in.nf);

			in.nf++;
			if (f != NULL)
				m[n++] = f;
			if (n == MAXB) {
				run_burst(m, n);
				n = 0;
			}
			continue;
		}
		run_burst(m, n);
		n = 0;
		if (c >= 0xf0 && c < 0xf8 && in.cycles++ < MAXCYCLES)
			cycle_window(c & 3, (c & 4) ? 0 : objs[O_W1].len, (int)in.nf);
	}
	run_burst(m, n);
	wait_idle((int)in.nf);
	if (getenv("MWP_FUZZ_RESP_BREAK") != NULL && runs > 0)
		arena[objs[O_TAIL].off + 7] ^= 0x5a;
	if (getenv("MWP_FUZZ_RESP_TRACE") != NULL)
		print_frames(-1);
	check_memory();
	if (rte_mempool_avail_count(test_mp) != h.pool_free) {
		fprintf(stderr, "fuzz_resp: ORACLE BREACH: %u mbufs not back in the pool\n",
			h.pool_free - rte_mempool_avail_count(test_mp));
		abort();
	}
	runs++;
	reach.inputs++;
	reach.frames += in.nf;
	return 0;
}
