/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets (rdma/rsocket.h): stream sockets over an RC QP, for programs
 * such as riostream and rstream that call rsocket(), rsend(), riowrite()
 * and the rest of librdmacm's socket-like API (docs/cm.md, "rsockets").
 * librdmacm builds its own on private parts of its ids (ucma_init opens
 * /dev/infiniband/rdma_cm), so on mwpath they are defined here, over the
 * librdmacm API of mwp_rdmacm.c and the verbs.
 *
 * The wire is librdmacm's rsocket protocol, version 1, so either end may
 * be librdmacm's:
 *
 * - The REQ's and REP's private data is struct conn_data: the sender's
 *   receive credits, where the peer writes its buffer grants (the target
 *   SGL, two entries, followed by the iomap table), and the first half of
 *   the sender's receive buffer.
 * - Data is an RDMA WRITE WITH IMMEDIATE into the granted part of the
 *   peer's receive buffer, which it reads as a ring; the immediate says
 *   op (bits 31-29) and length.  Each consumes one of the peer's zero-SGE
 *   receives (its "messages"): a sender has as many as the peer's credits.
 * - A receiver grants the next half of its buffer, and more messages, by
 *   writing an SGE into the sender's target SGL (op SGL, the new message
 *   credit limit in the immediate); with no half free, a zero-length
 *   write carries the credits alone.
 * - riomap() offers a buffer for the peer's riowrite(): its SGE goes into
 *   the peer's iomap table (op IOMAP_SGL); riowrite is a plain RDMA WRITE.
 * - Control messages (DISCONNECT, SHUTDOWN) are zero-length writes with
 *   op CTRL.  Four control messages may be in flight.
 *
 * An rsocket's number is its RDMA CM id's channel fd, as librdmacm's.
 * A blocking rconnect() or raccept() completes the CM exchange before it
 * returns; a non-blocking one goes as far as the CM's events allow and
 * the socket's calls and rpoll() carry it on (EINPROGRESS, then POLLOUT
 * or POLLERR and SO_ERROR), the id's channel non-blocking meanwhile.
 * Datagram rsockets (SOCK_DGRAM) are not implemented: rsocket() says
 * ENOTSUP for them.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/queue.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include <endian.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "mwp_ibv.h"
#include "mwp_rdmacm.h"

/* librdmacm's defaults and limits, which the wire format assumes */
#define RS_SNDLOWAT	2048	/* room a send needs before it goes */
#define RS_OLAP_START	2048	/* a long send's first piece, doubling ... */
#define RS_MAX_XFER	65536	/* ... up to this */
#define RS_QP_MIN	16
#define RS_QP_MAX	0xfffe
#define RS_CTRL_MAX	4	/* control messages in flight; power of 2 */
#define RS_SGL_SIZE	2	/* entries of the target SGL */
#define RS_DEF_MEM	(1u << 17)
#define RS_MAX_BUF	(1u << 28)	/* SO_SNDBUF, SO_RCVBUF: at most */
#define RS_DEF_INLINE	64
#define RS_DEF_QP	384
#define RS_POLL_US	10	/* a wait polls this long before it sleeps */
#define RS_CONN_MS	2000	/* address and route resolution */

/* the immediate: op in bits 31-29, its datum below */
enum {
	OP_DATA = 0,
	OP_WRITE = 2,		/* riowrite's: never on the wire (no immediate) */
	OP_SGL = 4,
	OP_IOMAP_SGL = 6,
	OP_CTRL = 7,
};
#define MSG(op, data)	(((uint32_t)(op) << 29) | (uint32_t)(data))
#define MSG_OP(m)	((m) >> 29)
#define MSG_DATA(m)	((m) & 0x1fffffffu)

enum { CTRL_DISCONNECT = 0, CTRL_KEEPALIVE = 1, CTRL_SHUTDOWN = 2 };

/* wr_id: bit 63 a receive; the low 32 bits the message sent */
#define WR_RECV		(1ull << 63)

/* An SGE on the wire and in the target SGL (the peer writes these). */
struct rs_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
};

struct rs_iomap {
	uint64_t offset;
	struct rs_sge sge;
};

#define CONN_FLAG_NET	(1u << 0)	/* the sender is big-endian */
#define CONN_FLAG_IOMAP	(1u << 1)	/* an iomap table follows its SGL */

/* The REQ's and REP's private data (librdmacm's struct rs_conn_data);
 * the SGEs' fields big-endian. */
struct conn_data {
	uint8_t version;		/* 1 */
	uint8_t flags;
	uint16_t credits;		/* big-endian */
	uint8_t reserved[3];
	uint8_t target_iomap_size;	/* scaled: rs_scale() */
	struct rs_sge target_sgl;
	struct rs_sge data_buf;
};

_Static_assert(sizeof(struct rs_sge) == 16, "rs_sge is 16 bytes on the wire");
_Static_assert(sizeof(struct rs_iomap) == 24, "rs_iomap is 24 bytes on the wire");
_Static_assert(sizeof(struct conn_data) == 40, "conn_data is 40 bytes on the wire");

/* States, ordered as librdmacm's: bits for readable and writable. */
enum {
	S_INIT = 0,
	S_BOUND = 0x1,
	S_LISTENING = 0x2,
	S_OPENING = 0x4,		/* the CM exchange under way: */
	S_RESOLVING_ADDR = S_OPENING | 0x10,
	S_RESOLVING_ROUTE = S_OPENING | 0x20,
	S_CONNECTING = S_OPENING | 0x40,
	S_ACCEPTING = S_OPENING | 0x80,
	S_CONNECTED = 0x100,
	S_WRITABLE = 0x200,
	S_READABLE = 0x400,
	S_RDWR = S_CONNECTED | S_WRITABLE | S_READABLE,
	S_CONNECT_ERROR = 0x800,
	S_DISCONNECTED = 0x1000,
	S_ERROR = 0x2000,
};

/* A buffer riomap()ed: offered to the peer (index >= 0: its slot in the
 * peer's table), or local (read-only, -1). */
struct iomap {
	TAILQ_ENTRY(iomap) link;
	uint64_t offset;
	struct ibv_mr *mr;
	int index;
};
TAILQ_HEAD(iomap_list, iomap);

struct rmsg {
	uint32_t op;
	uint32_t data;
};

struct rs {
	int index;			/* the id's channel fd */
	struct rdma_cm_id *id;
	int state;
	int err;			/* SO_ERROR */
	int fs_flags;			/* O_NONBLOCK */
	int fd_flags;
	uint64_t so_opts, tcp_opts, ipv6_opts;
	int accept_nonblock;

	/* the send side (slock), the receive side (rlock), the CQ and what
	 * both sides share (cq_lock) */
	pthread_mutex_t slock, rlock, cq_lock, map_lock;

	uint32_t sbuf_size, rbuf_size;
	uint16_t sq_size, rq_size, sq_inline;
	uint16_t target_iomap_size;
	bool swap;			/* the peer's byte order is not ours */

	unsigned int ctrl_seqno, ctrl_max_seqno;
	uint16_t sseq_no, sseq_comp;	/* messages sent; the peer's limit */
	uint16_t rseq_no, rseq_comp;	/* messages taken; when to grant */

	/* where our grants go in the peer: its target SGL and iomap table */
	int remote_sge;
	struct rs_sge remote_sgl, remote_iomap;

	/* what the peer grants us: written by its RDMA WRITEs */
	struct ibv_mr *target_mr;
	void *target_list;
	volatile struct rs_sge *target_sgl;
	volatile struct rs_iomap *target_iomap;
	int target_sge;

	/* the receive buffer, a ring */
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	int rbuf_bytes_avail;		/* free and not granted */
	int rbuf_free_offset;		/* the next half to grant */
	int rbuf_offset;		/* the next byte to read */
	struct rmsg *rmsg;		/* rq_size + 1, a ring */
	int rmsg_head, rmsg_tail;

	/* the send buffer, a ring (control messages' room after it) */
	uint8_t *sbuf;
	struct ibv_mr *smr;
	int sbuf_bytes_avail;
	struct ibv_sge ssgl[2];
	int sqe_avail;

	bool cq_armed;
	unsigned int unack_cqe;

	struct iomap *remote_maps;	/* remote_iomap.length slots */
	struct iomap_list iomap_queue;	/* to tell the peer */
	struct iomap_list iomap_list;	/* told, or local */
	bool iomap_pending;
};

/* ---- the table: number -> rsocket ---- */

#define TBL_PAGE	1024
#define TBL_PAGES	1024
static struct rs **tbl[TBL_PAGES];
static pthread_mutex_t tbl_lock = PTHREAD_MUTEX_INITIALIZER;

static int
tbl_set(int fd, struct rs *s)
{
	struct rs **page;

	if (fd < 0 || fd >= TBL_PAGE * TBL_PAGES)
		return -1;
	pthread_mutex_lock(&tbl_lock);
	page = tbl[fd / TBL_PAGE];
	if (page == NULL) {
		page = calloc(TBL_PAGE, sizeof(*page));
		if (page == NULL) {
			pthread_mutex_unlock(&tbl_lock);
			return -1;
		}
		__atomic_store_n(&tbl[fd / TBL_PAGE], page, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&page[fd % TBL_PAGE], s, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tbl_lock);
	return 0;
}

static struct rs *
tbl_get(int fd)
{
	struct rs **page;

	if (fd < 0 || fd >= TBL_PAGE * TBL_PAGES)
		return NULL;
	page = __atomic_load_n(&tbl[fd / TBL_PAGE], __ATOMIC_ACQUIRE);
	return page == NULL ? NULL : __atomic_load_n(&page[fd % TBL_PAGE], __ATOMIC_ACQUIRE);
}

static int
fail(int e)
{
	errno = e;
	return -1;
}

/* librdmacm's 8-bit scale of the iomap size: up to 128 as is, above in
 * units of 256. */
static int
rs_scale(int value)
{
	return value <= 128 ? value : 128 | (value >> 8);
}

static int
rs_unscale(int value)
{
	return value <= 128 ? value : (value & ~128) << 8;
}

static struct rs *
rs_alloc(const struct rs *from)
{
	struct rs *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->index = -1;
	if (from != NULL) {
		s->sbuf_size = from->sbuf_size;
		s->rbuf_size = from->rbuf_size;
		s->sq_inline = from->sq_inline;
		s->sq_size = from->sq_size;
		s->rq_size = from->rq_size;
		s->target_iomap_size = from->target_iomap_size;
		s->fs_flags = from->fs_flags;
		s->fd_flags = from->fd_flags;
	} else {
		s->sbuf_size = s->rbuf_size = RS_DEF_MEM;
		s->sq_inline = RS_DEF_INLINE;
		s->sq_size = s->rq_size = RS_DEF_QP;
	}
	s->ctrl_max_seqno = RS_CTRL_MAX;
	pthread_mutex_init(&s->slock, NULL);
	pthread_mutex_init(&s->rlock, NULL);
	pthread_mutex_init(&s->cq_lock, NULL);
	pthread_mutex_init(&s->map_lock, NULL);
	TAILQ_INIT(&s->iomap_queue);
	TAILQ_INIT(&s->iomap_list);
	return s;
}

static void
rs_free(struct rs *s)
{
	struct iomap *m;

	if (s->index >= 0)
		tbl_set(s->index, NULL);
	while ((m = TAILQ_FIRST(&s->iomap_queue)) != NULL) {
		TAILQ_REMOVE(&s->iomap_queue, m, link);
		ibv_dereg_mr(m->mr);
		if (m->index < 0)
			free(m);
	}
	while ((m = TAILQ_FIRST(&s->iomap_list)) != NULL) {
		TAILQ_REMOVE(&s->iomap_list, m, link);
		ibv_dereg_mr(m->mr);
		if (m->index < 0)
			free(m);
	}
	free(s->remote_maps);
	if (s->smr != NULL)
		ibv_dereg_mr(s->smr);
	if (s->rmr != NULL)
		ibv_dereg_mr(s->rmr);
	if (s->target_mr != NULL)
		ibv_dereg_mr(s->target_mr);
	free(s->sbuf);
	free(s->rbuf);
	free(s->target_list);
	free(s->rmsg);
	if (s->id != NULL) {
		/* (an endpoint made halfway has its CQ and channel alone) */
		struct ibv_cq *cq = s->id->recv_cq;
		struct ibv_comp_channel *ch = s->id->recv_cq_channel;

		if (s->id->qp != NULL)
			rdma_destroy_qp(s->id);
		s->id->recv_cq = s->id->send_cq = NULL;
		s->id->recv_cq_channel = s->id->send_cq_channel = NULL;
		if (cq != NULL) {
			ibv_ack_cq_events(cq, s->unack_cqe);
			ibv_destroy_cq(cq);
		}
		if (ch != NULL)
			ibv_destroy_comp_channel(ch);
		rdma_destroy_id(s->id);
	}
	pthread_mutex_destroy(&s->slock);
	pthread_mutex_destroy(&s->rlock);
	pthread_mutex_destroy(&s->cq_lock);
	pthread_mutex_destroy(&s->map_lock);
	free(s);
}

static int
set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* ---- the endpoint: CQ, QP, buffers ---- */

static int
rs_create_ep(struct rs *s)
{
	struct rdma_cm_id *id = s->id;
	struct ibv_qp_init_attr qa;
	struct ibv_device_attr da;
	uint32_t sbytes;
	size_t tlen;
	int maxq = RS_QP_MAX;

	if (ibv_query_device(id->verbs, &da) == 0 && da.max_qp_wr < maxq)
		maxq = da.max_qp_wr;
	s->sq_size = RTE_MAX(RTE_MIN((int)s->sq_size, maxq), RS_QP_MIN);
	s->rq_size = RTE_MAX(RTE_MIN((int)s->rq_size, maxq), RS_QP_MIN);

	id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
	if (id->recv_cq_channel == NULL)
		return -1;
	/* waits poll() it; a read only follows a poll that saw it ready */
	set_nonblock(id->recv_cq_channel->fd, true);
	id->recv_cq = ibv_create_cq(id->verbs, s->sq_size + s->rq_size, id,
				    id->recv_cq_channel, 0);
	if (id->recv_cq == NULL)
		return -1;
	id->send_cq = id->recv_cq;
	id->send_cq_channel = id->recv_cq_channel;

	memset(&qa, 0, sizeof(qa));
	qa.qp_context = s;
	qa.send_cq = qa.recv_cq = id->recv_cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = s->sq_size;
	qa.cap.max_recv_wr = s->rq_size;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = s->sq_inline;
	if (rdma_create_qp(id, NULL, &qa) != 0)
		return -1;
	s->sq_inline = qa.cap.max_inline_data;

	s->rmsg = calloc(s->rq_size + 1u, sizeof(*s->rmsg));
	sbytes = s->sbuf_size + (s->sq_inline < sizeof(struct rs_sge) ?
				 sizeof(struct rs_sge) * RS_CTRL_MAX : 0);
	s->sbuf = calloc(1, sbytes);
	tlen = sizeof(struct rs_sge) * RS_SGL_SIZE +
	       sizeof(struct rs_iomap) * s->target_iomap_size;
	s->target_list = calloc(1, tlen);
	s->rbuf = calloc(1, s->rbuf_size);
	if (s->rmsg == NULL || s->sbuf == NULL || s->target_list == NULL || s->rbuf == NULL)
		return fail(ENOMEM);
	s->smr = ibv_reg_mr(id->pd, s->sbuf, sbytes, IBV_ACCESS_LOCAL_WRITE);
	s->target_mr = ibv_reg_mr(id->pd, s->target_list, tlen,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	s->rmr = ibv_reg_mr(id->pd, s->rbuf, s->rbuf_size,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (s->smr == NULL || s->target_mr == NULL || s->rmr == NULL)
		return -1;
	s->target_sgl = s->target_list;
	if (s->target_iomap_size != 0)
		s->target_iomap = (volatile struct rs_iomap *)(s->target_sgl + RS_SGL_SIZE);

	s->ssgl[0].addr = s->ssgl[1].addr = (uintptr_t)s->sbuf;
	s->ssgl[0].lkey = s->ssgl[1].lkey = s->smr->lkey;
	s->sbuf_bytes_avail = s->sbuf_size;
	/* the first half goes in the connection's data; the second is
	 * granted with the first credits */
	s->rbuf_free_offset = s->rbuf_size >> 1;
	s->rbuf_bytes_avail = s->rbuf_size >> 1;
	s->sqe_avail = s->sq_size - s->ctrl_max_seqno;
	s->rseq_comp = s->rq_size >> 1;

	for (unsigned int i = 0; i < s->rq_size; i++) {
		struct ibv_recv_wr wr = { .wr_id = WR_RECV }, *bad;
		int ret = ibv_post_recv(id->qp, &wr, &bad);

		if (ret != 0)
			return fail(ret);
	}
	return 0;
}

static void
conn_format(const struct rs *s, struct conn_data *c)
{
	memset(c, 0, sizeof(*c));
	c->version = 1;
	c->flags = CONN_FLAG_IOMAP | (__BYTE_ORDER == __BIG_ENDIAN ? CONN_FLAG_NET : 0);
	c->credits = htobe16(s->rq_size);
	c->target_iomap_size = (uint8_t)rs_scale(s->target_iomap_size);
	c->target_sgl.addr = htobe64((uintptr_t)s->target_sgl);
	c->target_sgl.length = htobe32(RS_SGL_SIZE);
	c->target_sgl.key = htobe32(s->target_mr->rkey);
	c->data_buf.addr = htobe64((uintptr_t)s->rbuf);
	c->data_buf.length = htobe32(s->rbuf_size >> 1);
	c->data_buf.key = htobe32(s->rmr->rkey);
}

/* The peer's connection data; false: not version 1 or too short. */
static bool
conn_save(struct rs *s, const void *pd, size_t len)
{
	struct conn_data c;

	if (pd == NULL || len < sizeof(c))
		return false;
	memcpy(&c, pd, sizeof(c));
	if (c.version != 1)
		return false;
	s->remote_sgl.addr = be64toh(c.target_sgl.addr);
	s->remote_sgl.length = be32toh(c.target_sgl.length);
	s->remote_sgl.key = be32toh(c.target_sgl.key);
	if (s->remote_sgl.length == 0)
		return false;
	s->remote_sge = 1;
	s->swap = !!(c.flags & CONN_FLAG_NET) != (__BYTE_ORDER == __BIG_ENDIAN);
	if (c.flags & CONN_FLAG_IOMAP) {
		s->remote_iomap.addr = s->remote_sgl.addr +
				       sizeof(struct rs_sge) * s->remote_sgl.length;
		s->remote_iomap.length = rs_unscale(c.target_iomap_size);
		s->remote_iomap.key = s->remote_sgl.key;
	}
	s->target_sgl[0].addr = be64toh(c.data_buf.addr);
	s->target_sgl[0].length = be32toh(c.data_buf.length);
	s->target_sgl[0].key = be32toh(c.data_buf.key);
	s->sseq_comp = be16toh(c.credits);
	return true;
}

/* ---- posting ---- */

static int
post_write(struct rs *s, struct ibv_sge *sgl, int nsge, uint32_t msg, bool imm,
	   int flags, uint64_t addr, uint32_t rkey)
{
	struct ibv_send_wr wr, *bad;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = msg;
	wr.sg_list = sgl;
	wr.num_sge = nsge;
	wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr.send_flags = flags;
	wr.imm_data = imm ? htobe32(msg) : 0;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(s->id->qp, &wr, &bad);	/* the errno itself */
	return ret != 0 ? fail(ret) : 0;
}

/* A control message: a zero-length write, its immediate all it says. */
static int
post_msg(struct rs *s, uint32_t msg)
{
	return post_write(s, NULL, 0, msg, true, 0, 0, 0);
}

static uint32_t
sbuf_left(const struct rs *s)
{
	return (uint32_t)((uintptr_t)&s->sbuf[s->sbuf_size] - s->ssgl[0].addr);
}

/* len bytes of src into the send ring at its cursor: the SGEs that say
 * where (1 or 2, the ring wrapping).  The cursor moves when they are
 * posted (sbuf_advance). */
static int
sbuf_copy(struct rs *s, const void *src, uint32_t len)
{
	uint32_t left = sbuf_left(s);

	if (len <= left) {
		memcpy((void *)(uintptr_t)s->ssgl[0].addr, src, len);
		s->ssgl[0].length = len;
		return 1;
	}
	memcpy((void *)(uintptr_t)s->ssgl[0].addr, src, left);
	s->ssgl[0].length = left;
	s->ssgl[1].length = len - left;
	memcpy(s->sbuf, (const uint8_t *)src + left, len - left);
	return 2;
}

/* After sbuf_copy's SGEs are posted: the cursor past them. */
static void
sbuf_advance(struct rs *s, int nsge)
{
	if (nsge == 2)
		s->ssgl[0].addr = (uintptr_t)s->sbuf + s->ssgl[1].length;
	else if (s->ssgl[0].length < sbuf_left(s))
		s->ssgl[0].addr += s->ssgl[0].length;
	else
		s->ssgl[0].addr = (uintptr_t)s->sbuf;
}

/* Data into the peer's granted buffer: the target SGE is moved on
 * before the write goes, for the peer may replace it as soon as it has
 * the data. */
static int
write_data(struct rs *s, const void *buf, uint32_t len)
{
	volatile struct rs_sge *t = &s->target_sgl[s->target_sge];
	uint64_t addr = t->addr;
	uint32_t rkey = t->key;
	struct ibv_sge one;
	int nsge, ret;

	s->sseq_no++;
	s->sqe_avail--;
	s->sbuf_bytes_avail -= len;
	t->addr = addr + len;
	t->length -= len;
	if (t->length == 0 && ++s->target_sge == RS_SGL_SIZE)
		s->target_sge = 0;
	if (len <= s->sq_inline) {
		one.addr = (uintptr_t)buf;
		one.length = len;
		one.lkey = 0;
		return post_write(s, &one, 1, MSG(OP_DATA, len), true, IBV_SEND_INLINE,
				  addr, rkey);
	}
	nsge = sbuf_copy(s, buf, len);
	ret = post_write(s, s->ssgl, nsge, MSG(OP_DATA, len), true, 0, addr, rkey);
	sbuf_advance(s, nsge);
	return ret;
}

/* ---- credits and completions (under cq_lock) ---- */

static bool
ctrl_avail(const struct rs *s)
{
	return s->ctrl_seqno != s->ctrl_max_seqno;
}

static void
send_credits(struct rs *s)
{
	struct rs_sge sge;
	struct ibv_sge one;
	int flags = IBV_SEND_INLINE;

	s->ctrl_seqno++;
	s->rseq_comp = s->rseq_no + (s->rq_size >> 1);
	if (s->rbuf_bytes_avail < (int)(s->rbuf_size >> 1)) {
		post_msg(s, MSG(OP_SGL, (uint16_t)(s->rseq_no + s->rq_size)));
		return;
	}
	sge.addr = (uintptr_t)&s->rbuf[s->rbuf_free_offset];
	sge.key = s->rmr->rkey;
	sge.length = s->rbuf_size >> 1;
	if (s->swap) {
		sge.addr = __builtin_bswap64(sge.addr);
		sge.key = __builtin_bswap32(sge.key);
		sge.length = __builtin_bswap32(sge.length);
	}
	one.addr = (uintptr_t)&sge;
	one.length = sizeof(sge);
	one.lkey = 0;
	if (s->sq_inline < sizeof(sge)) {
		/* the control messages' own room after the send ring */
		void *room = s->sbuf + s->sbuf_size +
			     sizeof(sge) * (s->ctrl_seqno & (RS_CTRL_MAX - 1));

		memcpy(room, &sge, sizeof(sge));
		one.addr = (uintptr_t)room;
		one.lkey = s->smr->lkey;
		flags = 0;
	}
	post_write(s, &one, 1, MSG(OP_SGL, (uint16_t)(s->rseq_no + s->rq_size)), true, flags,
		   s->remote_sgl.addr + s->remote_sge * sizeof(struct rs_sge), s->remote_sgl.key);
	s->rbuf_bytes_avail -= s->rbuf_size >> 1;
	s->rbuf_free_offset += s->rbuf_size >> 1;
	if (s->rbuf_free_offset >= (int)s->rbuf_size)
		s->rbuf_free_offset = 0;
	if (++s->remote_sge == (int)s->remote_sgl.length)
		s->remote_sge = 0;
}

static void
update_credits(struct rs *s)
{
	if ((s->rbuf_bytes_avail >= (int)(s->rbuf_size >> 1) ||
	     (int16_t)(s->rseq_no - s->rseq_comp) >= 0) &&
	    ctrl_avail(s) && (s->state & S_CONNECTED))
		send_credits(s);
}

static int
poll_cq(struct rs *s)
{
	struct ibv_wc wc;
	unsigned int rcnt = 0;
	int ret;

	while ((ret = ibv_poll_cq(s->id->recv_cq, 1, &wc)) > 0) {
		if (wc.wr_id & WR_RECV) {
			uint32_t msg;

			if (wc.status != IBV_WC_SUCCESS)
				continue;
			rcnt++;
			msg = (wc.wc_flags & IBV_WC_WITH_IMM) ? be32toh(wc.imm_data) : 0;
			switch (MSG_OP(msg)) {
			case OP_SGL:
				s->sseq_comp = (uint16_t)MSG_DATA(msg);
				break;
			case OP_IOMAP_SGL:
				break;	/* the table was written: nothing to do */
			case OP_CTRL:
				if (MSG_DATA(msg) == CTRL_DISCONNECT) {
					s->state = S_DISCONNECTED;
					return 0;
				}
				if (MSG_DATA(msg) == CTRL_SHUTDOWN) {
					if (s->state & S_WRITABLE) {
						s->state &= ~S_READABLE;
					} else {
						s->state = S_DISCONNECTED;
						return 0;
					}
				}
				break;
			case OP_DATA: {
				int next = s->rmsg_tail == s->rq_size ? 0 : s->rmsg_tail + 1;

				/* more than one grant holds, or a message beyond
				 * the credits given (the queue full): no rsocket
				 * sends that, and reading it would leave the ring */
				if (MSG_DATA(msg) > s->rbuf_size >> 1 || next == s->rmsg_head) {
					s->state = S_ERROR;
					s->err = EPROTO;
					return 0;
				}
				s->rmsg[s->rmsg_tail].op = OP_DATA;
				s->rmsg[s->rmsg_tail].data = MSG_DATA(msg);
				s->rmsg_tail = next;
				break;
			}
			default:
				break;	/* reserved ops: ignored, as librdmacm */
			}
		} else {
			uint32_t msg = (uint32_t)wc.wr_id;

			switch (MSG_OP(msg)) {
			case OP_SGL:
				s->ctrl_max_seqno++;
				break;
			case OP_CTRL:
				s->ctrl_max_seqno++;
				if (MSG_DATA(msg) == CTRL_DISCONNECT)
					s->state = S_DISCONNECTED;
				break;
			case OP_IOMAP_SGL:
				s->sqe_avail++;
				s->sbuf_bytes_avail += sizeof(struct rs_iomap);
				break;
			default:
				s->sqe_avail++;
				s->sbuf_bytes_avail += MSG_DATA(msg);
				break;
			}
			if (wc.status != IBV_WC_SUCCESS && (s->state & S_CONNECTED)) {
				s->state = S_ERROR;
				s->err = EIO;
			}
		}
	}
	if (ret < 0) {
		s->state = S_ERROR;
		s->err = EIO;
		return fail(EIO);
	}
	if (s->state & S_CONNECTED) {
		while (ret == 0 && rcnt-- > 0) {
			struct ibv_recv_wr wr = { .wr_id = WR_RECV }, *bad;

			ret = ibv_post_recv(s->id->qp, &wr, &bad);
		}
		if (ret != 0) {
			/* (ibv_post_recv returns the errno) */
			s->state = S_ERROR;
			s->err = ret;
			return fail(ret);
		}
	}
	return ret;
}

/* The CM's events of a connected id (its channel is non-blocking by
 * then): the peer's disconnect ends the connection. */
static void
cm_events(struct rs *s)
{
	struct rdma_cm_event *e;

	while (rdma_get_cm_event(s->id->channel, &e) == 0) {
		if (e->event == RDMA_CM_EVENT_DISCONNECTED ||
		    e->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			if (s->state & S_CONNECTED)
				s->state = e->event == RDMA_CM_EVENT_DISCONNECTED ?
					   S_DISCONNECTED : S_ERROR;
			if (s->err == 0 && e->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
				s->err = ENODEV;
		}
		rdma_ack_cm_event(e);
	}
}

/* Until fds have something or ms pass (-1: no end).  With progress =
 * calls nothing else runs the datapath: this does, while it waits. */
static int
wait_fds(struct rdma_cm_id *id, struct pollfd *p, nfds_t n, int ms)
{
	struct mwp_ibv_dev *d = id != NULL && id->verbs != NULL ? mwp_ibv_ctx_dev(id->verbs) : NULL;
	struct timespec t0, t;
	int ret;

	if (d == NULL || d->conf.progress != APP_PROGRESS_CALLS)
		return poll(p, n, ms);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = poll(p, n, 0);
		if (ret != 0)
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (ms >= 0 && (t.tv_sec - t0.tv_sec) * 1000 +
			       (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			return 0;
		if (mwp_ibv_progress(d) == 0)
			sched_yield();
	}
}

/* The CQ's event taken after a wait saw it (the fd is non-blocking). */
static void
take_cq_event(struct rs *s)
{
	struct ibv_cq *cq;
	void *ctx;

	if (!s->cq_armed)
		return;
	if (ibv_get_cq_event(s->id->recv_cq_channel, &cq, &ctx) == 0) {
		if (++s->unack_cqe >= (unsigned int)(s->sq_size + s->rq_size)) {
			ibv_ack_cq_events(s->id->recv_cq, s->unack_cqe);
			s->unack_cqe = 0;
		}
		s->cq_armed = false;
	}
}

/* Process the CQ until test(s) holds; nonblock: once, EWOULDBLOCK if it
 * does not.  A blocking call arms the CQ, looks once more, then waits
 * for its event or the CM's. */
static int
process_cq(struct rs *s, bool nonblock, bool (*test)(struct rs *))
{
	int ret;

	pthread_mutex_lock(&s->cq_lock);
	for (;;) {
		update_credits(s);
		ret = poll_cq(s);
		if (test(s)) {
			ret = 0;
			break;
		}
		if (ret != 0)
			break;
		if (nonblock) {
			ret = fail(EWOULDBLOCK);
			break;
		}
		if (!s->cq_armed) {
			ibv_req_notify_cq(s->id->recv_cq, 0);
			s->cq_armed = true;
			continue;
		}
		update_credits(s);
		{
			struct pollfd p[2] = {
				{ .fd = s->id->recv_cq_channel->fd, .events = POLLIN },
				{ .fd = s->id->channel->fd, .events = POLLIN },
			};

			pthread_mutex_unlock(&s->cq_lock);
			ret = wait_fds(s->id, p, 2, -1);
			pthread_mutex_lock(&s->cq_lock);
			if (ret < 0 && errno != EINTR)
				break;
			if (p[0].revents)
				take_cq_event(s);
			if (p[1].revents)
				cm_events(s);
			ret = 0;
		}
	}
	update_credits(s);
	pthread_mutex_unlock(&s->cq_lock);
	return ret;
}

/* A wait for test: polls RS_POLL_US first, as librdmacm, then sleeps. */
static int
get_comp(struct rs *s, bool nonblock, bool (*test)(struct rs *))
{
	struct timespec t0, t;
	int ret;

	if (nonblock)
		return process_cq(s, true, test);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ret = process_cq(s, true, test);
		if (ret == 0 || errno != EWOULDBLOCK)
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 <=
		 RS_POLL_US);
	return process_cq(s, false, test);
}

static bool
can_send(struct rs *s)
{
	return s->sqe_avail != 0 && s->sbuf_bytes_avail >= RS_SNDLOWAT &&
	       s->sseq_no != s->sseq_comp && s->target_sgl[s->target_sge].length != 0;
}

static bool
conn_can_send(struct rs *s)
{
	return can_send(s) || !(s->state & S_WRITABLE);
}

static bool
conn_can_send_ctrl(struct rs *s)
{
	return ctrl_avail(s) || !(s->state & S_CONNECTED);
}

static bool
have_rdata(struct rs *s)
{
	return s->rmsg_head != s->rmsg_tail;
}

static bool
conn_have_rdata(struct rs *s)
{
	return have_rdata(s) || !(s->state & S_READABLE);
}

static bool
all_sends_done(struct rs *s)
{
	return (int)(s->ctrl_max_seqno - s->ctrl_seqno) + s->sqe_avail == s->sq_size ||
	       !(s->state & S_CONNECTED);
}

static bool
poll_all(struct rs *s)
{
	RTE_SET_USED(s);
	return true;
}

static bool
is_armed(struct rs *s)
{
	return s->cq_armed;
}

static bool
nonblocking(const struct rs *s, int flags)
{
	return (s->fs_flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
}

/* ---- sockets ---- */

static struct rs *
lookup(int socket)
{
	return tbl_get(socket);
}

int
rsocket(int domain, int type, int protocol)
{
	int kind = type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct rs *s;

	if ((domain != AF_INET && domain != AF_INET6) || kind != SOCK_STREAM ||
	    (protocol != 0 && protocol != IPPROTO_TCP))
		return fail(ENOTSUP);
	s = rs_alloc(NULL);
	if (s == NULL)
		return fail(ENOMEM);
	s->fd_flags = (type & SOCK_CLOEXEC) ? FD_CLOEXEC : 0;
	s->fs_flags = (type & SOCK_NONBLOCK) ? O_NONBLOCK : 0;
	if (rdma_create_id(NULL, &s->id, s, RDMA_PS_TCP) != 0) {
		int e = errno;

		rs_free(s);
		return fail(e);
	}
	s->id->route.addr.src_addr.sa_family = domain;
	s->index = s->id->channel->fd;
	if (tbl_set(s->index, s) != 0) {
		s->index = -1;
		rs_free(s);
		return fail(EMFILE);
	}
	return s->index;
}

int
rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs *s = lookup(socket);

	RTE_SET_USED(addrlen);
	if (s == NULL)
		return fail(EBADF);
	if (rdma_bind_addr(s->id, (struct sockaddr *)addr) != 0)
		return -1;
	s->state = S_BOUND;
	return 0;
}

int
rlisten(int socket, int backlog)
{
	struct rs *s = lookup(socket);

	if (s == NULL)
		return fail(EBADF);
	if (s->state == S_LISTENING)
		return 0;
	if (rdma_listen(s->id, backlog) != 0)
		return -1;
	s->state = S_LISTENING;
	/* raccept takes requests off the channel: it waits only if the
	 * socket blocks */
	set_nonblock(s->id->channel->fd, s->fs_flags & O_NONBLOCK);
	return 0;
}

/* The connection is up: the id's channel now carries only the CM's
 * events for us to look at in passing. */
static void
connected(struct rs *s)
{
	s->state = S_RDWR;
	set_nonblock(s->id->channel->fd, true);
}

int
raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs *l = lookup(socket), *s;
	struct rdma_cm_id *cid;
	struct rdma_conn_param param;
	struct conn_data resp;
	const struct rdma_cm_event *e;

	if (l == NULL || l->state != S_LISTENING)
		return fail(EBADF);
	if (rdma_get_request(l->id, &cid) != 0)
		return -1;	/* EAGAIN: nothing waits (non-blocking) */
	s = rs_alloc(l);
	if (s == NULL) {
		rdma_reject(cid, NULL, 0);
		rdma_destroy_id(cid);
		return fail(ENOMEM);
	}
	s->id = cid;
	cid->context = s;
	e = cid->event;
	if (rs_create_ep(s) != 0) {
		int err = errno ? errno : ENOMEM;

		rdma_reject(cid, NULL, 0);
		rs_free(s);
		return fail(err);
	}
	if (!conn_save(s, e->param.conn.private_data, e->param.conn.private_data_len)) {
		/* not an rsocket's peer (librdmacm rejects it too) */
		rdma_reject(cid, NULL, 0);
		rs_free(s);
		return fail(ECONNABORTED);
	}
	param = e->param.conn;
	conn_format(s, &resp);
	param.private_data = &resp;
	param.private_data_len = sizeof(resp);
	s->index = cid->channel->fd;
	if (tbl_set(s->index, s) != 0) {
		s->index = -1;
		rdma_reject(cid, NULL, 0);
		rs_free(s);
		return fail(EMFILE);
	}
	/* a non-blocking socket takes the RTU later (do_connect) */
	set_nonblock(cid->channel->fd, s->fs_flags & O_NONBLOCK);
	if (rdma_accept(cid, &param) == 0) {
		connected(s);
	} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
		s->state = S_ACCEPTING;
	} else {
		int err = errno ? errno : ECONNABORTED;

		rs_free(s);
		return fail(err);
	}
	if (addr != NULL && addrlen != NULL)
		rgetpeername(s->index, addr, addrlen);
	return s->index;
}

/*
 * The CM exchange of a connecting or accepting rsocket, one step at a
 * time: a non-blocking socket's id has a non-blocking channel, so each
 * call goes as far as the events that have come and says EINPROGRESS
 * at the first that has not (its event wakes rpoll through the
 * channel's fd); a blocking socket goes through to the end.  As
 * librdmacm's rs_do_connect.
 */
static int
do_connect(struct rs *s)
{
	struct rdma_conn_param param;
	struct conn_data req;
	const struct rdma_cm_event *e;
	int ret;

	pthread_mutex_lock(&s->slock);
	switch (s->state) {
	case S_INIT:
	case S_BOUND:
		set_nonblock(s->id->channel->fd, s->fs_flags & O_NONBLOCK);
		ret = rdma_resolve_addr(s->id, NULL, &s->id->route.addr.dst_addr, RS_CONN_MS);
		if (ret == 0)
			goto resolve_route;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			s->state = S_RESOLVING_ADDR;
		break;
	case S_RESOLVING_ADDR:
		ret = mwp_rdmacm_complete(s->id, RDMA_CM_EVENT_ADDR_RESOLVED);
		if (ret != 0)
			break;
resolve_route:
		ret = rdma_resolve_route(s->id, RS_CONN_MS);
		if (ret == 0)
			goto do_connect;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			s->state = S_RESOLVING_ROUTE;
		break;
	case S_RESOLVING_ROUTE:
		ret = mwp_rdmacm_complete(s->id, RDMA_CM_EVENT_ROUTE_RESOLVED);
		if (ret != 0)
			break;
do_connect:
		ret = rs_create_ep(s);
		if (ret != 0)
			break;
		memset(&param, 0, sizeof(param));
		conn_format(s, &req);
		param.private_data = &req;
		param.private_data_len = sizeof(req);
		param.flow_control = 1;
		param.retry_count = 7;
		param.rnr_retry_count = 7;
		ret = rdma_connect(s->id, &param);
		if (ret == 0)
			goto established;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			s->state = S_CONNECTING;
		break;
	case S_CONNECTING:
		ret = mwp_rdmacm_complete(s->id, RDMA_CM_EVENT_ESTABLISHED);
		if (ret != 0)
			break;
established:
		e = s->id->event;
		if (e == NULL ||
		    !conn_save(s, e->param.conn.private_data, e->param.conn.private_data_len)) {
			ret = fail(ENOTSUP);	/* the peer is no rsocket */
			break;
		}
		connected(s);
		break;
	case S_ACCEPTING:
		ret = mwp_rdmacm_complete(s->id, RDMA_CM_EVENT_ESTABLISHED);
		if (ret == 0)
			connected(s);
		break;
	case S_CONNECT_ERROR:
	case S_DISCONNECTED:
	case S_ERROR:
		ret = fail(ENOTCONN);
		goto out;
	default:
		ret = (s->state & S_CONNECTED) ? 0 : fail(EINVAL);
		goto out;
	}
	if (ret != 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			errno = EINPROGRESS;
		} else {
			s->state = S_CONNECT_ERROR;
			s->err = errno;
		}
	}
out:
	pthread_mutex_unlock(&s->slock);
	return ret;
}

/* A call that needs the connection: the CM exchange on, if it is under
 * way; 0 when it is done, else -1 with EAGAIN (not yet) or its error. */
static int
opened(struct rs *s)
{
	if (!(s->state & S_OPENING))
		return 0;
	if (do_connect(s) == 0)
		return 0;
	if (errno == EINPROGRESS)
		errno = EAGAIN;
	return -1;
}

int
rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rs *s = lookup(socket);

	if (s == NULL)
		return fail(EBADF);
	if (s->state & S_CONNECTED)
		return fail(EISCONN);
	if (s->state & S_OPENING)
		return fail(EALREADY);
	if (s->state != S_INIT && s->state != S_BOUND)
		return fail(s->state == S_LISTENING ? EINVAL : ENOTCONN);
	if (addr == NULL || addrlen > sizeof(s->id->route.addr.dst_storage) ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return fail(EINVAL);
	memcpy(&s->id->route.addr.dst_addr, addr, addrlen);
	return do_connect(s);	/* EINPROGRESS: non-blocking, under way */
}

/* ---- receiving ---- */

static size_t
copy_out(struct rs *s, uint8_t *buf, size_t len, bool peek)
{
	size_t left = len;
	int head = s->rmsg_head, off = s->rbuf_offset;

	while (left != 0 && head != s->rmsg_tail) {
		uint32_t n, end;

		if (left < s->rmsg[head].data) {
			n = (uint32_t)left;
			if (!peek)
				s->rmsg[head].data -= n;
		} else {
			n = s->rmsg[head].data;
			if (!peek)
				s->rseq_no++;
			if (++head == s->rq_size + 1)
				head = 0;
		}
		left -= n;
		end = s->rbuf_size - off;
		if (n > end) {
			memcpy(buf, &s->rbuf[off], end);
			buf += end;
			n -= end;
			off = 0;
			if (!peek)
				s->rbuf_bytes_avail += end;
		}
		memcpy(buf, &s->rbuf[off], n);
		buf += n;
		off += n;
		if (!peek)
			s->rbuf_bytes_avail += n;
	}
	if (!peek) {
		s->rmsg_head = head;
		s->rbuf_offset = off;
	}
	return len - left;
}

ssize_t
rrecv(int socket, void *buf, size_t len, int flags)
{
	struct rs *s = lookup(socket);
	size_t got = 0;
	int ret = 0;

	if (s == NULL)
		return fail(EBADF);
	if (opened(s) != 0)
		return -1;
	if (!(s->state & (S_CONNECTED | S_DISCONNECTED | S_ERROR)))
		return fail(ENOTCONN);
	pthread_mutex_lock(&s->rlock);
	do {
		if (!have_rdata(s)) {
			ret = get_comp(s, nonblocking(s, flags), conn_have_rdata);
			if (ret != 0)
				break;
		}
		pthread_mutex_lock(&s->cq_lock);
		got += copy_out(s, (uint8_t *)buf + got, len - got, flags & MSG_PEEK);
		pthread_mutex_unlock(&s->cq_lock);
		if (flags & MSG_PEEK)
			break;
	} while (got < len && (flags & MSG_WAITALL) && (s->state & S_READABLE));
	pthread_mutex_unlock(&s->rlock);
	if (ret != 0 && got == 0)
		return -1;
	if (got == 0 && s->state == S_ERROR)
		return fail(s->err ? s->err : ECONNRESET);
	return (ssize_t)got;
}

ssize_t
rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
	  socklen_t *addrlen)
{
	ssize_t ret = rrecv(socket, buf, len, flags);

	if (ret >= 0 && src_addr != NULL && addrlen != NULL)
		rgetpeername(socket, src_addr, addrlen);
	return ret;
}

/* An iovec's buffers one after another through fn (rrecv or rsend),
 * until one takes less than its length; after the first, with then
 * added to the flags.  What they took, or the first one's error. */
static ssize_t
each_iov(int socket, const struct iovec *iov, int iovcnt, int flags, int then,
	 ssize_t (*fn)(int, void *, size_t, int))
{
	ssize_t total = 0;

	for (int i = 0; i < iovcnt; i++) {
		ssize_t n;

		if (iov[i].iov_len == 0)
			continue;
		n = fn(socket, iov[i].iov_base, iov[i].iov_len, total != 0 ? flags | then : flags);
		if (n < 0)
			return total != 0 ? total : n;
		total += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	return total;
}

/* after data, a receive does not wait for more */
static ssize_t
rrecvv(int socket, const struct iovec *iov, int iovcnt, int flags)
{
	return each_iov(socket, iov, iovcnt, flags, MSG_DONTWAIT, rrecv);
}

ssize_t
rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	if (msg->msg_control != NULL && msg->msg_controllen != 0)
		return fail(ENOTSUP);
	return rrecvv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

ssize_t
rread(int socket, void *buf, size_t count)
{
	return rrecv(socket, buf, count, 0);
}

ssize_t
rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	return rrecvv(socket, iov, iovcnt, 0);
}

/* ---- sending ---- */

/* riomap()ed buffers not yet in the peer's table: written there now. */
static int
send_iomaps(struct rs *s, int flags)
{
	struct iomap *m;
	int ret = 0;

	pthread_mutex_lock(&s->map_lock);
	while ((m = TAILQ_FIRST(&s->iomap_queue)) != NULL) {
		struct rs_iomap iom;
		struct ibv_sge one;
		uint64_t addr;
		int nsge;

		if (!can_send(s)) {
			ret = get_comp(s, nonblocking(s, flags), conn_can_send);
			if (ret != 0)
				break;
			if (!(s->state & S_WRITABLE)) {
				ret = fail(ECONNRESET);
				break;
			}
		}
		iom.offset = m->offset;
		iom.sge.addr = (uintptr_t)m->mr->addr;
		iom.sge.length = (uint32_t)m->mr->length;
		iom.sge.key = m->mr->rkey;
		if (s->swap) {
			iom.offset = __builtin_bswap64(iom.offset);
			iom.sge.addr = __builtin_bswap64(iom.sge.addr);
			iom.sge.length = __builtin_bswap32(iom.sge.length);
			iom.sge.key = __builtin_bswap32(iom.sge.key);
		}
		s->sseq_no++;
		s->sqe_avail--;
		s->sbuf_bytes_avail -= sizeof(iom);
		addr = s->remote_iomap.addr + (uint64_t)m->index * sizeof(iom);
		if (s->sq_inline >= sizeof(iom)) {
			one.addr = (uintptr_t)&iom;
			one.length = sizeof(iom);
			one.lkey = 0;
			ret = post_write(s, &one, 1, MSG(OP_IOMAP_SGL, m->index), true,
					 IBV_SEND_INLINE, addr, s->remote_iomap.key);
		} else {
			nsge = sbuf_copy(s, &iom, sizeof(iom));
			ret = post_write(s, s->ssgl, nsge, MSG(OP_IOMAP_SGL, m->index), true, 0,
					 addr, s->remote_iomap.key);
			sbuf_advance(s, nsge);
		}
		TAILQ_REMOVE(&s->iomap_queue, m, link);
		TAILQ_INSERT_TAIL(&s->iomap_list, m, link);
		if (ret != 0)
			break;
	}
	s->iomap_pending = !TAILQ_EMPTY(&s->iomap_queue);
	pthread_mutex_unlock(&s->map_lock);
	return ret;
}

/* The next piece of a send of left bytes: long sends go in pieces that
 * double from RS_OLAP_START (so the first arrives soon), bounded by the
 * send ring's room and the granted buffer. */
static uint32_t
piece(struct rs *s, size_t left, uint32_t *olen, uint32_t room)
{
	uint32_t n;

	if (*olen < left) {
		n = *olen;
		if (*olen < RS_MAX_XFER)
			*olen <<= 1;
	} else {
		n = (uint32_t)left;
	}
	if (n > (uint32_t)s->sbuf_bytes_avail)
		n = (uint32_t)s->sbuf_bytes_avail;
	if (n > room)
		n = room;
	return n;
}

/* The send side's wait for room; 0: there is. */
static int
wait_send(struct rs *s, int flags)
{
	if (can_send(s))
		return 0;
	if (get_comp(s, nonblocking(s, flags), conn_can_send) != 0)
		return -1;
	if (!(s->state & S_WRITABLE))
		return fail(s->state == S_ERROR && s->err ? s->err : ECONNRESET);
	return 0;
}

/* What a send posted goes on the wire now: one turn of the device's
 * datapath in this thread, if no other thread has it. */
static void
kick(struct rs *s)
{
	struct mwp_ibv_dev *d = mwp_ibv_ctx_dev(s->id->verbs);

	if (d != NULL)
		mwp_ibv_progress(d);
}

ssize_t
rsend(int socket, const void *buf, size_t len, int flags)
{
	struct rs *s = lookup(socket);
	const uint8_t *p = buf;
	size_t left = len;
	uint32_t olen = RS_OLAP_START;
	int ret = 0;

	if (s == NULL)
		return fail(EBADF);
	if (opened(s) != 0)
		return -1;
	if (!(s->state & S_CONNECTED))
		return fail(s->state & (S_DISCONNECTED | S_ERROR) ? EPIPE : ENOTCONN);
	pthread_mutex_lock(&s->slock);
	if (s->iomap_pending && (ret = send_iomaps(s, flags)) != 0)
		goto out;
	while (left != 0) {
		uint32_t n;

		ret = wait_send(s, flags);
		if (ret != 0)
			break;
		pthread_mutex_lock(&s->cq_lock);
		n = piece(s, left, &olen, s->target_sgl[s->target_sge].length);
		ret = write_data(s, p, n);
		pthread_mutex_unlock(&s->cq_lock);
		if (ret != 0)
			break;
		p += n;
		left -= n;
	}
out:
	pthread_mutex_unlock(&s->slock);
	if (left != len)
		kick(s);
	return ret != 0 && left == len ? -1 : (ssize_t)(len - left);
}

ssize_t
rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
	socklen_t addrlen)
{
	if (dest_addr != NULL || addrlen != 0)
		return fail(EISCONN);
	return rsend(socket, buf, len, flags);
}

static ssize_t
send_buf(int socket, void *buf, size_t len, int flags)
{
	return rsend(socket, buf, len, flags);
}

static ssize_t
rsendv(int socket, const struct iovec *iov, int iovcnt, int flags)
{
	return each_iov(socket, iov, iovcnt, flags, 0, send_buf);
}

ssize_t
rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	if (msg->msg_control != NULL && msg->msg_controllen != 0)
		return fail(ENOTSUP);
	if (msg->msg_name != NULL)
		return fail(EISCONN);
	return rsendv(socket, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

ssize_t
rwrite(int socket, const void *buf, size_t count)
{
	return rsend(socket, buf, count, 0);
}

ssize_t
rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	return rsendv(socket, iov, iovcnt, 0);
}

/* ---- iomap ---- */

off_t
riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	struct rs *s = lookup(socket);
	struct iomap *m = NULL;
	int access = IBV_ACCESS_LOCAL_WRITE;

	RTE_SET_USED(flags);
	if (s == NULL)
		return fail(EBADF);
	if (s->id->pd == NULL || (prot & ~(PROT_WRITE | PROT_NONE)))
		return fail(EINVAL);
	pthread_mutex_lock(&s->map_lock);
	if (prot & PROT_WRITE) {
		if (s->remote_maps == NULL && s->remote_iomap.length != 0) {
			s->remote_maps = calloc(s->remote_iomap.length, sizeof(*s->remote_maps));
			for (uint32_t i = 0; s->remote_maps != NULL && i < s->remote_iomap.length;
			     i++)
				s->remote_maps[i].index = (int)i;
		}
		for (uint32_t i = 0; s->remote_maps != NULL && i < s->remote_iomap.length; i++)
			if (s->remote_maps[i].mr == NULL) {
				m = &s->remote_maps[i];
				break;
			}
		access |= IBV_ACCESS_REMOTE_WRITE;
	} else {
		m = calloc(1, sizeof(*m));
		if (m != NULL)
			m->index = -1;
	}
	if (m == NULL) {
		offset = fail(ENOMEM);
		goto out;
	}
	m->mr = ibv_reg_mr(s->id->pd, buf, len, access);
	if (m->mr == NULL) {
		if (m->index < 0)
			free(m);
		offset = -1;
		goto out;
	}
	if (offset == -1)
		offset = (off_t)(uintptr_t)buf;
	m->offset = (uint64_t)offset;
	if (m->index >= 0) {
		TAILQ_INSERT_TAIL(&s->iomap_queue, m, link);
		s->iomap_pending = true;
	} else {
		TAILQ_INSERT_TAIL(&s->iomap_list, m, link);
	}
out:
	pthread_mutex_unlock(&s->map_lock);
	return offset;
}

int
riounmap(int socket, void *buf, size_t len)
{
	struct rs *s = lookup(socket);
	struct iomap_list *lists[2];
	int ret = fail(EINVAL);

	if (s == NULL)
		return fail(EBADF);
	lists[0] = &s->iomap_list;
	lists[1] = &s->iomap_queue;
	pthread_mutex_lock(&s->map_lock);
	for (int i = 0; i < 2 && ret != 0; i++) {
		struct iomap *m;

		TAILQ_FOREACH(m, lists[i], link)
			if (m->mr->addr == buf && m->mr->length == len) {
				TAILQ_REMOVE(lists[i], m, link);
				ibv_dereg_mr(m->mr);
				m->mr = NULL;
				if (m->index < 0)
					free(m);
				ret = 0;
				break;
			}
	}
	pthread_mutex_unlock(&s->map_lock);
	if (ret == 0)
		errno = 0;
	return ret;
}

/* The peer's mapping holding offset, from the table it wrote. */
static volatile struct rs_iomap *
find_iomap(struct rs *s, uint64_t offset)
{
	for (int i = 0; i < s->target_iomap_size; i++) {
		volatile struct rs_iomap *m = &s->target_iomap[i];

		if (offset >= m->offset && offset < m->offset + m->sge.length)
			return m;
	}
	return NULL;
}

size_t
riowrite(int socket, const void *buf, size_t count, off_t offset, int flags)
{
	struct rs *s = lookup(socket);
	volatile struct rs_iomap *m = NULL;
	const uint8_t *p = buf;
	size_t left = count;
	uint32_t olen = RS_OLAP_START;
	int ret = 0;

	if (s == NULL)
		return (size_t)fail(EBADF);
	if (opened(s) != 0)
		return (size_t)-1;
	if (!(s->state & S_CONNECTED))
		return (size_t)fail(ENOTCONN);
	pthread_mutex_lock(&s->slock);
	if (s->iomap_pending && (ret = send_iomaps(s, flags)) != 0)
		goto out;
	while (left != 0) {
		uint64_t off = (uint64_t)offset, addr;
		uint32_t n, rkey;
		struct ibv_sge one;
		int nsge;

		if (m == NULL || off >= m->offset + m->sge.length) {
			m = find_iomap(s, off);
			if (m == NULL) {
				if (left == count)
					ret = fail(EINVAL);
				break;
			}
		}
		ret = wait_send(s, flags);
		if (ret != 0)
			break;
		pthread_mutex_lock(&s->cq_lock);
		n = piece(s, left, &olen, (uint32_t)(m->offset + m->sge.length - off));
		addr = m->sge.addr + off - m->offset;
		rkey = m->sge.key;
		s->sqe_avail--;
		s->sbuf_bytes_avail -= n;
		if (n <= s->sq_inline) {
			one.addr = (uintptr_t)p;
			one.length = n;
			one.lkey = 0;
			ret = post_write(s, &one, 1, MSG(OP_WRITE, n), false, IBV_SEND_INLINE,
					 addr, rkey);
		} else {
			nsge = sbuf_copy(s, p, n);
			ret = post_write(s, s->ssgl, nsge, MSG(OP_WRITE, n), false, 0, addr, rkey);
			sbuf_advance(s, nsge);
		}
		pthread_mutex_unlock(&s->cq_lock);
		if (ret != 0)
			break;
		p += n;
		left -= n;
		offset += n;
	}
out:
	pthread_mutex_unlock(&s->slock);
	if (left != count)
		kick(s);
	return ret != 0 && left == count ? (size_t)-1 : count - left;
}

/* ---- poll and select ---- */

/* What s has for events now (nonblock: without waiting). */
static short
poll_rs(struct rs *s, short events, bool nonblock, bool (*test)(struct rs *))
{
	short rev = 0;

	/* the CM exchange under way: on, as its events have come */
	if ((s->state & S_OPENING) && do_connect(s) != 0 && errno == EINPROGRESS)
		return 0;
	if (s->state & (S_CONNECTED | S_DISCONNECTED | S_ERROR)) {
		if (s->id->recv_cq != NULL)
			process_cq(s, nonblock, test);
		if ((events & POLLIN) && conn_have_rdata(s))
			rev |= POLLIN;
		if ((events & POLLOUT) && can_send(s))
			rev |= POLLOUT;
		if (!(s->state & S_CONNECTED))
			rev |= s->state == S_DISCONNECTED ? POLLHUP : POLLERR;
		return rev;
	}
	if (s->state == S_LISTENING) {
		struct pollfd p = { .fd = s->id->channel->fd, .events = events };

		poll(&p, 1, 0);
		return p.revents;
	}
	if (s->state == S_CONNECT_ERROR)
		return (short)((events & (POLLIN | POLLOUT)) | POLLERR);
	return 0;
}

static int
poll_check(struct pollfd *fds, nfds_t nfds)
{
	int cnt = 0;

	for (nfds_t i = 0; i < nfds; i++) {
		struct rs *s = lookup(fds[i].fd);

		if (s != NULL)
			fds[i].revents = poll_rs(s, fds[i].events, true, poll_all);
		else
			poll(&fds[i], 1, 0);
		if (fds[i].revents)
			cnt++;
	}
	return cnt;
}

static int64_t
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd *rfds;
	struct rdma_cm_id *any = NULL;
	int64_t start = now_us();
	int ret;

	do {
		ret = poll_check(fds, nfds);
		if (ret != 0 || timeout == 0)
			return ret;
	} while (now_us() - start <= RS_POLL_US);

	rfds = calloc(nfds * 2 + 1, sizeof(*rfds));
	if (rfds == NULL)
		return fail(ENOMEM);
	for (;;) {
		int ms = -1;

		/* arm: each rsocket's CQ (looked at once more after) or
		 * listener, its CM channel too; the rest as they are */
		for (nfds_t i = 0; i < nfds; i++) {
			struct rs *s = lookup(fds[i].fd);

			rfds[2 * i].revents = rfds[2 * i + 1].revents = 0;
			rfds[2 * i + 1].fd = -1;
			if (s == NULL) {
				rfds[2 * i].fd = fds[i].fd;
				rfds[2 * i].events = fds[i].events;
				continue;
			}
			fds[i].revents = poll_rs(s, fds[i].events, false, is_armed);
			if (fds[i].revents) {
				ret = 1;
				goto found;
			}
			rfds[2 * i].events = rfds[2 * i + 1].events = POLLIN;
			if ((s->state & (S_CONNECTED | S_DISCONNECTED | S_ERROR)) &&
			    s->id->recv_cq_channel != NULL) {
				rfds[2 * i].fd = s->id->recv_cq_channel->fd;
				rfds[2 * i + 1].fd = s->id->channel->fd;
			} else {
				rfds[2 * i].fd = s->id->channel->fd;
			}
			if (any == NULL && s->id->verbs != NULL)
				any = s->id;
		}
		if (timeout > 0) {
			int64_t left = timeout - (now_us() - start) / 1000;

			if (left <= 0) {
				ret = 0;
				break;
			}
			ms = (int)left;
		}
		ret = wait_fds(any, rfds, nfds * 2, ms);
		if (ret < 0)
			break;
		/* what woke us: the CQs' events taken, then every socket
		 * looked at again */
		ret = 0;
		for (nfds_t i = 0; i < nfds; i++) {
			struct rs *s = lookup(fds[i].fd);

			if (s == NULL) {
				fds[i].revents = rfds[2 * i].revents;
			} else {
				if (rfds[2 * i + 1].fd >= 0) {
					pthread_mutex_lock(&s->cq_lock);
					if (rfds[2 * i].revents)
						take_cq_event(s);
					if (rfds[2 * i + 1].revents)
						cm_events(s);
					pthread_mutex_unlock(&s->cq_lock);
				}
				fds[i].revents = poll_rs(s, fds[i].events, true, poll_all);
			}
			if (fds[i].revents)
				ret++;
		}
		if (ret != 0)
			break;
	}
found:
	free(rfds);
	return ret;
}

int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
	struct timeval *timeout)
{
	struct pollfd *p;
	int n = 0, ret, ms;

	p = calloc(nfds > 0 ? nfds : 1, sizeof(*p));
	if (p == NULL)
		return fail(ENOMEM);
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;

		if (readfds != NULL && FD_ISSET(fd, readfds))
			ev |= POLLIN;
		if (writefds != NULL && FD_ISSET(fd, writefds))
			ev |= POLLOUT;
		if (ev != 0 || (exceptfds != NULL && FD_ISSET(fd, exceptfds))) {
			p[n].fd = fd;
			p[n].events = ev;
			n++;
		}
	}
	ms = timeout == NULL ? -1 : (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000);
	ret = rpoll(p, (nfds_t)n, ms);
	if (readfds != NULL)
		FD_ZERO(readfds);
	if (writefds != NULL)
		FD_ZERO(writefds);
	if (exceptfds != NULL)
		FD_ZERO(exceptfds);
	if (ret > 0) {
		ret = 0;
		for (int i = 0; i < n; i++) {
			if (readfds != NULL && (p[i].revents & (POLLIN | POLLHUP))) {
				FD_SET(p[i].fd, readfds);
				ret++;
			}
			if (writefds != NULL && (p[i].revents & POLLOUT)) {
				FD_SET(p[i].fd, writefds);
				ret++;
			}
			if (exceptfds != NULL && (p[i].revents & ~(POLLIN | POLLOUT))) {
				FD_SET(p[i].fd, exceptfds);
				ret++;
			}
		}
	}
	free(p);
	return ret;
}

/* ---- shutdown and close ---- */

int
rshutdown(int socket, int how)
{
	struct rs *s = lookup(socket);
	int ctrl, ret = 0;

	if (s == NULL)
		return fail(EBADF);
	if (s->state & S_CONNECTED) {
		if (how == SHUT_RDWR) {
			ctrl = CTRL_DISCONNECT;
			s->state &= ~(S_READABLE | S_WRITABLE);
		} else if (how == SHUT_WR) {
			s->state &= ~S_WRITABLE;
			ctrl = (s->state & S_READABLE) ? CTRL_SHUTDOWN : CTRL_DISCONNECT;
		} else {
			s->state &= ~S_READABLE;
			if (s->state & S_WRITABLE)
				return 0;
			ctrl = CTRL_DISCONNECT;
		}
		if (!ctrl_avail(s) && (ret = process_cq(s, false, conn_can_send_ctrl)) != 0)
			return ret;
		pthread_mutex_lock(&s->cq_lock);
		if ((s->state & S_CONNECTED) && ctrl_avail(s)) {
			s->ctrl_seqno++;
			ret = post_msg(s, MSG(OP_CTRL, ctrl));
		}
		pthread_mutex_unlock(&s->cq_lock);
	}
	if (s->state & S_CONNECTED)
		process_cq(s, false, all_sends_done);
	if (s->state & (S_DISCONNECTED | S_ERROR))
		rdma_disconnect(s->id);	/* the QP to ERROR, and the CM's DREQ */
	return ret;
}

int
rclose(int socket)
{
	struct rs *s = lookup(socket);

	if (s == NULL)
		return fail(EBADF);
	if (s->state & S_CONNECTED)
		rshutdown(socket, SHUT_RDWR);
	rs_free(s);
	return 0;
}

/* ---- names and options ---- */

static void
copy_addr(struct sockaddr *dst, const struct sockaddr *src, socklen_t *len)
{
	socklen_t n = src->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						   sizeof(struct sockaddr_in);

	memcpy(dst, src, RTE_MIN(*len, n));
	*len = n;
}

int
rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs *s = lookup(socket);

	if (s == NULL)
		return fail(EBADF);
	if (!(s->state & (S_CONNECTED | S_OPENING)))
		return fail(ENOTCONN);
	copy_addr(addr, &s->id->route.addr.dst_addr, addrlen);
	return 0;
}

int
rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rs *s = lookup(socket);

	if (s == NULL)
		return fail(EBADF);
	copy_addr(addr, &s->id->route.addr.src_addr, addrlen);
	return 0;
}

/* SO_SNDBUF's and SO_RCVBUF's value: twice what is asked, as the
 * kernel's (and librdmacm's) doubling, within what a ring's int
 * counters hold. */
static uint32_t
buf_size(uint32_t asked)
{
	return (uint32_t)RTE_MAX(RTE_MIN((uint64_t)asked << 1, (uint64_t)RS_MAX_BUF),
				 (uint64_t)RS_SNDLOWAT << 1);
}

int
rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen)
{
	struct rs *s = lookup(socket);
	uint64_t *opts = NULL;
	int on = 0, ret = fail(ENOTSUP);

	if (s == NULL)
		return fail(EBADF);
	if (optval == NULL || optlen < sizeof(int))
		return fail(EINVAL);
	switch (level) {
	case SOL_SOCKET:
		opts = &s->so_opts;
		switch (optname) {
		case SO_REUSEADDR:
			/* ports are reused at once here: nothing to set */
			on = *(const int *)optval;
			ret = 0;
			break;
		case SO_RCVBUF:
			if (s->rbuf == NULL)
				s->rbuf_size = buf_size(*(const uint32_t *)optval);
			ret = 0;
			break;
		case SO_SNDBUF:
			if (s->sbuf == NULL)
				s->sbuf_size = buf_size(*(const uint32_t *)optval);
			ret = 0;
			break;
		case SO_LINGER:
			if (optlen < sizeof(struct linger))
				return fail(EINVAL);
			on = !((const struct linger *)optval)->l_onoff;
			ret = 0;
			break;
		case SO_KEEPALIVE:
		case SO_OOBINLINE:
			on = *(const int *)optval;
			ret = 0;
			break;
		default:
			break;
		}
		break;
	case IPPROTO_TCP:
		opts = &s->tcp_opts;
		switch (optname) {
		case TCP_NODELAY:
			on = *(const int *)optval;
			ret = 0;
			break;
		case TCP_KEEPCNT:
		case TCP_KEEPINTVL:
		case TCP_KEEPIDLE:
		case TCP_MAXSEG:
			ret = 0;	/* a reliable connection: nothing to set */
			break;
		default:
			break;
		}
		break;
	case IPPROTO_IPV6:
		opts = &s->ipv6_opts;
		if (optname == IPV6_V6ONLY) {
			ret = rdma_set_option(s->id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
					      (void *)optval, optlen);
			on = *(const int *)optval;
		}
		break;
	case SOL_RDMA:
		if (s->state & S_CONNECTED || s->id->qp != NULL)
			return fail(EINVAL);
		switch (optname) {
		case RDMA_SQSIZE:
			s->sq_size = (uint16_t)RTE_MIN(*(const uint32_t *)optval, (uint32_t)RS_QP_MAX);
			ret = 0;
			break;
		case RDMA_RQSIZE:
			s->rq_size = (uint16_t)RTE_MIN(*(const uint32_t *)optval, (uint32_t)RS_QP_MAX);
			ret = 0;
			break;
		case RDMA_INLINE:
			s->sq_inline = (uint16_t)RTE_MIN(*(const uint32_t *)optval, (uint32_t)RS_QP_MAX);
			ret = 0;
			break;
		case RDMA_IOMAPSIZE:
			s->target_iomap_size = (uint16_t)rs_unscale(
				(uint8_t)rs_scale(*(const int *)optval));
			ret = 0;
			break;
		default:
			break;
		}
		break;
	default:
		break;
	}
	if (ret == 0 && opts != NULL && optname < 64) {
		if (on)
			*opts |= 1ull << optname;
		else
			*opts &= ~(1ull << optname);
	}
	return ret;
}

int
rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen)
{
	struct rs *s = lookup(socket);
	int v;

	if (s == NULL)
		return fail(EBADF);
	if (optval == NULL || optlen == NULL || *optlen < sizeof(int))
		return fail(EINVAL);
	switch (level) {
	case SOL_SOCKET:
		switch (optname) {
		case SO_REUSEADDR:
		case SO_KEEPALIVE:
		case SO_OOBINLINE:
			v = !!(s->so_opts & (1ull << optname));
			break;
		case SO_RCVBUF:
			v = (int)s->rbuf_size;
			break;
		case SO_SNDBUF:
			v = (int)s->sbuf_size;
			break;
		case SO_ERROR:
			v = s->err;
			s->err = 0;
			break;
		default:
			return fail(ENOTSUP);
		}
		break;
	case IPPROTO_TCP:
		switch (optname) {
		case TCP_NODELAY:
			v = !!(s->tcp_opts & (1ull << optname));
			break;
		case TCP_MAXSEG:
			v = s->id->route.num_paths != 0 ?
			    1 << (7 + s->id->route.path_rec->mtu) : 2048;
			break;
		default:
			return fail(ENOTSUP);
		}
		break;
	case IPPROTO_IPV6:
		if (optname != IPV6_V6ONLY)
			return fail(ENOTSUP);
		v = !!(s->ipv6_opts & (1ull << optname));
		break;
	case SOL_RDMA:
		switch (optname) {
		case RDMA_SQSIZE:
			v = s->sq_size;
			break;
		case RDMA_RQSIZE:
			v = s->rq_size;
			break;
		case RDMA_INLINE:
			v = s->sq_inline;
			break;
		case RDMA_IOMAPSIZE:
			v = s->target_iomap_size;
			break;
		default:
			return fail(ENOTSUP);
		}
		break;
	default:
		return fail(ENOTSUP);
	}
	*(int *)optval = v;
	*optlen = sizeof(int);
	return 0;
}

int
rfcntl(int socket, int cmd, ...)
{
	struct rs *s = lookup(socket);
	va_list ap;
	int arg, ret = 0;

	if (s == NULL)
		return fail(EBADF);
	va_start(ap, cmd);
	switch (cmd) {
	case F_GETFL:
		ret = s->fs_flags;
		break;
	case F_SETFL:
		arg = va_arg(ap, int);
		s->fs_flags = arg;
		/* a listener's and a connecting socket's waits are their
		 * channel's reads */
		if (s->state == S_LISTENING || (s->state & S_OPENING))
			set_nonblock(s->id->channel->fd, arg & O_NONBLOCK);
		break;
	case F_GETFD:
		ret = s->fd_flags;
		break;
	case F_SETFD:
		s->fd_flags = va_arg(ap, int);
		break;
	default:
		ret = fail(ENOTSUP);
		break;
	}
	va_end(ap);
	return ret;
}
