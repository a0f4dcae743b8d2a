/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --dump-dir: what a run leaves behind for a regression test or a script to
 * compare -- objects.json (the run, each port's counters, every PD, MR, MW,
 * CQ and QP with its keys, state, bound range and counters),
 * completions.json (every CQE in order, per CQ) and mr-N.bin (the final
 * bytes of each region).
 *
 * The JSON is built with jansson.  Numbers a person reads as identifiers
 * -- keys, QPNs, PSNs, addresses, immediate data -- are hex strings, as the
 * summary, telemetry and mwpath-inspect print them; counts, lengths and
 * indexes are integers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>
#include <rte_ethdev.h>

#include "dump.h"
#include "hex.h"
#include "mwpath.h"

/* Set when jansson could not allocate a value or a member: the file is
 * then not written. */
static bool dump_oom;

/* obj[key] = v (taking v); a failure is remembered in dump_oom */
static void
jset(json_t *obj, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(obj, key, v) != 0)
		dump_oom = true;
}

/* arr += v (taking v) */
static void
jappend(json_t *arr, json_t *v)
{
	if (v == NULL || json_array_append_new(arr, v) != 0)
		dump_oom = true;
}

/* json_pack(fmt, ...); a failure is remembered in dump_oom */
static json_t *
jpack(const char *fmt, ...)
{
	va_list ap;
	json_t *v;

	va_start(ap, fmt);
	v = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	if (v == NULL)
		dump_oom = true;
	return v;
}

/* A count: a JSON integer (jansson's are signed 64-bit; a count never
 * reaches 2^63). */
static json_t *
jcount(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* a key, QPN, PSN or address as a hex string (hex.h) */
static json_t *
jhex(enum app_hex_kind kind, uint64_t v)
{
	char s[APP_HEX_LEN];

	return json_string(app_hex(s, kind, v));
}

/* A number that may use all 64 bits (a wr_id): an integer, or a hex
 * string from 2^63 up, where a JSON integer of jansson's ends. */
static json_t *
ju64(uint64_t v)
{
	if (v <= INT64_MAX)
		return jcount(v);
	return jhex(APP_HEX_ADDR, v);
}

/* ["remote_write", ...] in the configuration's spelling */
static json_t *
jaccess(unsigned int a)
{
	json_t *l = json_array();

	for (size_t i = 0; i < APP_ACCESS_NAMES; i++)
		if (a & app_access_names[i].bit)
			jappend(l, json_string(app_access_names[i].name));
	return l;
}

/* The live descriptor of a key (no reader runs any more), or NULL. */
static const struct mwp_binding *
live(const struct app_objects *o, uint32_t rkey)
{
	return mwp_keys_lookup(mwp_device_keys(o->ctx), rkey);
}

static json_t *
jkey_counters(const struct mwp_binding *b)
{
	json_t *c;

	if (b == NULL)
		return json_null();
	c = json_object();
	jset(c, "allowed", jcount(b->allowed));
	jset(c, "denied", jcount(b->denied));
	return c;
}

static int
config_mr_index(const struct app_objects *o, const struct ibv_mr *mr)
{
	for (int i = 0; i < APP_MAX_OBJ; i++)
		if (o->mr[i] != NULL && o->mr[i] == mr)
			return i;
	return -1;
}

/* {"0x60": n, ..., "0x63": n}: NAKs by syndrome */
static json_t *
jnaks(const uint64_t naks[4])
{
	json_t *n = json_object();
	char name[8];

	for (unsigned int k = 0; k < 4; k++) {
		snprintf(name, sizeof(name), "0x%x", 0x60 + k);
		jset(n, name, jcount(naks[k]));
	}
	return n;
}

/* {"<reason>": n, ...}: every denial reason, zeros included */
static json_t *
jdenied(const uint64_t denied[MWP_DENY__MAX])
{
	json_t *d = json_object();

	for (unsigned int r = 1; r < MWP_DENY__MAX; r++)
		jset(d, mwp_deny_name(r), jcount(denied[r]));
	return d;
}

/* What the summary prints of a port, as numbers. */
static json_t *
jport_counters(const struct app_run *run, uint16_t pid)
{
	const struct mwp_neigh_table *t = run->ports[pid]->neigh;
	json_t *c = json_object(), *drops = json_object(), *ctrl = json_object();
	struct mwp_ctrl_stats cs;
	struct rte_eth_stats es;
	struct mwp_stats s;

	app_port_stats(run, pid, &s);
	jset(c, "packets_in", jcount(s.rx_pkts));
	jset(c, "bytes_in", jcount(s.rx_bytes));
	jset(c, "packets_out", jcount(s.tx_pkts));
	jset(c, "bytes_out", jcount(s.tx_bytes));
	jset(c, "accepted", jcount(s.accepted));
	jset(c, "control", jcount(s.ctrl));
	jset(c, "to_host", jcount(s.host));
	jset(c, "from_host", jcount(s.host_out));
	jset(c, "host_lost", jcount(s.host_lost));
	jset(c, "dropped", jcount(mwp_stats_dropped(&s)));
	for (unsigned int d = 1; d < MWP_DROP__MAX; d++)
		jset(drops, mwp_drop_name(d), jcount(s.drop[d]));
	jset(c, "drops", drops);
	jset(c, "acks", jcount(s.acks));
	jset(c, "naks", jnaks(s.naks));
	jset(c, "rnr_naks", jcount(s.rnr_naks));
	jset(c, "duplicates", jcount(s.duplicates));
	jset(c, "denied", jdenied(s.denied));
	jset(c, "ce", jcount(s.ce));
	jset(c, "cnp_sent", jcount(s.cnp_tx));
	jset(c, "cnp_received", jcount(s.cnp_rx));
	jset(c, "requests_sent_again", jcount(s.retrans));
	app_port_ctrl_stats(run, pid, &cs);
	for (unsigned int i = 0; i < MWP_CTRL__MAX; i++)
		jset(ctrl, mwp_ctrl_name(i), jcount(cs.c[i]));
	jset(c, "control_path", ctrl);
	if (t != NULL)
		jset(c, "neighbours", jpack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			"lookups", jcount(t->st.lookups), "misses", jcount(t->st.misses),
			"probes", jcount(t->st.probes), "learned", jcount(t->st.learned),
			"updated", jcount(t->st.updated), "evicted", jcount(t->st.evicted),
			"failed", jcount(t->st.failed), "full", jcount(t->st.full),
			"ignored", jcount(t->st.ignored)));
	if (rte_eth_stats_get(pid, &es) == 0)
		jset(c, "ethdev", jpack("{s:o, s:o, s:o, s:o, s:o, s:o}",
			"ipackets", jcount(es.ipackets), "imissed", jcount(es.imissed),
			"ierrors", jcount(es.ierrors), "rx_nombuf", jcount(es.rx_nombuf),
			"opackets", jcount(es.opackets), "oerrors", jcount(es.oerrors)));
	return c;
}

/* Each lcore queue of a port: what it took in and handed over. */
static json_t *
jport_queues(const struct app_run *run, uint16_t pid)
{
	json_t *l = json_array();

	for (unsigned int i = 0; i < run->nb_lcores; i++) {
		const struct mwp_lcore *lc = &run->lcores[i];

		for (uint16_t q = 0; q < lc->nb_queues; q++) {
			const struct mwp_lcore_queue *lq = &lc->q[q];
			uint64_t hout = 0, hin = 0;
			json_t *e;

			if (lq->port_id != pid)
				continue;
			if (lq->mq != NULL)
				mwp_queue_handoffs(lq->mq, &hout, &hin);
			e = json_object();
			jset(e, "queue", jcount(lq->queue_id));
			jset(e, "lcore", jcount(lc->lcore_id));
			jset(e, "packets_in", jcount(lq->stats.rx_pkts));
			jset(e, "handed_to_owner", jcount(hout));
			jset(e, "handed_over", jcount(hin));
			jappend(l, e);
		}
	}
	return l;
}

static json_t *
jports(const struct app_run *run)
{
	json_t *l = json_array();

	for (uint16_t pid = 0; pid < run->nb_ports; pid++) {
		char name[RTE_ETH_NAME_MAX_LEN] = "?";
		json_t *p = json_object();

		rte_eth_dev_get_name_by_port(pid, name);
		jset(p, "port", jcount(pid));
		jset(p, "name", json_string(name));
		jset(p, "counters", jport_counters(run, pid));
		jset(p, "queues", jport_queues(run, pid));
		jappend(l, p);
	}
	return l;
}

/* How long the run took, in seconds, and why it stopped. */
static json_t *
jrun(const struct app_run *run)
{
	json_t *r = json_object();

	jset(r, "seconds", json_real(run->seconds));
	jset(r, "stopped", json_string(run->stop_reason));
	jset(r, "lcores", jcount(run->nb_lcores));
	return r;
}

static json_t *
jmr(const struct app_objects *o, unsigned int i)
{
	const struct ibv_mr *mr = o->mr[i];
	struct mwp_mr_info mi;
	json_t *m;

	if (mwp_mr_query_info(mr, &mi) != 0)
		return NULL;
	m = json_object();
	jset(m, "index", jcount(i));
	jset(m, "pd", jcount(o->cfg->mr[i].pd));
	jset(m, "lkey", jhex(APP_HEX_KEY, mr->lkey));
	jset(m, "rkey", jhex(APP_HEX_KEY, mr->rkey));
	jset(m, "iova", jhex(APP_HEX_ADDR, mi.iova));
	jset(m, "length", jcount(mr->length));
	jset(m, "access", jaccess(mi.access));
	jset(m, "bound_windows", jcount(mi.bound_mws));
	jset(m, "counters", jkey_counters(live(o, mr->rkey)));
	return m;
}

static json_t *
jmw(const struct app_objects *o, unsigned int i)
{
	const struct mwp_binding *b;
	struct mwp_mw_info mw;
	json_t *w, *bound;

	if (mwp_mw_query_info(o->mw[i], &mw) != 0)
		return NULL;
	b = mw.valid ? live(o, mw.rkey) : NULL;
	w = json_object();
	jset(w, "index", jcount(i));
	jset(w, "pd", jcount(o->cfg->mw[i].pd));
	jset(w, "type", jcount(o->mw[i]->type == IBV_MW_TYPE_1 ? 1 : 2));
	jset(w, "rkey", jhex(APP_HEX_KEY, mw.rkey));
	jset(w, "state", json_string(mw.valid ? "valid" : "free"));
	if (b == NULL) {
		bound = json_null();
	} else {
		bound = json_object();
		jset(bound, "mr", json_integer(config_mr_index(o, mw.mr)));
		jset(bound, "va", jhex(APP_HEX_ADDR, b->va));
		jset(bound, "length", jcount(b->length));
		jset(bound, "zero_based", json_boolean(b->zero_based));
		jset(bound, "qp", b->kind == MWP_KEY_MW2 ? jhex(APP_HEX_QPN, b->qpn) : json_null());
		jset(bound, "access", jaccess(b->access));
	}
	jset(w, "bound", bound);
	jset(w, "counters", jkey_counters(b));
	return w;
}

static json_t *
jqp(const struct app_objects *o, unsigned int i)
{
	const struct app_qp *c = &o->cfg->qp[i];
	const struct mwp_qp_stats *s;
	struct mwp_qp_info qi;
	json_t *q, *cnt, *req;

	if (mwp_qp_query_info(o->qp[i], &qi) != 0)
		return NULL;
	s = &qi.resp;
	q = json_object();
	jset(q, "qpn", jhex(APP_HEX_QPN, c->qpn));
	jset(q, "type", json_string(c->uc ? "uc" : "rc"));
	jset(q, "state", json_string(app_qp_state_name(o->qp[i]->state)));
	jset(q, "port", jcount(c->port));
	jset(q, "pd", jcount(c->pd));
	jset(q, "cq", jcount(c->cq));
	jset(q, "remote_qpn", jhex(APP_HEX_QPN, qi.dest_qpn));
	jset(q, "rq_psn", jhex(APP_HEX_PSN, qi.expected_psn));
	jset(q, "sq_psn", jhex(APP_HEX_PSN, qi.sq_psn));
	jset(q, "msn", jcount(qi.msn));
	cnt = json_object();
	jset(cnt, "rx_pkts", jcount(s->rx_pkts));
	jset(cnt, "rx_bytes", jcount(s->rx_bytes));
	jset(cnt, "acks", jcount(s->acks));
	jset(cnt, "naks", jnaks(s->naks));
	jset(cnt, "rnr_naks", jcount(s->rnr_naks));
	jset(cnt, "duplicates", jcount(s->duplicates));
	jset(cnt, "read_resps", jcount(s->read_resps));
	jset(cnt, "atomics", jcount(s->atomics));
	jset(cnt, "acks_rx", jcount(s->acks_rx));
	jset(cnt, "drops", jcount(s->drops));
	jset(cnt, "denied", jdenied(s->denied));
	jset(q, "counters", cnt);
	/* the requester: its PSNs and counters */
	req = json_object();
	jset(req, "next_psn", jhex(APP_HEX_PSN, qi.req_next_psn));
	jset(req, "unacked_psn", jhex(APP_HEX_PSN, qi.req_unacked_psn));
#define _(n, t) jset(req, #n, jcount(qi.req.n));
	MWP_FOREACH_REQ_STAT(_)
#undef _
	jset(q, "requester", req);
	/* congestion control: ECN marks, CNPs and DCQCN's state */
	/* (whole numbers: Mb/s, and alpha in 1024ths as ConnectX gives it) */
	jset(q, "congestion", jpack("{s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}",
		"ce", jcount(qi.cc.st.ce), "cnp_sent", jcount(qi.cc.st.cnp_sent),
		"cnp_received", jcount(qi.cc.st.cnp_received), "limited", qi.cc.limited,
		"rate_mbps", jcount((uint64_t)(qi.cc.rate + 0.5)),
		"target_mbps", jcount((uint64_t)(qi.cc.target + 0.5)),
		"alpha_1024", jcount((uint64_t)(qi.cc.alpha * 1024 + 0.5)),
		"rate_cuts", jcount(qi.cc.cuts), "paced", jcount(qi.cc.paced)));
	return q;
}

struct key_list {
	const struct app_objects *o;
	uint32_t rkey[4096];
	unsigned int n;
};

/* A key of one of the configuration's PDs (not of mwpath's own: the
 * connection manager's receive region). */
static void
key_cb(const struct mwp_binding *b, void *arg)
{
	struct key_list *l = arg;
	bool ours = false;

	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		ours |= l->o->pd[i] != NULL && l->o->pd[i]->handle == b->pd;
	if (ours && l->n < RTE_DIM(l->rkey))
		l->rkey[l->n++] = b->rkey;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* every live R_Key of the configuration's PDs, in increasing order */
static json_t *
jlive_keys(const struct app_objects *o)
{
	static struct key_list l;
	json_t *a = json_array();

	l.o = o;
	l.n = 0;
	mwp_device_keys_walk(o->ctx, key_cb, &l);
	qsort(l.rkey, l.n, sizeof(l.rkey[0]), cmp_u32);
	for (unsigned int i = 0; i < l.n; i++)
		jappend(a, jhex(APP_HEX_KEY, l.rkey[i]));
	return a;
}

/* [f(o, i) for each object objs[i], i < n], leaving out the slots with
 * none, and an object f cannot describe (NULL) */
static json_t *
jlist(const struct app_objects *o, void *const *objs, unsigned int n,
      json_t *(*f)(const struct app_objects *o, unsigned int i))
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < n; i++) {
		json_t *e = objs[i] != NULL ? f(o, i) : NULL;

		if (e != NULL)
			jappend(a, e);
	}
	return a;
}

#define JLIST(o, objs, n, f) jlist(o, (void *const *)(objs), n, f)

static json_t *
jpd(const struct app_objects *o, unsigned int i)
{
	return jpack("{s:o, s:o}", "index", jcount(i), "handle", jcount(o->pd[i]->handle));
}

static json_t *
jcq(const struct app_objects *o, unsigned int i)
{
	return jpack("{s:o, s:i, s:o, s:o}", "index", jcount(i), "depth", o->cq[i]->cqe,
		     "completions", jcount(o->log[i].n),
		     "overruns", jcount(mwp_cq_overruns(o->cq[i])));
}

/* The run and its ports; then, when the configuration made a device,
 * its objects (empty lists without one). */
static json_t *
objects_json(const struct app_objects *o, const struct app_run *run)
{
	json_t *root = json_object();
	bool dev = o->ctx != NULL;

	jset(root, "run", jrun(run));
	jset(root, "ports", jports(run));
	jset(root, "pds", dev ? JLIST(o, o->pd, APP_MAX_OBJ, jpd) : json_array());
	jset(root, "mrs", dev ? JLIST(o, o->mr, APP_MAX_OBJ, jmr) : json_array());
	jset(root, "mws", dev ? JLIST(o, o->mw, APP_MAX_OBJ, jmw) : json_array());
	jset(root, "cqs", dev ? JLIST(o, o->cq, APP_MAX_OBJ, jcq) : json_array());
	jset(root, "live_keys", dev ? jlive_keys(o) : json_array());
	jset(root, "qps", dev ? JLIST(o, o->qp, o->nb_qps, jqp) : json_array());
	return root;
}

static json_t *
jwc(const struct ibv_wc *wc)
{
	json_t *e = json_object();

	jset(e, "wr_id", ju64(wc->wr_id));
	jset(e, "status", json_string(app_wc_status_name(wc->status)));
	jset(e, "opcode", json_string(app_wc_opcode_name(wc->opcode)));
	jset(e, "qp_num", jhex(APP_HEX_QPN, wc->qp_num));
	jset(e, "byte_len", jcount(wc->byte_len));
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		jset(e, "imm_data", jhex(APP_HEX_KEY, rte_be_to_cpu_32(wc->imm_data)));
	if (wc->wc_flags & IBV_WC_WITH_INV)
		jset(e, "invalidated_rkey", jhex(APP_HEX_KEY, wc->invalidated_rkey));
	return e;
}

/* [cq i]'s completions, in the order they came */
static json_t *
jcq_log(const struct app_objects *o, unsigned int i)
{
	const struct app_cqe_log *l = &o->log[i];
	json_t *c = json_object();
	json_t *a = json_array();

	jset(c, "cq", jcount(i));
	for (size_t k = 0; k < l->n; k++)
		jappend(a, jwc(&l->wc[k]));
	jset(c, "completions", a);
	return c;
}

static json_t *
completions_json(const struct app_objects *o)
{
	json_t *root = json_object();

	jset(root, "cqs", o->ctx != NULL ? JLIST(o, o->cq, APP_MAX_OBJ, jcq_log) : json_array());
	return root;
}

/* dir/name holding v (taken), and a newline: 0, or -1 with errno set */
static int
write_json(const char *dir, const char *name, json_t *v)
{
	char path[4096];
	FILE *f;
	int ret;

	if (v == NULL || dump_oom) {
		json_decref(v);
		errno = ENOMEM;
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL) {
		json_decref(v);
		return -1;
	}
	/* a seconds count with 6 digits, as the summary's */
	ret = json_dumpf(v, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			 JSON_REAL_PRECISION(6));
	json_decref(v);
	if (ret == 0)
		ret = fputc('\n', f) == EOF ? -1 : 0;
	if (fclose(f) != 0 || ret != 0) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

static int
write_mrs(const char *dir, const struct app_objects *o)
{
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++) {
		char path[4096];
		FILE *f;
		size_t n;

		if (o->mr[i] == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/mr-%u.bin", dir, i);
		f = fopen(path, "wb");
		if (f == NULL)
			return -1;
		n = fwrite(o->mem[i], 1, o->mr[i]->length, f);
		if (fclose(f) != 0 || n != o->mr[i]->length)
			return -1;
	}
	return 0;
}

int
app_dump(const char *dir, const struct app_objects *o, const struct app_run *run)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mwpath: --dump-dir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	dump_oom = false;
	errno = 0;
	if (write_json(dir, "objects.json", objects_json(o, run)) != 0 ||
	    write_json(dir, "completions.json", completions_json(o)) != 0 ||
	    write_mrs(dir, o) != 0) {
		fprintf(stderr, "mwpath: --dump-dir %s: cannot write: %s\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}
