/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_ICRC_BURST_H
#define ROCE_ICRC_BURST_H

/*
 * The ICRCs of a burst, collected frame by frame and computed together by
 * the multi-buffer CRC (private to libmwpath).  A queue's rx sorter adds
 * each frame while it sorts it, so the frame is read once;
 * mwp_icrc_verify_burst and mwp_icrc_fill_burst are built on the same
 * set.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>

#include "mwp_drop.h"
#include "roce_crc_mb.h"
#include "roce_icrc.h"
#include "roce_parse.h"

/* Frames one set holds (a whole rx burst). */
#define MWP_ICRC_SET_MAX 64

/* Masks for [IPv6][front padding] and whether the CPU has what
 * mwp_crc32_mb needs; both set when the library loads. */
extern struct mwp_crc_mask mwp_icrc_masks[2][16] __attribute__((visibility("hidden")));
extern bool mwp_icrc_mb_ok __attribute__((visibility("hidden")));

/* A frame's ICRC trailer is where its lane ends: the lane covers pad + 4
 * bytes before the IP header, then everything up to the ICRC. */
struct mwp_icrc_set {
	uint16_t n;
	uint16_t cap;		/* MWP_ICRC_SET_MAX, or 0 without the CPU's help */
	uint16_t idx[MWP_ICRC_SET_MAX];		/* the frame's place in its burst */
	struct mwp_crc_lane lane[MWP_ICRC_SET_MAX];
};

/* Where lane j's frame carries its ICRC. */
static inline uint8_t *
mwp_icrc_set_trailer(const struct mwp_icrc_set *s, uint16_t j)
{
	return (uint8_t *)(uintptr_t)(s->lane[j].base + 16u * s->lane[j].nblocks);
}

static inline void
mwp_icrc_set_init(struct mwp_icrc_set *s)
{
	s->n = 0;
	s->cap = mwp_icrc_mb_ok ? MWP_ICRC_SET_MAX : 0;
}

/*
 * Add frame i of a burst (its first byte at d, its IP header at l3_off,
 * its ICRC at icrc_off) if the multi-buffer CRC can take it: in one
 * segment (any length), and with the pad + 4 bytes before its IP header
 * there to be read in place.  Those come out as zeros (making the whole a
 * multiple of 16 bytes; leading zeros do not count) and ff ff ff ff (the
 * 8 x 0xff pseudo-LRH with the CRC's initial ~0 folded into its first
 * half); IP .. pad follow with the fields rocev2-wire.md leaves out forced
 * to ones by the mask.  No byte is copied.  A caller that knows the
 * layout passes constants, which the compiler folds.
 *
 * Returns false if the frame is not taken (the caller computes its ICRC
 * alone) or the set is full.
 */
static __rte_always_inline bool
mwp_icrc_set_add_at(struct mwp_icrc_set *s, const struct rte_mbuf *m, const uint8_t *d,
		    uint32_t l3_off, uint32_t icrc_off, bool ipv6, uint16_t i)
{
	const uint32_t all = icrc_off - l3_off;
	const uint32_t pad = -(4 + all) & 15;
	struct mwp_crc_lane *l = &s->lane[s->n];

	if (unlikely(s->n == s->cap ||
		     icrc_off + 4u > rte_pktmbuf_data_len(m) ||
		     rte_pktmbuf_headroom(m) + l3_off < pad + 4))
		return false;
	l->base = d + l3_off - pad - 4;
	l->mask = &mwp_icrc_masks[ipv6][pad];
	l->nblocks = (uint16_t)((pad + 4 + all) / 16);
	s->idx[s->n++] = i;
	return true;
}

/* The same for a frame parsed as p. */
static __rte_always_inline bool
mwp_icrc_set_add(struct mwp_icrc_set *s, const struct rte_mbuf *m, const struct mwp_pkt *p,
		 uint16_t i)
{
	return mwp_icrc_set_add_at(s, m, rte_pktmbuf_mtod(m, const uint8_t *), p->l3_off,
				   p->icrc_off, (p->flags & MWP_PKT_IPV6) != 0, i);
}

/*
 * Compute the set's CRCs and compare each with its frame's trailer: a
 * mismatch sets why[idx] to MWP_DROP_BAD_ICRC.  Empties the set.
 *
 * @return
 *   The number of mismatches.
 */
uint16_t mwp_icrc_set_check(struct mwp_icrc_set *s, enum mwp_drop *why);

#endif /* ROCE_ICRC_BURST_H */
