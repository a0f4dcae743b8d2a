/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_OPCODE_H
#define ROCE_OPCODE_H

/**
 * @file
 * The RoCEv2 opcode table: for each BTH opcode mwpath knows, its name, the
 * extension headers that follow the BTH and their offsets, whether it
 * carries payload, and where it sits in a message.
 *
 * The table is generated from one X-macro list; offsets are derived at
 * compile time from the fixed IBA header order
 * (BTH, DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH) so that no
 * two tables can drift apart.
 */

#include <stdint.h>

#include "roce_hdr.h"

/** Extension headers, in wire order after the BTH. */
enum roce_eh {
	ROCE_EH_DETH,
	ROCE_EH_RETH,
	ROCE_EH_ATMETH,
	ROCE_EH_AETH,
	ROCE_EH_ATMACK,
	ROCE_EH_IMMDT,
	ROCE_EH_IETH,
	ROCE_EH_CNP,
	ROCE_EH__MAX
};

/* Header-present bits (one per enum roce_eh) ... */
#define ROCE_M_DETH	(1u << ROCE_EH_DETH)
#define ROCE_M_RETH	(1u << ROCE_EH_RETH)
#define ROCE_M_ATMETH	(1u << ROCE_EH_ATMETH)
#define ROCE_M_AETH	(1u << ROCE_EH_AETH)
#define ROCE_M_ATMACK	(1u << ROCE_EH_ATMACK)
#define ROCE_M_IMMDT	(1u << ROCE_EH_IMMDT)
#define ROCE_M_IETH	(1u << ROCE_EH_IETH)
#define ROCE_M_CNP	(1u << ROCE_EH_CNP)
/* ... and what the packet is. */
#define ROCE_M_PAYLOAD	(1u << 8)	/**< may carry payload */
#define ROCE_M_REQ	(1u << 9)	/**< sent by a requester */
#define ROCE_M_RESP	(1u << 10)	/**< sent by a responder */
#define ROCE_M_SEND	(1u << 11)
#define ROCE_M_WRITE	(1u << 12)
#define ROCE_M_READ	(1u << 13)
#define ROCE_M_ATOMIC	(1u << 14)
#define ROCE_M_START	(1u << 15)	/**< first packet of a message */
#define ROCE_M_MIDDLE	(1u << 16)	/**< neither first nor last */
#define ROCE_M_END	(1u << 17)	/**< last packet of a message */
#define ROCE_M_IMM	(1u << 18)	/**< with immediate data */
#define ROCE_M_INV	(1u << 19)	/**< with invalidate */
/** A request of a connected transport (RC, UC): one test tells it from a
 *  UD SEND (ROCE_M_REQ too), which has a home of its own. */
#define ROCE_M_CONN	(1u << 20)
/** RDMA ATOMIC WRITE (IBA 1.5): a RETH and its 8-byte value, stored at
 *  once.  ROCE_M_ATOMIC too (an atomic's place among the requests: its
 *  duplicates answered from the responder's cache), but the access it
 *  needs is remote write, and its answer a zero-length READ RESPONSE ONLY. */
#define ROCE_M_ATOMIC_WRITE	(1u << 21)
#define ROCE_M_KNOWN	(1u << 31)	/**< set for every opcode in the table */

#define ROCE_M_ONLY	(ROCE_M_START | ROCE_M_END)

/* Shorthands used only by the list below. */
#define R_SEND	(ROCE_M_PAYLOAD | ROCE_M_REQ | ROCE_M_CONN | ROCE_M_SEND)
#define R_WRITE	(ROCE_M_PAYLOAD | ROCE_M_REQ | ROCE_M_CONN | ROCE_M_WRITE)
#define R_UD	(ROCE_M_PAYLOAD | ROCE_M_REQ | ROCE_M_SEND | ROCE_M_ONLY | ROCE_M_DETH)

/** Requests carried by both RC and UC (offset 0x00 and 0x20). */
#define ROCE_FOREACH_RC_UC_OPCODE(_, T, base)				\
	_(base + 0x00, T##_SEND_FIRST, R_SEND | ROCE_M_START)		\
	_(base + 0x01, T##_SEND_MIDDLE, R_SEND | ROCE_M_MIDDLE)	\
	_(base + 0x02, T##_SEND_LAST, R_SEND | ROCE_M_END)		\
	_(base + 0x03, T##_SEND_LAST_WITH_IMMEDIATE,			\
	  R_SEND | ROCE_M_END | ROCE_M_IMMDT | ROCE_M_IMM)		\
	_(base + 0x04, T##_SEND_ONLY, R_SEND | ROCE_M_ONLY)		\
	_(base + 0x05, T##_SEND_ONLY_WITH_IMMEDIATE,			\
	  R_SEND | ROCE_M_ONLY | ROCE_M_IMMDT | ROCE_M_IMM)		\
	_(base + 0x06, T##_RDMA_WRITE_FIRST,				\
	  R_WRITE | ROCE_M_START | ROCE_M_RETH)				\
	_(base + 0x07, T##_RDMA_WRITE_MIDDLE, R_WRITE | ROCE_M_MIDDLE)	\
	_(base + 0x08, T##_RDMA_WRITE_LAST, R_WRITE | ROCE_M_END)	\
	_(base + 0x09, T##_RDMA_WRITE_LAST_WITH_IMMEDIATE,		\
	  R_WRITE | ROCE_M_END | ROCE_M_IMMDT | ROCE_M_IMM)		\
	_(base + 0x0a, T##_RDMA_WRITE_ONLY,				\
	  R_WRITE | ROCE_M_ONLY | ROCE_M_RETH)				\
	_(base + 0x0b, T##_RDMA_WRITE_ONLY_WITH_IMMEDIATE,		\
	  R_WRITE | ROCE_M_ONLY | ROCE_M_RETH | ROCE_M_IMMDT | ROCE_M_IMM)

/** Every opcode mwpath parses: _(code, NAME, mask). */
#define ROCE_FOREACH_OPCODE(_)						\
	ROCE_FOREACH_RC_UC_OPCODE(_, RC, 0x00)				\
	_(0x0c, RC_RDMA_READ_REQUEST,					\
	  ROCE_M_REQ | ROCE_M_CONN | ROCE_M_READ | ROCE_M_ONLY | ROCE_M_RETH) \
	_(0x0d, RC_RDMA_READ_RESPONSE_FIRST, ROCE_M_PAYLOAD | ROCE_M_RESP | \
	  ROCE_M_READ | ROCE_M_START | ROCE_M_AETH)			\
	_(0x0e, RC_RDMA_READ_RESPONSE_MIDDLE, ROCE_M_PAYLOAD | ROCE_M_RESP | \
	  ROCE_M_READ | ROCE_M_MIDDLE)					\
	_(0x0f, RC_RDMA_READ_RESPONSE_LAST, ROCE_M_PAYLOAD | ROCE_M_RESP | \
	  ROCE_M_READ | ROCE_M_END | ROCE_M_AETH)			\
	_(0x10, RC_RDMA_READ_RESPONSE_ONLY, ROCE_M_PAYLOAD | ROCE_M_RESP | \
	  ROCE_M_READ | ROCE_M_ONLY | ROCE_M_AETH)			\
	_(0x11, RC_ACKNOWLEDGE, ROCE_M_RESP | ROCE_M_ONLY | ROCE_M_AETH) \
	_(0x12, RC_ATOMIC_ACKNOWLEDGE, ROCE_M_RESP | ROCE_M_ATOMIC |	\
	  ROCE_M_ONLY | ROCE_M_AETH | ROCE_M_ATMACK)			\
	_(0x13, RC_COMPARE_SWAP,					\
	  ROCE_M_REQ | ROCE_M_CONN | ROCE_M_ATOMIC | ROCE_M_ONLY | ROCE_M_ATMETH) \
	_(0x14, RC_FETCH_ADD,						\
	  ROCE_M_REQ | ROCE_M_CONN | ROCE_M_ATOMIC | ROCE_M_ONLY | ROCE_M_ATMETH) \
	_(0x16, RC_SEND_LAST_WITH_INVALIDATE,				\
	  R_SEND | ROCE_M_END | ROCE_M_IETH | ROCE_M_INV)		\
	_(0x17, RC_SEND_ONLY_WITH_INVALIDATE,				\
	  R_SEND | ROCE_M_ONLY | ROCE_M_IETH | ROCE_M_INV)		\
	_(0x1d, RC_ATOMIC_WRITE, ROCE_M_PAYLOAD | ROCE_M_REQ | ROCE_M_CONN | \
	  ROCE_M_ATOMIC | ROCE_M_ATOMIC_WRITE | ROCE_M_ONLY | ROCE_M_RETH) \
	ROCE_FOREACH_RC_UC_OPCODE(_, UC, 0x20)				\
	_(0x64, UD_SEND_ONLY, R_UD)					\
	_(0x65, UD_SEND_ONLY_WITH_IMMEDIATE, R_UD | ROCE_M_IMMDT | ROCE_M_IMM) \
	_(0x81, CNP, ROCE_M_ONLY | ROCE_M_CNP)

/** Opcode values, e.g. ROCE_OP_RC_RDMA_WRITE_ONLY = 0x0a. */
enum roce_op {
#define _(code, name, mask) ROCE_OP_##name = (code),
	ROCE_FOREACH_OPCODE(_)
#undef _
};

/** Transport service of an opcode: its top three bits. */
enum roce_transport {
	ROCE_TRANSPORT_RC = 0x00,
	ROCE_TRANSPORT_UC = 0x20,
	ROCE_TRANSPORT_RD = 0x40,
	ROCE_TRANSPORT_UD = 0x60,
	ROCE_TRANSPORT_CNP = 0x80,
	ROCE_TRANSPORT_XRC = 0xa0,
};

/** What the table says about one opcode. */
struct roce_opcode_info {
	const char *name;		/**< e.g. "RC_RDMA_WRITE_ONLY"; NULL if unknown */
	uint32_t mask;			/**< ROCE_M_* bits; 0 if unknown */
	uint8_t hdr_len;		/**< BTH + extension headers, bytes */
	uint8_t off[ROCE_EH__MAX];	/**< offset of each present header from the BTH */
};

/** The table, indexed by BTH opcode; unknown opcodes have mask 0. */
extern const struct roce_opcode_info roce_opcode[256];

/** Size in bytes of each extension header. */
extern const uint8_t roce_eh_len[ROCE_EH__MAX];

/**
 * Name of an extension header ("RETH", "AETH", ...).
 *
 * @param eh
 *   The header.
 * @return
 *   A static string; "?" when out of range.
 */
const char *roce_eh_name(enum roce_eh eh);

/**
 * Locate an extension header after a BTH.
 *
 * @param bth
 *   The BTH of a packet with this opcode.
 * @param op
 *   The opcode's entry in roce_opcode.
 * @param eh
 *   The header.
 * @return
 *   A pointer to it, or NULL if the opcode has no such header.
 */
static inline const uint8_t *
roce_op_eh(const uint8_t *bth, const struct roce_opcode_info *op, enum roce_eh eh)
{
	if (!(op->mask & (1u << eh)))
		return NULL;
	return bth + op->off[eh];
}

/** Transport of an opcode. */
static inline enum roce_transport
roce_opcode_transport(uint8_t opcode)
{
	return (enum roce_transport)(opcode & 0xe0);
}

#endif /* ROCE_OPCODE_H */
