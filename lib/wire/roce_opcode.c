/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce_opcode.h"

#define HAS(m, eh) (((m) & ROCE_M_##eh) ? 1 : 0)

/* Offsets follow the fixed IBA order; each is the previous one plus the
 * previous header's size when that header is present. */
#define OFF_DETH(m)	((unsigned int)sizeof(struct roce_bth))
#define OFF_RETH(m)	(OFF_DETH(m) + HAS(m, DETH) * sizeof(struct roce_deth))
#define OFF_ATMETH(m)	(OFF_RETH(m) + HAS(m, RETH) * sizeof(struct roce_reth))
#define OFF_AETH(m)	(OFF_ATMETH(m) + HAS(m, ATMETH) * sizeof(struct roce_atmeth))
#define OFF_ATMACK(m)	(OFF_AETH(m) + HAS(m, AETH) * sizeof(struct roce_aeth))
#define OFF_IMMDT(m)	(OFF_ATMACK(m) + HAS(m, ATMACK) * sizeof(struct roce_atmack))
#define OFF_IETH(m)	(OFF_IMMDT(m) + HAS(m, IMMDT) * sizeof(struct roce_immdt))
#define OFF_CNP(m)	(OFF_IETH(m) + HAS(m, IETH) * sizeof(struct roce_ieth))
#define HDR_LEN(m)	(OFF_CNP(m) + HAS(m, CNP) * sizeof(struct roce_cnp))

const uint8_t roce_eh_len[ROCE_EH__MAX] = {
	[ROCE_EH_DETH] = sizeof(struct roce_deth),
	[ROCE_EH_RETH] = sizeof(struct roce_reth),
	[ROCE_EH_ATMETH] = sizeof(struct roce_atmeth),
	[ROCE_EH_AETH] = sizeof(struct roce_aeth),
	[ROCE_EH_ATMACK] = sizeof(struct roce_atmack),
	[ROCE_EH_IMMDT] = sizeof(struct roce_immdt),
	[ROCE_EH_IETH] = sizeof(struct roce_ieth),
	[ROCE_EH_CNP] = sizeof(struct roce_cnp),
};

static const char *const eh_name[ROCE_EH__MAX] = {
	[ROCE_EH_DETH] = "DETH", [ROCE_EH_RETH] = "RETH",
	[ROCE_EH_ATMETH] = "AtomicETH", [ROCE_EH_AETH] = "AETH",
	[ROCE_EH_ATMACK] = "AtomicAckETH", [ROCE_EH_IMMDT] = "ImmDt",
	[ROCE_EH_IETH] = "IETH", [ROCE_EH_CNP] = "CNP",
};

const struct roce_opcode_info roce_opcode[256] = {
#define _(code, nm, m)							\
	[code] = {							\
		.name = #nm,						\
		.mask = (m) | ROCE_M_KNOWN,				\
		.hdr_len = HDR_LEN(m),					\
		.off = {						\
			[ROCE_EH_DETH] = OFF_DETH(m),			\
			[ROCE_EH_RETH] = OFF_RETH(m),			\
			[ROCE_EH_ATMETH] = OFF_ATMETH(m),		\
			[ROCE_EH_AETH] = OFF_AETH(m),			\
			[ROCE_EH_ATMACK] = OFF_ATMACK(m),		\
			[ROCE_EH_IMMDT] = OFF_IMMDT(m),			\
			[ROCE_EH_IETH] = OFF_IETH(m),			\
			[ROCE_EH_CNP] = OFF_CNP(m),			\
		},							\
	},
	ROCE_FOREACH_OPCODE(_)
#undef _
};

/* Totals from IBA Table 37 (and CNP from RoCEv2 A17.9.2), checked at
 * compile time against the derived lengths. */
_Static_assert(HDR_LEN(ROCE_M_RETH | ROCE_M_IMMDT) == 32, "WRITE_ONLY_IMM");
_Static_assert(HDR_LEN(ROCE_M_AETH | ROCE_M_ATMACK) == 24, "ATOMIC_ACK");
_Static_assert(HDR_LEN(ROCE_M_ATMETH) == 40, "COMPARE_SWAP");
_Static_assert(HDR_LEN(ROCE_M_RETH) == 28, "ATOMIC_WRITE");
_Static_assert(HDR_LEN(ROCE_M_DETH | ROCE_M_IMMDT) == 24, "UD_SEND_IMM");
_Static_assert(HDR_LEN(ROCE_M_IETH) == 16, "SEND_WITH_INV");
_Static_assert(HDR_LEN(ROCE_M_CNP) == 28, "CNP");

const char *
roce_eh_name(enum roce_eh eh)
{
	if ((unsigned int)eh >= ROCE_EH__MAX)
		return "?";
	return eh_name[eh];
}
