/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the responder: the fuzzer's bytes become frames
 * with valid ICRCs (built, optionally one header byte changed, payload
 * and ICRC made right again) for six QPs of one device -- an RC and a UC
 * QP with receive queues of their own, a UD QP with its own, and a UD, an
 * RC and a UC QP sharing one SRQ -- naming a fixed set of keys: regions
 * with and without remote rights, one in another PD, a Type 1 window,
 * Type 2 windows (zero-based and VA-based, bound to the first RC or UC
 * QP) and dead keys.  UD frames (0x64, 0x65) carry the right Q_Key of
 * their QP, the other UD QP's, a near miss or a random one, payloads up
 * to and past the MTU.  Between bursts the input may invalidate or rebind
 * a window, or post receives to the UD QP or the SRQ: whole slots, one
 * SGE of any length (shorter than the 40-byte GRH area too), none, or two
 * or three SGEs with gaps, the last one perhaps refused by its region.
 * Frames go through mwp_queue_rx, the engine and the queue's tx, as on
 * an lcore.
 *
 * The input, byte by byte (old inputs read as they did):
 *   00..df  a frame for the first RC or UC QP (or none of ours): opcode,
 *           QP and source, PSN, key, offset, DMA length, payload length
 *   e0, e1  an RDMA ATOMIC WRITE (0x1d), read as a frame of 00..df is
 *           (a UC QP drops it), its DMA length and payload mostly 8 and
 *           its address mostly aligned / the same to the RC QP on the SRQ
 *   e8, e9  a UD frame to the UD QP / the UD QP on the SRQ: Q_Key,
 *           immediate, address family and source; payload length
 *   ea, eb  a frame (a SEND mostly) to the RC / UC QP on the SRQ
 *   ec..ef  receives posted (bit 0: to the SRQ, else the UD QP; bit 1:
 *           as one chain): how many, their SGEs
 *   f0..f7  a window invalidated or rebound
 *   other   the end of a burst
 * Every input starts with the QPs in RTS, the RC and UC QPs' receives all
 * posted, and the UD QP's queue and the SRQ empty (what was posted before
 * flushed, or taken by zero-length UC WRITEs with immediate).
 *
 * The oracle, after every input:
 *  - memory: every byte of the arena that changed carries the tag of a
 *    frame that could write it there: a WRITE (exactly where its key puts
 *    it, zero-based windows translated), a compare-and-swap (its word), an
 *    ATOMIC WRITE (its aligned word, with remote write, a DMA length and
 *    payload of 8) or a SEND (a receive buffer of its QP), whose key was
 *    live at that frame
 *    -- not invalidated (LOCAL_INV, rebind, or SEND with invalidate,
 *    placed by the tag the SEND left in its receive buffer), its QP
 *    allowed to use it, its rights sufficient.  Frames carry their index
 *    as payload bytes, regions start filled with bytes no frame carries.
 *    The UD QP's and the SRQ's receive buffers are slots the oracle knows
 *    with every layout posted to them this input: a changed byte there
 *    must lie in an SGE of a receive posted to that slot (not one its
 *    region refuses), at a message offset m; at m >= 40 it carries the
 *    tag of a UD SEND with its QP's Q_Key, to a QP of that queue, no
 *    longer than the MTU, fitting the receive with its GRH area, sent
 *    after the receive was posted, with m - 40 inside its payload; at
 *    m < 40 (the GRH area) it is that byte of the GRH area of such a
 *    frame (20 zero bytes and the IPv4 header, or the IPv6 header, as
 *    the frame had them); or, in an SRQ slot, the tag of a SEND to the
 *    RC or UC QP on it (a FIRST or ONLY within its payload).
 *  - receive completions of the UD QP and the SRQ: each for a receive
 *    posted and not yet completed, on a QP of that queue, each QP taking
 *    in posting order; a UD receive only when no earlier receive of its
 *    queue is left (of the SRQ: none but what the RC and UC QPs may hold
 *    for a message in progress), and holding exactly one frame that
 *    could be received there and was not before: its GRH area, its
 *    payload, its length, source QP and immediate; an RC or UC SEND's
 *    receive holding whole packets of SENDs to that QP, a message's
 *    first one at offset 0.
 *  - reads: a READ response byte that comes from a region or window
 *    (each starts with its own fill) is backed by a READ request naming
 *    a key of it that was live when the response was made.
 *  - mbufs: every one is back in the pool.
 * A breach aborts with the address, the byte and the frame.
 *
 * MWP_FUZZ_RESP_TRACE=1 prints every input's frames, keys and receives.
 * MWP_FUZZ_RESP_BREAK=1 makes the harness itself write one byte outside
 * every window after the first input: the oracle must abort (run-all.sh
 * checks that it does, so the oracle cannot pass vacuously).  =urecv
 * flips the last byte of the first SRQ slot after the first input, =ud
 * one GRH-area byte of every UD receive as it completes (so it needs
 * inputs that reach one): both must abort too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MWP_NO_CRITERION
#include "wire_fixture.h"

/* ---- the arena and its objects ---- */

#define ARENA	98304u
#define MTU	1024u
#define NSLOT	8u		/* receive buffers per QP */
#define SLOT	256u
#define MAXF	150u		/* frames per input: tags 1..150 */
#define MAXB	16u		/* frames per burst */
#define MAXCYCLES 24u		/* window invalidations or binds per input */
#define FIRSTS_MAX 64u		/* WRITE FIRST keys remembered per QP */
/* the UD QP's receives and the SRQ's: slots of SLOTU bytes */
#define NU	8u		/* the UD QP's slots: 0..NU-1 */
#define NS	16u		/* the SRQ's: NU..NU+NS-1 */
#define NUS	(NU + NS)
#define SLOTU	1280u
#define GRH	40u		/* a UD receive's GRH area */
#define MAXSGE	3u
#define MAXPOSTS 128u		/* receives posted per input */

enum { O_RW, O_RO, O_BIND, O_RECV, O_OTHER, O_W1, O_W2, O_W3, O_W4, O_TAIL, O_URECV, O_GUARD,
       NOBJ };

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
	/* local write only: the UD QP's and the SRQ's slots */
	[O_URECV] = { 65536, NUS * SLOTU, 0, 0, -1, false, 0xb5 },
	[O_GUARD] = { 0, 0, 0, 0, -1, false, 0xc0 },	/* everything else */
};

/* The QPs: the first two as before; the UD QP (its own receives); on the
 * SRQ a UD, an RC and a UC QP. */
enum { Q_RC, Q_UC, Q_UD, Q_UDS, Q_RCS, Q_UCS, NQP };

static const enum ibv_qp_type qtype[NQP] = {
	IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_UD, IBV_QPT_RC, IBV_QPT_UC,
};
/* the UD QPs' Q_Keys: each wrong for the other */
static const uint32_t qkey_of[NQP] = { [Q_UD] = FIXTURE_QKEY, [Q_UDS] = 0x22222222u };

/* Opcodes of a QP's transport start with these bits. */
static uint8_t
tprefix(int qi)
{
	return qtype[qi] == IBV_QPT_RC ? 0x00 : qtype[qi] == IBV_QPT_UC ? 0x20 : 0x60;
}

/* The receive queue a QP takes from: 0 the UD QP's, 1 the SRQ, -1 other. */
static int
queue_of(int qi)
{
	return qi == Q_UD ? 0 : qi >= Q_UDS ? 1 : -1;
}

static uint8_t *arena;
static uint8_t init_mem[ARENA];
static struct ibv_mr *mrs[O_OTHER + 1];
static struct ibv_mr *umr;		/* O_URECV's */
static struct ibv_mw *mws[4];		/* W1..W4 */
static struct ibv_qp *qps[NQP];
static struct ibv_srq *srq;
static uint32_t prev_key[4];		/* each window's last dead key */
static uint32_t wlen[4];		/* each window's bound length */

/* A receive posted to a UD or SRQ slot: its SGEs within the slot, each
 * at message offset moff; bad: its region refuses it. */
struct upost {
	uint8_t slot;
	uint8_t nsge;
	int birth;		/* frames from this index on may fill it */
	uint32_t room;
	uint64_t serial;	/* in its wr_id: posting order */
	struct {
		uint16_t off, len;
		uint32_t moff;
		bool bad;
	} sge[MAXSGE];
};

#define WR_UPOST	(1ull << 63)	/* wr_id: serial << 8 | slot */

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
	uint32_t first_keys[NQP][FIRSTS_MAX];
	unsigned int nb_first[NQP];
	uint32_t next_psn[NQP];
	/* the UD QP's and the SRQ's slots: posted (not completed), how */
	bool uposted[NUS];
	struct upost cur[NUS];
	uint64_t serial;		/* the last posted */
	uint64_t last_serial[NQP];	/* the last each QP completed */
} h;

/* ---- one input's model ---- */

struct frame {
	bool ok;		/* parsed: the responder may act on it */
	bool received;		/* UD: a completion holds it */
	int qpi;		/* index in qps[], -1 none of ours */
	uint32_t mask;
	uint8_t opcode;
	uint32_t rkey;		/* RETH or AtomicETH */
	uint64_t va;
	uint32_t dmalen, plen;
	unsigned int nb_first;	/* WRITE MIDDLE/LAST: FIRST keys before it */
	uint32_t psn;		/* for the report of a breach */
	uint8_t src;		/* the source address's last byte */
	uint32_t qkey, sqpn;	/* DETH */
	rte_be32_t imm;		/* ImmDt */
	uint8_t grh[GRH];	/* the GRH area a UD receive of it holds */
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
	struct upost posts[MAXPOSTS];	/* every receive of a UD or SRQ slot */
	unsigned int nposts;
	const uint8_t *d;
	size_t left;
	unsigned int burst_start;
	unsigned int cycles;
} in;

/* What the inputs reached, printed at exit. */
static struct {
	uint64_t inputs, frames, bytes_written, send_inv, cycles, qp_resets;
	uint64_t ud_frames, ud_recvs, srq_sends, srq_recvs, uposts, recv_errs, drained;
	uint64_t carried, atomic_writes;
} reach;

/* MWP_FUZZ_RESP_BREAK: 1 (or anything else) a byte in O_TAIL, 2 (urecv)
 * one in an SRQ slot, 3 (ud) a GRH-area byte of each UD receive. */
static int breakmode;

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

static void
print_post(const struct upost *p)
{
	fprintf(stderr, "  receive serial %lu slot %u (%s) posted before frame %d: room %u,",
		(unsigned long)p->serial, p->slot, p->slot < NU ? "UD QP" : "SRQ", p->birth,
		p->room);
	for (unsigned int i = 0; i < p->nsge; i++)
		fprintf(stderr, " [%u, +%u)%s", p->sge[i].off, p->sge[i].len,
			p->sge[i].bad ? " refused" : "");
	fprintf(stderr, "\n");
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
			"va 0x%lx dmalen %u payload %u", j, f->opcode, f->qpi, f->psn, f->src,
			f->rkey, (unsigned long)f->va, f->dmalen, f->plen);
		if (f->mask & ROCE_M_DETH)
			fprintf(stderr, " qkey 0x%08x sqpn 0x%x%s", f->qkey, f->sqpn,
				f->received ? " received" : "");
		fprintf(stderr, "\n");
	}
	for (unsigned int i = 0; i < in.nlife; i++)
		fprintf(stderr, "  key 0x%08x object %d length %u live for frames [%d, %d)\n",
			in.life[i].key, in.life[i].obj, in.life[i].len, in.life[i].birth,
			in.life[i].death);
	for (unsigned int i = 0; i < in.nposts; i++)
		print_post(&in.posts[i]);
}

static void
breach(const char *what, uintptr_t addr, unsigned int v, int frame)
{
	fprintf(stderr, "fuzz_resp: ORACLE BREACH: %s at arena+%lu (byte 0x%02x, frame %d)\n",
		what, (unsigned long)(addr - (uintptr_t)arena), v, frame);
	print_frames(frame);
	abort();
}

/* A breach seen in a receive's completion. */
static void
breach_wc(const char *what, const struct ibv_wc *wc, const struct upost *p)
{
	fprintf(stderr, "fuzz_resp: ORACLE BREACH: %s (wr_id 0x%lx qp 0x%x status %s opcode %d "
		"byte_len %u flags 0x%x src_qp 0x%x imm 0x%08x)\n", what,
		(unsigned long)wc->wr_id, wc->qp_num, ibv_wc_status_str(wc->status),
		wc->opcode, wc->byte_len, wc->wc_flags, wc->src_qp, ntohl(wc->imm_data));
	if (p != NULL)
		print_post(p);
	print_frames(-1);
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
		/* the QP's own rights: a UC QP has remote write only */
		if (qtype[qpi] == IBV_QPT_UC && need != IBV_ACCESS_REMOTE_WRITE)
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
static bool
wait_wc(uint64_t wr_id, int k, struct ibv_wc *wc);

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

/* RESET -> RTS with what verbs requires; a UD QP gets its Q_Key. */
static void
qp_ready(int qi)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .qkey = qkey_of[qi] };

	qp_to_rts(qps[qi]);
	if (qtype[qi] == IBV_QPT_UD)
		FIX_ASSERT(mwp_modify_qp(qps[qi], &a, IBV_QP_STATE | IBV_QP_QKEY) == 0);
}

static void
to_rts(int qi)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (qps[qi]->state == IBV_QPS_RTS)
		return;
	FIX_ASSERT(mwp_modify_qp(qps[qi], &a, IBV_QP_STATE) == 0);
	reach.qp_resets++;
	qp_ready(qi);
	/* RESET drops the QP's own receives, without completions (the
	 * SRQ's stay) */
	if (qi < 2)
		memset(h.posted[qi], 0, sizeof(h.posted[qi]));
	if (qi == Q_UD)
		memset(h.uposted, 0, NU * sizeof(h.uposted[0]));
	h.nb_first[qi] = 0;
	h.next_psn[qi] = 0;
}

static void
to_err(int qi)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	FIX_ASSERT(mwp_modify_qp(qps[qi], &a, IBV_QP_STATE) == 0);
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
	if (!wait_wc(0x100 + w, k, &wc) || wc.status != IBV_WC_SUCCESS) {
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
	if (wait_wc(0x200 + w, k, &wc) && wc.status == IBV_WC_SUCCESS) {
		l->death = k;
		prev_key[w] = l->key;
	}
}

/* A SEND with invalidate completed on QP qi, its data ending with the
 * tag of frame at - 1 (or unknown: 0): the key it names -- a live Type 2
 * window bound to that QP, or the oracle breaks -- dies from the frame
 * after. */
static void
kill_invalidated(const struct ibv_wc *wc, int qi, uint8_t last)
{
	const int at = last >= 1 && last <= in.nf ? last : (int)in.nf;	/* tag = index + 1 */
	bool found = false;

	for (unsigned int j = 0; j < in.nlife; j++)
		if (in.life[j].key == wc->invalidated_rkey && in.life[j].death == NEVER &&
		    in.life[j].obj > O_W1 && in.life[j].obj <= O_W4 &&
		    objs[in.life[j].obj].qp == qi) {
			in.life[j].death = at;
			reach.send_inv++;
			prev_key[in.life[j].obj - O_W1] = in.life[j].key;
			found = true;
		}
	if (!found) {
		fprintf(stderr, "fuzz_resp: invalidated key 0x%08x\n", wc->invalidated_rkey);
		breach_wc("a SEND with invalidate invalidated what it may not (no live Type 2 "
			  "window bound to its QP)", wc, NULL);
	}
}

/* ---- the UD QP's and the SRQ's receives ---- */

static uint8_t *
uslot(unsigned int s)
{
	return arena + objs[O_URECV].off + s * SLOTU;
}

/* Byte m of the message receive p holds (m < p->room). */
ORACLE static uint8_t *
msg_at(const struct upost *p, uint32_t m)
{
	for (unsigned int i = 0; i < p->nsge; i++)
		if (m >= p->sge[i].moff && m - p->sge[i].moff < p->sge[i].len)
			return uslot(p->slot) + p->sge[i].off + (m - p->sge[i].moff);
	return NULL;
}

/* Could frame f be received by a UD QP of queue q into receive p? */
ORACLE static bool
ud_fits(const struct frame *f, int q, const struct upost *p)
{
	return f->ok && f->qpi >= 0 && queue_of(f->qpi) == q && qtype[f->qpi] == IBV_QPT_UD &&
	       (f->opcode == ROCE_OP_UD_SEND_ONLY ||
		f->opcode == ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE) &&
	       f->qkey == qkey_of[f->qpi] && f->plen <= MTU && GRH + f->plen <= p->room;
}

/* Is frame f a SEND packet of an RC or UC QP of queue q? */
ORACLE static bool
send_fits(const struct frame *f, int q)
{
	return f->ok && f->qpi >= 0 && queue_of(f->qpi) == q && qtype[f->qpi] != IBV_QPT_UD &&
	       (f->opcode & 0xe0) == tprefix(f->qpi) && (f->mask & ROCE_M_SEND);
}

/* A UD receive p completed on QP qi: it holds one frame that could be
 * received there, not received before, and no earlier receive of its
 * queue is left but those an RC or UC QP may hold. */
ORACLE static void
check_ud_recv(const struct ibv_wc *wc, const struct upost *p, int qi)
{
	const int q = queue_of(qi);
	const uint32_t len = wc->byte_len;
	unsigned int earlier = 0;

	if (!(wc->wc_flags & IBV_WC_GRH) || len < GRH || len > p->room)
		breach_wc("a UD receive's length or flags are wrong", wc, p);
	for (unsigned int s = q == 0 ? 0 : NU; s < (q == 0 ? NU : NUS); s++)
		if (h.uposted[s] && s != p->slot && h.cur[s].serial < p->serial)
			earlier++;
	if (earlier > (q == 0 ? 0u : 2u))
		breach_wc("a UD receive was taken before an earlier one", wc, p);
	if (breakmode == 3)
		*msg_at(p, 21) ^= 0x5a;		/* the self-check: the oracle must see it */
	for (unsigned int j = (unsigned int)RTE_MAX(p->birth, 0); j < in.nf; j++) {
		struct frame *f = &in.f[j];
		const bool imm = f->opcode == ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE;
		uint32_t m;

		if (f->received || f->qpi != qi || !ud_fits(f, q, p) || GRH + f->plen != len ||
		    f->sqpn != wc->src_qp || !(wc->wc_flags & IBV_WC_WITH_IMM) != !imm ||
		    (imm && wc->imm_data != f->imm))
			continue;
		for (m = 0; m < len; m++)
			if (*msg_at(p, m) != (m < GRH ? f->grh[m] : (uint8_t)(j + 1)))
				break;
		if (m == len) {
			f->received = true;
			return;
		}
	}
	breach_wc("a UD receive holds no frame that could be received there", wc, p);
}

/* An RC or UC SEND's receive p completed on QP qi: whole packets of
 * SENDs to that QP, a message's first at offset 0. */
ORACLE static void
check_send_recv(const struct ibv_wc *wc, const struct upost *p, int qi)
{
	const uint32_t len = wc->byte_len;

	if (len > p->room)
		breach_wc("a receive completed longer than it is", wc, p);
	for (uint32_t i = 0, r; i < len; i += r) {
		const uint8_t v = *msg_at(p, i);
		const struct frame *f = v >= 1 && v <= in.nf ? &in.f[v - 1] : NULL;

		for (r = 1; i + r < len && *msg_at(p, i + r) == v; r++)
			;
		if (f == NULL || (int)v - 1 < p->birth || f->qpi != qi ||
		    !send_fits(f, queue_of(qi)) || ((f->mask & ROCE_M_START) && i != 0) ||
		    r != f->plen)
			breach_wc("a SEND's receive holds what no SEND packet placed there", wc, p);
	}
}

/* A completion of a UD or SRQ receive. */
static void
upost_done(const struct ibv_wc *wc)
{
	const unsigned int s = wc->wr_id & 0xff;
	const uint64_t serial = (wc->wr_id & ~WR_UPOST) >> 8;
	const struct upost *p;
	int qi = -1;

	if (s >= NUS || !h.uposted[s] || h.cur[s].serial != serial)
		breach_wc("a receive completed that is not posted", wc, NULL);
	p = &h.cur[s];
	for (int i = 0; i < NQP; i++)
		if (wc->qp_num == qps[i]->qp_num)
			qi = i;
	if (qi < 0 || queue_of(qi) != (s < NU ? 0 : 1) || !(wc->opcode & IBV_WC_RECV))
		breach_wc("a receive completed on a QP that does not take from its queue",
			  wc, p);
	/* each QP takes in posting order (a UC QP may hold one across a
	 * broken message and complete a WRITE with immediate's meanwhile) */
	if (qi != Q_UCS && serial <= h.last_serial[qi])
		breach_wc("a receive completed before one posted earlier", wc, p);
	h.last_serial[qi] = RTE_MAX(h.last_serial[qi], serial);
	if (wc->status == IBV_WC_SUCCESS && qtype[qi] == IBV_QPT_UD) {
		check_ud_recv(wc, p, qi);
		reach.ud_recvs++;
	} else if (wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV) {
		check_send_recv(wc, p, qi);
		reach.srq_recvs++;
		if (wc->wc_flags & IBV_WC_WITH_INV)
			kill_invalidated(wc, qi, wc->byte_len > 0 ? *msg_at(p, wc->byte_len - 1) : 0);
	} else if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR) {
		reach.recv_errs++;
	}
	h.uposted[s] = false;
}

/* Completions: receives free their slot; a SEND with invalidate kills
 * its key from the frame after the one whose tag ends the data. */
/* One completion of cq, to the model: a receive of the UD QP or the SRQ,
 * or of the first RC and UC QPs (its slot free again; a SEND with
 * invalidate kills the key it names). */
static void
take_wc(const struct ibv_wc *wc)
{
	const unsigned int qi = (wc->wr_id >> 8) & 1, s = wc->wr_id & 0xff;
	const uint8_t *slot;

	if (wc->wr_id & WR_UPOST) {
		upost_done(wc);
		return;
	}
	if (!(wc->opcode & IBV_WC_RECV) || wc->wr_id >= 0x100)
		return;
	if (wc->qp_num != qps[qi]->qp_num)
		breach_wc("a receive completed on another QP", wc, NULL);
	h.posted[qi][s] = false;
	if (wc->status != IBV_WC_SUCCESS || !(wc->wc_flags & IBV_WC_WITH_INV))
		return;
	slot = arena + objs[O_RECV].off + (qi * NSLOT + s) * SLOT;
	kill_invalidated(wc, (int)qi,
			 wc->byte_len > 0 && wc->byte_len <= SLOT ? slot[wc->byte_len - 1] : 0);
}

static void
drain_cq(void)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = ibv_poll_cq(cq, RTE_DIM(wc), wc)) > 0)
		for (int i = 0; i < n; i++)
			take_wc(&wc[i]);
}

/* Pump until the completion of the work request wr_id, into *wc; the
 * completions before it (receives flushed meanwhile, say) go to the model
 * as drain_cq's do.  false: it did not come. */
static bool
wait_wc(uint64_t wr_id, int k, struct ibv_wc *wc)
{
	for (int i = 0; i < 1000; i++) {
		pump(k);
		while (ibv_poll_cq(cq, 1, wc) == 1) {
			if (wc->wr_id == wr_id)
				return true;
			take_wc(wc);
		}
	}
	return false;
}

/* Receives posted between bursts, from the input: to the UD QP or the
 * SRQ, one by one or as one chain, each in the queue's first free slot;
 * how many and their SGEs -- the whole slot; one of any length; none;
 * the whole slot refused by the region its key names; two or three with
 * gaps, the last one perhaps refused. */
static void
post_cmd(uint8_t c)
{
	const bool to_srq = c & 1, chain = c & 2;
	const uint8_t lb = get8();
	const unsigned int count = 1 + (lb & 3), kind = lb >> 2;
	/* a refused SGE names another PD's region, or one of the QPs' PD
	 * that does not hold it */
	uint32_t bad_lkey = mrs[O_RW]->lkey;
	struct ibv_recv_wr wrs[4], *bad = NULL;
	struct ibv_sge sges[4][MAXSGE];
	struct upost lay = { 0 }, made[4];
	unsigned int nw = 0;
	uint32_t end = 0;

	if (kind < 16) {
		lay.nsge = 1;
		lay.sge[0].len = SLOTU;
	} else if (kind < 32) {
		lay.nsge = 1;
		lay.sge[0].len = (uint16_t)(getn(2) % (SLOTU + 1));
	} else if (kind < 34) {
		lay.nsge = 0;
	} else if (kind < 36) {
		lay.nsge = 1;
		lay.sge[0].len = SLOTU;
		lay.sge[0].bad = true;
		if (kind & 1)
			bad_lkey = mrs[O_OTHER]->lkey;
	} else {
		lay.nsge = 2 + (kind & 1);
		for (unsigned int i = 0; i < lay.nsge; i++) {
			const uint32_t gap = get8() & 0x3f, len = getn(2) % (SLOTU + 1);
			const uint32_t off = RTE_MIN(end + gap, SLOTU);

			lay.sge[i].off = (uint16_t)off;
			lay.sge[i].len = (uint16_t)RTE_MIN(len, SLOTU - off);
			end = off + lay.sge[i].len;
		}
		lay.sge[lay.nsge - 1].bad = kind & 2;
		if (kind & 4)
			bad_lkey = mrs[O_OTHER]->lkey;
	}
	for (unsigned int i = 0; i < lay.nsge; i++) {
		lay.sge[i].moff = lay.room;
		lay.room += lay.sge[i].len;
	}
	lay.birth = (int)in.nf;
	for (unsigned int s = to_srq ? NU : 0; s < (to_srq ? NUS : NU) && nw < count; s++) {
		struct upost *p = &made[nw];

		if (h.uposted[s] || in.nposts + nw >= MAXPOSTS)
			continue;
		*p = lay;
		p->slot = (uint8_t)s;
		p->serial = ++h.serial;
		for (unsigned int i = 0; i < p->nsge; i++)
			sges[nw][i] = (struct ibv_sge){
				.addr = (uintptr_t)uslot(s) + p->sge[i].off,
				.length = p->sge[i].len,
				.lkey = p->sge[i].bad ? bad_lkey : umr->lkey,
			};
		wrs[nw] = (struct ibv_recv_wr){ .wr_id = WR_UPOST | p->serial << 8 | s,
						.sg_list = sges[nw], .num_sge = p->nsge };
		if (chain && nw > 0)
			wrs[nw - 1].next = &wrs[nw];
		nw++;
	}
	if (chain && nw > 0) {
		const int ret = to_srq ? ibv_post_srq_recv(srq, &wrs[0], &bad) :
					 ibv_post_recv(qps[Q_UD], &wrs[0], &bad);

		if (ret != 0) {
			/* the ones before bad were posted */
			FIX_ASSERT(bad >= wrs && bad < wrs + nw);
			nw = (unsigned int)(bad - wrs);
		}
	}
	for (unsigned int i = 0; i < nw; i++) {
		if (!chain && (to_srq ? ibv_post_srq_recv(srq, &wrs[i], &bad) :
				        ibv_post_recv(qps[Q_UD], &wrs[i], &bad)) != 0)
			continue;
		h.uposted[made[i].slot] = true;
		h.cur[made[i].slot] = made[i];
		in.posts[in.nposts++] = made[i];
		reach.uposts++;
	}
}

/* Every input starts with the UD QP's queue and the SRQ empty: the UD
 * QP's receives flushed (ERR, then RESET to RTS); the receives the RC
 * and UC QPs on the SRQ hold flushed too, and the rest taken by
 * zero-length UC WRITEs with immediate (from an address the guessing
 * defence never saw refused). */
static void
empty_queues(void)
{
	struct rte_mbuf *m[NS], *tx[64];
	unsigned int n = 0;
	struct wire_frame wf = { .ipv6 = false };
	struct mwp_flow fl;

	for (unsigned int s = 0; s < NU; s++)
		n += h.uposted[s];
	if (n != 0) {
		to_err(Q_UD);
		wait_idle(0);
		to_rts(Q_UD);
	}
	n = 0;
	for (unsigned int s = NU; s < NUS; s++)
		n += h.uposted[s];
	if (n == 0)
		return;
	/* the UC QP afresh (no message in progress): its PSNs are known */
	if (to_mqp(qps[Q_RCS])->resp.recv_held)
		to_err(Q_RCS);
	to_err(Q_UCS);
	wait_idle(0);
	to_rts(Q_RCS);
	to_rts(Q_UCS);
	n = 0;
	for (unsigned int s = NU; s < NUS; s++)
		n += h.uposted[s];
	wire_peer_flow(&wf, &fl);
	fl.sip4 = htonl(0xc0000209u);
	for (unsigned int i = 0; i < n; i++) {
		struct mwp_hdrs hd = {
			.opcode = ROCE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
			.dqpn = qps[Q_UCS]->qp_num,
			.psn = (to_mqp(qps[Q_UCS])->resp.epsn + i) & 0xffffff,
			.reth = { .va = (uintptr_t)arena + objs[O_RW].off,
				  .rkey = mrs[O_RW]->rkey, .dmalen = 0 },
		};

		m[i] = rte_pktmbuf_alloc(test_mp);
		FIX_ASSERT(m[i] != NULL);
		FIX_ASSERT(mwp_build(m[i], &fl, &hd, NULL, 0, NULL) == 0);
	}
	n = mwp_queue_rx(h.q, m, (uint16_t)n, tx, RTE_DIM(tx));
	for (unsigned int i = 0; i < n; i++)
		rte_pktmbuf_free(tx[i]);
	wait_idle(0);
	reach.drained++;
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

			if (!f->ok || f->qpi < 0 || qtype[f->qpi] != IBV_QPT_RC ||
			    f->opcode != 0x0c)
				continue;
			l = usable(f->rkey, j, f->qpi, IBV_ACCESS_REMOTE_READ);
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

/* The SENDs a frame for the RC or UC QP on the SRQ mostly is (RC: with
 * invalidate too). */
static const uint8_t sends[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x16, 0x17 };

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

/* Frame k from its headers, over IPv4 or IPv6 from source src (0..2),
 * plen bytes of its tag, one header byte perhaps changed (from the
 * input); its model filled in.  NULL if it could not be built. */
static struct rte_mbuf *
finish_frame(unsigned int k, const struct mwp_hdrs *hd, bool ipv6, unsigned int src,
	     uint32_t plen, bool change)
{
	static uint8_t pay[1600];
	static struct mwp_flow flow;	/* the peer's, made once */
	static bool flow_made;
	const uint8_t tag = (uint8_t)(k + 1);
	struct frame *f = &in.f[k];
	struct wire_frame wf = { .ipv6 = ipv6 };
	struct mwp_flow fl;
	struct mwp_pkt p;
	struct rte_mbuf *m;

	memset(f, 0, sizeof(*f));
	f->qpi = -1;
	memset(pay, tag, sizeof(pay));
	if (!flow_made) {
		wire_peer_flow(&wf, &flow);
		flow_made = true;
	}
	fl = flow;
	fl.ipv6 = wf.ipv6;
	/* three sources: the guessing defence sees them apart */
	fl.sip4 = htonl(0xc0000202u + src);
	fl.sip6[15] = (uint8_t)(2 + src);
	m = rte_pktmbuf_alloc(test_mp);
	if (m == NULL)
		return NULL;
	if (mwp_build(m, &fl, hd, pay, RTE_MIN(plen, (uint32_t)sizeof(pay)), &p) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (change) {
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
	for (int i = 0; i < NQP; i++)
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
	if (p.mask & ROCE_M_DETH) {
		const struct roce_deth *d = (const void *)mwp_pkt_eh(m, &p, ROCE_EH_DETH);
		const uint8_t *l3 = rte_pktmbuf_mtod_offset(m, const uint8_t *, p.l3_off);

		f->qkey = deth_qkey(d);
		f->sqpn = deth_sqpn(d);
		/* the GRH area a receive holds: the IPv6 header, or twenty
		 * zero bytes and the IPv4 header */
		if (p.flags & MWP_PKT_IPV6) {
			memcpy(f->grh, l3, GRH);
		} else {
			memcpy(f->grh + GRH - 20, l3, 20);
		}
		if (f->qpi >= 0 && qtype[f->qpi] == IBV_QPT_UD)
			reach.ud_frames++;
	}
	if (p.mask & ROCE_M_IMM)
		f->imm = ((const struct roce_immdt *)mwp_pkt_eh(m, &p, ROCE_EH_IMMDT))->imm;
	if (f->qpi >= 0 && queue_of(f->qpi) == 1 && (p.mask & ROCE_M_SEND) &&
	    qtype[f->qpi] != IBV_QPT_UD)
		reach.srq_sends++;
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

/* Frame k from the input: for the RC or UC QP the input names (target
 * -1: the first two, or none of ours), or for target, the RC or UC QP on
 * the SRQ (then a SEND unless the opcode byte says otherwise); aw: an
 * ATOMIC WRITE whatever the opcode byte says. */
static struct rte_mbuf *
make_frame(unsigned int k, int target, bool aw)
{
	const uint8_t tag = (uint8_t)(k + 1);
	const uint8_t ob = get8();
	const uint8_t sel = get8();
	const uint8_t psel = get8();
	const uint32_t key = key_choice(get8());
	const uint16_t off = (uint16_t)getn(2);
	const uint16_t lsel = (uint16_t)getn(2);
	const uint8_t plsel = get8();
	const int qpi = target >= 0 ? target : (sel & 3) == 3 ? -1 : (sel & 1);
	/* the opcode of the QP's transport, unless the byte says otherwise */
	const uint8_t opc = aw ? ROCE_OP_RC_ATOMIC_WRITE : target >= 0 && ob < 0x80 ?
			    (uint8_t)(sends[ob % (qtype[qpi] == IBV_QPT_RC ? 8 : 6)] | tprefix(qpi)) :
			    ob >= 0xe0 || qpi < 0 || ops[ob % RTE_DIM(ops)] > 0x2b ?
			    ops[ob % RTE_DIM(ops)] :
			    (uint8_t)((ops[ob % RTE_DIM(ops)] & 0x1f) | tprefix(qpi));
	const struct roce_opcode_info *oi = &roce_opcode[opc];
	struct mwp_hdrs hd = { .opcode = opc, .ackreq = sel & 0x20 };
	uint32_t plen = 0;

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
	if (aw) {
		/* mostly what a requester sends: 8 bytes at an aligned word */
		if ((lsel & 0x0700) != 0x0700)
			hd.reth.dmalen = 8;
		if ((lsel & 0x3800) != 0x3800)
			hd.reth.va &= ~UINT64_C(7);
		if (qpi >= 0)
			reach.atomic_writes++;
	}
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
		if (aw && plsel < 0xc0)
			plen = 8;
	}
	return finish_frame(k, &hd, sel & 0x04, ((sel >> 3) & 3) % 3, plen, ob >= 0xf0);
}

/* UD frame k for UD QP qpi from the input: a byte for the immediate, the
 * Q_Key (its QP's, the other UD QP's, one bit off, the high bit
 * flipped, any; or its QP's on an RC or UC SEND), the address family,
 * the source and a changed header byte; then the payload length (up to
 * 127, in steps of 9 past the MTU, around the MTU, or any to 1599).
 * Its source QP names it (0x1000 + k), and so does its immediate. */
static struct rte_mbuf *
make_ud_frame(unsigned int k, int qpi)
{
	const uint8_t ub = get8();
	const uint8_t lb = get8();
	struct mwp_hdrs hd = {
		.opcode = (ub & 1) ? ROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE : ROCE_OP_UD_SEND_ONLY,
		.dqpn = qps[qpi]->qp_num,
		.psn = h.next_psn[qpi]++ & 0xffffff,
		.imm = htonl(0x51000000u | k),
		.deth = { .qkey = qkey_of[qpi], .sqpn = 0x1000 + k },
	};
	uint32_t plen;

	switch ((ub >> 1) & 7) {
	case 3:
		hd.deth.qkey = qkey_of[qpi == Q_UD ? Q_UDS : Q_UD];
		break;
	case 4:
		hd.deth.qkey ^= 1;
		break;
	case 5:
		hd.deth.qkey ^= 0x80000000u;
		break;
	case 6:
		hd.deth.qkey = getn(4);
		break;
	case 7:
		hd.opcode = (ub & 1) ? ROCE_OP_RC_SEND_ONLY : ROCE_OP_UC_SEND_ONLY;
		break;
	default:
		break;
	}
	if (lb < 0x80)
		plen = lb;
	else if (lb < 0xfe)
		plen = (lb - 0x80u) * 9u;
	else if (lb == 0xfe)
		plen = MTU - 8 + (get8() & 15u);
	else
		plen = getn(2) % 1600u;
	return finish_frame(k, &hd, ub & 0x10, ((ub >> 5) & 3) % 3, plen, ub & 0x80);
}

/* The next burst's frames take their PSNs from what each QP expects. */
static void
next_psns(void)
{
	for (int qi = 0; qi < NQP; qi++)
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

/* May frame j have written byte a (an arena address outside the UD and
 * SRQ slots)? */
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
	/* an opcode of another transport is not the QP's */
	if ((f->opcode & 0xe0) != tprefix(f->qpi))
		return false;
	if (f->mask & ROCE_M_SEND)
		return f->qpi < 2 && a >= recv + f->qpi * NSLOT * SLOT &&
		       a < recv + (f->qpi + 1) * NSLOT * SLOT;
	if (f->mask & ROCE_M_WRITE)
		need = IBV_ACCESS_REMOTE_WRITE;
	else if (f->opcode == 0x13)
		need = IBV_ACCESS_REMOTE_ATOMIC;
	else if (f->opcode == ROCE_OP_RC_ATOMIC_WRITE)
		/* remote write, not remote atomic (rxe, mlx5); 8 bytes said
		 * and sent */
		need = f->dmalen == 8 && f->plen == 8 ? IBV_ACCESS_REMOTE_WRITE : 0;
	else
		return false;
	if (need == 0)
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
	if (f->opcode == ROCE_OP_RC_ATOMIC_WRITE)
		/* one aligned word, wholly inside what the key allows */
		return (eff & 7) == 0 && l->len >= 8 && eff >= lo && eff - lo <= l->len - 8 &&
		       a >= eff && a - eff < 8u;
	return a >= eff && a - eff < (f->opcode == 0x13 ? 8u : f->plen);
}

/* May byte i of the arena, in a UD or SRQ slot, be v?  It lies in an SGE
 * of a receive posted to the slot this input, not a refused one, at
 * message offset m: the tag of a UD SEND that receive could take (past
 * the GRH area, inside its payload), that byte of such a SEND's GRH area,
 * or in an SRQ slot the tag of a SEND to its RC or UC QP. */
ORACLE static bool
urecv_ok(uint32_t i, uint8_t v)
{
	const uint32_t rel = i - objs[O_URECV].off, s = rel / SLOTU, so = rel % SLOTU;
	const int q = s < NU ? 0 : 1;

	for (unsigned int k = 0; k < in.nposts; k++) {
		const struct upost *p = &in.posts[k];
		uint32_t m = UINT32_MAX;

		if (p->slot != s)
			continue;
		for (unsigned int e = 0; e < p->nsge; e++)
			if (!p->sge[e].bad && so >= p->sge[e].off &&
			    so - p->sge[e].off < p->sge[e].len)
				m = p->sge[e].moff + (so - p->sge[e].off);
		if (m == UINT32_MAX)
			continue;
		if (v >= 1 && v <= in.nf && (int)v - 1 >= p->birth) {
			const struct frame *f = &in.f[v - 1];

			if (ud_fits(f, q, p) && m >= GRH && m - GRH < f->plen)
				return true;
			if (send_fits(f, q) && (!(f->mask & ROCE_M_START) || m < f->plen))
				return true;
		}
		if (m < GRH)
			for (unsigned int j = (unsigned int)RTE_MAX(p->birth, 0); j < in.nf; j++)
				if (in.f[j].grh[m] == v && ud_fits(&in.f[j], q, p))
					return true;
	}
	return false;
}

ORACLE static void
check_memory(void)
{
	const uint32_t ulo = objs[O_URECV].off, uhi = ulo + objs[O_URECV].len;

	/* 256-byte blocks compared first: most of the arena is untouched */
	for (uint32_t b = 0; b < ARENA; b += 256) {
		if (memcmp(arena + b, init_mem + b, 256) == 0)
			continue;
		for (uint32_t i = b; i < b + 256; i++) {
			const uint8_t v = arena[i];

			if (v == init_mem[i])
				continue;
			reach.bytes_written++;
			if (i >= ulo && i < uhi) {
				if (!urecv_ok(i, v))
					breach("byte written in a UD or SRQ receive slot that no "
					       "receive and frame allowed", (uintptr_t)arena + i, v,
					       v >= 1 && v <= in.nf ? v - 1 : -1);
				continue;
			}
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
	char drops[768] = "";
	size_t o = 0;

	for (int d = 1; d < MWP_DROP__MAX && o < sizeof(drops) - 64; d++)
		if (h.st.drop[d] != 0)
			o += (size_t)snprintf(drops + o, sizeof(drops) - o, " %s=%lu",
					      mwp_drop_name((enum mwp_drop)d),
					      (unsigned long)h.st.drop[d]);
	fprintf(stderr,
		"fuzz_resp: %lu inputs, %lu frames: accepted %lu, acks %lu, naks 0x61 %lu "
		"0x62 %lu, rnr %lu, duplicates %lu; bytes written %lu, keys killed by "
		"SEND with invalidate %lu, window cycles %lu, QP resets %lu; UD frames %lu, "
		"UD and SRQ receives posted %lu, UD receives %lu, SENDs to the SRQ's RC/UC "
		"QPs %lu, their receives %lu, receives in error %lu, SRQ drains %lu, receives "
		"left from an input before %lu, ATOMIC WRITEs to our QPs %lu; drops:%s\n",
		(unsigned long)reach.inputs, (unsigned long)reach.frames,
		(unsigned long)h.st.accepted, (unsigned long)h.st.acks,
		(unsigned long)h.st.naks[1], (unsigned long)h.st.naks[2],
		(unsigned long)h.st.rnr_naks, (unsigned long)h.st.duplicates,
		(unsigned long)reach.bytes_written, (unsigned long)reach.send_inv,
		(unsigned long)reach.cycles, (unsigned long)reach.qp_resets,
		(unsigned long)reach.ud_frames, (unsigned long)reach.uposts,
		(unsigned long)reach.ud_recvs, (unsigned long)reach.srq_sends,
		(unsigned long)reach.srq_recvs, (unsigned long)reach.recv_errs,
		(unsigned long)reach.drained, (unsigned long)reach.carried,
		(unsigned long)reach.atomic_writes, drops);
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
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = NS, .max_sge = MAXSGE } };
	const char *brk = getenv("MWP_FUZZ_RESP_BREAK");

	(void)argc;
	(void)argv;
	breakmode = brk == NULL ? 0 : strcmp(brk, "urecv") == 0 ? 2 : strcmp(brk, "ud") == 0 ? 3 : 1;
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
	umr = mwp_reg_mr(pd, arena + objs[O_URECV].off, objs[O_URECV].len,
			 IBV_ACCESS_LOCAL_WRITE);
	FIX_ASSERT(umr != NULL);
	ia.send_cq = ia.recv_cq = cq;
	qps[Q_UC] = make_qp_ia(pd, &ia, true);
	ia.qp_type = IBV_QPT_RC;
	qps[Q_RC] = make_qp_ia(pd, &ia, true);
	/* the UD QP, its receives of up to three SGEs */
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_recv_wr = NU;
	ia.cap.max_recv_sge = MAXSGE;
	qps[Q_UD] = make_qp_ia(pd, &ia, false);
	/* the SRQ and its UD, RC and UC QPs */
	srq = mwp_create_srq(pd, &sa);
	FIX_ASSERT(srq != NULL);
	ia.srq = srq;
	for (int qi = Q_UDS; qi <= Q_UCS; qi++) {
		ia.qp_type = qtype[qi];
		qps[qi] = make_qp_ia(pd, &ia, false);
	}
	for (int qi = Q_UD; qi < NQP; qi++)
		qp_ready(qi);
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
	for (int i = 0; i < NQP; i++) {
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

	/* the QPs back in RTS, every window bound, every receive of the
	 * first RC and UC QPs posted, the UD QP's queue and the SRQ empty,
	 * blocks of the guessing defence over */
	h.now += h.hz / 500;
	for (int qi = 0; qi < NQP; qi++)
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
	empty_queues();
	wait_idle(0);
	next_psns();
	/* what could not be emptied stays posted, as the model knows it */
	for (unsigned int s = 0; s < NUS; s++)
		if (h.uposted[s]) {
			in.posts[in.nposts] = h.cur[s];
			in.posts[in.nposts++].birth = -1;
			reach.carried++;
		}
	memcpy(arena, init_mem, ARENA);
	in.d = data;
	in.left = size;
	while (in.left > 0 && in.nf < MAXF) {
		const uint8_t c = get8();

		if (c < 0xe2 || (c >= 0xe8 && c <= 0xeb)) {
			struct rte_mbuf *f =
				c < 0xe0 ? make_frame(in.nf, -1, false) :
				c == 0xe0 ? make_frame(in.nf, -1, true) :
				c == 0xe1 ? make_frame(in.nf, Q_RCS, true) :
				c == 0xe8 ? make_ud_frame(in.nf, Q_UD) :
				c == 0xe9 ? make_ud_frame(in.nf, Q_UDS) :
				make_frame(in.nf, c == 0xea ? Q_RCS : Q_UCS, false);

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
		if (c >= 0xec && c <= 0xef)
			post_cmd(c);
		else if (c >= 0xf0 && c < 0xf8 && in.cycles++ < MAXCYCLES)
			cycle_window(c & 3, (c & 4) ? 0 : objs[O_W1].len, (int)in.nf);
	}
	run_burst(m, n);
	wait_idle((int)in.nf);
	if (breakmode == 1 && runs > 0)
		arena[objs[O_TAIL].off + 7] ^= 0x5a;
	if (breakmode == 2 && runs > 0)
		arena[objs[O_URECV].off + (NU + 1) * SLOTU - 1] ^= 0x5a;
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
