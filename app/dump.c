/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --dump-dir: what a run leaves behind for a regression test to compare --
 * objects.json (every PD, MR, MW, CQ and QP with its keys, state, bound
 * range and counters), completions.json (every CQE in order, per CQ) and
 * mr-N.bin (the final bytes of each region).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dump.h"
#include "mwpath.h"

/* ["remote_write", ...] in the configuration's spelling */
static void
access_json(FILE *f, unsigned int a)
{
	const char *sep = "";

	fputc('[', f);
	for (size_t i = 0; i < APP_ACCESS_NAMES; i++)
		if (a & app_access_names[i].bit) {
			fprintf(f, "%s\"%s\"", sep, app_access_names[i].name);
			sep = ", ";
		}
	fputc(']', f);
}

/* The live descriptor of a key (no reader runs any more), or NULL. */
static const struct mwp_binding *
live(const struct app_objects *o, uint32_t rkey)
{
	return mwp_keys_lookup(mwp_device_keys(o->ctx), rkey);
}

static void
counters_json(FILE *f, const struct mwp_binding *b)
{
	if (b == NULL)
		fprintf(f, "null");
	else
		fprintf(f, "{\"allowed\": %" PRIu64 ", \"denied\": %" PRIu64 "}",
			b->allowed, b->denied);
}

static int
config_mr_index(const struct app_objects *o, const struct ibv_mr *mr)
{
	for (int i = 0; i < APP_MAX_OBJ; i++)
		if (o->mr[i] != NULL && o->mr[i] == mr)
			return i;
	return -1;
}

/*
 * One element of a JSON list, written after sep: false, having written
 * nothing, when there is none at index i.
 */
typedef bool (*json_item_fn)(FILE *f, const struct app_objects *o, unsigned int i,
			     const char *sep);

/*
 * "  \"<name>\": [", the elements that item writes for the indexes 0 to
 * n - 1, each on a line of its own, then "\n  ]" and end.
 */
static void
json_list(FILE *f, const struct app_objects *o, const char *name, unsigned int n,
	  json_item_fn item, const char *end)
{
	const char *sep = "";

	fprintf(f, "  \"%s\": [", name);
	for (unsigned int i = 0; i < n; i++)
		if (item(f, o, i, sep))
			sep = ",";
	fprintf(f, "\n  ]%s", end);
}

static bool
mr_json(FILE *f, const struct app_objects *o, unsigned int i, const char *sep)
{
	const struct ibv_mr *mr = o->mr[i];
	struct mwp_mr_info mi;

	if (mr == NULL || mwp_mr_query_info(mr, &mi) != 0)
		return false;
	fprintf(f, "%s\n    {\"index\": %u, \"pd\": %u, \"lkey\": %" PRIu32
		", \"rkey\": %" PRIu32 ", \"iova\": %" PRIu64 ", \"length\": %zu, "
		"\"access\": ", sep, i, o->cfg->mr[i].pd, mr->lkey, mr->rkey,
		mi.iova, mr->length);
	access_json(f, mi.access);
	fprintf(f, ", \"bound_windows\": %" PRIu32 ", \"counters\": ",
		mi.bound_mws);
	counters_json(f, live(o, mr->rkey));
	fputc('}', f);
	return true;
}

static bool
mw_json(FILE *f, const struct app_objects *o, unsigned int i, const char *sep)
{
	struct mwp_mw_info mw;
	const struct mwp_binding *b;

	if (o->mw[i] == NULL || mwp_mw_query_info(o->mw[i], &mw) != 0)
		return false;
	b = mw.valid ? live(o, mw.rkey) : NULL;
	fprintf(f, "%s\n    {\"index\": %u, \"pd\": %u, \"type\": %u, \"rkey\": %"
		PRIu32 ", \"state\": \"%s\", \"bound\": ", sep, i,
		o->cfg->mw[i].pd, o->mw[i]->type == IBV_MW_TYPE_1 ? 1 : 2,
		mw.rkey, mw.valid ? "valid" : "free");
	if (b == NULL) {
		fprintf(f, "null");
	} else {
		fprintf(f, "{\"mr\": %d, \"va\": %" PRIu64 ", \"length\": %" PRIu64
			", \"zero_based\": %s, \"qp\": ", config_mr_index(o, mw.mr),
			b->va, b->length, b->zero_based ? "true" : "false");
		if (b->kind == MWP_KEY_MW2)
			fprintf(f, "%" PRIu32, b->qpn);
		else
			fprintf(f, "null");
		fprintf(f, ", \"access\": ");
		access_json(f, b->access);
		fputc('}', f);
	}
	fprintf(f, ", \"counters\": ");
	counters_json(f, b);
	fputc('}', f);
	return true;
}

static bool
qp_json(FILE *f, const struct app_objects *o, unsigned int i, const char *sep)
{
	const struct app_qp *c = &o->cfg->qp[i];
	struct mwp_qp_info qi;
	const struct mwp_qp_stats *s = &qi.resp;

	if (mwp_qp_query_info(o->qp[i], &qi) != 0)
		return false;
	fprintf(f, "%s\n    {\"qpn\": %" PRIu32 ", \"type\": \"%s\", \"state\": \"%s\", "
		"\"port\": %u, \"pd\": %u, \"cq\": %u, \"remote_qpn\": %" PRIu32
		", \"rq_psn\": %" PRIu32 ", \"sq_psn\": %" PRIu32 ", \"msn\": %" PRIu32
		", \"counters\": {\"rx_pkts\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
		", \"acks\": %" PRIu64 ", \"naks\": {\"0x60\": %" PRIu64
		", \"0x61\": %" PRIu64 ", \"0x62\": %" PRIu64 ", \"0x63\": %" PRIu64
		"}, \"rnr_naks\": %" PRIu64 ", \"duplicates\": %" PRIu64
		", \"read_resps\": %" PRIu64 ", \"atomics\": %" PRIu64
		", \"acks_rx\": %" PRIu64 ", \"drops\": %" PRIu64
		", \"denied\": {",
		sep, c->qpn, c->uc ? "uc" : "rc", app_qp_state_name(o->qp[i]->state),
		c->port, c->pd, c->cq, qi.dest_qpn, qi.expected_psn, qi.sq_psn,
		qi.msn, s->rx_pkts, s->rx_bytes, s->acks, s->naks[0],
		s->naks[1], s->naks[2], s->naks[3], s->rnr_naks, s->duplicates,
		s->read_resps, s->atomics, s->acks_rx, s->drops);
	for (unsigned int d = 1; d < MWP_DENY__MAX; d++)
		fprintf(f, "%s\"%s\": %" PRIu64, d > 1 ? ", " : "",
			mwp_deny_name(d), s->denied[d]);
	/* the requester: its PSNs and counters */
	fprintf(f, "}}, \"requester\": {\"next_psn\": %" PRIu32
		", \"unacked_psn\": %" PRIu32, qi.req_next_psn, qi.req_unacked_psn);
#define _(n, t) fprintf(f, ", \"" #n "\": %" PRIu64, qi.req.n);
	MWP_FOREACH_REQ_STAT(_)
#undef _
	fprintf(f, "}}");
	return true;
}

struct key_list {
	uint32_t rkey[4096];
	unsigned int n;
};

static void
key_cb(const struct mwp_binding *b, void *arg)
{
	struct key_list *l = arg;

	if (l->n < RTE_DIM(l->rkey))
		l->rkey[l->n++] = b->rkey;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* every live R_Key, in increasing order */
static void
dump_keys(FILE *f, const struct app_objects *o)
{
	static struct key_list l;

	l.n = 0;
	mwp_device_keys_walk(o->ctx, key_cb, &l);
	qsort(l.rkey, l.n, sizeof(l.rkey[0]), cmp_u32);
	fprintf(f, "  \"live_keys\": [");
	for (unsigned int i = 0; i < l.n; i++)
		fprintf(f, "%s%" PRIu32, i ? ", " : "", l.rkey[i]);
	fprintf(f, "],\n");
}

static void
objects_json(FILE *f, const struct app_objects *o)
{
	const char *sep = "";

	fprintf(f, "{\n  \"pds\": [");
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		if (o->pd[i] != NULL) {
			fprintf(f, "%s{\"index\": %u, \"handle\": %" PRIu32 "}", sep, i,
				o->pd[i]->handle);
			sep = ", ";
		}
	fprintf(f, "],\n");
	json_list(f, o, "mrs", APP_MAX_OBJ, mr_json, ",\n");
	json_list(f, o, "mws", APP_MAX_OBJ, mw_json, ",\n");
	fprintf(f, "  \"cqs\": [");
	sep = "";
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++)
		if (o->cq[i] != NULL) {
			fprintf(f, "%s{\"index\": %u, \"depth\": %d, \"completions\": %zu, "
				"\"overruns\": %" PRIu64 "}", sep, i, o->cq[i]->cqe,
				o->log[i].n, mwp_cq_overruns(o->cq[i]));
			sep = ", ";
		}
	fprintf(f, "],\n");
	dump_keys(f, o);
	json_list(f, o, "qps", o->nb_qps, qp_json, "\n");
	fprintf(f, "}\n");
}

/* [cq i]'s completions, in the order they came */
static bool
cq_log_json(FILE *f, const struct app_objects *o, unsigned int i, const char *sep)
{
	const struct app_cqe_log *l = &o->log[i];

	if (o->cq[i] == NULL)
		return false;
	fprintf(f, "%s\n    {\"cq\": %u, \"completions\": [", sep, i);
	for (size_t k = 0; k < l->n; k++) {
		const struct ibv_wc *wc = &l->wc[k];

		fprintf(f, "%s\n      {\"wr_id\": %" PRIu64 ", \"status\": \"%s\", "
			"\"opcode\": \"%s\", \"qp_num\": %" PRIu32 ", \"byte_len\": %"
			PRIu32, k ? "," : "", wc->wr_id, app_wc_status_name(wc->status),
			app_wc_opcode_name(wc->opcode), wc->qp_num, wc->byte_len);
		if (wc->wc_flags & IBV_WC_WITH_IMM)
			fprintf(f, ", \"imm_data\": %" PRIu32, rte_be_to_cpu_32(wc->imm_data));
		if (wc->wc_flags & IBV_WC_WITH_INV)
			fprintf(f, ", \"invalidated_rkey\": %" PRIu32, wc->invalidated_rkey);
		fputc('}', f);
	}
	fprintf(f, "%s]}", l->n ? "\n    " : "");
	return true;
}

static void
completions_json(FILE *f, const struct app_objects *o)
{
	fprintf(f, "{\n");
	json_list(f, o, "cqs", APP_MAX_OBJ, cq_log_json, "\n");
	fprintf(f, "}\n");
}

/* dir/name, written by body: 0, or -1 with errno set */
static int
write_json(const char *dir, const char *name,
	   void (*body)(FILE *f, const struct app_objects *o), const struct app_objects *o)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return -1;
	body(f, o);
	return fclose(f);
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
app_dump(const char *dir, const struct app_objects *o)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mwpath: --dump-dir %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (o->ctx == NULL)
		return 0;
	if (write_json(dir, "objects.json", objects_json, o) != 0 ||
	    write_json(dir, "completions.json", completions_json, o) != 0 ||
	    write_mrs(dir, o) != 0) {
		fprintf(stderr, "mwpath: --dump-dir %s: cannot write: %s\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}
