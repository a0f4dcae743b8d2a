/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_telemetry commands, read with dpdk-telemetry.py:
 *   /mwpath/stats[,PORT]  per-port packet counters, drops by reason,
 *                         answers, denials
 *   /mwpath/qp[,QPN]      per-QP state and counters
 *   /mwpath/keys[,RKEY]   live R_Keys with their range and access counters
 *   /mwpath/lcores        per polling lcore: packet rates since the last
 *                         call, hand-offs, the QPs its engine owns
 *   /mwpath/neigh[,PORT]  the neighbour tables (ARP, ND): who is where,
 *                         keyed by address with '_' for '.' and ':'
 *   /mwpath/sources       the sources of refused requests, per queue, and
 *                         whether the guessing defence blocks them
 * Keys, QPNs, PSNs and addresses are hex strings, access flags their names
 * ("remote_write,remote_read"), as everywhere mwpath prints them.
 * The callbacks run on DPDK's telemetry thread.  Counters are read as the
 * lcores leave them (64-bit loads, no locks); the key walk takes the
 * device lock, as binds do; the neighbour walk the table's lock, as the
 * control path does.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "mwpath.h"
#include "hex.h"
#include "telemetry.h"

static const struct app_run *t_run;
static const struct app_objects *t_objs;

static bool
parse_num(const char *params, uint64_t max, uint64_t *out)
{
	char *end;

	if (params == NULL || *params == '\0')
		return false;
	*out = strtoull(params, &end, 0);
	return *end == '\0' && *out <= max;
}

/* A key, QPN, PSN or address as a hex string, in the style of the
 * summary, objects.json and mwpath-inspect (hex.h). */
static void
add_hex(struct rte_tel_data *d, const char *name, enum app_hex_kind kind, uint64_t v)
{
	char s[APP_HEX_LEN];

	rte_tel_data_add_dict_string(d, name, app_hex(s, kind, v));
}

/* "remote_write,remote_read": access flags by the configuration's names
 * (a string: DPDK 22.11 drops a list nested in a listed key) */
static void
add_access(struct rte_tel_data *d, const char *name, unsigned int a)
{
	char s[RTE_TEL_MAX_STRING_LEN] = "";
	size_t n = 0;

	for (size_t i = 0; i < APP_ACCESS_NAMES && n < sizeof(s); i++)
		if (a & app_access_names[i].bit)
			n += (size_t)snprintf(s + n, sizeof(s) - n, "%s%s", n ? "," : "",
					      app_access_names[i].name);
	rte_tel_data_add_dict_string(d, name, s);
}

static int
port_dict(struct rte_tel_data *d, uint16_t pid)
{
	struct mwp_ctrl_stats c;
	struct mwp_stats s;
	char name[64];

	app_port_stats(t_run, pid, &s);
	rte_tel_data_add_dict_u64(d, "rx_pkts", s.rx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_bytes", s.rx_bytes);
	rte_tel_data_add_dict_u64(d, "tx_pkts", s.tx_pkts);
	rte_tel_data_add_dict_u64(d, "tx_bytes", s.tx_bytes);
	rte_tel_data_add_dict_u64(d, "accepted", s.accepted);
	rte_tel_data_add_dict_u64(d, "dropped", mwp_stats_dropped(&s));
	for (unsigned int r = 1; r < MWP_DROP__MAX; r++) {
		snprintf(name, sizeof(name), "drop_%s", mwp_drop_name(r));
		rte_tel_data_add_dict_u64(d, name, s.drop[r]);
	}
	rte_tel_data_add_dict_u64(d, "acks", s.acks);
	for (unsigned int k = 0; k < 4; k++) {
		snprintf(name, sizeof(name), "nak_0x%x", 0x60 + k);
		rte_tel_data_add_dict_u64(d, name, s.naks[k]);
	}
	rte_tel_data_add_dict_u64(d, "rnr_naks", s.rnr_naks);
	rte_tel_data_add_dict_u64(d, "duplicates", s.duplicates);
	rte_tel_data_add_dict_u64(d, "requests_sent_again", s.retrans);
	rte_tel_data_add_dict_u64(d, "ce", s.ce);
	rte_tel_data_add_dict_u64(d, "cnp_sent", s.cnp_tx);
	rte_tel_data_add_dict_u64(d, "cnp_received", s.cnp_rx);
	rte_tel_data_add_dict_u64(d, "to_host", s.host);
	rte_tel_data_add_dict_u64(d, "from_host", s.host_out);
	rte_tel_data_add_dict_u64(d, "host_lost", s.host_lost);
	for (unsigned int r = 1; r < MWP_DENY__MAX; r++) {
		snprintf(name, sizeof(name), "denied_%s", mwp_deny_name(r));
		rte_tel_data_add_dict_u64(d, name, s.denied[r]);
	}
	app_port_ctrl_stats(t_run, pid, &c);
	for (unsigned int i = 0; i < MWP_CTRL__MAX; i++) {
		snprintf(name, sizeof(name), "ctrl_%s", mwp_ctrl_name(i));
		rte_tel_data_add_dict_u64(d, name, c.c[i]);
	}
	return 0;
}

static void
qp_dict(struct rte_tel_data *d, const struct ibv_qp *ibqp)
{
	struct mwp_qp_info qi;
	const struct mwp_qp_stats *s = &qi.resp;
	char name[64];
	unsigned int lcore;
	uint16_t queue;

	if (mwp_qp_query_info(ibqp, &qi) != 0)
		return;
	add_hex(d, "qpn", APP_HEX_QPN, ibqp->qp_num);
	rte_tel_data_add_dict_string(d, "type", ibqp->qp_type == IBV_QPT_RC ? "rc" : "uc");
	/* the polling lcore that owns it, and the queue it answers on */
	if (mwp_qp_owner(ibqp, &lcore, &queue) == 0) {
		rte_tel_data_add_dict_u64(d, "lcore", lcore);
		rte_tel_data_add_dict_u64(d, "queue", queue);
	}
	rte_tel_data_add_dict_string(d, "state", app_qp_state_name(ibqp->state));
	add_hex(d, "remote_qpn", APP_HEX_QPN, qi.dest_qpn);
	add_hex(d, "expected_psn", APP_HEX_PSN, qi.expected_psn);
	rte_tel_data_add_dict_u64(d, "msn", qi.msn);
	add_hex(d, "sq_psn", APP_HEX_PSN, qi.sq_psn);
	rte_tel_data_add_dict_u64(d, "rx_pkts", s->rx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_bytes", s->rx_bytes);
	rte_tel_data_add_dict_u64(d, "acks", s->acks);
	for (unsigned int k = 0; k < 4; k++) {
		snprintf(name, sizeof(name), "nak_0x%x", 0x60 + k);
		rte_tel_data_add_dict_u64(d, name, s->naks[k]);
	}
	rte_tel_data_add_dict_u64(d, "rnr_naks", s->rnr_naks);
	rte_tel_data_add_dict_u64(d, "duplicates", s->duplicates);
	rte_tel_data_add_dict_u64(d, "read_resps", s->read_resps);
	rte_tel_data_add_dict_u64(d, "atomics", s->atomics);
	rte_tel_data_add_dict_u64(d, "acks_rx", s->acks_rx);
	rte_tel_data_add_dict_u64(d, "drops", s->drops);
	add_hex(d, "req_next_psn", APP_HEX_PSN, qi.req_next_psn);
	add_hex(d, "req_unacked_psn", APP_HEX_PSN, qi.req_unacked_psn);
#define _(n, t) rte_tel_data_add_dict_u64(d, "req_" #n, qi.req.n);
	MWP_FOREACH_REQ_STAT(_)
#undef _
	/* congestion control: marks, CNPs, DCQCN (rates in Mb/s, alpha in
	 * 1024ths, as objects.json has them) */
	rte_tel_data_add_dict_u64(d, "cc_ce", qi.cc.st.ce);
	rte_tel_data_add_dict_u64(d, "cc_cnp_sent", qi.cc.st.cnp_sent);
	rte_tel_data_add_dict_u64(d, "cc_cnp_received", qi.cc.st.cnp_received);
	rte_tel_data_add_dict_u64(d, "cc_limited", qi.cc.limited);
	rte_tel_data_add_dict_u64(d, "cc_rate_mbps", (uint64_t)(qi.cc.rate + 0.5));
	rte_tel_data_add_dict_u64(d, "cc_target_mbps", (uint64_t)(qi.cc.target + 0.5));
	rte_tel_data_add_dict_u64(d, "cc_alpha_1024", (uint64_t)(qi.cc.alpha * 1024 + 0.5));
	rte_tel_data_add_dict_u64(d, "cc_rate_cuts", qi.cc.cuts);
	rte_tel_data_add_dict_u64(d, "cc_paced", qi.cc.paced);
	for (unsigned int r = 1; r < MWP_DENY__MAX; r++) {
		snprintf(name, sizeof(name), "denied_%s", mwp_deny_name(r));
		rte_tel_data_add_dict_u64(d, name, s->denied[r]);
	}
}

static int
cmd_qp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint64_t qpn;
	bool one = parse_num(params, 0xffffff, &qpn);

	RTE_SET_USED(cmd);
	if (!one && params != NULL && *params != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < t_objs->nb_qps; i++) {
		const struct ibv_qp *qp = t_objs->qp[i];
		struct rte_tel_data *qd;
		char name[16];

		if (one) {
			if (qp->qp_num == qpn) {
				qp_dict(d, qp);
				return 0;
			}
			continue;
		}
		qd = rte_tel_data_alloc();
		if (qd == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(qd);
		qp_dict(qd, qp);
		snprintf(name, sizeof(name), "0x%x", qp->qp_num);
		rte_tel_data_add_dict_container(d, name, qd, 0);
	}
	return one ? -ENOENT : 0;
}

struct keys_walk {
	struct rte_tel_data *d;
	bool one;
	uint32_t rkey;
	unsigned int shown, skipped;
};

static void
key_dict(struct rte_tel_data *d, const struct mwp_binding *b)
{
	static const char *const kinds[] = { "mr", "mw1", "mw2" };

	add_hex(d, "rkey", APP_HEX_KEY, b->rkey);
	rte_tel_data_add_dict_string(d, "kind", b->kind < 3 ? kinds[b->kind] : "?");
	add_hex(d, "va", APP_HEX_ADDR, b->va);
	rte_tel_data_add_dict_u64(d, "length", b->length);
	rte_tel_data_add_dict_u64(d, "zero_based", b->zero_based);
	add_access(d, "access", b->access);
	if (b->kind == MWP_KEY_MW2)
		add_hex(d, "qpn", APP_HEX_QPN, b->qpn);
	rte_tel_data_add_dict_u64(d, "allowed", b->allowed);
	rte_tel_data_add_dict_u64(d, "denied", b->denied);
}

static void
key_cb(const struct mwp_binding *b, void *arg)
{
	struct keys_walk *w = arg;
	struct rte_tel_data *kd;
	char name[16];

	if (w->one) {
		if (b->rkey == w->rkey) {
			key_dict(w->d, b);
			w->shown++;
		}
		return;
	}
	/* a dict holds RTE_TEL_MAX_DICT_ENTRIES; one is "live" */
	if (w->shown + 2 >= RTE_TEL_MAX_DICT_ENTRIES || (kd = rte_tel_data_alloc()) == NULL) {
		w->skipped++;
		return;
	}
	rte_tel_data_start_dict(kd);
	key_dict(kd, b);
	snprintf(name, sizeof(name), "0x%08x", b->rkey);
	rte_tel_data_add_dict_container(w->d, name, kd, 0);
	w->shown++;
}

static int
cmd_keys(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct keys_walk w = { .d = d };
	uint64_t rkey = 0;
	unsigned int live;

	RTE_SET_USED(cmd);
	if (t_objs->ctx == NULL)
		return -ENOENT;
	w.one = parse_num(params, UINT32_MAX, &rkey);
	if (!w.one && params != NULL && *params != '\0')
		return -EINVAL;
	w.rkey = (uint32_t)rkey;
	rte_tel_data_start_dict(d);
	live = mwp_device_keys_walk(t_objs->ctx, key_cb, &w);
	if (w.one)
		return w.shown != 0 ? 0 : -ENOENT;
	rte_tel_data_add_dict_u64(d, "live", live);
	if (w.skipped != 0)
		rte_tel_data_add_dict_u64(d, "not_shown", w.skipped);
	return 0;
}

/* The previous /mwpath/lcores call's counters, for rates. */
static struct {
	uint64_t tsc, rx, tx;
} lc_last[RTE_MAX_LCORE];

static int
lcore_dict(struct rte_tel_data *d, const struct mwp_lcore *lc, uint64_t now)
{
	struct mwp_engine_stats es;
	uint64_t rx = 0, tx = 0, hout = 0, hin = 0, busy, idle;
	unsigned int id = lc->lcore_id;
	double dt;

	for (uint16_t q = 0; q < lc->nb_queues; q++) {
		uint64_t o, i;

		rx += lc->q[q].stats.rx_pkts;
		tx += lc->q[q].stats.tx_pkts;
		if (lc->q[q].mq != NULL) {
			mwp_queue_handoffs(lc->q[q].mq, &o, &i);
			hout += o;
			hin += i;
		}
	}
	rte_tel_data_add_dict_u64(d, "lcore", id);
	rte_tel_data_add_dict_u64(d, "queues", lc->nb_queues);
	rte_tel_data_add_dict_u64(d, "rx_pkts", rx);
	rte_tel_data_add_dict_u64(d, "tx_pkts", tx);
	/* rates over the time since the previous call (since start, first) */
	dt = (double)(now - (lc_last[id].tsc != 0 ? lc_last[id].tsc : t_run->start_tsc)) /
	     (double)rte_get_tsc_hz();
	if (dt > 0) {
		rte_tel_data_add_dict_u64(d, "rx_pps", (uint64_t)((double)(rx - lc_last[id].rx) / dt));
		rte_tel_data_add_dict_u64(d, "tx_pps", (uint64_t)((double)(tx - lc_last[id].tx) / dt));
	}
	lc_last[id].tsc = now;
	lc_last[id].rx = rx;
	lc_last[id].tx = tx;
	rte_tel_data_add_dict_u64(d, "handoffs_out", hout);
	rte_tel_data_add_dict_u64(d, "handoffs_in", hin);
	rte_tel_data_add_dict_u64(d, "iterations", lc->iterations);
	busy = __atomic_load_n(&lc->last_busy_tsc, __ATOMIC_RELAXED);
	idle = __atomic_load_n(&lc->last_idle_tsc, __ATOMIC_RELAXED);
	rte_tel_data_add_dict_string(d, "state", busy >= idle ? "busy" : "idle");
	if (lc->eng != NULL) {
		mwp_engine_stats_get(lc->eng, &es);
		rte_tel_data_add_dict_u64(d, "qps_owned", es.qps);
		rte_tel_data_add_dict_u64(d, "doorbells", es.doorbells);
		rte_tel_data_add_dict_u64(d, "sq_runs", es.sq_runs);
		rte_tel_data_add_dict_u64(d, "sq_deferred", es.sq_deferred);
		rte_tel_data_add_dict_u64(d, "timers", es.timers);
		rte_tel_data_add_dict_u64(d, "control_requests", es.cmds);
	}
	return 0;
}

static int
cmd_lcores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const uint64_t now = rte_rdtsc();

	RTE_SET_USED(cmd);
	if (params != NULL && *params != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (unsigned int l = 0; l < t_run->nb_lcores; l++) {
		struct rte_tel_data *ld = rte_tel_data_alloc();
		char name[24];

		if (ld == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(ld);
		lcore_dict(ld, &t_run->lcores[l], now);
		snprintf(name, sizeof(name), "lcore%u", t_run->lcores[l].lcore_id);
		rte_tel_data_add_dict_container(d, name, ld, 0);
	}
	return 0;
}

/* "192.0.2.2" for an IPv4-mapped address, else the IPv6 text */
static void
ip_text(const uint8_t ip[16], char *buf, size_t len)
{
	if (mwp_ip_is_v4mapped(ip))
		inet_ntop(AF_INET, ip + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, ip, buf, (socklen_t)len);
}

/* Telemetry names are [A-Za-z0-9_/]: 192.0.2.2 is "192_0_2_2". */
static void
tel_name(char *ip)
{
	for (char *c = ip; *c != '\0'; c++)
		if (*c == '.' || *c == ':')
			*c = '_';
}

struct neigh_walk {
	struct rte_tel_data *d;
	unsigned int shown, skipped;
};

static void
neigh_cb(const struct mwp_neigh_entry *e, uint64_t age_ms, void *arg)
{
	struct neigh_walk *w = arg;
	struct rte_tel_data *nd;
	char ip[INET6_ADDRSTRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE];

	/* room for the table's counters beside the entries */
	if (w->shown + 12 >= RTE_TEL_MAX_DICT_ENTRIES || (nd = rte_tel_data_alloc()) == NULL) {
		w->skipped++;
		return;
	}
	rte_tel_data_start_dict(nd);
	rte_ether_format_addr(mac, sizeof(mac), &e->mac);
	rte_tel_data_add_dict_string(nd, "mac", mac);
	rte_tel_data_add_dict_string(nd, "state",
				     mwp_neigh_state_name((enum mwp_neigh_state)e->state));
	rte_tel_data_add_dict_u64(nd, "age_ms", age_ms);
	rte_tel_data_add_dict_u64(nd, "probes", e->probes);
	ip_text(e->ip, ip, sizeof(ip));
	rte_tel_data_add_dict_string(nd, "ip", ip);
	tel_name(ip);
	if (rte_tel_data_add_dict_container(w->d, ip, nd, 0) != 0) {
		rte_tel_data_free(nd);
		w->skipped++;
		return;
	}
	w->shown++;
}

/* struct mwp_neigh_stats, in its order: each counter under its own name */
#define NEIGH_STATS(_) \
	_(lookups) _(misses) _(probes) _(learned) _(updated) _(evicted) _(failed) \
	_(full) _(ignored)

static int
neigh_dict(struct rte_tel_data *d, uint16_t pid)
{
	struct mwp_neigh_table *t = t_run->ports[pid]->neigh;
	struct neigh_walk w = { .d = d };
	struct mwp_neigh_stats st;

	if (t == NULL)
		return -ENOENT;
	mwp_neigh_walk(t, rte_rdtsc(), neigh_cb, &w);
	st = t->st;
	rte_tel_data_add_dict_u64(d, "entries", w.shown + w.skipped);
	if (w.skipped != 0)
		rte_tel_data_add_dict_u64(d, "not_shown", w.skipped);
	rte_tel_data_add_dict_u64(d, "size", t->size);
#define _(f) rte_tel_data_add_dict_u64(d, #f, st.f);
	NEIGH_STATS(_)
#undef _
	return 0;
}

/* Every source a queue's guard knows: what it had refused, whether it is
 * blocked (docs/security.md); keyed "192_0_2_2_p0q1" (address, port,
 * queue). */
static int
cmd_sources(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const uint64_t now = rte_rdtsc();
	unsigned int shown = 0, skipped = 0;

	RTE_SET_USED(cmd);
	if (params != NULL && *params != '\0')
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (unsigned int l = 0; l < t_run->nb_lcores; l++) {
		const struct mwp_lcore *lc = &t_run->lcores[l];

		for (uint16_t q = 0; q < lc->nb_queues; q++) {
			const struct mwp_guard *g;

			if (lc->q[q].mq == NULL)
				continue;
			g = mwp_queue_guard(lc->q[q].mq);
			for (unsigned int i = 0; i < MWP_GUARD_SOURCES; i++) {
				const struct mwp_guard_source *s = &g->src[i];
				struct rte_tel_data *sd;
				char ip[INET6_ADDRSTRLEN], name[INET6_ADDRSTRLEN + 16];

				if (!s->used)
					continue;
				/* room for "skipped" */
				if (shown + 1 >= RTE_TEL_MAX_DICT_ENTRIES ||
				    (sd = rte_tel_data_alloc()) == NULL) {
					skipped++;
					continue;
				}
				ip_text(s->ip, ip, sizeof(ip));
				rte_tel_data_start_dict(sd);
				rte_tel_data_add_dict_string(sd, "ip", ip);
				rte_tel_data_add_dict_u64(sd, "lcore", lc->lcore_id);
				rte_tel_data_add_dict_u64(sd, "port", lc->q[q].port_id);
				rte_tel_data_add_dict_u64(sd, "queue", lc->q[q].queue_id);
				rte_tel_data_add_dict_u64(sd, "refused", s->refused);
				rte_tel_data_add_dict_u64(sd, "blocked", s->blocked_until > now);
				rte_tel_data_add_dict_u64(sd, "blocks", s->blocks);
				rte_tel_data_add_dict_u64(sd, "dropped_while_blocked", s->dropped);
				tel_name(ip);
				snprintf(name, sizeof(name), "%s_p%uq%u", ip, lc->q[q].port_id,
					 lc->q[q].queue_id);
				if (rte_tel_data_add_dict_container(d, name, sd, 0) != 0) {
					rte_tel_data_free(sd);
					skipped++;
					continue;
				}
				shown++;
			}
		}
	}
	rte_tel_data_add_dict_u64(d, "skipped", skipped);
	return 0;
}

/* The per-port commands, and what fills one port's dict for each. */
static const struct {
	const char *name;
	int (*port_fn)(struct rte_tel_data *d, uint16_t pid);
} per_port_cmds[] = {
	{ "/mwpath/stats", port_dict },
	{ "/mwpath/neigh", neigh_dict },
};

/*
 * A per-port command (per_port_cmds): the dict of the port given as
 * parameter, else one such dict per port ("port0", ...), leaving out the
 * ports it fails on.
 */
static int
cmd_per_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int (*port_fn)(struct rte_tel_data *d, uint16_t pid) = NULL;
	uint64_t pid;

	for (size_t i = 0; i < RTE_DIM(per_port_cmds); i++)
		if (strcmp(cmd, per_port_cmds[i].name) == 0)
			port_fn = per_port_cmds[i].port_fn;
	if (port_fn == NULL)
		return -EINVAL;

	rte_tel_data_start_dict(d);
	if (parse_num(params, t_run->nb_ports - 1, &pid))
		return port_fn(d, (uint16_t)pid);
	if (params != NULL && *params != '\0')
		return -EINVAL;
	for (uint16_t p = 0; p < t_run->nb_ports; p++) {
		struct rte_tel_data *pd = rte_tel_data_alloc();
		char name[16];

		if (pd == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(pd);
		if (port_fn(pd, p) != 0) {
			rte_tel_data_free(pd);
			continue;
		}
		snprintf(name, sizeof(name), "port%u", p);
		if (rte_tel_data_add_dict_container(d, name, pd, 0) != 0)
			rte_tel_data_free(pd);
	}
	return 0;
}

/* A command, or a warning: DPDK refuses, silently, a help text over
 * RTE_TEL_MAX_STRING_LEN bytes and a name already taken. */
static void
reg(const char *name, telemetry_cb fn, const char *help)
{
	int ret = rte_telemetry_register_cmd(name, fn, help);

	if (ret != 0)
		MWP_LOG(WARNING, "telemetry command %s not registered: %s", name, strerror(-ret));
}

void
app_telemetry_init(const struct app_run *run, const struct app_objects *objs)
{
	t_run = run;
	t_objs = objs;
	reg("/mwpath/stats", cmd_per_port,
	    "Per-port counters: packets, drops by reason, answers, denials. "
	    "Parameters: port id (optional)");
	reg("/mwpath/qp", cmd_qp, "Per-QP state and counters. Parameters: QPN (optional)");
	reg("/mwpath/keys", cmd_keys,
	    "Live R_Keys: range, access, counters. Parameters: rkey (optional)");
	reg("/mwpath/lcores", cmd_lcores,
	    "Per polling lcore: packets and rates since the last call, hand-offs, "
	    "QPs owned. No parameters");
	reg("/mwpath/sources", cmd_sources,
	    "Per queue: sources of refused requests, and whether they are blocked. "
	    "No parameters");
	reg("/mwpath/neigh", cmd_per_port,
	    "Neighbour tables (ARP, ND): address, MAC, state, age. "
	    "Parameters: port id (optional)");
}
