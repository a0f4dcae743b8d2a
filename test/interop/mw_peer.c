/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mw_peer: memory windows between two RDMA devices, written only against
 * <infiniband/verbs.h> so that the same program runs on rxe in the interop
 * guest and on mwpath0 through mwpath-run (docs/interop.md).
 *
 *   mw_peer -d DEV -g GID_INDEX [-p PORT] [-o] [-r] [-l] [-v] [HOST]
 *
 * With HOST it connects to HOST:PORT (retrying for 60 s), else it listens.
 * -o makes this side the windows' owner; the other side is the accessor.
 * -r: the owner delays posting its receives (the accessor's SENDs meet RNR).
 * -l: a lossy link: a refusal may also end in IBV_WC_RETRY_EXC_ERR (the
 *     NAK was lost, and the responder's QP, in the error state since it
 *     sent it, drops the retries as the specification says).
 * -v: every message of the side channel on stderr.
 *
 * For each window kind (Type 1, Type 2, Type 2 ZERO_BASED) the owner binds a
 * window over part of a registered buffer and sends its key; the accessor
 *   1. WRITEs, READs, FETCH_ADDs and CMP_SWAPs through it; all must succeed
 *      and every READ and atomic must return what the accessor's own copy
 *      of the window (its shadow) says;
 *   2. probes one byte past the window's end (READ and WRITE): refused by
 *      the specification, ACKed by rxe (reported as a verdict, not failed);
 *   3. waits, then keeps accessing, while the owner rebinds the window
 *      (Type 2: LOCAL_INV then BIND; Type 1: a new bind): after the owner's
 *      completion the new key must work and the old one be refused with
 *      IBV_WC_REM_ACCESS_ERR;
 *   4. keeps accessing while the owner invalidates it (Type 2: LOCAL_INV;
 *      Type 1: a zero-length bind): no access fails before the owner was
 *      asked to invalidate, the first failure is IBV_WC_REM_ACCESS_ERR, and
 *      every access posted after the owner's completion is refused.
 * A refusal moves both QPs to the error state, so after one both sides make
 * new QPs (and the owner a new window) over the same memory.  Then the
 * accessor SENDs four messages, which the owner receives (after 300 ms with
 * -r), and sends its shadows; the owner checks that every byte of its buffer
 * is the shadow inside the windows and the initial pattern outside them.
 * Bytes under a WRITE that failed are undefined (a multi-packet WRITE may
 * land in part) until a READ or an atomic that succeeds shows them again.
 *
 * Output: one line per check, "VERDICT <name> ok|FAIL|refused|accepted ...",
 * then "RESULT pass" or "RESULT fail" (exit 0 or 1).  Two processes of the
 * same architecture (their atomics and messages are host-endian).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define BUF_SIZE	(64 * 1024)
#define WIN_LEN		2048
#define NB_KINDS	3
#define MTU		IBV_MTU_1024
#define DEPTH		64
#define NB_SENDS	4
#define SEND_LEN	256
#define STREAM_MAX	100000

enum kind { T1, T2, T2_ZB };
static const char *const kind_name[NB_KINDS] = { "type1", "type2", "type2-zero-based" };

static struct {
	const char *dev, *host, *port;
	int gid_index;
	bool owner, rnr, lossy, verbose;
} opt = { .port = "18600" };

/* how a refused access completes on the requester (-l: or its NAK was lost) */
static bool
refused(enum ibv_wc_status st)
{
	return st == IBV_WC_REM_ACCESS_ERR || (opt.lossy && st == IBV_WC_RETRY_EXC_ERR);
}

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static uint8_t *buf;	/* the owner's windows, or the accessor's staging */
static uint32_t next_psn = 1;
static int sock = -1;
static char inbuf[16384];
static size_t inlen;
static int failures;

static void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "VERDICT setup FAIL ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\nRESULT fail\n");
	va_end(ap);
	exit(1);
}

static void
verdict(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("VERDICT %s %s ", name, ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	if (!ok)
		failures++;
}

/* the initial byte at each offset of the owner's buffer */
static uint8_t
pattern(size_t off)
{
	return (uint8_t)(off * 7 + 3);
}

static size_t
win_off(int kind)
{
	return 4096 + (size_t)kind * 8192;
}

/* --- the TCP side channel: one text line per message ---------------- */

static void
send_line(const char *fmt, ...)
{
	char line[2 * NB_KINDS * WIN_LEN + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (opt.verbose)
		fprintf(stderr, "> %.60s\n", line);
	line[n++] = '\n';
	if (send(sock, line, n, MSG_NOSIGNAL) != n)
		die("send: %s", strerror(errno));
}

/* The next line into OUT, waiting up to TIMEOUT_MS (-1: forever):
 * 1 if there was one, 0 if not yet. */
static int
recv_line(char *out, size_t size, int timeout_ms)
{
	for (;;) {
		char *nl = memchr(inbuf, '\n', inlen);
		struct pollfd p = { .fd = sock, .events = POLLIN };
		ssize_t n;

		if (nl != NULL) {
			size_t len = nl - inbuf;

			if (len >= size)
				die("line too long");
			memcpy(out, inbuf, len);
			out[len] = '\0';
			inlen -= len + 1;
			memmove(inbuf, nl + 1, inlen);
			if (opt.verbose)
				fprintf(stderr, "< %.60s\n", out);
			return 1;
		}
		if (poll(&p, 1, timeout_ms) == 0)
			return 0;
		n = recv(sock, inbuf + inlen, sizeof(inbuf) - inlen, 0);
		if (n <= 0)
			die("the peer closed the side channel");
		inlen += n;
	}
}

static void
expect_line(char *out, size_t size, const char *word)
{
	if (!recv_line(out, size, 60000))
		die("no %s from the peer in 60 s", word);
	if (strncmp(out, word, strlen(word)) != 0)
		die("expected %s, got \"%.60s\"", word, out);
}

static void
side_channel(void)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	int one = 1;

	if (getaddrinfo(opt.host, opt.port, &hints, &ai) != 0)
		die("cannot resolve %s", opt.host);
	if (opt.host != NULL) {
		for (int tries = 0; tries < 600; tries++) {
			sock = socket(ai->ai_family, SOCK_STREAM, 0);
			if (connect(sock, ai->ai_addr, ai->ai_addrlen) == 0)
				break;
			close(sock);
			sock = -1;
			usleep(100000);
		}
	} else {
		int l = socket(AF_INET6, SOCK_STREAM, 0);
		struct sockaddr_in6 a = { .sin6_family = AF_INET6,
					  .sin6_port = htons(atoi(opt.port)) };

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0)
			die("listen on %s: %s", opt.port, strerror(errno));
		sock = accept(l, NULL, NULL);
		close(l);
	}
	freeaddrinfo(ai);
	if (sock < 0)
		die("no side channel to %s:%s", opt.host ? opt.host : "*", opt.port);
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* --- the QP pair: made anew after every refusal ----------------------- */

static void
connect_qp(void)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	union ibv_gid gid, rgid;
	char line[256], hex[33];
	unsigned int rqpn, rpsn;
	uint32_t psn = next_psn;
	struct ibv_wc wc;

	if (qp != NULL && ibv_destroy_qp(qp) != 0)
		die("ibv_destroy_qp: %s", strerror(errno));
	while (ibv_poll_cq(cq, 1, &wc) > 0)
		;
	next_psn = (next_psn * 1103515245u + 12345u) & 0xffffff;
	qp = ibv_create_qp(pd, &init);
	if (qp == NULL)
		die("ibv_create_qp: %s", strerror(errno));
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS) != 0)
		die("INIT: %s", strerror(errno));
	if (ibv_query_gid(ctx, 1, opt.gid_index, &gid) != 0)
		die("ibv_query_gid %d", opt.gid_index);
	for (int i = 0; i < 16; i++)
		sprintf(hex + 2 * i, "%02x", gid.raw[i]);
	send_line("CONN %06x %06x %s", qp->qp_num, psn, hex);
	expect_line(line, sizeof(line), "CONN");
	if (sscanf(line, "CONN %x %x %32s", &rqpn, &rpsn, hex) != 3)
		die("bad CONN line");
	for (int i = 0; i < 16; i++)
		sscanf(hex + 2 * i, "%2hhx", &rgid.raw[i]);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = MTU;
	a.dest_qp_num = rqpn;
	a.rq_psn = rpsn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = rgid;
	a.ah_attr.grh.sgid_index = opt.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0)
		die("RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 16;		/* ~0.27 s: a loaded TCG guest is slow */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = psn;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RTS: %s", strerror(errno));
}

/* one completion (60 s at most) */
static struct ibv_wc
complete(void)
{
	struct timespec t0, t;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq: %d", n);
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 60)
			die("no completion in 60 s");
	}
}

/* --- the owner ------------------------------------------------------- */

static struct ibv_mw *mw;
static uint32_t mw_rkey;

/* Bind (LENGTH 0: unbind a Type 1 window); false if the completion was
 * flushed because the QP had died under it: a refused access moves it to
 * the error state, and rxe then flushes a work request that may already
 * have taken effect (docs/interop.md). */
static bool
owner_post_bind(int kind, uint32_t length)
{
	/* a zero-length bind names the region too: rxe's provider
	 * dereferences bind_info.mr even then (docs/interop.md) */
	struct ibv_mw_bind_info info = {
		.mr = mr,
		.addr = (uintptr_t)buf + win_off(kind),
		.length = length,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC |
				   (kind == T2_ZB ? IBV_ACCESS_ZERO_BASED : 0),
	};
	struct ibv_wc wc;
	int rc;

	if (kind == T1) {
		struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = info };

		rc = ibv_bind_mw(qp, mw, &b);
		if (rc != 0)
			die("ibv_bind_mw: %s", strerror(rc));
	} else {
		struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_BIND_MW,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info = info;
		rc = ibv_post_send(qp, &wr, &bad);
		if (rc != 0)
			die("post BIND_MW: %s", strerror(rc));
		mw->rkey = wr.bind_mw.rkey;
	}
	wc = complete();
	if (wc.status == IBV_WC_WR_FLUSH_ERR)
		return false;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW)
		die("bind of %s: %s", kind_name[kind], ibv_wc_status_str(wc.status));
	mw_rkey = mw->rkey;
	return true;
}

/* false if flushed: the QP died under it (see owner_post_bind) */
static bool
owner_local_inv(void)
{
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = mw_rkey }, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad) != 0)
		die("post LOCAL_INV");
	wc = complete();
	if (wc.status == IBV_WC_WR_FLUSH_ERR)
		return false;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_LOCAL_INV)
		die("LOCAL_INV: %s", ibv_wc_status_str(wc.status));
	return true;
}

/*
 * The window goes before its QP does: Linux 6.1's rxe holds a reference
 * on the QP of a bound Type 2 window, and destroying that QP first waits
 * ~50 s for it (a kernel WARNING in __rxe_cleanup, then a refcount
 * underflow when the window goes). docs/interop.md.
 */
static void
owner_drop_window(void)
{
	if (mw != NULL && ibv_dealloc_mw(mw) != 0)
		die("ibv_dealloc_mw: %s", strerror(errno));
	mw = NULL;
}

/* a new window of KIND over its place in the buffer, its key to the peer */
static void
owner_new_window(int kind)
{
	owner_drop_window();
	mw = ibv_alloc_mw(pd, kind == T1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
	if (mw == NULL)
		die("ibv_alloc_mw(%s): %s", kind_name[kind], strerror(errno));
	if (!owner_post_bind(kind, WIN_LEN))
		die("bind of %s on new QPs: flushed", kind_name[kind]);
	send_line("WIN %08x %" PRIx64, mw_rkey,
		  kind == T2_ZB ? (uint64_t)0 : (uint64_t)(uintptr_t)buf + win_off(kind));
}

static void
owner(void)
{
	char line[sizeof(inbuf)];
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_sge sge;

	for (size_t i = 0; i < BUF_SIZE; i++)
		buf[i] = pattern(i);
	for (int kind = 0; kind < NB_KINDS; kind++) {
		for (;;) {
			expect_line(line, sizeof(line), "");
			if (strcmp(line, "NEW") == 0) {
				owner_drop_window();
				connect_qp();
				owner_new_window(kind);
			} else if (strcmp(line, "REBIND") == 0) {
				usleep(20000);	/* while the accessor streams */
				/* once the old key is dead, a refused access
				 * may kill the QP before the bind completes */
				if ((kind == T1 || owner_local_inv()) &&
				    owner_post_bind(kind, WIN_LEN))
					send_line("REBOUND %08x", mw_rkey);
				else
					send_line("REBOUND 0");
			} else if (strcmp(line, "INVALIDATE") == 0) {
				usleep(20000);
				/* flushed or not, the accessor then checks
				 * on new QPs that the key is dead */
				if (kind == T1)
					(void)owner_post_bind(kind, 0);
				else
					(void)owner_local_inv();
				send_line("INVALIDATED");
			} else if (strcmp(line, "RECONNECT") == 0) {
				connect_qp();	/* the window stays as it is */
				send_line("RECONNECTED");
			} else if (strcmp(line, "NEXT") == 0) {
				break;
			} else {
				die("unexpected \"%.40s\"", line);
			}
		}
	}

	/* the accessor's SENDs, received into the top of the buffer */
	connect_qp();
	send_line("SENDS %d", opt.rnr);
	if (opt.rnr)
		usleep(300000);	/* an empty receive queue: RNR NAKs */
	for (int i = 0; i < NB_SENDS; i++) {
		sge = (struct ibv_sge){ (uintptr_t)buf + BUF_SIZE - (i + 1) * SEND_LEN,
					SEND_LEN, mr->lkey };
		rwr.wr_id = 100 + i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		if (ibv_post_recv(qp, &rwr, &rbad) != 0)
			die("ibv_post_recv");
	}
	for (int i = 0; i < NB_SENDS; i++) {
		struct ibv_wc wc = complete();
		const uint8_t *got = buf + BUF_SIZE - (wc.wr_id - 99) * SEND_LEN;
		bool same = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			    wc.byte_len == SEND_LEN;

		for (int j = 0; same && j < SEND_LEN; j++)
			same = got[j] == (uint8_t)(wc.wr_id * 31 + j);
		verdict(same, "send-received", "wr_id %" PRIu64 " %s %u B",
			wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len);
		for (int j = 0; j < SEND_LEN; j++)	/* back to the pattern */
			((uint8_t *)got)[j] = pattern(got - buf + j);
	}

	/* every byte: the shadow inside the windows, the pattern outside */
	expect_line(line, sizeof(line), "SHADOW");
	{
		const char *hex = line + strlen("SHADOW ");
		size_t outside = 0, inside = 0;

		if (strlen(hex) != 2 * NB_KINDS * WIN_LEN)
			die("bad SHADOW line");
		for (size_t i = 0; i < BUF_SIZE; i++) {
			size_t k = (i - 4096) / 8192, o = (i - 4096) % 8192;
			bool in = i >= 4096 && k < NB_KINDS && o < WIN_LEN;
			uint8_t want = pattern(i);

			if (in) {
				/* "--": under a WRITE that failed, undefined */
				if (hex[2 * (k * WIN_LEN + o)] == '-')
					continue;
				sscanf(hex + 2 * (k * WIN_LEN + o), "%2hhx", &want);
			}
			if (buf[i] != want) {
				if (in)
					inside++;
				else
					outside++;
			}
		}
		verdict(outside == 0, "bytes-outside-windows-unchanged",
			"%zu of %d bytes differ", outside, BUF_SIZE - NB_KINDS * WIN_LEN);
		verdict(inside == 0, "bytes-inside-windows-as-written",
			"%zu of %d bytes differ from the accessor's copy", inside,
			NB_KINDS * WIN_LEN);
	}
	send_line("DONE %d", failures);
}

/* --- the accessor ---------------------------------------------------- */

static uint8_t shadow[NB_KINDS][WIN_LEN];
/* whether the shadow knows a byte: a WRITE that fails may have landed in
 * part (the specification leaves those bytes undefined); a READ or an
 * atomic that succeeds over them tells their value again */
static bool known[NB_KINDS][WIN_LEN];
static uint32_t rkey;
static uint64_t base;	/* the window's address as the peer names it */
static int kind_now;
static unsigned int seq;

static void
accessor_new(void)
{
	char line[128];

	send_line("NEW");
	connect_qp();
	expect_line(line, sizeof(line), "WIN");
	if (sscanf(line, "WIN %x %" SCNx64, &rkey, &base) != 2)
		die("bad WIN line");
}

/* new QPs only: the owner's window stays as it is */
static void
reconnect(void)
{
	char line[64];

	send_line("RECONNECT");
	connect_qp();
	expect_line(line, sizeof(line), "RECONNECTED");
}

enum op { OP_WRITE, OP_READ, OP_FADD, OP_CSWAP, NB_OPS };
static const char *const op_name[NB_OPS] = { "WRITE", "READ", "FETCH_ADD", "CMP_SWAP" };

/* One access of OP at window offset OFF, LEN bytes, with KEY; its
 * completion status.  On success the shadow is checked (READ, atomics)
 * and updated (WRITE, atomics); *mismatch counts what differed. */
static enum ibv_wc_status
access_once(enum op op, uint32_t key, size_t off, uint32_t len, int *mismatch)
{
	uint8_t *sh = shadow[kind_now];
	bool *kn = known[kind_now];
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = ++seq, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint32_t in = off < WIN_LEN ? (WIN_LEN - off < len ? WIN_LEN - off : len) : 0;
	uint64_t old = 0, add = seq, swap = (uint64_t)seq << 32 | 0xabcd;
	struct ibv_wc wc;

	switch (op) {
	case OP_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		for (uint32_t i = 0; i < len; i++)	/* the pattern past the end */
			buf[i] = off + i < WIN_LEN ? (uint8_t)(seq + i) :
				 pattern(win_off(kind_now) + off + i);
		break;
	case OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		memset(buf, 0x5a, len);
		break;
	case OP_FADD:
	case OP_CSWAP:
		wr.opcode = op == OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD :
					    IBV_WR_ATOMIC_CMP_AND_SWP;
		memcpy(&old, sh + off, 8);
		wr.wr.atomic.remote_addr = base + off;
		wr.wr.atomic.rkey = key;
		wr.wr.atomic.compare_add = op == OP_FADD ? add : old;
		wr.wr.atomic.swap = swap;
		break;
	default:
		abort();
	}
	if (op == OP_WRITE || op == OP_READ) {
		wr.wr.rdma.remote_addr = base + off;
		wr.wr.rdma.rkey = key;
	}
	if (ibv_post_send(qp, &wr, &bad) != 0)
		die("post %s", op_name[op]);
	wc = complete();
	if (wc.status != IBV_WC_SUCCESS) {
		if (op == OP_WRITE)
			memset(kn + off, 0, in);
		return wc.status;
	}
	switch (op) {	/* of what lies inside the window */
	case OP_WRITE:
		memcpy(sh + off, buf, in);
		memset(kn + off, 1, in);
		break;
	case OP_READ: {
		bool differ = false;

		for (uint32_t i = 0; i < in; i++)
			differ |= kn[off + i] && sh[off + i] != buf[i];
		*mismatch += differ;
		memcpy(sh + off, buf, in);
		memset(kn + off, 1, in);
		break;
	}
	default: {
		uint64_t got, now;
		bool all = true;

		for (int i = 0; i < 8; i++)
			all &= kn[off + i];
		memcpy(&got, buf, 8);
		if (all)	/* else CMP_SWAP compared with a guess */
			*mismatch += got != old;
		now = op == OP_FADD ? got + add : got == wr.wr.atomic.compare_add ? swap : got;
		memcpy(sh + off, &now, 8);
		memset(kn + off, 1, 8);
	}
	}
	return IBV_WC_SUCCESS;
}

/* the Nth access of a run: every operation, offsets all over the window */
static enum ibv_wc_status
access_nth(unsigned int n, uint32_t key, int *mismatch)
{
	enum op op = n % NB_OPS;
	uint32_t len = op >= OP_FADD ? 8 : n % 8 < 2 ? 1500 : 1 + (n * 37) % 200;
	size_t off = (n * 389) % (WIN_LEN - len);

	if (op >= OP_FADD)
		off &= ~(size_t)7;
	return access_once(op, key, off, len, mismatch);
}

/* Access until the owner reports WORD (it was asked with ASK): every
 * failure before is the race allowed between asking and the owner's
 * completion; the first must be REM_ACCESS_ERR.  Returns whether the QP
 * still works. */
static bool
stream_until(const char *ask, const char *word, char *line, size_t size, const char *name)
{
	enum ibv_wc_status first = IBV_WC_SUCCESS;
	unsigned int n = 0, ok = 0;
	int mismatch = 0;

	send_line("%s", ask);
	while (!recv_line(line, size, 0)) {
		enum ibv_wc_status st;

		if (first != IBV_WC_SUCCESS) {	/* the QP is dead: just wait */
			if (!recv_line(line, size, 60000))
				die("no %s in 60 s", word);
			break;
		}
		if (++n > STREAM_MAX)
			die("no %s after %u accesses", word, STREAM_MAX);
		st = access_nth(n, rkey, &mismatch);
		if (st == IBV_WC_SUCCESS)
			ok++;
		else
			first = st;
	}
	if (strncmp(line, word, strlen(word)) != 0)
		die("expected %s, got \"%.40s\"", word, line);
	verdict(mismatch == 0 && (first == IBV_WC_SUCCESS || refused(first)),
		name, "%u accesses while the owner worked, %u succeeded, %s, %d mismatches",
		n, ok, first == IBV_WC_SUCCESS ? "none refused" :
		ibv_wc_status_str(first), mismatch);
	return first == IBV_WC_SUCCESS;
}

/* After a rebind from OLD to rkey (0: the owner's bind was flushed) */
static void
after_rebind(int kind, uint32_t old, bool alive, const char *what)
{
	enum ibv_wc_status st;
	char name[96];
	int mismatch = 0;

	if (!alive) {
		/* a Type 2B window goes with its QP; a Type 1 window stays */
		if (kind != T1 || rkey == 0) {
			accessor_new();
			return;
		}
		reconnect();
	}
	st = access_nth(1000, rkey, &mismatch);
	snprintf(name, sizeof(name), "%s-new-key-after-%s", kind_name[kind], what);
	verdict(st == IBV_WC_SUCCESS && mismatch == 0, name, "key %08x: %s", rkey,
		ibv_wc_status_str(st));
	st = access_nth(1001, old, &mismatch);
	snprintf(name, sizeof(name), "%s-old-key-after-%s", kind_name[kind], what);
	verdict(refused(st), name, "key %08x: %s", old,
		ibv_wc_status_str(st));
	accessor_new();
}

static void
accessor(void)
{
	char line[sizeof(inbuf)];
	struct timespec t0, t;
	char name[96];
	long ms;

	for (int kind = 0; kind < NB_KINDS; kind++) {
		size_t w = win_off(kind);
		enum ibv_wc_status st;
		uint32_t old;
		int mismatch = 0;
		unsigned int n;
		bool alive;

		kind_now = kind;
		for (size_t i = 0; i < WIN_LEN; i++)
			shadow[kind][i] = pattern(w + i), known[kind][i] = true;
		accessor_new();

		/* 1. every operation through a valid window */
		for (n = 1; n <= 40; n++)
			if ((st = access_nth(n, rkey, &mismatch)) != IBV_WC_SUCCESS)
				break;
		snprintf(name, sizeof(name), "%s-valid-accesses", kind_name[kind]);
		verdict(n > 40 && mismatch == 0, name, "%u of 40 succeeded%s%s, %d mismatches",
			n - 1, n > 40 ? "" : ", then ", n > 40 ? "" : ibv_wc_status_str(st),
			mismatch);
		if (n <= 40)
			accessor_new();

		/* 2. one byte past the end: refused by the specification */
		for (enum op op = OP_WRITE; op <= OP_READ; op++) {
			st = access_once(op, rkey, WIN_LEN - 7, 8, &mismatch);
			printf("VERDICT %s-%s-one-byte-past-end %s %s\n", kind_name[kind],
			       op_name[op], refused(st) ? "refused" :
			       st == IBV_WC_SUCCESS ? "accepted" : "other",
			       ibv_wc_status_str(st));
			if (st != IBV_WC_SUCCESS)
				accessor_new();
		}

		/* 3. rebound, first while the accessor waits, then while it
		 * streams: the new key works, the old one dies */
		old = rkey;
		send_line("REBIND");
		expect_line(line, sizeof(line), "REBOUND");
		if (sscanf(line, "REBOUND %x", &rkey) != 1 || rkey == 0)
			die("bad REBOUND");
		after_rebind(kind, old, true, "rebind");
		snprintf(name, sizeof(name), "%s-rebind-mid-run", kind_name[kind]);
		old = rkey;
		alive = stream_until("REBIND", "REBOUND", line, sizeof(line), name);
		if (sscanf(line, "REBOUND %x", &rkey) != 1)
			die("bad REBOUND");
		if (alive && rkey == 0)
			die("the owner's QP died but no access failed");
		after_rebind(kind, old, alive, "rebind-mid-run");

		/* 4. invalidated while the accessor streams */
		snprintf(name, sizeof(name), "%s-invalidate-mid-run", kind_name[kind]);
		alive = stream_until("INVALIDATE", "INVALIDATED", line, sizeof(line), name);
		old = rkey;
		if (!alive)
			reconnect();	/* the window stays invalid */
		for (int i = 0; i < 3; i++) {
			st = access_nth(2000 + i, old, &mismatch);
			snprintf(name, sizeof(name), "%s-access-after-invalidation-%d",
				 kind_name[kind], i);
			verdict(refused(st), name, "key %08x: %s", old,
				ibv_wc_status_str(st));
			if (i < 2)
				reconnect();
		}
		send_line("NEXT");
	}

	/* four SENDs: with -r on the owner, they meet an empty receive queue */
	connect_qp();
	expect_line(line, sizeof(line), "SENDS");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < NB_SENDS; i++) {
		struct ibv_sge sge = { (uintptr_t)buf + i * SEND_LEN, SEND_LEN, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		for (int j = 0; j < SEND_LEN; j++)
			buf[i * SEND_LEN + j] = (uint8_t)(wr.wr_id * 31 + j);
		if (ibv_post_send(qp, &wr, &bad) != 0)
			die("post SEND");
	}
	for (int i = 0; i < NB_SENDS; i++) {
		struct ibv_wc wc = complete();

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		verdict(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND,
			"send-completed", "wr_id %" PRIu64 " %s after %ld ms", wc.wr_id,
			ibv_wc_status_str(wc.status), ms);
		if (i == 0 && atoi(line + 6))
			/* no receive for 300 ms: it can only have succeeded
			 * by retrying after RNR NAKs */
			verdict(ms >= 250, "send-after-rnr", "the first SEND completed "
				"%ld ms after the owner's receive queue was empty", ms);
	}

	{
		static char hex[2 * NB_KINDS * WIN_LEN + 1];

		for (int k = 0; k < NB_KINDS; k++)
			for (int i = 0; i < WIN_LEN; i++)
				if (known[k][i])
					sprintf(hex + 2 * (k * WIN_LEN + i), "%02x", shadow[k][i]);
				else
					memcpy(hex + 2 * (k * WIN_LEN + i), "--", 3);
		send_line("SHADOW %s", hex);
	}
	expect_line(line, sizeof(line), "DONE");
	verdict(atoi(line + 5) == 0, "owner-verdicts", "the owner saw %s failures",
		line + 5);
}

int
main(int argc, char **argv)
{
	struct ibv_device **list;
	int c, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "d:g:p:orlvh")) != -1) {
		switch (c) {
		case 'd': opt.dev = optarg; break;
		case 'g': opt.gid_index = atoi(optarg); break;
		case 'p': opt.port = optarg; break;
		case 'o': opt.owner = true; break;
		case 'r': opt.rnr = true; break;
		case 'l': opt.lossy = true; break;
		case 'v': opt.verbose = true; break;
		default:
			fprintf(stderr, "usage: mw_peer -d DEV -g GID_INDEX [-p PORT] [-o] [-r] [-l] [-v] [HOST]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (opt.dev == NULL) {
		fprintf(stderr, "mw_peer: -d DEV is required\n");
		return 2;
	}
	if (optind < argc)
		opt.host = argv[optind];

	list = ibv_get_device_list(&n);
	for (int i = 0; list != NULL && i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), opt.dev) == 0)
			ctx = ibv_open_device(list[i]);
	if (ctx == NULL)
		die("no device %s", opt.dev);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_SIZE);
	if (pd == NULL || cq == NULL || buf == NULL)
		die("PD, CQ or buffer: %s", strerror(errno));
	memset(buf, 0, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	if (mr == NULL)
		die("ibv_reg_mr: %s", strerror(errno));
	side_channel();
	if (opt.owner)
		owner();
	else
		accessor();
	printf("RESULT %s\n", failures ? "fail" : "pass");
	return failures ? 1 : 0;
}
