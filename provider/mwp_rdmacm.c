/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm's API for mwpath's addresses (docs/cm.md): what
 * librdmacm.so.1 exports, defined here and preloaded with the verbs, so
 * that rping, ucmatose, udaddy, rdma_server/rdma_client and perftest's
 * -R run unmodified.  Where librdmacm asks the kernel's rdma_cm (through
 * /dev/infiniband/rdma_cm), this asks the port's CM (lib/cm/), whose
 * events the device's CM thread hands to mwp_rdmacm_events(); the rest
 * -- QPs moved to RTR and RTS with what the peer sent, the RDMA CM's
 * private-data header, port spaces, ephemeral ports -- is what the
 * kernel's rdma_cm and librdmacm do above ib_cm.
 *
 * Addresses: an id bound to, or resolving from, an address of an mwpath
 * device's port is mwpath's; with no source, a destination in a port's
 * subnet (/24, /64).  Any other address is the system's librdmacm's
 * where the kernel's RDMA CM is (mwp_rdmacm_sys.c): the id becomes a
 * face of one of its ids -- every call goes there, its fields are
 * mirrored, and a thread per channel relays its events into the
 * program's channel, so one channel and one event loop serve both.
 * Without the kernel's RDMA CM, such a destination goes to the first
 * mwpath device of its family, and a source address that is no
 * port's is EADDRNOTAVAIL / ENODEV.
 *
 * One lock (rlock) covers the ids and channels; the CM's own lock is
 * taken inside it, never around it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rte_cycles.h>
#include <rte_random.h>

#include "mwp_rdmacm.h"
#include "roce_mad.h"

#define RID_MAGIC	0x6d777269u
/* What a REQ's and a SIDR REQ's private data lose to the IP header. */
#define IP_HDR_BYTES	36
/* The QP's local ACK timeout a REQ asks for when the program does not
 * set one (the kernel's rdma_cm over RoCE: 18 + 1). */
#define ACK_TIMEOUT	19
/* How long rdma_resolve_addr asks for the peer's MAC when the program
 * gives no timeout (librdmacm's rdma_getaddrinfo route: 2000 ms). */
#define RESOLVE_MS	2000

struct rid;

struct rev {
	struct rdma_cm_event ev;	/* first: what the program holds */
	TAILQ_ENTRY(rev) link;
	/* whose count of events taken and not yet acknowledged this one is
	 * in: its id's, a request's its listener's (as librdmacm counts) */
	struct rid *owner;
	struct rdma_cm_event *sys;	/* the system's event it carries */
	uint8_t pd[MWP_CM_PRIVATE_MAX];
};

struct rchan {
	struct rdma_event_channel ch;	/* first; fd: an eventfd, semaphore */
	TAILQ_HEAD(, rev) q;
	/* its twin on the system's librdmacm, whose events a thread of its
	 * own relays here (made with the first id of the system's on it) */
	struct rdma_event_channel *sys;
};

enum rstate {
	R_IDLE, R_BOUND, R_LISTEN, R_RESOLVING, R_ADDR, R_ROUTE, R_CONNECT, R_REQ, R_ACCEPTED,
	R_EST, R_DISCONNECTED,
};

struct rid {
	struct rdma_cm_id id;		/* first: what the program holds */
	uint32_t magic;
	enum rstate state;
	struct mwp_ibv_dev *d;		/* bound, resolved or accepted on */
	struct mwp_cm_id *cm;		/* a connection or SIDR of d's CM */
	/* an id of the system's librdmacm (an address not mwpath's): every
	 * call goes to it, and its fields are mirrored into id */
	struct rdma_cm_id *sys;
	struct mwp_cm_id *listen[APP_MAX_DEVICES];	/* a listener: per device */
	/* a wildcard listener's twin on the system's librdmacm (its
	 * devices' requests come to the program as this id's) */
	struct rdma_cm_id *sys_listen;
	struct rchan *own;		/* a synchronous id's channel */
	bool wildcard;			/* bound to any address */
	bool own_cqs;			/* rdma_create_qp made its CQs */
	bool told_disc;			/* DISCONNECTED delivered */
	unsigned int unacked;		/* events taken, not acknowledged */
	/* R_RESOLVING: the peer's MAC asked for until deadline (TSC) */
	TAILQ_ENTRY(rid) resolving;
	bool in_resolving;		/* in the list resolving */
	struct rid *gone;		/* rdma_destroy_id's list */
	uint64_t deadline;
	struct mwp_cm_conn_param peer;	/* what the REQ or REP offered */
	struct mwp_cm_path path;
	uint8_t resp_res, init_depth, retry, rnr_retry, ack_timeout, tos;
	uint32_t psn;			/* our starting PSN */
	struct ibv_sa_path_rec rec;	/* route.path_rec */
	/* a passive endpoint's (rdma_create_ep): the QP each of its
	 * requests gets in rdma_get_request */
	bool ep_qp;
	struct ibv_qp_init_attr ep_attr;
	struct ibv_pd *ep_pd;
};

static pthread_mutex_t rlock = PTHREAD_MUTEX_INITIALIZER;
/* broadcast when an id's last unacknowledged event is acknowledged */
static pthread_cond_t racked = PTHREAD_COND_INITIALIZER;
/* ids whose address resolution waits for the neighbour (R_RESOLVING) */
static TAILQ_HEAD(, rid) resolving = TAILQ_HEAD_INITIALIZER(resolving);
static unsigned int nb_resolving;	/* read unlocked by the CM threads */
/* the system's librdmacm, once an address needed it (mwp_rdmacm_sys.c) */
static const struct mwp_sys_rdmacm *S;

/* ---- channels and events ---- */

/* An event let go: the system's one it carries is acknowledged. */
static void
drop(struct rev *e)
{
	if (e->sys != NULL)
		S->ack_cm_event(e->sys);
	free(e);
}

static struct rchan *
chan_new(void)
{
	struct rchan *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	TAILQ_INIT(&c->q);
	return c;
}

static struct rid *
rid_of(struct rdma_cm_id *id)
{
	struct rid *r = (struct rid *)id;

	return r != NULL && r->magic == RID_MAGIC ? r : NULL;
}

/* Queue an event of type for r (status, private data pd of len). */
static struct rev *
post(struct rid *r, enum rdma_cm_event_type type, int status, const void *pd, uint8_t len)
{
	struct rchan *c = (struct rchan *)r->id.channel;
	struct rev *e = calloc(1, sizeof(*e));
	const uint64_t one = 1;

	if (e == NULL || c == NULL) {
		free(e);
		return NULL;
	}
	e->ev.id = &r->id;
	e->owner = r;
	e->ev.event = type;
	e->ev.status = status;
	if (pd != NULL && len != 0) {
		memcpy(e->pd, pd, len);
		e->ev.param.conn.private_data = e->pd;
		e->ev.param.conn.private_data_len = len;
	}
	TAILQ_INSERT_TAIL(&c->q, e, link);
	if (write(c->ch.fd, &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, "mwpath-rdmacm: event channel: %s\n", strerror(errno));
	return e;
}

/* ---- the system's librdmacm: addresses that are not mwpath's ---- */

static int complete(struct rid *r, enum rdma_cm_event_type want);

/* Under rlock: r's fields as its system id's are now (what the program
 * reads of an id: its device, route, QP and CQs). */
static void
mirror(struct rid *r)
{
	const struct rdma_cm_id *y = r->sys;

	r->id.verbs = y->verbs;
	r->id.route = y->route;
	r->id.port_num = y->port_num;
	r->id.qp = y->qp;
	r->id.pd = y->pd;
	r->id.qp_type = y->qp_type;
	r->id.send_cq = y->send_cq;
	r->id.recv_cq = y->recv_cq;
	r->id.send_cq_channel = y->send_cq_channel;
	r->id.recv_cq_channel = y->recv_cq_channel;
	r->id.srq = y->srq;
}

/* Under rlock: the relay's system event se, as an event of ours on the
 * channel of the id it is about (a request: a new id of ours for the
 * system's new one, under the listener's context and channel). */
static void
sys_event(struct rdma_cm_event *se)
{
	struct rid *r, *l = NULL;
	struct rev *e;
	const void *pd;
	uint8_t len;

	if (se->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct rdma_cm_id *child = se->id;

		l = se->listen_id->context;
		r = l != NULL && l->magic == RID_MAGIC ? calloc(1, sizeof(*r)) : NULL;
		if (r == NULL) {
			/* its listener is let go (or no memory) */
			S->ack_cm_event(se);
			S->reject(child, NULL, 0);
			S->destroy_id(child);	/* it has no events: no wait */
			return;
		}
		r->magic = RID_MAGIC;
		r->id.context = l->id.context;
		r->id.channel = l->id.channel;
		r->id.ps = l->id.ps;
		r->state = R_REQ;
		r->sys = child;
		child->context = r;
	} else {
		r = se->id->context;
		if (r == NULL || r->magic != RID_MAGIC) {
			S->ack_cm_event(se);	/* its id is being let go */
			return;
		}
	}
	if (r->sys != NULL)
		mirror(r);	/* (not a wildcard listener's own event) */
	if (r->id.ps == RDMA_PS_UDP || r->id.ps == RDMA_PS_IPOIB) {
		pd = se->param.ud.private_data;
		len = se->param.ud.private_data_len;
	} else {
		pd = se->param.conn.private_data;
		len = se->param.conn.private_data_len;
	}
	e = post(r, se->event, se->status, NULL, 0);
	if (e == NULL) {
		S->ack_cm_event(se);
		return;
	}
	e->sys = se;
	e->ev.param = se->param;
	len = RTE_MIN(len, (uint8_t)sizeof(e->pd));
	if (pd != NULL && len != 0)
		memcpy(e->pd, pd, len);
	if (r->id.ps == RDMA_PS_UDP || r->id.ps == RDMA_PS_IPOIB) {
		e->ev.param.ud.private_data = len != 0 ? e->pd : NULL;
		e->ev.param.ud.private_data_len = len;
	} else {
		e->ev.param.conn.private_data = len != 0 ? e->pd : NULL;
		e->ev.param.conn.private_data_len = len;
	}
	if (l != NULL) {
		e->ev.listen_id = &l->id;
		e->owner = l;
	}
}

/* A system channel's events, relayed to its twin of ours for as long as
 * the process lives (channels are never freed: see
 * rdma_destroy_event_channel). */
static void *
relay(void *arg)
{
	struct rchan *c = arg;
	struct rdma_cm_event *se;

	for (;;) {
		if (S->get_cm_event(c->sys, &se) != 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, "mwpath-rdmacm: the system's events: %s\n",
				strerror(errno));
			return NULL;
		}
		pthread_mutex_lock(&rlock);
		sys_event(se);
		pthread_mutex_unlock(&rlock);
	}
}

/* Under rlock: channel c's twin on the system's librdmacm, and the thread
 * that relays its events, made once.  0 or an errno. */
static int
sys_channel(struct rchan *c)
{
	pthread_t t;

	if (c->sys != NULL)
		return 0;
	c->sys = S->create_event_channel();
	if (c->sys == NULL)
		return errno;
	if (pthread_create(&t, NULL, relay, c) != 0) {
		S->destroy_event_channel(c->sys);
		c->sys = NULL;
		return EAGAIN;
	}
	pthread_setname_np(t, "mwpath-cm-sys");
	pthread_detach(t);
	return 0;
}

/* Under rlock: r becomes an id of the system's librdmacm, on the twin of
 * its channel.  0 or an errno. */
static int
sys_attach(struct rid *r)
{
	int ret = sys_channel((struct rchan *)r->id.channel);

	if (ret != 0)
		return ret;
	if (S->create_id(((struct rchan *)r->id.channel)->sys, &r->sys, r, r->id.ps) != 0) {
		r->sys = NULL;
		return errno;
	}
	mirror(r);
	return 0;
}

/* Under rlock: wildcard listener r listens on the system's devices too,
 * through a twin id of the system's bound to the same address and port;
 * its requests come to the program as r's (sys_event).  0 or an errno:
 * the port taken there (the kernel's ports are not mwpath's), say. */
static int
sys_listen(struct rid *r, int backlog)
{
	struct rchan *c = (struct rchan *)r->id.channel;
	int ret = sys_channel(c);

	if (ret != 0)
		return ret;
	if (S->create_id(c->sys, &r->sys_listen, r, r->id.ps) != 0) {
		r->sys_listen = NULL;
		return errno;
	}
	if (S->bind_addr(r->sys_listen, &r->id.route.addr.src_addr) != 0 ||
	    S->listen(r->sys_listen, backlog) != 0) {
		ret = errno;
		S->destroy_id(r->sys_listen);	/* no events: no wait */
		r->sys_listen = NULL;
		return ret;
	}
	return 0;
}

/* What a call of r on the system's librdmacm gave: r's fields as its
 * id's now are; ret (-1 with the system's errno). */
static int
sys_done(struct rid *r, int ret)
{
	const int e = errno;

	pthread_mutex_lock(&rlock);
	mirror(r);
	pthread_mutex_unlock(&rlock);
	errno = e;
	return ret;
}

/*
 * An id that is not ours while the system's librdmacm is loaded: one of
 * its own, passed back in by its calls of its own exports (the library
 * the program linked is in the global scope, where this preload's
 * definitions come first): its own function answers.
 */
static bool
theirs(struct rdma_cm_id *id)
{
	return id != NULL && S != NULL && rid_of(id) == NULL;
}

/* ... and a synchronous id's wait for its event, as the call's own. */
static int
sys_then(struct rid *r, int ret, enum rdma_cm_event_type want)
{
	ret = sys_done(r, ret);
	return ret != 0 ? ret : complete(r, want);
}

/* Under rlock: r leaves (or is not in) the list of ids resolving. */
static void
not_resolving(struct rid *r)
{
	if (!r->in_resolving)
		return;
	TAILQ_REMOVE(&resolving, r, resolving);
	r->in_resolving = false;
	__atomic_store_n(&nb_resolving, nb_resolving - 1, __ATOMIC_RELAXED);
}

/* Under rlock: r's address resolution done (ADDR_RESOLVED), failed at
 * its deadline (ADDR_ERROR, -ETIMEDOUT as the kernel's), or still
 * waiting for the neighbour's answer. */
static void
resolve_step(struct rid *r, uint64_t now)
{
	enum mwp_neigh_res res = mwp_port_neigh_ask(r->d->port, r->path.dgid.raw, now, NULL);

	if (res != MWP_NEIGH_OK && now < r->deadline)
		return;
	not_resolving(r);
	if (res == MWP_NEIGH_OK) {
		r->state = R_ADDR;
		post(r, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, 0);
	} else {
		/* bound, as the kernel leaves it: it may resolve again */
		r->state = R_BOUND;
		post(r, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT, NULL, 0);
	}
}

bool
mwp_rdmacm_resolving(void)
{
	return __atomic_load_n(&nb_resolving, __ATOMIC_RELAXED) != 0;
}

void
mwp_rdmacm_tick(struct mwp_ibv_dev *d, uint64_t now)
{
	struct rid *r, *t;

	if (__atomic_load_n(&nb_resolving, __ATOMIC_RELAXED) == 0)
		return;
	pthread_mutex_lock(&rlock);
	for (r = TAILQ_FIRST(&resolving); r != NULL; r = t) {
		t = TAILQ_NEXT(r, resolving);
		if (r->d == d)
			resolve_step(r, now);
	}
	pthread_mutex_unlock(&rlock);
}

static uint64_t
service_id(const struct rid *r, uint16_t port)
{
	return (uint64_t)r->id.ps << 16 | port;
}

/* The PD of a device's ids that the program gives none (librdmacm's
 * per-device PD, which it sets in every id bound to the device, and
 * which programs read: pyverbs makes its CMID's PD of id->pd right after
 * rdma_resolve_route).  Made once, kept for the process. */
static struct ibv_pd *
dev_pd(struct mwp_ibv_dev *d, struct ibv_context *ctx)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct ibv_pd *pds[APP_MAX_DEVICES];
	struct ibv_pd *pd;

	if (d->index >= APP_MAX_DEVICES)
		return NULL;
	pthread_mutex_lock(&lock);
	if (pds[d->index] == NULL)
		pds[d->index] = ibv_alloc_pd(ctx);
	pd = pds[d->index];
	pthread_mutex_unlock(&lock);
	return pd;
}

/* Hold d open for r: id->verbs is its context, id->pd the device's. */
static int
use_dev(struct rid *r, struct mwp_ibv_dev *d)
{
	struct ibv_context *ctx;

	if (r->d == d)
		return 0;
	ctx = mwp_ibv_open(d);
	if (ctx == NULL)
		return errno;
	if (d->cm == NULL) {
		mwp_ibv_close(d);
		return ENODEV;
	}
	r->d = d;
	r->id.verbs = ctx;
	r->id.port_num = 1;
	if (r->id.pd == NULL)
		r->id.pd = dev_pd(d, ctx);
	return 0;
}

/* The path from our address to the peer's (for REQs and RTR). */
static void
make_path(struct rid *r)
{
	struct mwp_cm_path *p = &r->path;

	memset(p, 0, sizeof(*p));
	mwp_rdmacm_ip_of(&r->id.route.addr.src_addr, p->sgid.raw);
	mwp_rdmacm_ip_of(&r->id.route.addr.dst_addr, p->dgid.raw);
	p->traffic_class = r->tos;
	p->hop_limit = 64;
	p->pkey = 0xffff;
	p->mtu = (enum ibv_mtu)(rte_bsf32(r->d->pc.mtu) - 7);
	p->ack_timeout = r->ack_timeout != 0 ? r->ack_timeout : ACK_TIMEOUT;
	r->id.route.addr.addr.ibaddr.sgid = p->sgid;
	r->id.route.addr.addr.ibaddr.dgid = p->dgid;
	r->id.route.addr.addr.ibaddr.pkey = htons(0xffff);
	memset(&r->rec, 0, sizeof(r->rec));
	r->rec.sgid = p->sgid;
	r->rec.dgid = p->dgid;
	r->rec.pkey = htons(0xffff);
	r->rec.hop_limit = 64;
	r->rec.traffic_class = r->tos;
	r->rec.mtu_selector = 2;
	r->rec.mtu = p->mtu;
	r->rec.rate_selector = 2;
	r->rec.packet_life_time_selector = 2;
	r->rec.packet_life_time = p->ack_timeout - 1;
	r->rec.numb_path = 1;
	r->id.route.path_rec = &r->rec;
	r->id.route.num_paths = 1;
}

/* The IP header of a REQ or SIDR REQ, then the program's data. */
static uint8_t
ip_private(const struct rid *r, const void *pd, uint8_t len, uint8_t room, uint8_t *out)
{
	const struct sockaddr *src = &r->id.route.addr.src_addr;
	const struct sockaddr *dst = &r->id.route.addr.dst_addr;
	uint16_t sport = htons(mwp_rdmacm_port_of(src));

	memset(out, 0, room);
	out[1] = src->sa_family == AF_INET6 ? 0x60 : 0x40;
	memcpy(out + 2, &sport, 2);
	mwp_rdmacm_ip_of(src, out + 4);
	mwp_rdmacm_ip_of(dst, out + 20);
	if (src->sa_family == AF_INET) {
		/* IPv4 in the last four bytes of each, zeros before */
		memset(out + 4, 0, 12);
		memset(out + 20, 0, 12);
	}
	len = RTE_MIN(len, (uint8_t)(room - IP_HDR_BYTES));
	if (pd != NULL && len != 0)
		memcpy(out + IP_HDR_BYTES, pd, len);
	return (uint8_t)(IP_HDR_BYTES + len);
}

/* The peer's address from the IP header a REQ or SIDR REQ begins with. */
static void
peer_from_hdr(struct rid *r, const uint8_t *h, uint16_t listen_port)
{
	struct sockaddr_storage *src = &r->id.route.addr.src_storage;
	struct sockaddr_storage *dst = &r->id.route.addr.dst_storage;
	uint16_t sport;

	memcpy(&sport, h + 2, 2);
	memset(dst, 0, sizeof(*dst));
	memset(src, 0, sizeof(*src));
	if ((h[1] >> 4) == 6) {
		struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)dst, *s6 = (struct sockaddr_in6 *)src;

		d6->sin6_family = s6->sin6_family = AF_INET6;
		memcpy(&d6->sin6_addr, h + 4, 16);
		memcpy(&s6->sin6_addr, h + 20, 16);
		d6->sin6_port = sport;
		s6->sin6_port = htons(listen_port);
	} else {
		struct sockaddr_in *d4 = (struct sockaddr_in *)dst, *s4 = (struct sockaddr_in *)src;

		d4->sin_family = s4->sin_family = AF_INET;
		memcpy(&d4->sin_addr, h + 16, 4);
		memcpy(&s4->sin_addr, h + 32, 4);
		d4->sin_port = sport;
		s4->sin_port = htons(listen_port);
	}
}

/* ---- QPs ---- */

static int
modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	return ibv_modify_qp(qp, a, mask);
}

/* A connected QP to INIT (rdma_create_qp), as the kernel's rdma_cm. */
static int
qp_init(struct rid *r, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = RDMA_UDP_QKEY;
		if (modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
			return errno;
		a.qp_state = IBV_QPS_RTR;
		if (modify(qp, &a, IBV_QP_STATE))
			return errno;
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		return modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? errno : 0;
	}
	(void)r;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	return modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		      IBV_QP_ACCESS_FLAGS) ? errno : 0;
}

/* RTR and RTS with what the peer offered: the responder resources we
 * give (max_dest_rd_atomic) and the READs we may have out
 * (max_rd_atomic).  A REQ's or REP's starting PSN is the one its
 * sender's receive queue expects (Linux's cm.c: the active side's rq_psn
 * is its REQ's, its sq_psn the REP's; the passive side the other way):
 * ours (r->psn) to RTR, the peer's to RTS. */
/* RTR's attributes (the state, the peer's address, QP and PSN). */
static void
qp_rtr_attr(const struct rid *r, struct ibv_qp_attr *a, uint8_t dest_rd_atomic)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = r->path.mtu;
	a->dest_qp_num = r->peer.qp_num;
	a->rq_psn = r->psn;
	a->max_dest_rd_atomic = dest_rd_atomic;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.dgid = r->path.dgid;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.grh.traffic_class = r->tos;
	a->ah_attr.grh.sgid_index = mwp_ip_is_v4mapped(r->path.sgid.raw) ? 0 : 1;
	if (r->d->nb_gids == 1)
		a->ah_attr.grh.sgid_index = 0;
}

static int
qp_connect(struct rid *r, uint8_t rd_atomic, uint8_t dest_rd_atomic)
{
	struct ibv_qp *qp = r->id.qp;
	struct ibv_qp_attr a;

	if (qp == NULL)
		return 0;
	qp_rtr_attr(r, &a, dest_rd_atomic);
	if (modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return errno;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = r->peer.starting_psn;
	a.timeout = r->path.ack_timeout;
	a.retry_cnt = r->retry;
	a.rnr_retry = r->rnr_retry;
	a.max_rd_atomic = rd_atomic;
	return modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) ? errno : 0;
}

static void
qp_error(struct rid *r)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (r->id.qp != NULL && r->id.qp->qp_type != IBV_QPT_UD)
		modify(r->id.qp, &a, IBV_QP_STATE);
}

/* The READs and atomics a QP of r's device answers (RDMA_MAX_RESP_RES
 * asks for that many) and may have out (RDMA_MAX_INIT_DEPTH). */
static void
dev_rd_atomic(const struct rid *r, uint8_t *resp, uint8_t *init)
{
	struct ibv_device_attr a;

	*resp = *init = 16;
	if (ibv_query_device(r->id.verbs, &a) == 0) {
		*resp = (uint8_t)RTE_MIN(a.max_qp_rd_atom, 255);
		*init = (uint8_t)RTE_MIN(a.max_qp_init_rd_atom, 255);
	}
}

/* ---- the CM's events ---- */

static struct rid *
child_of(struct rid *l, struct mwp_ibv_dev *d, const struct mwp_cm_event *ev)
{
	struct rid *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->magic = RID_MAGIC;
	c->id.channel = l->id.channel;
	c->id.context = l->id.context;
	c->id.ps = l->id.ps;
	c->id.qp_type = l->id.qp_type;
	c->state = R_REQ;
	c->cm = ev->id;
	if (use_dev(c, d) != 0) {
		free(c);
		return NULL;
	}
	peer_from_hdr(c, ev->private_data, mwp_rdmacm_port_of(&l->id.route.addr.src_addr));
	c->peer = ev->param;
	make_path(c);
	c->path.mtu = RTE_MIN(c->path.mtu, ev->path.mtu != 0 ? ev->path.mtu : c->path.mtu);
	c->path.ack_timeout = ev->path.ack_timeout != 0 ? ev->path.ack_timeout : ACK_TIMEOUT;
	c->tos = ev->path.traffic_class;
	c->retry = ev->param.retry_count;
	c->rnr_retry = ev->param.rnr_retry_count;
	/* what a QP of the program's own (rdma_init_qp_attr, before the
	 * accept) is given: the REQ's offer, which the accept may lower,
	 * and the PSN the REP will carry */
	c->resp_res = ev->param.initiator_depth;
	c->init_depth = ev->param.responder_resources;
	c->psn = (uint32_t)rte_rand() & 0xffffff;
	mwp_cm_id_set_context(ev->id, c);
	return c;
}

static void
on_req(struct mwp_ibv_dev *d, const struct mwp_cm_event *ev)
{
	/* a listener let go while its request waited in the CM: the CM has
	 * cleared listen_id, and the context is no longer an id to read */
	struct rid *l = ev->listen_id != NULL ? ev->context : NULL, *c;
	struct rev *e;
	const bool ud = ev->type == MWP_CM_SIDR_REQ_RECEIVED;

	if (l == NULL || l->magic != RID_MAGIC || l->state != R_LISTEN ||
	    ev->private_len < IP_HDR_BYTES || (c = child_of(l, d, ev)) == NULL) {
		if (ud)
			mwp_cm_sidr_rep(ev->id, ROCE_SIDR_REJECT, NULL);
		else
			mwp_cm_reject(ev->id, ROCE_REJ_CONSUMER, NULL, 0);
		mwp_cm_destroy_id(ev->id);
		return;
	}
	e = post(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0, ev->private_data + IP_HDR_BYTES,
		 (uint8_t)(ev->private_len - IP_HDR_BYTES));
	if (e == NULL)
		return;
	e->ev.listen_id = &l->id;
	e->owner = l;
	if (ud) {
		e->ev.param.ud.private_data = e->pd;
		e->ev.param.ud.private_data_len = (uint8_t)(ev->private_len - IP_HDR_BYTES);
	} else {
		/* the peer's resources seen from here (IBA: its initiator
		 * depth is what we need as responder) */
		e->ev.param.conn.responder_resources = ev->param.initiator_depth;
		e->ev.param.conn.initiator_depth = ev->param.responder_resources;
		e->ev.param.conn.flow_control = ev->param.flow_control;
		e->ev.param.conn.retry_count = ev->param.retry_count;
		e->ev.param.conn.rnr_retry_count = ev->param.rnr_retry_count;
		e->ev.param.conn.srq = ev->param.srq;
		e->ev.param.conn.qp_num = ev->param.qp_num;
	}
}

static void
tell_disconnected(struct rid *r)
{
	if (r->told_disc)
		return;
	r->told_disc = true;
	r->state = R_DISCONNECTED;
	/* The QP is left as it is, as the kernel's rdma_cm leaves a
	 * program's QP on the peer's DREQ (only rdma_disconnect moves it to
	 * error, as librdmacm's): the program may have destroyed it with
	 * ibv_destroy_qp already -- perftest does, and this thread, reading
	 * it, crashed its exit. */
	post(r, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
}

/* The active side's REP: its QP to RTR and RTS, the RTU, ESTABLISHED. */
static void
on_rep(struct rid *r, const struct mwp_cm_event *ev)
{
	struct rev *e;
	int ret;

	r->peer = ev->param;
	r->init_depth = RTE_MIN(r->init_depth, ev->param.responder_resources);
	if (r->id.qp == NULL) {
		/* the program's own QP: it asks rdma_init_qp_attr, then
		 * rdma_establish */
		e = post(r, RDMA_CM_EVENT_CONNECT_RESPONSE, 0, ev->private_data, ev->private_len);
		return;
	}
	ret = qp_connect(r, r->init_depth, r->resp_res);
	if (ret != 0) {
		mwp_cm_reject(r->cm, ROCE_REJ_CONSUMER, NULL, 0);
		post(r, RDMA_CM_EVENT_CONNECT_ERROR, -ret, NULL, 0);
		return;
	}
	mwp_cm_rtu(r->cm, NULL, 0);
	r->state = R_EST;
	e = post(r, RDMA_CM_EVENT_ESTABLISHED, 0, ev->private_data, ev->private_len);
	if (e != NULL) {
		e->ev.param.conn.responder_resources = ev->param.initiator_depth;
		e->ev.param.conn.initiator_depth = ev->param.responder_resources;
		e->ev.param.conn.rnr_retry_count = ev->param.rnr_retry_count;
		e->ev.param.conn.qp_num = ev->param.qp_num;
	}
}

static void
on_sidr_rep(struct rid *r, const struct mwp_cm_event *ev)
{
	struct rev *e;

	if (ev->sidr_status != ROCE_SIDR_OK) {
		post(r, RDMA_CM_EVENT_UNREACHABLE, ev->sidr_status, ev->private_data,
		     ev->private_len);
		return;
	}
	r->state = R_EST;
	e = post(r, RDMA_CM_EVENT_ESTABLISHED, 0, ev->private_data, ev->private_len);
	if (e == NULL)
		return;
	e->ev.param.ud.private_data = ev->private_len != 0 ? e->pd : NULL;
	e->ev.param.ud.private_data_len = ev->private_len;
	e->ev.param.ud.ah_attr.is_global = 1;
	e->ev.param.ud.ah_attr.port_num = 1;
	e->ev.param.ud.ah_attr.grh.dgid = r->path.dgid;
	e->ev.param.ud.ah_attr.grh.hop_limit = 64;
	e->ev.param.ud.ah_attr.grh.traffic_class = r->tos;
	e->ev.param.ud.qp_num = ev->param.qp_num;
	e->ev.param.ud.qkey = ev->param.qkey;
}

/* Each event is taken under rlock: an id the program lets go
 * (rdma_destroy_id, under rlock too) has its events dropped by the CM
 * before it is freed, so the context of an event taken here is live. */
void
mwp_rdmacm_events(struct mwp_ibv_dev *d)
{
	struct mwp_cm_event ev;

	for (;;) {
		struct rid *r;

		pthread_mutex_lock(&rlock);
		if (mwp_cm_get_event(d->cm, &ev) != 0) {
			pthread_mutex_unlock(&rlock);
			break;
		}
		r = ev.context;
		if (ev.type == MWP_CM_REQ_RECEIVED || ev.type == MWP_CM_SIDR_REQ_RECEIVED) {
			on_req(d, &ev);
			pthread_mutex_unlock(&rlock);
			continue;
		}
		if (r == NULL || r->magic != RID_MAGIC || r->cm != ev.id) {
			pthread_mutex_unlock(&rlock);
			continue;
		}
		switch (ev.type) {
		case MWP_CM_REP_RECEIVED:
			on_rep(r, &ev);
			break;
		case MWP_CM_RTU_RECEIVED:
			r->state = R_EST;
			post(r, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, 0);
			break;
		case MWP_CM_REJ_RECEIVED:
			post(r, RDMA_CM_EVENT_REJECTED, ev.rej_reason, ev.private_data,
			     ev.private_len);
			break;
		case MWP_CM_REQ_ERROR:
		case MWP_CM_REP_ERROR:
		case MWP_CM_SIDR_REQ_ERROR:
			post(r, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
			break;
		case MWP_CM_DREQ_RECEIVED:
		case MWP_CM_DREP_RECEIVED:
		case MWP_CM_DREQ_ERROR:
			tell_disconnected(r);
			break;
		case MWP_CM_SIDR_REP_RECEIVED:
			on_sidr_rep(r, &ev);
			break;
		default:
			break;	/* MRA: the CM waits longer */
		}
		pthread_mutex_unlock(&rlock);
	}
}

/* ---- the API ---- */

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct rchan *c = chan_new();

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	return &c->ch;
}

/*
 * A channel's events go with it; its descriptor and its few bytes stay.
 * Programs destroy a channel while a thread of theirs may be about to
 * wait on it again (rping's cm_thread loops on rdma_get_cm_event until
 * exit): with the kernel's rdma_cm that wait blocks until the process
 * ends, and so it does here -- on an eventfd nobody writes again -- where
 * a closed (or reused) descriptor would fail it or hand it someone
 * else's events.
 */
void
rdma_destroy_event_channel(struct rdma_event_channel *ch)
{
	struct rchan *c = (struct rchan *)ch;
	struct rev *e;
	uint64_t v;

	if (c == NULL)
		return;
	pthread_mutex_lock(&rlock);
	while ((e = TAILQ_FIRST(&c->q)) != NULL) {
		TAILQ_REMOVE(&c->q, e, link);
		drop(e);
	}
	/* no event waits: a read blocks (or says EAGAIN if non-blocking) */
	while (fcntl(c->ch.fd, F_SETFL, fcntl(c->ch.fd, F_GETFL) | O_NONBLOCK) == 0 &&
	       read(c->ch.fd, &v, sizeof(v)) == sizeof(v))
		;
	fcntl(c->ch.fd, F_SETFL, fcntl(c->ch.fd, F_GETFL) & ~O_NONBLOCK);
	pthread_mutex_unlock(&rlock);
}

static int
fail(int e)
{
	errno = e;
	return -1;
}

int
rdma_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *context,
	       enum rdma_port_space ps)
{
	struct rid *r;

	if (id == NULL || (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB &&
			   ps != RDMA_PS_IPOIB))
		return fail(EINVAL);
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return fail(ENOMEM);
	r->magic = RID_MAGIC;
	r->id.context = context;
	r->id.ps = ps;
	r->id.qp_type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
	r->resp_res = r->init_depth = 1;
	r->retry = 7;
	r->rnr_retry = 7;
	if (ch == NULL) {
		/* synchronous: its own channel, its calls wait for their event */
		r->own = chan_new();
		if (r->own == NULL) {
			free(r);
			return fail(ENOMEM);
		}
		ch = &r->own->ch;
	}
	r->id.channel = ch;
	*id = &r->id;
	return 0;
}

/* Take the next event of channel c (blocking unless its fd is not).  The
 * eventfd counts events posted; one of an id let go since (its event
 * dropped, rdma_destroy_id) finds nothing and is read past. */
static int
take(struct rchan *c, struct rdma_cm_event **event)
{
	uint64_t v;
	struct rev *e = NULL;

	while (e == NULL) {
		if (read(c->ch.fd, &v, sizeof(v)) != sizeof(v))
			return -1;	/* errno: EAGAIN for a non-blocking channel */
		pthread_mutex_lock(&rlock);
		e = TAILQ_FIRST(&c->q);
		if (e != NULL) {
			TAILQ_REMOVE(&c->q, e, link);
			e->owner->unacked++;
		}
		pthread_mutex_unlock(&rlock);
	}
	*event = &e->ev;
	return 0;
}

int
rdma_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **event)
{
	if (ch == NULL || event == NULL)
		return fail(EINVAL);
	return take((struct rchan *)ch, event);
}

/* Under rlock: e acknowledged.  Its owner is alive: rdma_destroy_id and
 * rdma_migrate_id wait for this (and the event's id is not read: a
 * request's may be gone already). */
static void
acked(struct rev *e)
{
	if (--e->owner->unacked == 0)
		pthread_cond_broadcast(&racked);
	drop(e);
}

/* Under rlock: wait until every event of r taken is acknowledged, as
 * librdmacm's destroy and migrate do (a program's event thread may still
 * be reading one of r's: rping acknowledges DISCONNECTED after waking the
 * thread that destroys the id). */
static void
wait_acked(struct rid *r)
{
	while (r->unacked != 0)
		pthread_cond_wait(&racked, &rlock);
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (event == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&rlock);
	acked((struct rev *)event);
	pthread_mutex_unlock(&rlock);
	return 0;
}

/* A synchronous id's call: wait for its event, expect want; the event is
 * kept in id->event (acknowledged by the next call or by destroy). */
static int
complete(struct rid *r, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *e;

	if (r->own == NULL)
		return 0;
	if (r->id.event != NULL) {
		rdma_ack_cm_event(r->id.event);
		r->id.event = NULL;
	}
	if (take(r->own, &e) != 0)
		return -1;
	r->id.event = e;
	if (e->event != want) {
		/* librdmacm's ucma_complete: the event's status as errno */
		errno = e->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED :
			e->status < 0 ? -e->status : e->status > 0 ? e->status : EINVAL;
		return -1;
	}
	return 0;
}

int
mwp_rdmacm_complete(struct rdma_cm_id *id, enum rdma_cm_event_type want)
{
	struct rid *r = rid_of(id);

	return r == NULL ? fail(EINVAL) : complete(r, want);
}

/* mwpath's devices with an address of family started (a wildcard bound
 * will listen on each of them), with no lock held: a device starts in a
 * fifth of a second or so, and a program may tell its peer the port
 * between rdma_bind_addr and rdma_listen -- qperf 0.4.11's server does,
 * and its peer's REQ came before the listener.  Failures are
 * rdma_listen's to report. */
static void
start_devices(int family)
{
	struct mwp_ibv_dev *devs;
	const unsigned int n = mwp_ibv_devices(&devs);

	for (unsigned int i = 0; i < n && i < APP_MAX_DEVICES; i++)
		if (mwp_rdmacm_dev_addr(&devs[i], family, &(struct sockaddr_storage){ 0 }) &&
		    mwp_ibv_open(&devs[i]) != NULL)
			mwp_ibv_close(&devs[i]);
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct rid *r = rid_of(id);
	const struct mwp_sys_rdmacm *sys;
	struct mwp_ibv_dev *d = NULL;
	int ret = 0;

	if (theirs(id))
		return S->bind_addr(id, addr);
	if (r == NULL || addr == NULL || (addr->sa_family != AF_INET &&
					  addr->sa_family != AF_INET6))
		return fail(EINVAL);
	/* (loads the system's librdmacm: before the lock, see mwp_rdmacm_sys.c) */
	sys = mwp_rdmacm_sys();
	if (mwp_rdmacm_any_addr(addr))
		start_devices(addr->sa_family);
	pthread_mutex_lock(&rlock);
	if (r->state != R_IDLE) {
		ret = EINVAL;	/* bound already, as the kernel's */
	} else if (mwp_rdmacm_any_addr(addr)) {
		r->wildcard = true;
	} else if ((d = mwp_rdmacm_dev_with(addr)) == NULL) {
		ret = EADDRNOTAVAIL;
		/* not mwpath's: the system's librdmacm's, if it can */
		if ((S = sys) != NULL && (ret = sys_attach(r)) == 0) {
			if (S->bind_addr(r->sys, addr) != 0) {
				ret = errno;
				S->destroy_id(r->sys);	/* no events: no wait */
				r->sys = NULL;
			} else {
				mirror(r);
				pthread_mutex_unlock(&rlock);
				return 0;
			}
		}
	} else {
		ret = use_dev(r, d);
	}
	if (ret == 0) {
		memcpy(&r->id.route.addr.src_storage, addr, mwp_rdmacm_sa_len(addr));
		if (mwp_rdmacm_port_of(addr) == 0)
			mwp_rdmacm_set_port(&r->id.route.addr.src_addr, mwp_rdmacm_ephemeral_port());
		r->state = R_BOUND;
	}
	pthread_mutex_unlock(&rlock);
	return ret != 0 ? fail(ret) : 0;
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
		  int timeout_ms)
{
	struct rid *r = rid_of(id);
	const struct mwp_sys_rdmacm *sys;
	struct mwp_ibv_dev *d;
	int ret = 0;

	if (theirs(id))
		return S->resolve_addr(id, src, dst, timeout_ms);
	if (r != NULL && r->sys != NULL)
		return sys_then(r, S->resolve_addr(r->sys, src, dst, timeout_ms),
				RDMA_CM_EVENT_ADDR_RESOLVED);
	if (r == NULL || dst == NULL || (dst->sa_family != AF_INET &&
					 dst->sa_family != AF_INET6))
		return fail(EINVAL);
	/* (loads the system's librdmacm: before the lock, see mwp_rdmacm_sys.c) */
	sys = mwp_rdmacm_sys();
	pthread_mutex_lock(&rlock);
	S = sys;
	if (r->state != R_IDLE && r->state != R_BOUND)
		d = NULL;	/* resolving or resolved already: EINVAL below */
	else if (src != NULL && !mwp_rdmacm_any_addr(src))
		d = mwp_rdmacm_dev_with(src);
	else if (r->d != NULL)
		d = r->d;
	else	/* with the system's librdmacm, only a port's subnet is ours */
		d = mwp_rdmacm_dev_toward(dst, S == NULL);
	if (r->state != R_IDLE && r->state != R_BOUND) {
		ret = EINVAL;
	} else if (d == NULL && S != NULL) {
		/* not mwpath's: the system's, from the address (and port)
		 * the id was bound to, if it was */
		struct sockaddr_storage from = r->id.route.addr.src_storage;

		if (src == NULL && r->state == R_BOUND)
			src = (struct sockaddr *)&from;
		ret = sys_attach(r);
		pthread_mutex_unlock(&rlock);
		if (ret != 0)
			return fail(ret);
		return sys_then(r, S->resolve_addr(r->sys, src, dst, timeout_ms),
				RDMA_CM_EVENT_ADDR_RESOLVED);
	} else if (d == NULL) {
		ret = ENODEV;	/* not mwpath's */
	}
	if (ret == 0)
		ret = use_dev(r, d);
	if (ret == 0) {
		uint16_t port = mwp_rdmacm_port_of(&r->id.route.addr.src_addr);

		if (!mwp_rdmacm_dev_addr(d, dst->sa_family, &r->id.route.addr.src_storage))
			ret = EADDRNOTAVAIL;
		if (src != NULL && mwp_rdmacm_port_of(src) != 0)
			port = mwp_rdmacm_port_of(src);
		mwp_rdmacm_set_port(&r->id.route.addr.src_addr, port != 0 ? port : mwp_rdmacm_ephemeral_port());
		memcpy(&r->id.route.addr.dst_storage, dst, mwp_rdmacm_sa_len(dst));
	}
	if (ret == 0) {
		const uint64_t now = rte_rdtsc();

		make_path(r);
		/* the peer's MAC, as the kernel's rdma_resolve_addr asks the
		 * neighbour table; the CM thread asks again each tick */
		r->state = R_RESOLVING;
		r->deadline = now + rte_get_tsc_hz() / 1000 *
			      (uint64_t)(timeout_ms > 0 ? timeout_ms : RESOLVE_MS);
		TAILQ_INSERT_TAIL(&resolving, r, resolving);
		r->in_resolving = true;
		__atomic_store_n(&nb_resolving, nb_resolving + 1, __ATOMIC_RELAXED);
		resolve_step(r, now);
	}
	pthread_mutex_unlock(&rlock);
	if (ret == 0)
		mwp_ibv_cm_kick(r->d);	/* its thread ticks while it resolves */
	if (ret != 0)
		return fail(ret);
	return complete(r, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct rid *r = rid_of(id);

	if (theirs(id))
		return S->resolve_route(id, timeout_ms);
	if (r != NULL && r->sys != NULL)
		return sys_then(r, S->resolve_route(r->sys, timeout_ms),
				RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (r == NULL || r->state != R_ADDR)
		return fail(EINVAL);
	pthread_mutex_lock(&rlock);
	make_path(r);
	r->state = R_ROUTE;
	post(r, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, 0);
	pthread_mutex_unlock(&rlock);
	return complete(r, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct rid *r = rid_of(id);
	const struct mwp_sys_rdmacm *sys;
	struct mwp_ibv_dev *devs;
	unsigned int n, listening = 0;
	uint64_t sid;
	int ret = 0;

	if (theirs(id))
		return S->listen(id, backlog);
	if (r != NULL && r->sys != NULL)
		return sys_done(r, S->listen(r->sys, backlog));
	if (r == NULL || r->state != R_BOUND)
		return fail(EINVAL);
	if (backlog <= 0)
		backlog = 1024;
	/* a wildcard listens on the system's devices too (this loads its
	 * librdmacm where the kernel has an RDMA CM: before the lock, see
	 * mwp_rdmacm_sys.c) */
	sys = r->wildcard ? mwp_rdmacm_sys() : NULL;
	pthread_mutex_lock(&rlock);
	n = mwp_ibv_devices(&devs);
	for (unsigned int i = 0; i < n && i < APP_MAX_DEVICES; i++) {
		struct mwp_ibv_dev *d = &devs[i];
		struct ibv_context *ctx;

		if (r->d != NULL ? r->d != d :
		    !mwp_rdmacm_dev_addr(d, r->id.route.addr.src_addr.sa_family,
			      &(struct sockaddr_storage){ 0 }))
			continue;
		ctx = r->d == d ? r->id.verbs : mwp_ibv_open(d);
		if (ctx == NULL || d->cm == NULL) {
			ret = ctx == NULL ? errno : ENODEV;
			continue;
		}
		sid = service_id(r, mwp_rdmacm_port_of(&r->id.route.addr.src_addr));
		/* a device shared by processes: theirs too */
		ret = mwp_ibv_share_listen(d, sid, 0);
		if (ret == 0) {
			ret = mwp_cm_listen(d->cm, sid, 0, (uint32_t)backlog, r, &r->listen[i]);
			if (ret != 0)
				mwp_ibv_share_unlisten(d, sid, 0);
		}
		if (ret == 0)
			listening++;
	}
	if (sys != NULL) {
		int sret;

		S = sys;
		sret = sys_listen(r, backlog);
		if (sret == 0)
			listening++;
		else if (listening != 0)
			fprintf(stderr, "mwpath-rdmacm: a listener on any address takes no requests on the system's devices: %s\n",
				strerror(sret));
		else
			ret = sret;
	}
	if (listening != 0) {
		r->state = R_LISTEN;
		ret = 0;
	} else if (ret == 0) {
		ret = ENODEV;
	}
	pthread_mutex_unlock(&rlock);
	return ret != 0 ? fail(ret) : 0;
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rid *r = rid_of(listen);
	struct rdma_cm_event *e;

	if (r == NULL || r->own == NULL || id == NULL)
		return fail(EINVAL);
	for (;;) {
		if (take(r->own, &e) != 0)
			return -1;
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(e);
	}
	/* the new id is synchronous too: its own channel from now on; an
	 * endpoint's request gets its QP here, as librdmacm makes it */
	{
		struct rid *c = rid_of(e->id);
		struct rchan *own = chan_new();

		/* (under the lock: the CM thread, or the system's relay, posts
		 * c's next events to its channel) */
		pthread_mutex_lock(&rlock);
		c->own = own;
		if (own != NULL)
			c->id.channel = &own->ch;
		pthread_mutex_unlock(&rlock);
		c->id.event = e;
		if (r->ep_qp) {
			struct ibv_qp_init_attr a = r->ep_attr;

			if (rdma_create_qp(&c->id, r->ep_pd, &a) != 0) {
				int err = errno;

				rdma_reject(&c->id, NULL, 0);
				rdma_destroy_id(&c->id);
				return fail(err);
			}
		}
		*id = &c->id;
	}
	return 0;
}

/* The PD a QP or SRQ of r goes in: the program's, or the id's own
 * (librdmacm's default PD when none is given). */
static struct ibv_pd *
pd_of(struct rid *r, struct ibv_pd *pd)
{
	if (pd != NULL)
		return pd;
	if (r->id.pd == NULL && r->d != NULL)
		r->id.pd = dev_pd(r->d, r->id.verbs);
	return r->id.pd;
}

/* librdmacm's default CQs and completion channels of an id (rdma_server
 * and rdma_client wait on id->send_cq_channel / recv_cq_channel). */
static int
make_cqs(struct rid *r, struct ibv_qp_init_attr *attr)
{
	struct ibv_context *ctx = r->id.verbs;

	if (attr->send_cq == NULL) {
		r->id.send_cq_channel = ibv_create_comp_channel(ctx);
		r->id.send_cq = r->id.send_cq_channel != NULL ?
			ibv_create_cq(ctx, (int)RTE_MAX(attr->cap.max_send_wr, 1u), r,
				      r->id.send_cq_channel, 0) : NULL;
		if (r->id.send_cq == NULL)
			return ENOMEM;
		attr->send_cq = r->id.send_cq;
		r->own_cqs = true;
	}
	if (attr->recv_cq == NULL) {
		r->id.recv_cq_channel = ibv_create_comp_channel(ctx);
		r->id.recv_cq = r->id.recv_cq_channel != NULL ?
			ibv_create_cq(ctx, (int)RTE_MAX(attr->cap.max_recv_wr, 1u), r,
				      r->id.recv_cq_channel, 0) : NULL;
		if (r->id.recv_cq == NULL)
			return ENOMEM;
		attr->recv_cq = r->id.recv_cq;
		r->own_cqs = true;
	}
	return 0;
}

static void
free_cqs(struct rid *r)
{
	if (!r->own_cqs)
		return;
	if (r->id.send_cq != NULL)
		ibv_destroy_cq(r->id.send_cq);
	if (r->id.recv_cq != NULL)
		ibv_destroy_cq(r->id.recv_cq);
	if (r->id.send_cq_channel != NULL)
		ibv_destroy_comp_channel(r->id.send_cq_channel);
	if (r->id.recv_cq_channel != NULL)
		ibv_destroy_comp_channel(r->id.recv_cq_channel);
	r->id.send_cq = r->id.recv_cq = NULL;
	r->id.send_cq_channel = r->id.recv_cq_channel = NULL;
	r->own_cqs = false;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct rid *r = rid_of(id);
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;
	int ret;

	if (theirs(id))
		return S->create_qp(id, pd, attr);
	if (r != NULL && r->sys != NULL)
		return sys_done(r, S->create_qp(r->sys, pd, attr));
	if (r == NULL || attr == NULL || r->id.verbs == NULL)
		return fail(EINVAL);
	pd = pd_of(r, pd);
	if (pd == NULL || pd->context != r->id.verbs)
		return fail(EINVAL);
	a = *attr;
	if (a.qp_type == 0)
		a.qp_type = r->id.qp_type;
	ret = make_cqs(r, &a);
	if (ret != 0) {
		free_cqs(r);
		return fail(ret);
	}
	qp = ibv_create_qp(pd, &a);
	if (qp == NULL) {
		ret = errno;
		free_cqs(r);
		return fail(ret);
	}
	ret = qp_init(r, qp);
	if (ret != 0) {
		ibv_destroy_qp(qp);
		free_cqs(r);
		return fail(ret);
	}
	*attr = a;
	r->id.qp = qp;
	r->id.pd = pd;
	r->id.qp_type = qp->qp_type;
	return 0;
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr a;

	if (theirs(id))
		return S->create_qp_ex(id, attr);
	{
		struct rid *r = rid_of(id);

		if (r != NULL && r->sys != NULL)
			return sys_done(r, S->create_qp_ex(r->sys, attr));
	}
	if (attr == NULL)
		return fail(EINVAL);
	if (attr->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD)
		return fail(EOPNOTSUPP);
	memset(&a, 0, sizeof(a));
	a.qp_context = attr->qp_context;
	a.send_cq = attr->send_cq;
	a.recv_cq = attr->recv_cq;
	a.srq = attr->srq;
	a.cap = attr->cap;
	a.qp_type = attr->qp_type;
	a.sq_sig_all = attr->sq_sig_all;
	if (rdma_create_qp(id, attr->pd, &a) != 0)
		return -1;
	attr->cap = a.cap;
	return 0;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct rid *r = rid_of(id);

	if (theirs(id)) {
		S->destroy_qp(id);
		return;
	}
	if (r != NULL && r->sys != NULL) {
		S->destroy_qp(r->sys);
		sys_done(r, 0);
		return;
	}
	if (r == NULL || r->id.qp == NULL)
		return;
	ibv_destroy_qp(r->id.qp);
	r->id.qp = NULL;
	free_cqs(r);
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct rid *r = rid_of(id);
	struct rdma_conn_param none = { 0 };
	uint8_t pd[MWP_CM_PRIVATE_MAX];
	struct mwp_cm_conn_param cp = { 0 };
	int ret;

	if (theirs(id))
		return S->connect(id, p);
	if (r != NULL && r->sys != NULL)
		return sys_then(r, S->connect(r->sys, p), RDMA_CM_EVENT_ESTABLISHED);
	if (r == NULL || r->state != R_ROUTE)
		return fail(EINVAL);
	if (p == NULL)
		p = &none;
	pthread_mutex_lock(&rlock);
	r->psn = (uint32_t)rte_rand() & 0xffffff;
	/* as librdmacm: no parameters, or RDMA_MAX_*, is what the device can */
	{
		uint8_t resp, init;

		dev_rd_atomic(r, &resp, &init);
		r->resp_res = p == &none || p->responder_resources == RDMA_MAX_RESP_RES ? resp :
			      RTE_MIN(p->responder_resources, resp);
		r->init_depth = p == &none || p->initiator_depth == RDMA_MAX_INIT_DEPTH ? init :
				RTE_MIN(p->initiator_depth, init);
	}
	r->retry = p == &none ? 7 : RTE_MIN(p->retry_count, (uint8_t)7);
	r->rnr_retry = p == &none ? 7 : RTE_MIN(p->rnr_retry_count, (uint8_t)7);
	r->state = R_CONNECT;
	if (r->id.qp_type == IBV_QPT_UD) {
		uint8_t len = ip_private(r, p->private_data, p->private_data_len,
					 CM_SIDR_REQ_PRIVATE_BYTES, pd);

		ret = mwp_cm_sidr_req(r->d->cm, service_id(r, mwp_rdmacm_port_of(&r->id.route.addr.dst_addr)),
				      &r->path, pd, len, r, &r->cm);
	} else {
		cp.qp_num = r->id.qp != NULL ? r->id.qp->qp_num : p->qp_num;
		cp.qp_type = r->id.qp != NULL ? r->id.qp->qp_type : IBV_QPT_RC;
		cp.starting_psn = r->psn;
		cp.responder_resources = r->resp_res;
		cp.initiator_depth = r->init_depth;
		cp.retry_count = r->retry;
		cp.rnr_retry_count = r->rnr_retry;
		cp.flow_control = p->flow_control;
		cp.srq = r->id.qp != NULL ? r->id.qp->srq != NULL : p->srq;
		cp.private_data = pd;
		cp.private_data_len = ip_private(r, p->private_data, p->private_data_len,
						 CM_REQ_PRIVATE_BYTES, pd);
		ret = mwp_cm_connect(r->d->cm, service_id(r, mwp_rdmacm_port_of(&r->id.route.addr.dst_addr)),
				     &r->path, &cp, r, &r->cm);
	}
	pthread_mutex_unlock(&rlock);
	if (ret != 0)
		return fail(ret);
	return complete(r, RDMA_CM_EVENT_ESTABLISHED);
}

int
rdma_establish(struct rdma_cm_id *id)
{
	struct rid *r = rid_of(id);
	int ret;

	if (theirs(id))
		return S->establish(id);
	if (r != NULL && r->sys != NULL)
		return sys_done(r, S->establish(r->sys));
	if (r == NULL || r->cm == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&rlock);
	ret = mwp_cm_rtu(r->cm, NULL, 0);
	if (ret == 0)
		r->state = R_EST;
	pthread_mutex_unlock(&rlock);
	return ret != 0 ? fail(ret) : 0;
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct rid *r = rid_of(id);
	struct rdma_conn_param none = { 0 };
	struct mwp_cm_conn_param cp = { 0 };
	int ret;

	if (theirs(id))
		return S->accept(id, p);
	if (r != NULL && r->sys != NULL)
		return r->id.qp_type == IBV_QPT_UD ? sys_done(r, S->accept(r->sys, p)) :
		       sys_then(r, S->accept(r->sys, p), RDMA_CM_EVENT_ESTABLISHED);
	if (r == NULL || r->state != R_REQ)
		return fail(EINVAL);
	if (p == NULL)
		p = &none;
	pthread_mutex_lock(&rlock);
	cp.private_data = p->private_data;
	cp.private_data_len = p->private_data_len;
	if (r->id.qp_type == IBV_QPT_UD || (r->id.qp != NULL && r->id.qp->qp_type == IBV_QPT_UD)) {
		cp.qp_num = r->id.qp != NULL ? r->id.qp->qp_num : p->qp_num;
		cp.qkey = RDMA_UDP_QKEY;
		ret = mwp_cm_sidr_rep(r->cm, ROCE_SIDR_OK, &cp);
		if (ret == 0)
			r->state = R_EST;
		pthread_mutex_unlock(&rlock);
		return ret != 0 ? fail(ret) : 0;
	}
	/* (r->psn: made with the request, for rdma_init_qp_attr) */
	/* what we answer: no more than the peer asked for (its initiator
	 * depth is what we answer as responder), and no parameters -- as
	 * rping accepts -- is all of that, as librdmacm takes them */
	r->resp_res = p == &none ? r->peer.initiator_depth :
		      RTE_MIN(p->responder_resources, r->peer.initiator_depth);
	r->init_depth = p == &none ? r->peer.responder_resources :
			RTE_MIN(p->initiator_depth, r->peer.responder_resources);
	if (p->rnr_retry_count != 0)
		r->rnr_retry = RTE_MIN(p->rnr_retry_count, (uint8_t)7);
	ret = qp_connect(r, r->init_depth, r->resp_res);
	if (ret == 0) {
		cp.qp_num = r->id.qp != NULL ? r->id.qp->qp_num : p->qp_num;
		cp.starting_psn = r->psn;
		cp.responder_resources = r->resp_res;
		cp.initiator_depth = r->init_depth;
		cp.rnr_retry_count = r->rnr_retry;
		cp.flow_control = p->flow_control;
		cp.srq = r->id.qp != NULL ? r->id.qp->srq != NULL : p->srq;
		cp.target_ack_delay = 15;
		ret = mwp_cm_accept(r->cm, &cp);
	}
	if (ret == 0)
		r->state = R_ACCEPTED;
	pthread_mutex_unlock(&rlock);
	if (ret != 0)
		return fail(ret);
	return complete(r, RDMA_CM_EVENT_ESTABLISHED);
}

/* Until the MADs just handed to the CM have left (FLUSH_MS at most), as
 * the kernel's rdma_cm has sent a REJ, REP or DREQ by the time the call
 * returns: a process that ends right after it (pyverbs' sides end with
 * os._exit, which runs no atexit handler, so no linger either) would
 * take the MAD with it, and the peer, retrying, would meet whoever
 * answers then.  The datapath takes a turn and the CM thread takes the
 * completions. */
#define FLUSH_MS	200

static void
flush_mads(struct mwp_ibv_dev *d)
{
	const uint64_t end = rte_rdtsc() + rte_get_tsc_hz() / 1000 * FLUSH_MS;

	while (d->cm != NULL && mwp_cm_sends_pending(d->cm) != 0 && rte_rdtsc() < end) {
		mwp_ibv_progress(d);
		mwp_ibv_cm_kick(d);
		usleep(50);
	}
}

int
rdma_reject(struct rdma_cm_id *id, const void *pd, uint8_t len)
{
	struct rid *r = rid_of(id);
	struct mwp_cm_conn_param cp = { .private_data = pd, .private_data_len = len };
	int ret;

	if (theirs(id))
		return S->reject(id, pd, len);
	if (r != NULL && r->sys != NULL)
		return sys_done(r, S->reject(r->sys, pd, len));
	if (r == NULL || r->cm == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&rlock);
	if (r->id.qp_type == IBV_QPT_UD)
		ret = mwp_cm_sidr_rep(r->cm, ROCE_SIDR_REJECT, &cp);
	else
		ret = mwp_cm_reject(r->cm, ROCE_REJ_CONSUMER, pd, len);
	pthread_mutex_unlock(&rlock);
	if (ret == 0)
		flush_mads(r->d);
	return ret != 0 ? fail(ret) : 0;
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct rid *r = rid_of(id);
	int ret;

	if (theirs(id))
		return S->disconnect(id);
	if (r != NULL && r->sys != NULL)
		return sys_done(r, S->disconnect(r->sys));
	if (r == NULL || r->cm == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&rlock);
	qp_error(r);
	ret = mwp_cm_disconnect(r->cm, NULL, 0);
	pthread_mutex_unlock(&rlock);
	if (ret == 0)
		flush_mads(r->d);
	/* a second disconnect, or one after the peer's DREP, is no error */
	return ret != 0 && !r->told_disc ? fail(ret) : 0;
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct rid *r = rid_of(id), *gone = NULL;
	struct mwp_ibv_dev *devs;
	unsigned int n;

	if (theirs(id))
		return S->destroy_id(id);
	if (r == NULL)
		return fail(EINVAL);
	pthread_mutex_lock(&rlock);
	if (r->id.event != NULL) {
		/* a synchronous id's last event (librdmacm acknowledges it) */
		acked((struct rev *)r->id.event);
		r->id.event = NULL;
	}
	wait_acked(r);
	not_resolving(r);
	n = mwp_ibv_devices(&devs);
	for (unsigned int i = 0; i < n && i < APP_MAX_DEVICES; i++)
		if (r->listen[i] != NULL) {
			mwp_cm_destroy_id(r->listen[i]);
			mwp_ibv_share_unlisten(&devs[i], service_id(r,
					       mwp_rdmacm_port_of(&r->id.route.addr.src_addr)), 0);
		}
	if (r->cm != NULL)
		mwp_cm_destroy_id(r->cm);
	r->magic = 0;
	/* its events still queued: gone with it */
	if (r->id.channel != NULL) {
		struct rchan *c = (struct rchan *)r->id.channel;
		struct rev *e, *t;

		/* (their counts stay in the eventfd: take reads past them,
		 * and no read here can block on one a taker has) */
		for (e = TAILQ_FIRST(&c->q); e != NULL; e = t) {
			t = TAILQ_NEXT(e, link);
			if (e->ev.id == id) {
				TAILQ_REMOVE(&c->q, e, link);
				drop(e);
			} else if (e->ev.listen_id == id) {
				/* a request of this listener the program never
				 * saw: rejected, its id gone with the event */
				struct rid *q = rid_of(e->ev.id);

				TAILQ_REMOVE(&c->q, e, link);
				drop(e);
				if (q != NULL && q->sys != NULL) {
					/* the system's: after the lock (its
					 * destroy waits for its events) */
					q->magic = 0;
					q->gone = gone;
					gone = q;
				} else if (q != NULL) {
					mwp_cm_reject(q->cm, ROCE_REJ_CONSUMER, NULL, 0);
					mwp_cm_destroy_id(q->cm);
					q->magic = 0;
					mwp_ibv_close(q->d);
					free(q);
				}
			}
		}
	}
	pthread_mutex_unlock(&rlock);
	while (gone != NULL) {
		struct rid *q = gone;

		gone = q->gone;
		S->reject(q->sys, NULL, 0);
		S->destroy_id(q->sys);
		free(q);
	}
	/* the system's id: its relay may hold an event of it, which finds
	 * the id let go (magic) and acknowledges it, as its destroy waits */
	if (r->sys != NULL)
		S->destroy_id(r->sys);
	if (r->sys_listen != NULL)
		S->destroy_id(r->sys_listen);
	free_cqs(r);
	if (r->own != NULL)
		rdma_destroy_event_channel(&r->own->ch);
	if (r->d != NULL)
		mwp_ibv_close(r->d);
	free(r);
	return 0;
}

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;

	if (id == NULL || res == NULL)
		return fail(EINVAL);
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cid, res->ai_src_addr) != 0)
			goto fail;
	} else {
		if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000) != 0 ||
		    rdma_resolve_route(cid, 2000) != 0)
			goto fail;
	}
	if (qp_init_attr != NULL && !(res->ai_flags & RAI_PASSIVE) &&
	    rdma_create_qp(cid, pd, qp_init_attr) != 0)
		goto fail;
	if (qp_init_attr != NULL && (res->ai_flags & RAI_PASSIVE)) {
		/* a listener's QP attributes are its requests' (librdmacm) */
		struct rid *r = rid_of(cid);

		r->ep_qp = true;
		r->ep_attr = *qp_init_attr;
		r->ep_pd = pd;
	}
	*id = cid;
	return 0;
fail:
	{
		int e = errno;

		rdma_destroy_id(cid);
		errno = e;
	}
	return -1;
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *ch)
{
	struct rid *r = rid_of(id);
	struct rchan *from, *to, *own = NULL;
	struct rev *e, *t;
	const uint64_t one = 1;

	if (r == NULL || (ch == NULL && r->own != NULL))
		return fail(EINVAL);
	if (ch == NULL) {
		/* to no channel: synchronous from now on (librdmacm) */
		own = chan_new();
		if (own == NULL)
			return fail(ENOMEM);
		ch = &own->ch;
	}
	from = (struct rchan *)r->id.channel;
	to = (struct rchan *)ch;
	pthread_mutex_lock(&rlock);
	if (r->id.event != NULL) {
		acked((struct rev *)r->id.event);
		r->id.event = NULL;
	}
	wait_acked(r);
	/* its queued events go with it (their counts left behind are read
	 * past, see take) */
	for (e = TAILQ_FIRST(&from->q); e != NULL && from != to; e = t) {
		t = TAILQ_NEXT(e, link);
		if (e->ev.id != id)
			continue;
		TAILQ_REMOVE(&from->q, e, link);
		TAILQ_INSERT_TAIL(&to->q, e, link);
		if (write(to->ch.fd, &one, sizeof(one)) != sizeof(one))
			fprintf(stderr, "mwpath-rdmacm: event channel: %s\n", strerror(errno));
	}
	r->id.channel = ch;
	from = r->own;
	r->own = own;
	pthread_mutex_unlock(&rlock);
	if (from != NULL)
		rdma_destroy_event_channel(&from->ch);
	return 0;
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		size_t optlen)
{
	struct rid *r = rid_of(id);

	if (theirs(id))
		return S->set_option(id, level, optname, optval, optlen);
	if (r != NULL && r->sys != NULL)
		return S->set_option(r->sys, level, optname, optval, optlen);
	if (r == NULL || optval == NULL)
		return fail(EINVAL);
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_TOS && optlen == 1) {
		r->tos = *(uint8_t *)optval;
		return 0;
	}
	if (level == RDMA_OPTION_ID && (optname == RDMA_OPTION_ID_REUSEADDR ||
					optname == RDMA_OPTION_ID_AFONLY))
		return 0;
	if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH)
		return 0;	/* the path is the port's */
	if (level == RDMA_OPTION_ID && optname == RDMA_OPTION_ID_ACK_TIMEOUT && optlen == 1) {
		/* the QP's at RTS from now on, whatever the route or the
		 * peer's REQ said (as the kernel's rdma_cm) */
		r->ack_timeout = *(uint8_t *)optval;
		if (r->ack_timeout != 0)
			r->path.ack_timeout = r->ack_timeout;
		return 0;
	}
	return fail(ENOSYS);
}

int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct rid *r = rid_of(id);

	if (theirs(id))
		return S->notify(id, event);
	if (r != NULL && r->sys != NULL)
		return S->notify(r->sys, event);
	return r != NULL ? 0 : fail(EINVAL);
}

/* The system's id behind id, or NULL. */
static struct rdma_cm_id *
sys_of(struct rdma_cm_id *id)
{
	struct rid *r = rid_of(id);

	return r != NULL ? r->sys : NULL;
}

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	if (sys_of(id) != NULL)
		return S->join_multicast(sys_of(id), addr, context);
	return fail(EOPNOTSUPP);	/* docs/cm.md: no multicast */
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
		       void *context)
{
	if (sys_of(id) != NULL)
		return S->join_multicast_ex(sys_of(id), attr, context);
	return fail(EOPNOTSUPP);
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (sys_of(id) != NULL)
		return S->leave_multicast(sys_of(id), addr);
	return fail(EADDRNOTAVAIL);
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *a, int *mask)
{
	struct rid *r = rid_of(id);

	if (theirs(id))
		return S->init_qp_attr(id, a, mask);
	if (r != NULL && r->sys != NULL)
		return S->init_qp_attr(r->sys, a, mask);
	if (r == NULL || a == NULL || mask == NULL)
		return fail(EINVAL);
	/* as the kernel's rdma_cm: INIT at any time; RTR and RTS once the
	 * peer is known (the passive side from its REQ, the active side
	 * from the REP), with what qp_connect gives the id's own QP */
	switch (a->qp_state) {
	case IBV_QPS_INIT:
		a->port_num = 1;
		a->pkey_index = 0;
		if (r->id.qp_type == IBV_QPT_UD) {
			a->qkey = RDMA_UDP_QKEY;
			*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					     IBV_ACCESS_REMOTE_ATOMIC;
			*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		if (r->id.qp_type == IBV_QPT_UD) {
			*mask = IBV_QP_STATE;
			return 0;
		}
		if (r->peer.qp_num == 0 || r->d == NULL)
			return fail(EINVAL);
		qp_rtr_attr(r, a, r->resp_res);
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		a->sq_psn = r->id.qp_type == IBV_QPT_UD ? 0 : r->peer.starting_psn;
		if (r->id.qp_type == IBV_QPT_UD) {
			*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
			return 0;
		}
		if (r->peer.qp_num == 0)
			return fail(EINVAL);
		a->timeout = r->path.ack_timeout;
		a->retry_cnt = r->retry;
		a->rnr_retry = r->rnr_retry;
		a->max_rd_atomic = r->init_depth;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	default:
		return fail(EINVAL);
	}
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct rid *r = rid_of(id);
	struct ibv_srq *srq;

	if (theirs(id))
		return S->create_srq(id, pd, attr);
	if (r != NULL && r->sys != NULL)
		return sys_done(r, S->create_srq(r->sys, pd, attr));
	if (r == NULL || attr == NULL || r->id.verbs == NULL)
		return fail(EINVAL);
	pd = pd_of(r, pd);
	srq = pd != NULL ? ibv_create_srq(pd, attr) : NULL;
	if (srq == NULL)
		return -1;
	r->id.srq = srq;
	r->id.pd = pd;
	return 0;
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a;

	if (theirs(id))
		return S->create_srq_ex(id, attr);
	{
		struct rid *r = rid_of(id);

		if (r != NULL && r->sys != NULL)
			return sys_done(r, S->create_srq_ex(r->sys, attr));
	}
	if (attr == NULL)
		return fail(EINVAL);
	if (attr->comp_mask & ~(uint32_t)IBV_SRQ_INIT_ATTR_PD)
		return fail(EOPNOTSUPP);
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	return rdma_create_srq(id, attr->pd, &a);
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	struct rid *r = rid_of(id);

	if (theirs(id)) {
		S->destroy_srq(id);
		return;
	}
	if (r != NULL && r->sys != NULL) {
		S->destroy_srq(r->sys);
		sys_done(r, 0);
		return;
	}
	if (r == NULL || r->id.srq == NULL)
		return;
	ibv_destroy_srq(r->id.srq);
	r->id.srq = NULL;
}

/* Enhanced connection establishment (vendor options in the CM's
 * private data): not on a software device. */
int
rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (sys_of(id) != NULL)
		return S->set_local_ece(sys_of(id), ece);
	return fail(EOPNOTSUPP);
}

int
rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (sys_of(id) != NULL)
		return S->get_remote_ece(sys_of(id), ece);
	return fail(EOPNOTSUPP);
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *pd, uint8_t len)
{
	if (sys_of(id) != NULL)
		return S->reject_ece(sys_of(id), pd, len);
	return rdma_reject(id, pd, len);
}
