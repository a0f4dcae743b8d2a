/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point and the pacer (mwp_dcqcn.h has the equations).
 * Rates are doubles in Mb/s and the pacer's clock a double of ticks: a
 * frame's share of a tick adds up over a run instead of being lost to
 * rounding, and the arithmetic runs only for a QP that is limited.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "mwp_dcqcn.h"

/* R_C this close to the maximum (Mb/s), with R_T there: back to line rate. */
#define AT_MAX_MBPS	0.5
/* Increase events applied in one look: an idle QP catches up over a few
 * looks at most (a rise from 1 Mb/s to 400 Gb/s in 5 Mb/s steps takes
 * 80000). */
#define MAX_EVENTS	(1u << 20)

static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double dmax(double a, double b) { return a > b ? a : b; }

void
mwp_dcqcn_defaults(struct mwp_dcqcn_params *p)
{
	*p = (struct mwp_dcqcn_params){
		.rpg_max_rate = 0,
		.rpg_min_rate = 1,
		.rpg_ai_rate = 5,
		.rpg_hai_rate = 50,
		.rpg_time_reset = 300,
		.rpg_byte_reset = 32767,
		.rpg_threshold = 1,
		.rpg_gd = 11,
		.rpg_min_dec_fac = 50,
		.rate_to_set_on_first_cnp = 0,
		.rate_reduce_monitor_period = 4,
		.dce_tcp_g = 1019,
		.dce_tcp_rtt = 1,
		.initial_alpha_value = 1023,
		.burst = 4096,
	};
}

int
mwp_dcqcn_params_check(const struct mwp_dcqcn_params *p, char *err, size_t errlen)
{
#define RANGE(f, lo, hi)						\
	do {								\
		if ((uint64_t)p->f + 1 < (uint64_t)(lo) + 1 ||	\
		    (uint64_t)p->f > (uint64_t)(hi)) {			\
			snprintf(err, errlen, #f " %u is not from %u to %u", \
				 p->f, (unsigned int)(lo), (unsigned int)(hi)); \
			return -EINVAL;					\
		}							\
	} while (0)
	RANGE(rpg_max_rate, 0, 10000000);
	RANGE(rpg_min_rate, 1, 10000000);
	RANGE(rpg_ai_rate, 1, 10000000);
	RANGE(rpg_hai_rate, 1, 10000000);
	RANGE(rpg_time_reset, 1, 100000000);
	RANGE(rpg_byte_reset, 1, UINT32_MAX);
	RANGE(rpg_threshold, 1, 31);
	RANGE(rpg_gd, 10, 11);
	RANGE(rpg_min_dec_fac, 0, 100);
	RANGE(rate_to_set_on_first_cnp, 0, 10000000);
	RANGE(rate_reduce_monitor_period, 0, 100000000);
	RANGE(dce_tcp_g, 0, 1023);
	RANGE(dce_tcp_rtt, 1, 131071);
	RANGE(initial_alpha_value, 1, 1023);
	RANGE(burst, 64, 1u << 24);
#undef RANGE
	if (p->rpg_max_rate != 0 && p->rpg_min_rate > p->rpg_max_rate) {
		snprintf(err, errlen, "rpg_min_rate %u is above rpg_max_rate %u",
			 p->rpg_min_rate, p->rpg_max_rate);
		return -EINVAL;
	}
	return 0;
}

void
mwp_dcqcn_cfg_init(struct mwp_dcqcn_cfg *c, const struct mwp_dcqcn_params *p,
		   uint64_t hz, uint32_t line_rate)
{
	const double us = (double)hz / 1e6;

	memset(c, 0, sizeof(*c));
	c->max_rate = p->rpg_max_rate != 0 ? p->rpg_max_rate : (line_rate != 0 ? line_rate : 100000);
	c->min_rate = dmin(p->rpg_min_rate, c->max_rate);
	c->ai = p->rpg_ai_rate;
	c->hai = p->rpg_hai_rate;
	c->first_rate = p->rate_to_set_on_first_cnp != 0 ?
			dmin(p->rate_to_set_on_first_cnp, c->max_rate) : 0;
	c->g = (1024.0 - p->dce_tcp_g) / 1024.0;
	c->cut_scale = p->rpg_gd == 10 ? 1.0 : 0.5;
	c->min_keep = p->rpg_min_dec_fac / 100.0;
	c->initial_alpha = p->initial_alpha_value / 1024.0;
	c->tpb_1mbps = (double)hz * 8 / 1e6;
	c->alpha_period = (uint64_t)(p->dce_tcp_rtt * us) ?: 1;
	c->time_reset = (uint64_t)(p->rpg_time_reset * us) ?: 1;
	c->reduce_period = (uint64_t)(p->rate_reduce_monitor_period * us);
	c->byte_reset = p->rpg_byte_reset;
	c->threshold = p->rpg_threshold;
	c->burst = p->burst;
	c->hz = hz;
}

void
mwp_dcqcn_init(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c)
{
	memset(s, 0, sizeof(*s));
	s->rc = s->rt = c->max_rate;
}

static void
set_rate(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c)
{
	s->ticks_per_byte = c->tpb_1mbps / s->rc;
}

/* Back at the maximum: unpaced, the state forgotten until the next CNP. */
static void
unlimit(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c)
{
	s->limited = false;
	s->rc = s->rt = c->max_rate;
	s->t_stage = s->bc_stage = 0;
	s->bytes = 0;
	s->next = 0;
}

/* One rate increase event (T or BC has just grown). */
static void
increase(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c)
{
	const uint32_t hi = RTE_MAX(s->t_stage, s->bc_stage);
	const uint32_t lo = RTE_MIN(s->t_stage, s->bc_stage);

	s->st.increases++;
	if (hi < c->threshold)
		;				/* fast recovery */
	else if (lo > c->threshold)
		s->rt += (lo - c->threshold) * c->hai;	/* hyper increase */
	else
		s->rt += c->ai;			/* additive increase */
	if (s->rt > c->max_rate)
		s->rt = c->max_rate;
	s->rc = (s->rt + s->rc) / 2;
	if (s->rt >= c->max_rate && s->rc > c->max_rate - AT_MAX_MBPS)
		unlimit(s, c);
	else
		set_rate(s, c);
}

void
mwp_dcqcn_advance(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint64_t now)
{
	uint32_t n = 0;

	if (!s->limited)
		return;
	if (now - s->alpha_tsc >= c->alpha_period && now > s->alpha_tsc) {
		const uint64_t k = (now - s->alpha_tsc) / c->alpha_period;

		s->alpha *= pow(1.0 - c->g, (double)k);
		s->alpha_tsc += k * c->alpha_period;
	}
	while (s->limited && now > s->inc_tsc && now - s->inc_tsc >= c->time_reset &&
	       n++ < MAX_EVENTS) {
		s->inc_tsc += c->time_reset;
		s->t_stage++;
		increase(s, c);
	}
}

bool
mwp_dcqcn_cnp(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint64_t now)
{
	s->st.cnps++;
	mwp_dcqcn_advance(s, c, now);
	if (!s->limited) {
		/* the first CNP (since the last time at line rate) */
		s->limited = true;
		s->alpha = c->initial_alpha;
		s->rc = s->rt = c->max_rate;
		s->next = (double)now;
		if (c->first_rate != 0) {
			s->rc = s->rt = c->first_rate;
			goto restart;
		}
	} else if (now - s->cut_tsc < c->reduce_period) {
		return false;
	}
	s->rt = s->rc;
	s->rc = dmax(s->rc * (1.0 - s->alpha * c->cut_scale), s->rc * c->min_keep);
	s->rc = dmax(s->rc, c->min_rate);
	s->alpha = (1.0 - c->g) * s->alpha + c->g;
restart:
	s->alpha_tsc = now;
	s->inc_tsc = now;
	s->cut_tsc = now;
	s->t_stage = s->bc_stage = 0;
	s->bytes = 0;
	s->st.cuts++;
	set_rate(s, c);
	return true;
}

void
mwp_dcqcn_sent(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint32_t len, uint64_t now)
{
	mwp_dcqcn_advance(s, c, now);
	if (!s->limited)
		return;
	s->next = dmax(s->next, (double)now - c->burst * s->ticks_per_byte) +
		  len * s->ticks_per_byte;
	s->bytes += len;
	while (s->limited && s->bytes >= c->byte_reset) {
		s->bytes -= c->byte_reset;
		s->bc_stage++;
		increase(s, c);
	}
}

void
mwp_dcqcn_read(const struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint64_t now,
	       double *rc, double *rt, double *alpha)
{
	struct mwp_dcqcn t = *s;

	mwp_dcqcn_advance(&t, c, now);
	/* an unlimited QP is at the maximum, whatever a state never cut (all
	 * zeros) or left behind by a reset says */
	*rc = t.limited ? t.rc : c->max_rate;
	*rt = t.limited ? t.rt : c->max_rate;
	*alpha = t.limited ? t.alpha : 0;
}
