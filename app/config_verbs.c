/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's verbs objects: [pd N], [mr N], [mw N], [cq N],
 * [qp N] (N is the QPN) and [wr N] (work requests posted at start, in
 * section order).  Every value and every reference is checked here, before
 * the EAL starts; errors name the file, line, section and key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "config.h"
#include "config_keys.h"

#define MAX_KEYS 24

const struct app_access_name app_access_names[APP_ACCESS_NAMES] = {
	{ "local_write", IBV_ACCESS_LOCAL_WRITE },
	{ "remote_write", IBV_ACCESS_REMOTE_WRITE },
	{ "remote_read", IBV_ACCESS_REMOTE_READ },
	{ "remote_atomic", IBV_ACCESS_REMOTE_ATOMIC },
	{ "mw_bind", IBV_ACCESS_MW_BIND },
	{ "zero_based", IBV_ACCESS_ZERO_BASED },
};

void
app_fill(const struct app_mr *mr, uint8_t *mem)
{
	uint64_t x = mr->seed;

	for (uint64_t b = 0; b < mr->length; b++) {
		if (mr->random) {
			x = x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
			mem[b] = (uint8_t)(x >> 56);
		} else {
			mem[b] = mr->pattern ? (uint8_t)b : 0;
		}
	}
}

/* Apply each entry of sec to obj by the section's key table; stop at the
 * first error. */
int
app_config_apply(struct rte_cfgfile *cf, struct app_config *cfg, const char *sec,
	   const struct app_key *keys, size_t nb_keys, void *obj)
{
	struct rte_cfgfile_entry ent[MAX_KEYS];
	int n = rte_cfgfile_section_entries(cf, sec, ent, RTE_DIM(ent));

	if (n < 0) {
		app_conf_err(cfg->file, sec, NULL, "more than %d keys", MAX_KEYS);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (app_key_apply(keys, nb_keys, cfg->file, sec, ent[i].name, ent[i].value,
				  obj) != 0)
			return -1;
	return 0;
}

/* A kind of section whose entries make a list, in file order. */
struct list_kind {
	unsigned int max;		/* entries at most */
	const char *what;		/* "<max> <what> at most" */
	size_t size;			/* of an entry */
	size_t section;			/* where in it its section's name goes */
	const struct app_key *keys;	/* the section's */
	size_t nb_keys;
	/* numbered lists: where an entry keeps its section's number, which
	 * no other entry may have (its size: 4 or 8; 0: not numbered) */
	size_t number;
	size_t number_size;
};

#define LIST_KIND(st, max, what, keys) \
	{ max, what, sizeof(st), offsetof(st, section), keys, RTE_DIM(keys), 0, 0 }
#define NUMBERED_LIST_KIND(st, num, max, what, keys) \
	{ max, what, sizeof(st), offsetof(st, section), keys, RTE_DIM(keys), \
	  offsetof(st, num), sizeof(((st *)NULL)->num) }

static uint64_t
list_number(const struct list_kind *k, const void *e)
{
	const void *p = (const char *)e + k->number;

	return k->number_size == sizeof(uint64_t) ? *(const uint64_t *)p :
						     *(const uint32_t *)p;
}

/* The entry of a numbered list (nb entries) whose number is n, or NULL. */
static const void *
list_find(const struct list_kind *k, const void *list, unsigned int nb, uint64_t n)
{
	for (unsigned int i = 0; i < nb; i++) {
		const void *e = (const char *)list + (size_t)i * k->size;

		if (list_number(k, e) == n)
			return e;
	}
	return NULL;
}

/*
 * Append the entry of section sec to list (of kind k, *nb entries so far):
 * it starts as def, takes the section's name, then its keys.
 */
static int
list_append(struct rte_cfgfile *cf, struct app_config *cfg, const char *sec,
	    const struct list_kind *k, void *list, unsigned int *nb, const void *def)
{
	char *e = (char *)list + (size_t)*nb * k->size;
	const char *same;

	if (*nb == k->max) {
		app_conf_err(cfg->file, sec, NULL, "%u %s at most", k->max, k->what);
		return -1;
	}
	/* [qp 17] after [qp 0x11]: two names, one number */
	same = k->number_size == 0 ? NULL : list_find(k, list, *nb, list_number(k, def));
	if (same != NULL) {
		app_conf_err(cfg->file, sec, NULL, "the same number as [%s]", same + k->section);
		return -1;
	}
	(*nb)++;
	memcpy(e, def, k->size);
	snprintf(e + k->section, CFG_NAME_LEN, "%s", sec);
	return app_config_apply(cf, cfg, sec, k->keys, k->nb_keys, e);
}

/* ---- readers of the values that are not plain numbers ---- */

static int
mr_fill(const char *v, void *obj, char *err, size_t errlen)
{
	struct app_mr *mr = obj;

	mr->pattern = strcmp(v, "pattern") == 0;
	mr->random = strncmp(v, "random:", 7) == 0;
	if (mr->random ? app_key_num(v + 7, UINT64_MAX, &mr->seed) != 0 :
	    !mr->pattern && strcmp(v, "zero") != 0)
		APP_KEY_FAIL("'%s' is not zero, pattern or random:SEED", v);
	return 0;
}

static int
qp_type(const char *v, void *obj, char *err, size_t errlen)
{
	if (strcmp(v, "rc") != 0 && strcmp(v, "uc") != 0)
		APP_KEY_FAIL("'%s' is not rc or uc", v);
	((struct app_qp *)obj)->uc = strcmp(v, "uc") == 0;
	return 0;
}

static int
qp_recv(const char *v, void *obj, char *err, size_t errlen)
{
	struct app_qp *qp = obj;
	unsigned int count, size;
	char tail;

	if (sscanf(v, "%ux%u%c", &count, &size, &tail) != 2 || count == 0 ||
	    count > 4096 || size == 0 || size > (1u << 20))
		APP_KEY_FAIL("'%s' is not COUNTxSIZE (e.g. 8x4096)", v);
	qp->recv_count = count;
	qp->recv_size = size;
	return 0;
}

const struct app_wr_op_info app_wr_ops[APP_WR__MAX] = {
	[APP_WR_BIND_MW] = { "bind_mw", IBV_WR_BIND_MW, false, false, false },
	[APP_WR_LOCAL_INV] = { "local_inv", IBV_WR_LOCAL_INV, false, false, false },
	[APP_WR_SEND] = { "send", IBV_WR_SEND, false, true, false },
	[APP_WR_SEND_WITH_IMM] = { "send_with_imm", IBV_WR_SEND_WITH_IMM, false, true, false },
	[APP_WR_SEND_WITH_INV] = { "send_with_inv", IBV_WR_SEND_WITH_INV, true, true, false },
	[APP_WR_WRITE] = { "write", IBV_WR_RDMA_WRITE, false, true, true },
	[APP_WR_WRITE_WITH_IMM] = { "write_with_imm", IBV_WR_RDMA_WRITE_WITH_IMM, false,
				    true, true },
	[APP_WR_READ] = { "read", IBV_WR_RDMA_READ, true, true, true },
	[APP_WR_FETCH_ADD] = { "fetch_add", IBV_WR_ATOMIC_FETCH_AND_ADD, true, true, true },
	[APP_WR_CMP_SWAP] = { "cmp_swap", IBV_WR_ATOMIC_CMP_AND_SWP, true, true, true },
};

static int
wr_opcode(const char *v, void *obj, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < APP_WR__MAX; i++)
		if (strcmp(v, app_wr_ops[i].name) == 0)
			break;
	if (i == APP_WR__MAX)
		APP_KEY_FAIL("'%s' is not an opcode (bind_mw, local_inv, send, send_with_imm, "
			     "send_with_inv, write, write_with_imm, read, fetch_add, cmp_swap)", v);
	((struct app_wr *)obj)->op = (enum app_wr_op)i;
	return 0;
}

static int
yes_no(const char *v, bool *out)
{
	if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
		return -1;
	*out = v[0] == 'y';
	return 0;
}

#define YES_NO(name, field)						\
static int								\
name(const char *v, void *obj, char *err, size_t errlen)		\
{									\
	if (yes_no(v, &((struct app_wr *)obj)->field))			\
		APP_KEY_FAIL("'%s' is not yes or no", v);		\
	return 0;							\
}
YES_NO(wr_signaled, signaled)
YES_NO(wr_fence, fence)
YES_NO(wr_inline, inline_data)
#undef YES_NO

/* "MR:ADDR:LENGTH, ..." (receives and work requests) */
static int
sge_list(const char *v, struct app_sge *sge, unsigned int max, unsigned int *nb,
	 char *err, size_t errlen)
{
	char buf[256], *tok, *save;

	*nb = 0;
	if (strlen(v) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	strcpy(buf, v);
	for (tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		unsigned int m;
		unsigned long long a, l;
		char tail;

		if (*nb == max) {
			snprintf(err, errlen, "%u SGEs at most", max);
			return -1;
		}
		if (sscanf(tok, "%u:%lli:%lli%c", &m, &a, &l, &tail) != 3 ||
		    m >= APP_MAX_OBJ || l > UINT32_MAX) {
			snprintf(err, errlen, "'%s' is not MR:ADDR:LENGTH", tok);
			return -1;
		}
		sge[*nb].mr = m;
		sge[*nb].addr = a;
		sge[*nb].length = (uint32_t)l;
		(*nb)++;
	}
	return 0;
}

static int
wr_sge(const char *v, void *obj, char *err, size_t errlen)
{
	struct app_wr *wr = obj;

	return sge_list(v, wr->sge, APP_WR_MAX_SGE, &wr->nb_sge, err, errlen);
}

static int
recv_sge(const char *v, void *obj, char *err, size_t errlen)
{
	struct app_recv *r = obj;

	return sge_list(v, r->sge, RTE_DIM(r->sge), &r->nb_sge, err, errlen);
}

/* ---- the sections' keys ---- */

#define OBJ_MAX (APP_MAX_OBJ - 1)

/* the access flags each kind takes: a QP no mw_bind, only a work request
 * (a bind) zero_based */
#define QP_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define MR_ACCESS (QP_ACCESS | IBV_ACCESS_MW_BIND)
#define WR_ACCESS (MR_ACCESS | IBV_ACCESS_ZERO_BASED)

static const struct app_key mr_keys[] = {
	APP_KEY_NUM(struct app_mr, "pd", pd, 0, OBJ_MAX, "a PD number"),
	APP_KEY_NUM(struct app_mr, "length", length, 1, UINT32_MAX,
		    "a length from 1 to 2^32 - 1"),
	APP_KEY_ACCESS_LIST(struct app_mr, "access", access, MR_ACCESS, "a list of "
			    "local_write, remote_write, remote_read, remote_atomic, mw_bind"),
	APP_KEY_NUM_HAS(struct app_mr, "iova", iova, has_iova, 0, UINT64_MAX, "an address"),
	APP_KEY_READER("fill", mr_fill),
	APP_KEY_NUM_HAS(struct app_mr, "rkey", rkey, has_rkey, 0, UINT32_MAX,
			"a 32-bit R_Key"),
};

static const struct app_key mw_keys[] = {
	APP_KEY_NUM(struct app_mw, "pd", pd, 0, OBJ_MAX, "a PD number"),
	APP_KEY_NUM(struct app_mw, "type", type, 1, 2, "1 or 2"),
};

static const struct app_key cq_keys[] = {
	APP_KEY_NUM(struct app_cq, "depth", depth, 1, 1 << 20,
		    "a depth from 1 to 1048576"),
};

static const struct app_key qp_keys[] = {
	APP_KEY_NUM(struct app_qp, "pd", pd, 0, OBJ_MAX, "a pd number"),
	APP_KEY_READER("type", qp_type),
	APP_KEY_NUM(struct app_qp, "cq", cq, 0, OBJ_MAX, "a cq number"),
	APP_KEY_NUM(struct app_qp, "port", port, 0, RTE_MAX_ETHPORTS - 1, "a port number"),
	APP_KEY_ACCESS_LIST_HAS(struct app_qp, "access", access,
				APP_HAS(struct app_qp, has_access), QP_ACCESS, "a list of "
				"local_write, remote_write, remote_read, remote_atomic"),
	APP_KEY_NUM(struct app_qp, "remote_qpn", remote_qpn, 0, ROCE_PSN_MASK,
		    "a 24-bit QP number"),
	/* answers go where requests come from; our own requests go to
	 * remote_mac, if given, instead of where ARP/ND says */
	APP_KEY_ADDR(struct app_qp, "remote_mac", APP_KEY_MAC, remote_mac,
		     APP_HAS(struct app_qp, has_remote_mac)),
	APP_KEY_ADDR(struct app_qp, "remote_ipv4", APP_KEY_IPV4_MAPPED, remote_gid,
		     APP_HAS(struct app_qp, has_remote)),
	APP_KEY_ADDR(struct app_qp, "remote_ipv6", APP_KEY_IPV6, remote_gid,
		     APP_HAS(struct app_qp, has_remote)),
	APP_KEY_NUM_HAS(struct app_qp, "rq_psn", rq_psn, has_rq_psn, 0, ROCE_PSN_MASK,
			"a 24-bit PSN"),
	APP_KEY_NUM_HAS(struct app_qp, "sq_psn", sq_psn, has_sq_psn, 0, ROCE_PSN_MASK,
			"a 24-bit PSN"),
	APP_KEY_NUM(struct app_qp, "max_dest_rd_atomic", max_dest_rd_atomic, 0, 255,
		    "a number from 0 to 255"),
	APP_KEY_NUM(struct app_qp, "min_rnr_timer", min_rnr_timer, 0, 31,
		    "an RNR timer code from 0 to 31"),
	APP_KEY_NUM(struct app_qp, "timeout", timeout, 0, 31,
		    "a local ACK timeout code from 0 to 31 (4.096 us << code; 0: none)"),
	APP_KEY_NUM(struct app_qp, "retry_cnt", retry_cnt, 0, 7, "a retry count from 0 to 7"),
	APP_KEY_NUM(struct app_qp, "rnr_retry", rnr_retry, 0, 7, "a retry count from 0 to 7"),
	APP_KEY_NUM(struct app_qp, "max_rd_atomic", max_rd_atomic, 1, 255,
		    "a number from 1 to 255"),
	APP_KEY_READER("recv", qp_recv),
};

static const struct app_key wr_keys[] = {
	APP_KEY_NUM(struct app_wr, "qp", qpn, 0, ROCE_PSN_MASK, "a QP number"),
	APP_KEY_READER("opcode", wr_opcode),
	APP_KEY_NUM_HAS(struct app_wr, "mw", mw, has_mw, 0, OBJ_MAX, "a mw number"),
	APP_KEY_NUM_HAS(struct app_wr, "mr", mr, has_mr, 0, OBJ_MAX, "a mr number"),
	APP_KEY_NUM(struct app_wr, "addr", addr, 0, UINT64_MAX, "a number"),
	APP_KEY_NUM(struct app_wr, "length", length, 0, UINT64_MAX, "a number"),
	APP_KEY_READER("sge", wr_sge),
	APP_KEY_ACCESS_LIST(struct app_wr, "access", access, WR_ACCESS, "a list of "
			    "remote_write, remote_read, remote_atomic, zero_based"),
	APP_KEY_NUM(struct app_wr, "key", key, 0, 0xff, "a key byte (0 to 0xff)"),
	APP_KEY_NUM(struct app_wr, "rkey", rkey, 0, UINT32_MAX, "a 32-bit R_Key"),
	APP_KEY_NUM(struct app_wr, "remote_addr", remote_addr, 0, UINT64_MAX, "an address"),
	APP_KEY_NUM_HAS(struct app_wr, "remote_rkey", remote_rkey, has_remote, 0,
			UINT32_MAX, "a 32-bit R_Key"),
	APP_KEY_NUM_HAS(struct app_wr, "imm", imm, has_imm, 0, UINT32_MAX,
			"a 32-bit immediate"),
	APP_KEY_NUM(struct app_wr, "add", add, 0, UINT64_MAX, "a 64-bit number"),
	APP_KEY_NUM(struct app_wr, "compare", compare, 0, UINT64_MAX, "a 64-bit number"),
	APP_KEY_NUM(struct app_wr, "swap", swap, 0, UINT64_MAX, "a 64-bit number"),
	APP_KEY_READER("signaled", wr_signaled),
	APP_KEY_READER("fence", wr_fence),
	APP_KEY_READER("inline", wr_inline),
	APP_KEY_NUM(struct app_wr, "after_rx", after_rx, 0, UINT64_MAX - 1, "a frame count"),
};

static const struct app_key recv_keys[] = {
	APP_KEY_NUM(struct app_recv, "qp", qpn, 0, ROCE_PSN_MASK, "a QP number"),
	APP_KEY_NUM(struct app_recv, "wr_id", wr_id, 0, UINT64_MAX, "a number"),
	APP_KEY_READER("sge", recv_sge),
};

static const struct list_kind qp_list = NUMBERED_LIST_KIND(struct app_qp, qpn, APP_MAX_QP,
							   "QPs", qp_keys);
static const struct list_kind wr_list = NUMBERED_LIST_KIND(struct app_wr, wr_id, APP_MAX_WR,
							   "work requests", wr_keys);
static const struct list_kind recv_list = LIST_KIND(struct app_recv, APP_MAX_RECV, "receives",
						    recv_keys);

int
app_config_verbs_section(struct rte_cfgfile *cf, struct app_config *cfg,
			 const char *kind, const char *sec, unsigned long idx)
{
	const bool obj = strcmp(kind, "pd") == 0 || strcmp(kind, "mr") == 0 ||
			 strcmp(kind, "mw") == 0 || strcmp(kind, "cq") == 0;

	if (obj && idx >= APP_MAX_OBJ) {
		app_conf_err(cfg->file, sec, NULL, "%s numbers go up to %d", kind,
			     APP_MAX_OBJ - 1);
		return -1;
	}
	if (strcmp(kind, "pd") == 0) {
		if (rte_cfgfile_section_num_entries(cf, sec) != 0) {
			app_conf_err(cfg->file, sec, NULL, "a PD has no keys");
			return -1;
		}
		cfg->pd_present[idx] = true;
		return 0;
	}
	if (strcmp(kind, "mr") == 0) {
		cfg->mr[idx] = (struct app_mr){ .present = true, .length = 4096,
			.access = IBV_ACCESS_LOCAL_WRITE };
		return app_config_apply(cf, cfg, sec, mr_keys, RTE_DIM(mr_keys), &cfg->mr[idx]);
	}
	if (strcmp(kind, "mw") == 0) {
		cfg->mw[idx] = (struct app_mw){ .present = true, .type = 2 };
		return app_config_apply(cf, cfg, sec, mw_keys, RTE_DIM(mw_keys), &cfg->mw[idx]);
	}
	if (strcmp(kind, "cq") == 0) {
		cfg->cq[idx] = (struct app_cq){ .present = true, .depth = 256 };
		return app_config_apply(cf, cfg, sec, cq_keys, RTE_DIM(cq_keys), &cfg->cq[idx]);
	}
	if (strcmp(kind, "qp") == 0) {
		const struct app_qp def = { .qpn = (uint32_t)idx,
			.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			.max_dest_rd_atomic = 16, .min_rnr_timer = 12,
			.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 16 };

		if (idx < 2 || idx > 0xffffff || cfg->nb_qps == APP_MAX_QP) {
			app_conf_err(cfg->file, sec, NULL,
				     "QP numbers go from 2 to 0xffffff, %d QPs at most",
				     APP_MAX_QP);
			return -1;
		}
		return list_append(cf, cfg, sec, &qp_list, cfg->qp, &cfg->nb_qps, &def);
	}
	if (strcmp(kind, "wr") == 0)
		return list_append(cf, cfg, sec, &wr_list, cfg->wr, &cfg->nb_wrs,
				   &(struct app_wr){ .signaled = true, .wr_id = idx });
	if (strcmp(kind, "recv") == 0)
		return list_append(cf, cfg, sec, &recv_list, cfg->recv, &cfg->nb_recvs,
				   &(struct app_recv){ .wr_id = idx });
	app_conf_err(cfg->file, sec, NULL,
		     "unknown section kind '%s' (known: port, pd, mr, mw, cq, qp, wr, recv)", kind);
	return -1;
}

/* A buffer inside its region: addr in the region's iova space, or an
 * offset from its first byte if it has none. */
static bool
sge_inside(const struct app_mr *mr, const struct app_sge *g)
{
	uint64_t base = mr->has_iova ? mr->iova : 0;

	return g->addr >= base && g->addr - base <= mr->length &&
	       g->length <= mr->length - (g->addr - base);
}

/* The [qp N] numbered qpn, or NULL. */
static const struct app_qp *
find_qp(const struct app_config *cfg, uint32_t qpn)
{
	return list_find(&qp_list, cfg->qp, cfg->nb_qps, qpn);
}

/* The [qp N] an entry names exists; else the error, against its section. */
static bool
need_qp(const struct app_config *cfg, const char *section, uint32_t qpn)
{
	if (find_qp(cfg, qpn) != NULL)
		return true;
	app_conf_err(cfg->file, section, "qp", "no [qp %#x]", qpn);
	return false;
}

/* A data work request (send, write, read, atomics): its QP's transport,
 * its buffers, the peer's key. */
static int
check_data_wr(struct app_config *cfg, struct app_wr *wr)
{
	const struct app_wr_op_info *op = &app_wr_ops[wr->op];
	const struct app_qp *qp = find_qp(cfg, wr->qpn);
	uint64_t total = 0;

	if (op->rc_only && qp->uc) {
		app_conf_err(cfg->file, wr->section, "opcode", "%s needs an rc QP", op->name);
		return -1;
	}
	if (op->remote && !wr->has_remote) {
		app_conf_err(cfg->file, wr->section, "remote_rkey",
			     "%s needs the peer's remote_rkey (and remote_addr)", op->name);
		return -1;
	}
	if (wr->op == APP_WR_SEND_WITH_INV && wr->rkey == 0) {
		app_conf_err(cfg->file, wr->section, "rkey", "send_with_inv needs an rkey");
		return -1;
	}
	/* mr, addr and length are the one-SGE way of saying sge */
	if (wr->nb_sge != 0 && (wr->has_mr || wr->length != 0)) {
		app_conf_err(cfg->file, wr->section, "sge", "give sge, or mr/addr/length, not both");
		return -1;
	}
	if (wr->nb_sge == 0 && wr->length != 0) {
		if (!wr->has_mr) {
			app_conf_err(cfg->file, wr->section, "mr",
				     "a %s with a length needs an existing [mr N]", op->name);
			return -1;
		}
		wr->sge[0] = (struct app_sge){ .mr = wr->mr, .addr = wr->addr,
					       .length = (uint32_t)wr->length };
		if (wr->length > UINT32_MAX) {
			app_conf_err(cfg->file, wr->section, "length", "above 2^32 - 1");
			return -1;
		}
		wr->nb_sge = 1;
	}
	for (unsigned int g = 0; g < wr->nb_sge; g++) {
		const struct app_sge *sg = &wr->sge[g];

		if (!cfg->mr[sg->mr].present) {
			app_conf_err(cfg->file, wr->section, wr->has_mr ? "mr" : "sge",
				     "no [mr %u]", sg->mr);
			return -1;
		}
		if (!sge_inside(&cfg->mr[sg->mr], sg)) {
			app_conf_err(cfg->file, wr->section, wr->has_mr ? "length" : "sge",
				     cfg->mr[sg->mr].has_iova ?
				     "[addr, addr + length) is not inside [mr %u]" :
				     "[mr %u] has no iova: addr is an offset, and "
				     "[addr, addr + length) is not inside it", sg->mr);
			return -1;
		}
		total += sg->length;
	}
	if ((wr->op == APP_WR_FETCH_ADD || wr->op == APP_WR_CMP_SWAP) &&
	    (wr->nb_sge != 1 || total != 8)) {
		app_conf_err(cfg->file, wr->section, "length",
			     "an atomic's result is one 8-byte buffer");
		return -1;
	}
	if (wr->inline_data && (op->remote && wr->op != APP_WR_WRITE &&
				wr->op != APP_WR_WRITE_WITH_IMM)) {
		app_conf_err(cfg->file, wr->section, "inline", "only sends and writes are inline");
		return -1;
	}
	if (wr->inline_data && total > 256) {
		app_conf_err(cfg->file, wr->section, "inline", "256 bytes inline at most");
		return -1;
	}
	return 0;
}

const struct app_wr *
app_config_wr(const struct app_config *cfg, uint64_t wr_id)
{
	return list_find(&wr_list, cfg->wr, cfg->nb_wrs, wr_id);
}

/* A 24-bit PSN from the kernel's CSPRNG. */
static uint32_t
random_psn(void)
{
	uint32_t v = 0;

	while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		;
	return v & ROCE_PSN_MASK;
}

/* References between sections, once all are read. */
int
app_config_verbs_check(struct app_config *cfg)
{
	for (unsigned int i = 0; i < APP_MAX_OBJ; i++) {
		char sec[32];

		snprintf(sec, sizeof(sec), "mr %u", i);
		if (cfg->mr[i].present && !cfg->pd_present[cfg->mr[i].pd]) {
			app_conf_err(cfg->file, sec, "pd", "no [pd %u]", cfg->mr[i].pd);
			return -1;
		}
		snprintf(sec, sizeof(sec), "mw %u", i);
		if (cfg->mw[i].present && !cfg->pd_present[cfg->mw[i].pd]) {
			app_conf_err(cfg->file, sec, "pd", "no [pd %u]", cfg->mw[i].pd);
			return -1;
		}
	}
	for (unsigned int i = 0; i < cfg->nb_qps; i++) {
		struct app_qp *qp = &cfg->qp[i];

		/* a starting PSN the section does not give is drawn at
		 * random, unless the keys are pinned (a replay's PSNs are
		 * its capture's) */
		if (!cfg->sequential_keys && !qp->has_rq_psn)
			qp->rq_psn = random_psn();
		if (!cfg->sequential_keys && !qp->has_sq_psn)
			qp->sq_psn = random_psn();
		/* UC has no READ or ATOMIC: its default is remote_write, and
		 * verbs refuses more (rxe, rdma-core) */
		if (qp->uc && !qp->has_access)
			qp->access = IBV_ACCESS_REMOTE_WRITE;
		if (qp->uc && (qp->access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC))) {
			app_conf_err(cfg->file, qp->section, "access",
				     "a uc QP takes local_write and remote_write only "
				     "(UC has no READ or ATOMIC)");
			return -1;
		}
		if (!cfg->pd_present[qp->pd]) {
			app_conf_err(cfg->file, qp->section, "pd", "no [pd %u]", qp->pd);
			return -1;
		}
		if (!cfg->cq[qp->cq].present) {
			app_conf_err(cfg->file, qp->section, "cq", "no [cq %u]", qp->cq);
			return -1;
		}
		if (!qp->has_remote) {
			app_conf_err(cfg->file, qp->section, NULL,
				     "needs remote_ipv4 or remote_ipv6");
			return -1;
		}
	}
	for (unsigned int i = 0; i < cfg->nb_recvs; i++) {
		const struct app_recv *r = &cfg->recv[i];

		if (!need_qp(cfg, r->section, r->qpn))
			return -1;
		/* the range is the datapath's to check, as verbs does: an SGE
		 * outside its region fails the receive (LOC_LEN_ERR) */
		for (unsigned int g = 0; g < r->nb_sge; g++)
			if (!cfg->mr[r->sge[g].mr].present) {
				app_conf_err(cfg->file, r->section, "sge",
					     "SGE %u names no [mr %u]", g, r->sge[g].mr);
				return -1;
			}
	}
	for (unsigned int i = 0; i < cfg->nb_wrs; i++) {
		struct app_wr *wr = &cfg->wr[i];

		if (!need_qp(cfg, wr->section, wr->qpn))
			return -1;
		if (wr->op == APP_WR_BIND_MW) {
			if (!wr->has_mw || !cfg->mw[wr->mw].present) {
				app_conf_err(cfg->file, wr->section, "mw", "bind_mw needs an existing [mw N]");
				return -1;
			}
			if (wr->length != 0 && (!wr->has_mr || !cfg->mr[wr->mr].present)) {
				app_conf_err(cfg->file, wr->section, "mr", "bind_mw needs an existing [mr N]");
				return -1;
			}
		} else if ((wr->op == APP_WR_LOCAL_INV || wr->op == APP_WR_SEND_WITH_INV) &&
			   wr->rkey == 0) {
			app_conf_err(cfg->file, wr->section, "rkey", "%s needs an rkey",
				     wr->op == APP_WR_LOCAL_INV ? "local_inv" : "send_with_inv");
			return -1;
		}
		if (app_wr_ops[wr->op].data && check_data_wr(cfg, wr) != 0)
			return -1;
	}
	return 0;
}
