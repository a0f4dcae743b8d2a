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

#include "config.h"

#define MAX_KEYS 24

static int
num(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || x > max)
		return -1;
	*out = x;
	return 0;
}

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

/* "local_write,remote_read,..." -> IBV_ACCESS_* */
static int
access_list(const char *v, bool zero_based_ok, unsigned int *out)
{
	const struct app_access_name *names = app_access_names;
	char buf[256], *tok, *save;

	*out = 0;
	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		size_t i;

		for (i = 0; i < APP_ACCESS_NAMES; i++)
			if (strcmp(tok, names[i].name) == 0)
				break;
		if (i == APP_ACCESS_NAMES ||
		    (names[i].bit == IBV_ACCESS_ZERO_BASED && !zero_based_ok))
			return -1;
		*out |= names[i].bit;
	}
	return 0;
}

/* Call fn(cfg, sec, key, value) for each entry; stop at the first error. */
typedef int (*entry_fn)(struct app_config *cfg, const char *sec, const char *k,
			const char *v, void *obj);

static int
each_entry(struct rte_cfgfile *cf, struct app_config *cfg, const char *sec,
	   entry_fn fn, void *obj)
{
	struct rte_cfgfile_entry ent[MAX_KEYS];
	int n = rte_cfgfile_section_entries(cf, sec, ent, RTE_DIM(ent));

	if (n < 0) {
		app_conf_err(cfg->file, sec, NULL, "more than %d keys", MAX_KEYS);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (fn(cfg, sec, ent[i].name, ent[i].value, obj) != 0)
			return -1;
	return 0;
}

#define BAD(fmt, ...) do {						\
		app_conf_err(cfg->file, sec, k, fmt, ##__VA_ARGS__);	\
		return -1;						\
	} while (0)

static int
mr_entry(struct app_config *cfg, const char *sec, const char *k, const char *v,
	 void *obj)
{
	struct app_mr *mr = obj;
	uint64_t x;

	if (strcmp(k, "pd") == 0) {
		if (num(v, APP_MAX_OBJ - 1, &x))
			BAD("'%s' is not a PD number", v);
		mr->pd = (unsigned int)x;
	} else if (strcmp(k, "length") == 0) {
		if (num(v, UINT32_MAX, &x) || x == 0)
			BAD("'%s' is not a length from 1 to 2^32 - 1", v);
		mr->length = x;
	} else if (strcmp(k, "access") == 0) {
		if (access_list(v, false, &mr->access))
			BAD("'%s' is not a list of local_write, remote_write, remote_read, remote_atomic, mw_bind", v);
	} else if (strcmp(k, "iova") == 0) {
		if (num(v, UINT64_MAX, &mr->iova))
			BAD("'%s' is not an address", v);
		mr->has_iova = true;
	} else if (strcmp(k, "fill") == 0) {
		mr->pattern = strcmp(v, "pattern") == 0;
		mr->random = strncmp(v, "random:", 7) == 0;
		if (mr->random ? num(v + 7, UINT64_MAX, &mr->seed) != 0 :
		    !mr->pattern && strcmp(v, "zero") != 0)
			BAD("'%s' is not zero, pattern or random:SEED", v);
	} else if (strcmp(k, "rkey") == 0) {
		if (num(v, UINT32_MAX, &x))
			BAD("'%s' is not a 32-bit R_Key", v);
		mr->rkey = (uint32_t)x;
		mr->has_rkey = true;
	} else {
		BAD("unknown key (known: pd, length, access, iova, fill, rkey)");
	}
	return 0;
}

static int
mw_entry(struct app_config *cfg, const char *sec, const char *k, const char *v,
	 void *obj)
{
	struct app_mw *mw = obj;
	uint64_t x;

	if (strcmp(k, "pd") == 0) {
		if (num(v, APP_MAX_OBJ - 1, &x))
			BAD("'%s' is not a PD number", v);
		mw->pd = (unsigned int)x;
	} else if (strcmp(k, "type") == 0) {
		if (num(v, 2, &x) || x == 0)
			BAD("'%s' is not 1 or 2", v);
		mw->type = (unsigned int)x;
	} else {
		BAD("unknown key (known: pd, type)");
	}
	return 0;
}

static int
cq_entry(struct app_config *cfg, const char *sec, const char *k, const char *v,
	 void *obj)
{
	struct app_cq *cq = obj;
	uint64_t x;

	if (strcmp(k, "depth") != 0)
		BAD("unknown key (known: depth)");
	if (num(v, 1 << 20, &x) || x == 0)
		BAD("'%s' is not a depth from 1 to 1048576", v);
	cq->depth = (unsigned int)x;
	return 0;
}

static int
qp_entry(struct app_config *cfg, const char *sec, const char *k, const char *v,
	 void *obj)
{
	struct app_qp *qp = obj;
	uint64_t x;

	if (strcmp(k, "pd") == 0 || strcmp(k, "cq") == 0) {
		if (num(v, APP_MAX_OBJ - 1, &x))
			BAD("'%s' is not a %s number", v, k);
		*(strcmp(k, "pd") == 0 ? &qp->pd : &qp->cq) = (unsigned int)x;
	} else if (strcmp(k, "port") == 0) {
		if (num(v, RTE_MAX_ETHPORTS - 1, &x))
			BAD("'%s' is not a port number", v);
		qp->port = (unsigned int)x;
	} else if (strcmp(k, "type") == 0) {
		if (strcmp(v, "rc") != 0 && strcmp(v, "uc") != 0)
			BAD("'%s' is not rc or uc", v);
		qp->uc = strcmp(v, "uc") == 0;
	} else if (strcmp(k, "access") == 0) {
		if (access_list(v, false, &qp->access) ||
		    (qp->access & IBV_ACCESS_MW_BIND))
			BAD("'%s' is not a list of local_write, remote_write, remote_read, remote_atomic", v);
	} else if (strcmp(k, "remote_qpn") == 0) {
		if (num(v, 0xffffff, &x))
			BAD("'%s' is not a 24-bit QP number", v);
		qp->remote_qpn = (uint32_t)x;
	} else if (strcmp(k, "remote_ipv4") == 0) {
		memset(qp->remote_gid, 0, 10);
		qp->remote_gid[10] = qp->remote_gid[11] = 0xff;
		if (inet_pton(AF_INET, v, qp->remote_gid + 12) != 1)
			BAD("'%s' is not an IPv4 address", v);
		qp->has_remote = true;
	} else if (strcmp(k, "remote_ipv6") == 0) {
		if (inet_pton(AF_INET6, v, qp->remote_gid) != 1)
			BAD("'%s' is not an IPv6 address", v);
		qp->has_remote = true;
	} else if (strcmp(k, "remote_mac") == 0) {
		/* answers go where requests come from; our own requests
		 * go here instead of where ARP/ND says */
		if (rte_ether_unformat_addr(v, &qp->remote_mac) != 0 ||
		    !rte_is_unicast_ether_addr(&qp->remote_mac))
			BAD("'%s' is not a unicast MAC address", v);
		qp->has_remote_mac = true;
	} else if (strcmp(k, "rq_psn") == 0 || strcmp(k, "sq_psn") == 0) {
		if (num(v, 0xffffff, &x))
			BAD("'%s' is not a 24-bit PSN", v);
		*(k[0] == 'r' ? &qp->rq_psn : &qp->sq_psn) = (uint32_t)x;
	} else if (strcmp(k, "max_dest_rd_atomic") == 0) {
		if (num(v, 255, &x))
			BAD("'%s' is not a number from 0 to 255", v);
		qp->max_dest_rd_atomic = (unsigned int)x;
	} else if (strcmp(k, "min_rnr_timer") == 0) {
		if (num(v, 31, &x))
			BAD("'%s' is not an RNR timer code from 0 to 31", v);
		qp->min_rnr_timer = (unsigned int)x;
	} else if (strcmp(k, "timeout") == 0) {
		if (num(v, 31, &x))
			BAD("'%s' is not a local ACK timeout code from 0 to 31 "
			    "(4.096 us << code; 0: none)", v);
		qp->timeout = (unsigned int)x;
	} else if (strcmp(k, "retry_cnt") == 0 || strcmp(k, "rnr_retry") == 0) {
		if (num(v, 7, &x))
			BAD("'%s' is not a retry count from 0 to 7", v);
		*(k[1] == 'e' ? &qp->retry_cnt : &qp->rnr_retry) = (unsigned int)x;
	} else if (strcmp(k, "max_rd_atomic") == 0) {
		if (num(v, 255, &x) || x == 0)
			BAD("'%s' is not a number from 1 to 255", v);
		qp->max_rd_atomic = (unsigned int)x;
	} else if (strcmp(k, "recv") == 0) {
		unsigned int count, size;
		char tail;

		if (sscanf(v, "%ux%u%c", &count, &size, &tail) != 2 || count == 0 ||
		    count > 4096 || size == 0 || size > (1u << 20))
			BAD("'%s' is not COUNTxSIZE (e.g. 8x4096)", v);
		qp->recv_count = count;
		qp->recv_size = size;
	} else {
		BAD("unknown key (known: pd, type, cq, port, access, remote_qpn, remote_mac, "
		    "remote_ipv4, remote_ipv6, rq_psn, sq_psn, max_dest_rd_atomic, min_rnr_timer, "
		    "timeout, retry_cnt, rnr_retry, max_rd_atomic, recv)");
	}
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
yes_no(const char *v, bool *out)
{
	if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
		return -1;
	*out = v[0] == 'y';
	return 0;
}

static int
wr_entry(struct app_config *cfg, const char *sec, const char *k, const char *v,
	 void *obj)
{
	struct app_wr *wr = obj;
	uint64_t x;

	if (strcmp(k, "qp") == 0) {
		if (num(v, 0xffffff, &x))
			BAD("'%s' is not a QP number", v);
		wr->qpn = (uint32_t)x;
	} else if (strcmp(k, "opcode") == 0) {
		unsigned int i;

		for (i = 0; i < APP_WR__MAX; i++)
			if (strcmp(v, app_wr_ops[i].name) == 0)
				break;
		if (i == APP_WR__MAX)
			BAD("'%s' is not an opcode (bind_mw, local_inv, send, send_with_imm, "
			    "send_with_inv, write, write_with_imm, read, fetch_add, cmp_swap)", v);
		wr->op = (enum app_wr_op)i;
	} else if (strcmp(k, "mw") == 0 || strcmp(k, "mr") == 0) {
		if (num(v, APP_MAX_OBJ - 1, &x))
			BAD("'%s' is not a %s number", v, k);
		if (k[1] == 'w') {
			wr->mw = (unsigned int)x;
			wr->has_mw = true;
		} else {
			wr->mr = (unsigned int)x;
			wr->has_mr = true;
		}
	} else if (strcmp(k, "addr") == 0 || strcmp(k, "length") == 0) {
		if (num(v, UINT64_MAX, &x))
			BAD("'%s' is not a number", v);
		*(k[0] == 'a' ? &wr->addr : &wr->length) = x;
	} else if (strcmp(k, "access") == 0) {
		if (access_list(v, true, &wr->access))
			BAD("'%s' is not a list of remote_write, remote_read, remote_atomic, zero_based", v);
	} else if (strcmp(k, "key") == 0) {
		if (num(v, 0xff, &x))
			BAD("'%s' is not a key byte (0 to 0xff)", v);
		wr->key = (uint8_t)x;
	} else if (strcmp(k, "rkey") == 0) {
		if (num(v, UINT32_MAX, &x))
			BAD("'%s' is not a 32-bit R_Key", v);
		wr->rkey = (uint32_t)x;
	} else if (strcmp(k, "signaled") == 0 || strcmp(k, "fence") == 0 ||
		   strcmp(k, "inline") == 0) {
		bool *b = k[0] == 's' ? &wr->signaled : k[0] == 'f' ? &wr->fence :
			  &wr->inline_data;

		if (yes_no(v, b))
			BAD("'%s' is not yes or no", v);
	} else if (strcmp(k, "after_rx") == 0) {
		if (num(v, UINT64_MAX - 1, &wr->after_rx))
			BAD("'%s' is not a frame count", v);
	} else if (strcmp(k, "remote_addr") == 0) {
		if (num(v, UINT64_MAX, &wr->remote_addr))
			BAD("'%s' is not an address", v);
	} else if (strcmp(k, "remote_rkey") == 0) {
		if (num(v, UINT32_MAX, &x))
			BAD("'%s' is not a 32-bit R_Key", v);
		wr->remote_rkey = (uint32_t)x;
		wr->has_remote = true;
	} else if (strcmp(k, "imm") == 0) {
		if (num(v, UINT32_MAX, &x))
			BAD("'%s' is not a 32-bit immediate", v);
		wr->imm = (uint32_t)x;
		wr->has_imm = true;
	} else if (strcmp(k, "add") == 0 || strcmp(k, "compare") == 0 ||
		   strcmp(k, "swap") == 0) {
		if (num(v, UINT64_MAX, &x))
			BAD("'%s' is not a 64-bit number", v);
		*(k[0] == 'a' ? &wr->add : k[0] == 'c' ? &wr->compare : &wr->swap) = x;
	} else if (strcmp(k, "sge") == 0) {
		char err[128];

		if (sge_list(v, wr->sge, APP_WR_MAX_SGE, &wr->nb_sge, err, sizeof(err)))
			BAD("%s", err);
	} else {
		BAD("unknown key (known: qp, opcode, mw, mr, addr, length, sge, access, key, "
		    "rkey, remote_addr, remote_rkey, imm, add, compare, swap, signaled, "
		    "fence, inline, after_rx)");
	}
	return 0;
}

static int
recv_entry(struct app_config *cfg, const char *sec, const char *k, const char *v,
	   void *obj)
{
	struct app_recv *r = obj;
	uint64_t x;

	if (strcmp(k, "qp") == 0) {
		if (num(v, 0xffffff, &x))
			BAD("'%s' is not a QP number", v);
		r->qpn = (uint32_t)x;
	} else if (strcmp(k, "wr_id") == 0) {
		if (num(v, UINT64_MAX, &r->wr_id))
			BAD("'%s' is not a number", v);
	} else if (strcmp(k, "sge") == 0) {
		char err[128];

		if (sge_list(v, r->sge, RTE_DIM(r->sge), &r->nb_sge, err, sizeof(err)))
			BAD("%s", err);
	} else {
		BAD("unknown key (known: qp, wr_id, sge)");
	}
	return 0;
}

#undef BAD

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
		return each_entry(cf, cfg, sec, mr_entry, &cfg->mr[idx]);
	}
	if (strcmp(kind, "mw") == 0) {
		cfg->mw[idx] = (struct app_mw){ .present = true, .type = 2 };
		return each_entry(cf, cfg, sec, mw_entry, &cfg->mw[idx]);
	}
	if (strcmp(kind, "cq") == 0) {
		cfg->cq[idx] = (struct app_cq){ .present = true, .depth = 256 };
		return each_entry(cf, cfg, sec, cq_entry, &cfg->cq[idx]);
	}
	if (strcmp(kind, "qp") == 0) {
		struct app_qp *qp;

		if (idx < 2 || idx > 0xffffff || cfg->nb_qps == APP_MAX_QP) {
			app_conf_err(cfg->file, sec, NULL,
				     "QP numbers go from 2 to 0xffffff, %d QPs at most",
				     APP_MAX_QP);
			return -1;
		}
		qp = &cfg->qp[cfg->nb_qps++];
		*qp = (struct app_qp){ .qpn = (uint32_t)idx,
			.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			.max_dest_rd_atomic = 16, .min_rnr_timer = 12,
			.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 16 };
		snprintf(qp->section, sizeof(qp->section), "%s", sec);
		return each_entry(cf, cfg, sec, qp_entry, qp);
	}
	if (strcmp(kind, "wr") == 0) {
		struct app_wr *wr;

		if (cfg->nb_wrs == APP_MAX_WR) {
			app_conf_err(cfg->file, sec, NULL, "%d work requests at most", APP_MAX_WR);
			return -1;
		}
		wr = &cfg->wr[cfg->nb_wrs++];
		*wr = (struct app_wr){ .signaled = true };
		snprintf(wr->section, sizeof(wr->section), "%s", sec);
		return each_entry(cf, cfg, sec, wr_entry, wr);
	}
	if (strcmp(kind, "recv") == 0) {
		struct app_recv *r;

		if (cfg->nb_recvs == APP_MAX_RECV) {
			app_conf_err(cfg->file, sec, NULL, "%d receives at most", APP_MAX_RECV);
			return -1;
		}
		r = &cfg->recv[cfg->nb_recvs++];
		*r = (struct app_recv){ .wr_id = idx };
		snprintf(r->section, sizeof(r->section), "%s", sec);
		return each_entry(cf, cfg, sec, recv_entry, r);
	}
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

/* A data work request (send, write, read, atomics): its QP's transport,
 * its buffers, the peer's key. */
static int
check_data_wr(struct app_config *cfg, struct app_wr *wr)
{
	const struct app_wr_op_info *op = &app_wr_ops[wr->op];
	const struct app_qp *qp = NULL;
	uint64_t total = 0;

	for (unsigned int j = 0; j < cfg->nb_qps; j++)
		if (cfg->qp[j].qpn == wr->qpn)
			qp = &cfg->qp[j];
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
		const struct app_qp *qp = &cfg->qp[i];

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
		for (unsigned int j = 0; j < i; j++)
			if (cfg->qp[j].qpn == qp->qpn) {
				app_conf_err(cfg->file, qp->section, NULL, "QP number used twice");
				return -1;
			}
	}
	for (unsigned int i = 0; i < cfg->nb_recvs; i++) {
		const struct app_recv *r = &cfg->recv[i];
		bool found = false;

		for (unsigned int j = 0; j < cfg->nb_qps; j++)
			found |= cfg->qp[j].qpn == r->qpn;
		if (!found) {
			app_conf_err(cfg->file, r->section, "qp", "no [qp %#x]", r->qpn);
			return -1;
		}
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
		bool found = false;

		for (unsigned int j = 0; j < cfg->nb_qps; j++)
			found |= cfg->qp[j].qpn == wr->qpn;
		if (!found) {
			app_conf_err(cfg->file, wr->section, "qp", "no [qp %#x]", wr->qpn);
			return -1;
		}
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
