/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_rules: rsockets' answers to bad calls and bad peers.  Run under
 * mwpath-run on a device with address ADDR (one process: the connections
 * go to the port itself):
 *
 *   rsocket_rules ADDR
 *
 * Checks, each printed "ok: ..." when it holds:
 * - what rsockets do not do, and numbers that are no rsocket, are clear
 *   errors (ENOTSUP, EBADF), and calls out of order are refused;
 * - a peer whose connection data is not rsockets' (an RDMA CM client
 *   with version 2 in its private data, or none) is rejected: the client
 *   sees REJECTED, raccept fails ECONNABORTED, and the listener then
 *   accepts a good client;
 * - a peer that connects as rsockets do and then breaks the data rules
 *   is EPROTO, nothing read outside the receive ring: one message whose
 *   immediate claims 2^29 - 1 bytes, and 17 messages where 16 credits
 *   were given (the 16 are still read);
 * - on that connection: riowrite to an offset the peer never mapped is
 *   EINVAL, data arrives whole, a send after the peer's close is
 *   refused, and rrecv says 0 (end of stream) after the peer's close;
 * - non-blocking: rconnect says EINPROGRESS and rpoll then shows its end
 *   (SO_ERROR ECONNREFUSED toward a port nobody listens on, 0 toward the
 *   listener); a non-blocking listener's raccept and its socket say
 *   EAGAIN until the request and the connection come.
 * Exit 0 when all held; 1 when one did not (said on stderr); 2 when the
 * setup failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <endian.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#define PORT 7499

static struct sockaddr_in addr;
static int broken;

#define CHECK(cond, what) do { \
	if (cond) { \
		printf("ok: %s\n", what); \
	} else { \
		fprintf(stderr, "broken: %s (errno %d: %s)\n", what, errno, strerror(errno)); \
		broken = 1; \
	} \
} while (0)

/* An RDMA CM client whose private data is pd (len bytes): the event its
 * connect ended with. */
static void *
cm_client(void *arg)
{
	const int version = *(int *)arg;
	struct rdma_cm_id *id;
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned char pd[40] = { 0 };
	intptr_t ev = -1;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) != 0)
		return (void *)ev;
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000) == 0 &&
	    rdma_resolve_route(id, 2000) == 0 && rdma_create_qp(id, NULL, &qa) == 0) {
		pd[0] = (unsigned char)version;
		p.private_data = version >= 0 ? pd : NULL;
		p.private_data_len = version >= 0 ? sizeof(pd) : 0;
		if (rdma_connect(id, &p) == 0)
			ev = RDMA_CM_EVENT_ESTABLISHED;
		else if (id->event != NULL)
			ev = id->event->event;
		rdma_destroy_qp(id);
	}
	rdma_destroy_id(id);
	return (void *)ev;
}

/* rsockets' connection data (librdmacm's struct rs_conn_data). */
struct conn_data {
	uint8_t version;
	uint8_t flags;
	uint16_t credits;
	uint8_t reserved[3];
	uint8_t target_iomap_size;
	struct { uint64_t addr; uint32_t key; uint32_t length; } target_sgl, data_buf;
};

/* A peer that speaks rsockets' connection and then breaks its rules:
 * mode 0 says in one data message's immediate that it wrote 2^29 - 1
 * bytes (more than any grant); mode 1 sends 17 one-byte messages where
 * the server's credits are 16.  0: it did. */
static void *
bad_peer(void *arg)
{
	const int mode = *(int *)arg;
	static uint8_t mine[4096];
	struct rdma_cm_id *id;
	struct rdma_conn_param p = { .retry_count = 7, .rnr_retry_count = 7,
				     .flow_control = 1 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct conn_data req = { .version = 1 }, rep;
	struct ibv_mr *mr = NULL;
	intptr_t ret = 1;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP) != 0)
		return (void *)ret;
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&addr, 2000) != 0 ||
	    rdma_resolve_route(id, 2000) != 0 || rdma_create_qp(id, NULL, &qa) != 0)
		goto out;
	mr = ibv_reg_mr(id->pd, mine, sizeof(mine),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		goto out;
	/* where the server's grants and credits go: our own memory */
	req.credits = htobe16(32);
	req.target_sgl.addr = htobe64((uintptr_t)mine);
	req.target_sgl.key = htobe32(mr->rkey);
	req.target_sgl.length = htobe32(2);
	req.data_buf.addr = htobe64((uintptr_t)mine + 1024);
	req.data_buf.key = htobe32(mr->rkey);
	req.data_buf.length = htobe32(1024);
	for (int i = 0; i < 32; i++) {
		struct ibv_recv_wr rw = { .wr_id = 1000 + i }, *badr;

		ibv_post_recv(id->qp, &rw, &badr);
	}
	p.private_data = &req;
	p.private_data_len = sizeof(req);
	if (rdma_connect(id, &p) != 0 || id->event->param.conn.private_data_len < sizeof(rep))
		goto out;
	memcpy(&rep, id->event->param.conn.private_data, sizeof(rep));
	for (int i = 0; i < (mode == 0 ? 1 : 17); i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)mine + 2048 + i, .length = 1,
				       .lkey = mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
			.imm_data = htobe32(mode == 0 ? 0x1fffffffu : 1u),
			.wr.rdma = { .remote_addr = be64toh(rep.data_buf.addr) + i,
				     .rkey = be32toh(rep.data_buf.key) },
		}, *bad;

		if (ibv_post_send(id->qp, &wr, &bad) != 0)
			goto out;
	}
	/* every write acknowledged (the 17th once the server has a receive
	 * for it again) */
	for (int done = 0, tries = 0; done < (mode == 0 ? 1 : 17) && tries < 5000; tries++) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(id->send_cq, 1, &wc);

		if (n > 0 && wc.wr_id < 1000)
			done++;
		else if (n == 0)
			usleep(1000);
		if (done == (mode == 0 ? 1 : 17))
			ret = 0;
	}
	sleep(1);	/* the server reads before the disconnect */
	rdma_disconnect(id);
out:
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	rdma_destroy_id(id);
	return (void *)ret;
}

/* A good rsockets client: sends "hello rsockets" (rsendmsg, two
 * iovecs), tries riowrite to an
 * offset the server never mapped, then closes. */
static void *
rs_client(void *arg)
{
	static const char msg[] = "hello rsockets";
	intptr_t ret = 1;
	int s = rsocket(AF_INET, SOCK_STREAM, 0), one = 1;
	char buf[8] = { 0 };

	(void)arg;
	if (s < 0)
		return (void *)ret;
	rsetsockopt(s, SOL_RDMA, RDMA_IOMAPSIZE, &one, sizeof(one));
	if (rconnect(s, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		perror("rconnect");
	} else {
		struct iovec iov[2] = { { (void *)msg, 6 }, { (void *)(msg + 6), sizeof(msg) - 6 } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		CHECK(rsendmsg(s, &mh, 0) == (ssize_t)sizeof(msg),
		      "the client's rsendmsg took its whole message (two iovecs)");
		errno = 0;
		CHECK(riowrite(s, buf, sizeof(buf), 4096, 0) == (size_t)-1 && errno == EINVAL,
		      "riowrite to an offset the peer never mapped is EINVAL");
		CHECK(rconnect(s, (struct sockaddr *)&addr, sizeof(addr)) == -1 &&
		      errno == EISCONN, "rconnect on a connected rsocket is EISCONN");
		ret = 0;
	}
	rclose(s);
	return (void *)ret;
}

/* A non-blocking rconnect to port: EINPROGRESS, then rpoll until it is
 * writable or in error; what SO_ERROR says then (or -1 when the steps
 * were not those). */
static int
nb_connect(uint16_t port, int *sock)
{
	struct sockaddr_in to = addr;
	struct pollfd pf;
	int s = rsocket(AF_INET, SOCK_STREAM, 0), err = -1;
	socklen_t len = sizeof(err);

	*sock = s;
	if (s < 0)
		return -1;
	to.sin_port = htons(port);
	rfcntl(s, F_SETFL, O_NONBLOCK);
	errno = 0;
	if (rconnect(s, (struct sockaddr *)&to, sizeof(to)) != -1 || errno != EINPROGRESS) {
		fprintf(stderr, "rconnect: not EINPROGRESS (errno %d)\n", errno);
		return -1;
	}
	pf.fd = s;
	pf.events = POLLOUT;
	pf.revents = 0;
	if (rpoll(&pf, 1, 10000) != 1) {
		fprintf(stderr, "rpoll: nothing in 10 s\n");
		return -1;
	}
	if (rgetsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		return -1;
	return err;
}

/* A non-blocking client: connects, sends "nb", closes.  0: it did. */
static void *
nb_client(void *arg)
{
	int ns, err = nb_connect(PORT, &ns);
	intptr_t ret = 1;

	(void)arg;
	CHECK(err == 0, "a non-blocking rconnect to the listener: EINPROGRESS, rpoll, "
			"then SO_ERROR 0");
	for (int i = 0; err == 0 && i < 10000; i++) {
		if (rsend(ns, "nb", 2, 0) == 2) {
			ret = 0;
			break;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			break;
		usleep(1000);
	}
	if (ns >= 0)
		rclose(ns);
	return (void *)ret;
}

int
main(int argc, char **argv)
{
	int l, s, bad_version = 2, no_data = -1, one = 1;
	pthread_t t;
	void *res;
	char buf[64];
	ssize_t n;

	if (argc != 2 || inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
		fprintf(stderr, "usage: rsocket_rules ADDR\n");
		return 2;
	}
	addr.sin_family = AF_INET;
	addr.sin_port = htons(PORT);

	errno = 0;
	CHECK(rsocket(AF_INET, SOCK_DGRAM, 0) == -1 && errno == ENOTSUP,
	      "a datagram rsocket is ENOTSUP");
	CHECK(rsocket(AF_UNIX, SOCK_STREAM, 0) == -1 && errno == ENOTSUP,
	      "an rsocket of AF_UNIX is ENOTSUP");
	CHECK(rsend(9999, "x", 1, 0) == -1 && errno == EBADF, "rsend on no rsocket is EBADF");
	CHECK(rrecv(9999, buf, 1, 0) == -1 && errno == EBADF, "rrecv on no rsocket is EBADF");
	CHECK(rclose(9999) == -1 && errno == EBADF, "rclose of no rsocket is EBADF");

	l = rsocket(AF_INET, SOCK_STREAM, 0);
	if (l < 0) {
		perror("rsocket");
		return 2;
	}
	CHECK(rsend(l, "x", 1, 0) == -1 && errno == ENOTCONN,
	      "rsend on an rsocket never connected is ENOTCONN");
	CHECK(raccept(l, NULL, NULL) == -1 && errno == EBADF,
	      "raccept on an rsocket not listening is EBADF");
	if (rbind(l, (struct sockaddr *)&addr, sizeof(addr)) != 0 || rlisten(l, 4) != 0) {
		perror("rbind/rlisten");
		return 2;
	}
	CHECK(rconnect(l, (struct sockaddr *)&addr, sizeof(addr)) == -1 && errno == EINVAL,
	      "rconnect on a listening rsocket is EINVAL");
	rfcntl(l, F_SETFL, O_NONBLOCK);
	CHECK(raccept(l, NULL, NULL) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK),
	      "a non-blocking raccept with nobody connecting is EAGAIN");
	rfcntl(l, F_SETFL, 0);
	CHECK(rsetsockopt(l, SOL_RDMA, RDMA_IOMAPSIZE, &one, sizeof(one)) == 0,
	      "RDMA_IOMAPSIZE is taken before the connection");
	{
		unsigned int huge = 1u << 31;
		int got = 0;
		socklen_t len = sizeof(got);

		rsetsockopt(l, SOL_SOCKET, SO_RCVBUF, &huge, sizeof(huge));
		rgetsockopt(l, SOL_SOCKET, SO_RCVBUF, &got, &len);
		CHECK(got == 1 << 28, "SO_RCVBUF of 2 GiB is held to 256 MiB");
		got = 65536;
		rsetsockopt(l, SOL_SOCKET, SO_RCVBUF, &got, sizeof(got));
	}

	/* peers whose connection data is not rsockets' */
	for (int i = 0; i < 2; i++) {
		int *version = i == 0 ? &bad_version : &no_data;

		pthread_create(&t, NULL, cm_client, version);
		errno = 0;
		s = raccept(l, NULL, NULL);
		CHECK(s == -1 && errno == ECONNABORTED,
		      i == 0 ? "raccept of a peer with connection data version 2 is ECONNABORTED"
			     : "raccept of a peer with no connection data is ECONNABORTED");
		pthread_join(t, &res);
		CHECK((intptr_t)res == RDMA_CM_EVENT_REJECTED,
		      i == 0 ? "the version 2 peer's connect is REJECTED"
			     : "the peer without connection data is REJECTED");
	}

	/* peers that connect as rsockets do and then break their rules */
	for (int mode = 0; mode < 2; mode++) {
		int sixteen = 16;

		if (mode == 1)
			rsetsockopt(l, SOL_RDMA, RDMA_RQSIZE, &sixteen, sizeof(sixteen));
		pthread_create(&t, NULL, bad_peer, &mode);
		s = raccept(l, NULL, NULL);
		CHECK(s >= 0, mode == 0 ? "the listener accepts a peer with rsockets' data (long)"
					: "the listener accepts a peer with rsockets' data (many)");
		if (s >= 0 && mode == 0) {
			errno = 0;
			n = rrecv(s, buf, sizeof(buf), 0);
			CHECK(n == -1 && errno == EPROTO,
			      "a data message longer than any grant is EPROTO, nothing read");
		} else if (s >= 0) {
			struct pollfd pf = { .fd = s, .events = POLLOUT };

			/* look at the CQ (receives posted again) without
			 * reading, until the 17th message comes */
			for (int i = 0; i < 5000 && !(pf.revents & POLLERR); i++) {
				pf.revents = 0;
				if (rpoll(&pf, 1, 0) == 0 || !(pf.revents & POLLERR))
					usleep(1000);
			}
			CHECK(pf.revents & POLLERR, "a message beyond the credits given is POLLERR");
			n = rrecv(s, buf, sizeof(buf), 0);
			CHECK(n == 16, "the 16 messages within the credits are still read");
			errno = 0;
			n = rrecv(s, buf, sizeof(buf), 0);
			CHECK(n == -1 && errno == EPROTO, "then rrecv says EPROTO");
		}
		if (s >= 0)
			rclose(s);
		pthread_join(t, &res);
		CHECK(res == NULL, "the rule breaker's writes were all acknowledged");
	}
	{
		int def = 384;

		rsetsockopt(l, SOL_RDMA, RDMA_RQSIZE, &def, sizeof(def));
	}

	/* non-blocking connects: to nobody (our own CM's REJ), then to the
	 * listener (its raccept is blocking, in this thread, after) */
	{
		int ns, err = nb_connect(PORT + 1, &ns);

		CHECK(err == ECONNREFUSED, "a non-blocking rconnect to a port nobody listens "
					   "on: EINPROGRESS, rpoll, then SO_ERROR ECONNREFUSED");
		errno = 0;
		CHECK(ns >= 0 && rsend(ns, "x", 1, 0) == -1 && errno == ENOTCONN,
		      "and rsend on it is ENOTCONN");
		rclose(ns);
	}

	/* a good client after them */
	pthread_create(&t, NULL, rs_client, NULL);
	s = raccept(l, NULL, NULL);
	CHECK(s >= 0, "the listener accepts a good client after the bad ones");
	if (s >= 0) {
		n = rrecv(s, buf, sizeof(buf), MSG_WAITALL);
		CHECK(n == (ssize_t)sizeof("hello rsockets") &&
		      strcmp(buf, "hello rsockets") == 0, "its message arrives whole");
		{
			struct iovec iov[2] = { { buf, 4 }, { buf + 4, sizeof(buf) - 4 } };

			n = rreadv(s, iov, 2);
		}
		CHECK(n == 0, "rreadv after the peer's close is 0 (end of stream)");
		CHECK(rsend(s, "x", 1, 0) == -1 && (errno == EPIPE || errno == ECONNRESET),
		      "rsend after the peer's close is refused");
		rclose(s);
	}
	pthread_join(t, &res);
	CHECK(res == NULL, "the client's side held");
	/* a non-blocking client to a non-blocking listener: raccept says
	 * EAGAIN until the REQ, the accepted socket EAGAIN until the RTU
	 * and its data */
	rfcntl(l, F_SETFL, O_NONBLOCK);
	pthread_create(&t, NULL, nb_client, NULL);
	s = -1;
	for (int i = 0; i < 10000 && s < 0; i++) {
		s = raccept(l, NULL, NULL);
		if (s < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			break;
		if (s < 0)
			usleep(1000);
	}
	CHECK(s >= 0, "a non-blocking listener accepts the non-blocking client");
	n = -1;
	for (int i = 0; s >= 0 && i < 10000; i++) {
		n = rrecv(s, buf, 2, MSG_WAITALL);
		if (n != -1 || (errno != EAGAIN && errno != EWOULDBLOCK))
			break;
		usleep(1000);
	}
	CHECK(n == 2 && memcmp(buf, "nb", 2) == 0,
	      "its data arrives once the connection is up (EAGAIN before)");
	if (s >= 0)
		rclose(s);
	pthread_join(t, &res);
	CHECK(res == NULL, "the non-blocking client's side held");
	rclose(l);
	return broken;
}
