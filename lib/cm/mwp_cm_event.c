/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM's events for the program: a fixed ring, and an eventfd that is
 * readable while the ring holds any (its counter is the number waiting),
 * so that a program can poll or epoll it beside its other fds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "mwp_cm_priv.h"

int
cm_event_init(struct mwp_cm *cm, uint32_t depth)
{
	cm->ev = calloc(depth, sizeof(*cm->ev));
	if (cm->ev == NULL)
		return ENOMEM;
	cm->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cm->efd < 0) {
		free(cm->ev);
		cm->ev = NULL;
		return errno;
	}
	cm->ev_size = depth;
	return 0;
}

void
cm_event_fini(struct mwp_cm *cm)
{
	if (cm->efd >= 0)
		close(cm->efd);
	free(cm->ev);
}

bool
cm_event_room(const struct mwp_cm *cm)
{
	return cm->ev_count < cm->ev_size;
}

struct mwp_cm_event *
cm_event_new(struct mwp_cm *cm, enum mwp_cm_event_type type, struct mwp_cm_id *id)
{
	struct mwp_cm_event *ev = &cm->ev[(cm->ev_head + cm->ev_count) % cm->ev_size];
	const uint64_t one = 1;

	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->id = id;
	ev->context = id->context;
	cm->ev_count++;
	if (write(cm->efd, &one, sizeof(one)) != sizeof(one))
		cm->st.event_full++;	/* cannot be: the counter has room */
	return ev;
}

int
cm_event_take(struct mwp_cm *cm, struct mwp_cm_event *ev)
{
	uint64_t v;

	/* events of ids let go are skipped (their id is NULL) */
	while (cm->ev_count != 0) {
		const struct mwp_cm_event *e = &cm->ev[cm->ev_head];
		bool live = e->id != NULL;

		if (live)
			*ev = *e;
		cm->ev_head = (cm->ev_head + 1) % cm->ev_size;
		cm->ev_count--;
		if (live) {
			if (cm->ev_count == 0 && read(cm->efd, &v, sizeof(v)) < 0)
				v = 0;	/* already drained */
			return 0;
		}
	}
	if (read(cm->efd, &v, sizeof(v)) < 0)
		v = 0;
	return EAGAIN;
}

void
cm_event_forget(struct mwp_cm *cm, const struct mwp_cm_id *id)
{
	for (uint32_t i = 0; i < cm->ev_count; i++) {
		struct mwp_cm_event *e = &cm->ev[(cm->ev_head + i) % cm->ev_size];

		if (e->id == id)
			e->id = NULL;
		if (e->listen_id == id)
			e->listen_id = NULL;
	}
}
