/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include "cm.h"

int
app_cm_start(struct app_cm *c, const struct app_config *cfg, const struct app_run *run,
	     struct app_objects *o)
{
	memset(c, 0, sizeof(*c));
	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		struct ibv_context *ctx;

		/* no address (replays of anyone's traffic), or cm = off */
		if (run->ports[pid] == NULL || !app_config_port_cm(cfg, pid))
			continue;
		if (o->ctx == NULL && c->ctx == NULL) {
			c->ctx = mwp_open_device(&(struct mwp_device_attr){
				.socket = SOCKET_ID_ANY });
			if (c->ctx == NULL) {
				fprintf(stderr, "mwpath: cannot open a device for the CM: %s\n",
					strerror(errno));
				return -1;
			}
		}
		ctx = o->ctx != NULL ? o->ctx : c->ctx;
		c->cm[pid] = mwp_cm_create(ctx, run->ports[pid], NULL);
		if (c->cm[pid] == NULL)
			fprintf(stderr, "mwpath: port %u runs without a connection manager: "
				"QP1: %s\n", pid, errno == EBUSY ?
				"a configured QP has its slot (QPN % 4096 == 1)" : strerror(errno));
	}
	return 0;
}

void
app_cm_tick(struct app_cm *c, const struct app_run *run)
{
	const uint64_t now = rte_get_tsc_cycles();

	for (uint16_t pid = 0; pid < run->nb_ports; pid++)
		if (c->cm[pid] != NULL)
			mwp_cm_progress(c->cm[pid], now);
}

void
app_cm_print(FILE *out, struct app_cm *c, const struct app_run *run)
{
	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		struct mwp_cm_stats st;

		if (c->cm[pid] == NULL)
			continue;
		mwp_cm_stats_get(c->cm[pid], &st);
		if (st.rx_mads == 0 && st.tx_mads == 0)
			continue;
		fprintf(out, "port %u CM: %lu MADs in, %lu out; REQs rejected (no listener) %lu, "
			"SIDR no service %lu, for no id %lu, malformed %lu, unknown attribute %lu, "
			"out of state %lu, duplicates %lu\n", pid,
			(unsigned long)st.rx_mads, (unsigned long)st.tx_mads,
			(unsigned long)st.rej_no_listener, (unsigned long)st.sidr_no_listener,
			(unsigned long)st.unknown_id, (unsigned long)st.bad_mads,
			(unsigned long)st.unknown_attr, (unsigned long)st.out_of_state,
			(unsigned long)st.duplicates);
	}
}

void
app_cm_stop(struct app_cm *c, const struct app_run *run)
{
	for (uint16_t pid = 0; pid < run->nb_ports; pid++)
		if (c->cm[pid] != NULL) {
			mwp_cm_destroy(c->cm[pid]);
			c->cm[pid] = NULL;
		}
	if (c->ctx != NULL)
		mwp_close_device(c->ctx);
	c->ctx = NULL;
}
