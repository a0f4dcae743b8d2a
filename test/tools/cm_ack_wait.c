/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_ack_wait: rdma_destroy_id waits for the id's events to be
 * acknowledged, as librdmacm's does.  Programs rely on it: rping's event
 * thread acknowledges DISCONNECTED after waking the thread that destroys
 * the id.  Run under mwpath-run on a device with address SRC:
 *
 *   cm_ack_wait SRC DST
 *
 * Resolves DST (nobody answers: ADDR_ERROR, or ADDR_RESOLVED if someone
 * does), takes the event, destroys the id from a second thread while the
 * event is held, and acknowledges it 300 ms later.  Exit 0 when destroy
 * returned only after the acknowledgement; 1 when it returned before; 2
 * when the setup failed.
 */
#include <arpa/inet.h>
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

	if (argc != 3 || addr_of(argv[1], &src) != 0 || addr_of(argv[2], &dst) != 0) {
		fprintf(stderr, "usage: cm_ack_wait SRC DST\n");
		return 2;
	}
	ch = rdma_create_event_channel();
	if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 200) != 0 ||
	    rdma_get_cm_event(ch, &ev) != 0) {
		perror("setup");
		return 2;
	}
	printf("event: %s\n", rdma_event_str(ev->event));
	if (pthread_create(&t, NULL, destroyer, NULL) != 0)
		return 2;
	usleep(300 * 1000);
	atomic_store(&acked, 1);
	rdma_ack_cm_event(ev);
	pthread_join(t, NULL);
	rdma_destroy_event_channel(ch);
	printf("destroy returned %s the acknowledgement\n",
	       destroyed_before_ack ? "before" : "after");
	return destroyed_before_ack ? 1 : 0;
}
