/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_DCQCN_H
#define MWP_DCQCN_H

/**
 * @file
 * A QP's sending rate under DCQCN (Zhu et al., "Congestion Control for
 * Large-Scale RDMA Deployments", SIGCOMM 2015): the reaction point's state
 * and the pacer that holds the QP to it.  Pure arithmetic on a clock the
 * caller gives (the TSC on the lcore that owns the QP; a fake one in the
 * tests): no timers, no threads, nothing shared.
 *
 * The equations, with the current rate R_C, the target rate R_T and alpha:
 *
 *   on a CNP (at most one cut per rate_reduce_monitor_period):
 *       R_T = R_C
 *       R_C = max(R_C * (1 - alpha * 2^(10 - rpg_gd)),
 *                 R_C * rpg_min_dec_fac / 100, rpg_min_rate)
 *       alpha = (1 - g) * alpha + g           g = (1024 - dce_tcp_g) / 1024
 *       the rate-increase timer, the byte counter and both stage counts
 *       T and BC start again
 *   every dce_tcp_rtt without a CNP:
 *       alpha = (1 - g) * alpha
 *   every rpg_time_reset without a CNP (T += 1), and every rpg_byte_reset
 *   bytes sent (BC += 1), a rate increase with F = rpg_threshold:
 *       max(T, BC) < F        fast recovery   R_C = (R_T + R_C) / 2
 *       min(T, BC) > F        hyper increase  R_T += (min(T, BC) - F) *
 *                                             rpg_hai_rate, then as above
 *       otherwise             additive        R_T += rpg_ai_rate, then as
 *                                             above
 *       (R_T and R_C never above the maximum rate)
 *
 * A QP starts at the maximum rate and unpaced.  Its first CNP starts the
 * state (alpha = initial_alpha_value; R_C = rate_to_set_on_first_cnp if
 * that is set); once R_C is back at the maximum the QP is unpaced again
 * and the state is forgotten, as a ConnectX frees a flow's context.
 * Timer events are applied when the QP next looks (before it sends, or on
 * a CNP): the result is the same as if they had run on time, and an idle
 * QP costs nothing.
 *
 * The pacer: a QP limited to R_C may send a frame once its next-send time
 * has come; a frame of L bytes moves that time L * 8 / R_C later (from no
 * earlier than now - burst, so a QP that paused may catch up by at most
 * burst bytes' worth).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The parameters, with ConnectX's names (mlx5's
 *  /sys/class/net/IF/ecn/roce_rp/), units and defaults. */
struct mwp_dcqcn_params {
	uint32_t rpg_max_rate;		/**< Mb/s; 0: the line rate */
	uint32_t rpg_min_rate;		/**< Mb/s, the lowest R_C (1) */
	uint32_t rpg_ai_rate;		/**< Mb/s, additive increase (5) */
	uint32_t rpg_hai_rate;		/**< Mb/s, hyper increase (50) */
	uint32_t rpg_time_reset;	/**< us between timer increases (300) */
	uint32_t rpg_byte_reset;	/**< bytes between byte-counter
					 *   increases (32767) */
	uint32_t rpg_threshold;		/**< F: stages before additive (1) */
	uint32_t rpg_gd;		/**< cut = alpha / 2^(rpg_gd - 10) (11) */
	uint32_t rpg_min_dec_fac;	/**< % of R_C a cut keeps at least (50) */
	uint32_t rate_to_set_on_first_cnp; /**< Mb/s; 0: cut as any CNP (0) */
	uint32_t rate_reduce_monitor_period; /**< us between cuts (4) */
	uint32_t dce_tcp_g;		/**< 1 - g, in 1/1024 (1019) */
	uint32_t dce_tcp_rtt;		/**< us between alpha decays (1) */
	uint32_t initial_alpha_value;	/**< alpha at the first CNP, in 1/1024
					 *   (1023) */
	uint32_t burst;			/**< pacer: bytes a paused QP may send
					 *   at once (mwpath's; 4096) */
};

/** The defaults above. */
void mwp_dcqcn_defaults(struct mwp_dcqcn_params *p);

/**
 * Check parameters: every one in its range (rates from 1 Mb/s; periods
 * from 1 us; rpg_gd 10 or 11; percentages and 1/1024 fractions in range).
 *
 * @param err
 *   On failure, the first parameter out of range and why.
 * @return
 *   0, or -EINVAL.
 */
int mwp_dcqcn_params_check(const struct mwp_dcqcn_params *p, char *err, size_t errlen);

/** Parameters made ready for a clock: shared by every QP of a port. */
struct mwp_dcqcn_cfg {
	double max_rate;		/**< Mb/s */
	double min_rate, ai, hai, first_rate;	/**< Mb/s */
	double g;			/**< alpha gain */
	double cut_scale;		/**< 2^(10 - rpg_gd) */
	double min_keep;		/**< rpg_min_dec_fac / 100 */
	double initial_alpha;
	double tpb_1mbps;		/**< clock ticks a byte takes at 1 Mb/s */
	uint64_t alpha_period;		/**< ticks */
	uint64_t time_reset;		/**< ticks */
	uint64_t reduce_period;		/**< ticks */
	uint64_t byte_reset;		/**< bytes */
	uint32_t threshold;
	uint32_t burst;			/**< bytes */
	uint64_t hz;			/**< clock ticks a second */
};

/**
 * Ready parameters for a clock of hz ticks a second and a line rate.
 *
 * @param line_rate
 *   Mb/s, used where rpg_max_rate is 0.
 */
void mwp_dcqcn_cfg_init(struct mwp_dcqcn_cfg *c, const struct mwp_dcqcn_params *p,
			uint64_t hz, uint32_t line_rate);

/** What a QP's reaction point counts. */
struct mwp_dcqcn_stats {
	uint64_t cnps;			/**< CNPs taken */
	uint64_t cuts;			/**< rate decreases */
	uint64_t increases;		/**< rate increase events */
	uint64_t paced;			/**< sends held back by the pacer */
};

/** One QP's reaction point. */
struct mwp_dcqcn {
	bool limited;		/**< R_C below the maximum: paced */
	uint32_t t_stage;	/**< T: timer events since the last cut */
	uint32_t bc_stage;	/**< BC: byte-counter events since then */
	double rc, rt;		/**< Mb/s */
	double alpha;
	double ticks_per_byte;	/**< at rc */
	double next;		/**< pacer: when the next frame may leave */
	uint64_t alpha_tsc;	/**< alpha last decayed (or bumped) */
	uint64_t inc_tsc;	/**< the last timer event (or cut) */
	uint64_t cut_tsc;	/**< the last cut */
	uint64_t bytes;		/**< since the last byte-counter event */
	struct mwp_dcqcn_stats st;
};

/** A QP's state at the start: the maximum rate, unpaced. */
void mwp_dcqcn_init(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c);

/**
 * Apply the timer events due by now (alpha decay, rate increases); a QP
 * back at the maximum rate is unpaced again.
 */
void mwp_dcqcn_advance(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint64_t now);

/**
 * A CNP for this QP arrived at now: the rate is cut (unless the last cut
 * was less than rate_reduce_monitor_period ago).
 *
 * @return
 *   true if the rate was cut.
 */
bool mwp_dcqcn_cnp(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint64_t now);

/**
 * May a limited QP send a frame now?  Applies the timer events due; false
 * (counted) while the pacer holds it back.
 */
static inline bool
mwp_dcqcn_may_send(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint64_t now)
{
	if (s->next <= (double)now)
		return true;
	mwp_dcqcn_advance(s, c, now);
	if (!s->limited || s->next <= (double)now)
		return true;
	s->st.paced++;
	return false;
}

/**
 * A limited QP sent a frame of len bytes at now: the pacer's next time,
 * and the byte counter (its increase events).
 */
void mwp_dcqcn_sent(struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint32_t len,
		    uint64_t now);

/**
 * R_C, R_T in Mb/s and alpha (0 to 1; 0 while not limited) as they stand
 * at now, the timer events due applied to a copy: s is not changed (telemetry reads it from
 * another thread; a read may see a CNP's update half made).
 */
void mwp_dcqcn_read(const struct mwp_dcqcn *s, const struct mwp_dcqcn_cfg *c, uint64_t now,
		    double *rc, double *rt, double *alpha);

#endif /* MWP_DCQCN_H */
