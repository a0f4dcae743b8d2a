/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_id_rules: an RDMA CM id's rules as the kernel's rdma_cm and
 * librdmacm keep them.  Run under mwpath-run on a device with address
 * SRC, DST an address nobody answers for:
 *
 *   cm_id_rules SRC DST
 *
 * Resolves DST with a 200 ms timeout; while that runs, a second resolve
 * and a bind are refused (EINVAL).  Takes the event (ADDR_ERROR, status
 * -ETIMEDOUT, expected: printed), destroys the id from a second thread
 * while the event is held, and acknowledges it 300 ms later: destroy
 * must wait for that (rping's event thread acknowledges DISCONNECTED
 * after waking the thread that destroys the id).  Exit 0 when all held;
 * 1 when a rule was broken (said on stderr); 2 when the setup failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static struct rdma_cm_id *id;
static atomic_int acked, destroyed_before_ack = -1;

static void *
destroyer(void *arg)
{
	(void)arg;
	if (rdma_destroy_id(id) != 0)
		perror("rdma_destroy_id");
	atomic_store(&destroyed_before_ack, !atomic_load(&acked));
	return NULL;
}

static int
addr_of(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return 0;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct sockaddr_storage src, dst;
	pthread_t t;

	int broken = 0;

	if (argc != 3 || addr_of(argv[1], &src) != 0 || addr_of(argv[2], &dst) != 0) {
		fprintf(stderr, "usage: cm_id_rules SRC DST\n");
		return 2;
	}
	ch = rdma_create_event_channel();
	if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 200) != 0) {
		perror("setup");
		return 2;
	}
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 200) == 0 || errno != EINVAL) {
		fprintf(stderr, "a second resolve while one runs: not EINVAL\n");
		broken = 1;
	}
	if (rdma_bind_addr(id, (struct sockaddr *)&src) == 0 || errno != EINVAL) {
		fprintf(stderr, "a bind while resolving: not EINVAL\n");
		broken = 1;
	}
	if (rdma_get_cm_event(ch, &ev) != 0) {
		perror("rdma_get_cm_event");
		return 2;
	}
	printf("event: %s, status %d\n", rdma_event_str(ev->event), ev->status);
	if (pthread_create(&t, NULL, destroyer, NULL) != 0)
		return 2;
	usleep(300 * 1000);
	atomic_store(&acked, 1);
	rdma_ack_cm_event(ev);
	pthread_join(t, NULL);
	rdma_destroy_event_channel(ch);
	printf("destroy returned %s the acknowledgement\n",
	       destroyed_before_ack ? "before" : "after");
	return destroyed_before_ack || broken ? 1 : 0;
}
