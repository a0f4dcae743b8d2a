/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_HDR_H
#define ROCE_HDR_H

/**
 * @file
 * RoCEv2 wire headers (InfiniBand BTH and extension headers carried in
 * UDP/4791) and typed accessors.
 *
 * Byte swaps live only in these accessors: the rest of mwpath reads and
 * writes host-order values through them.  The structures are packed and
 * may sit at any alignment inside a frame.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

/** UDP destination port of RoCEv2 (IANA). */
#define ROCE_UDP_PORT 4791

/** The payload of an RDMA ATOMIC WRITE (IBA 1.5): one 64-bit word. */
#define ROCE_ATOMIC_WRITE_BYTES 8

/** Size of the invariant CRC trailer. */
#define ROCE_ICRC_BYTES 4

/** PSNs, MSNs and QPNs are 24-bit numbers; PSN arithmetic wraps at this. */
#define ROCE_PSN_MASK 0xffffffu

/** Base Transport Header, 12 bytes. */
struct roce_bth {
	uint8_t opcode;
	uint8_t flags;		/**< SE(7) M(6) PadCnt(5:4) TVer(3:0) */
	rte_be16_t pkey;
	uint8_t fecn_becn;	/**< FECN(7) BECN(6) reserved(5:0) */
	uint8_t dqpn[3];	/**< destination QP, 24 bits */
	uint8_t ackreq;		/**< AckReq(7) reserved(6:0) */
	uint8_t psn[3];		/**< packet sequence number, 24 bits */
} __rte_packed;

/** RDMA Extended Transport Header, 16 bytes. */
struct roce_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t dmalen;
} __rte_packed;

/** ACK Extended Transport Header, 4 bytes. */
struct roce_aeth {
	uint8_t syndrome;
	uint8_t msn[3];
} __rte_packed;

/** Atomic Extended Transport Header, 28 bytes. */
struct roce_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t compare;
} __rte_packed;

/** Atomic Acknowledge Extended Transport Header, 8 bytes. */
struct roce_atmack {
	rte_be64_t orig;
} __rte_packed;

/** Immediate data, 4 bytes (kept in network order, as verbs reports it). */
struct roce_immdt {
	rte_be32_t imm;
} __rte_packed;

/** Invalidate Extended Transport Header, 4 bytes. */
struct roce_ieth {
	rte_be32_t rkey;
} __rte_packed;

/** Datagram Extended Transport Header, 8 bytes. */
struct roce_deth {
	rte_be32_t qkey;
	uint8_t reserved;
	uint8_t sqpn[3];
} __rte_packed;

/** CNP carries 16 reserved bytes after the BTH (RoCEv2 Annex A17.9.2). */
struct roce_cnp {
	uint8_t reserved[16];
} __rte_packed;

_Static_assert(sizeof(struct roce_bth) == 12, "BTH is 12 bytes");
_Static_assert(sizeof(struct roce_reth) == 16, "RETH is 16 bytes");
_Static_assert(sizeof(struct roce_aeth) == 4, "AETH is 4 bytes");
_Static_assert(sizeof(struct roce_atmeth) == 28, "AtomicETH is 28 bytes");
_Static_assert(sizeof(struct roce_atmack) == 8, "AtomicAckETH is 8 bytes");
_Static_assert(sizeof(struct roce_immdt) == 4, "ImmDt is 4 bytes");
_Static_assert(sizeof(struct roce_ieth) == 4, "IETH is 4 bytes");
_Static_assert(sizeof(struct roce_deth) == 8, "DETH is 8 bytes");
_Static_assert(sizeof(struct roce_cnp) == 16, "CNP reserved is 16 bytes");

#define ROCE_BTH_SE		0x80
#define ROCE_BTH_MIG		0x40
#define ROCE_BTH_PAD_SHIFT	4
#define ROCE_BTH_PAD_MASK	0x30
#define ROCE_BTH_TVER_MASK	0x0f
#define ROCE_BTH_FECN		0x80
#define ROCE_BTH_BECN		0x40

/* The ECN codepoints of the IP header (RFC 3168): the low two bits of the
 * IPv4 TOS byte and of the IPv6 traffic class. */
#define ROCE_ECN_NOT_ECT	0
#define ROCE_ECN_ECT1		1
#define ROCE_ECN_ECT0		2
#define ROCE_ECN_CE		3
#define ROCE_ECN_MASK		3
#define ROCE_BTH_ACKREQ		0x80

/** AETH syndromes (IBA 9.7.5.1.4). */
#define ROCE_AETH_ACK		0x00	/**< ACK; low 5 bits: credit count */
#define ROCE_AETH_RNR_NAK	0x20	/**< RNR NAK; low 5 bits: timer */
#define ROCE_AETH_NAK_PSN_SEQ	0x60	/**< NAK: PSN sequence error */
#define ROCE_AETH_NAK_INV_REQ	0x61	/**< NAK: invalid request */
#define ROCE_AETH_NAK_REM_ACC	0x62	/**< NAK: remote access error */
#define ROCE_AETH_NAK_REM_OP	0x63	/**< NAK: remote operational error */
#define ROCE_AETH_NAK_INV_RD	0x64	/**< NAK: invalid RD request */
#define ROCE_AETH_TYPE_MASK	0x60
#define ROCE_AETH_CREDIT_INVALID 0x1f	/**< ACK credit field: no credits */

/*
 * Big-endian wire fields to host order.  DPDK's x86 byte swaps (without
 * RTE_FORCE_INTRINSICS) are volatile asm, which GCC can neither fold into
 * the load (movbe) nor schedule nor merge; these are plain builtins.  On
 * every packet's path (parse, the headers' accessors).
 */
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
#define ROCE_BE16(x) ((uint16_t)__builtin_bswap16(x))
#define ROCE_BE32(x) ((uint32_t)__builtin_bswap32(x))
#define ROCE_BE64(x) ((uint64_t)__builtin_bswap64(x))
#else
#define ROCE_BE16(x) ((uint16_t)(x))
#define ROCE_BE32(x) ((uint32_t)(x))
#define ROCE_BE64(x) ((uint64_t)(x))
#endif

static inline uint32_t
roce_get24(const uint8_t b[3])
{
	return ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
}

static inline void
roce_put24(uint8_t b[3], uint32_t v)
{
	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

/* BTH */
static inline uint8_t bth_opcode(const struct roce_bth *h) { return h->opcode; }
static inline bool bth_se(const struct roce_bth *h) { return h->flags & ROCE_BTH_SE; }
static inline bool bth_mig(const struct roce_bth *h) { return h->flags & ROCE_BTH_MIG; }
static inline uint8_t
bth_pad(const struct roce_bth *h)
{
	return (h->flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
}
static inline uint8_t bth_tver(const struct roce_bth *h) { return h->flags & ROCE_BTH_TVER_MASK; }
static inline uint16_t bth_pkey(const struct roce_bth *h) { return ROCE_BE16(h->pkey); }
static inline bool bth_fecn(const struct roce_bth *h) { return h->fecn_becn & ROCE_BTH_FECN; }
static inline bool bth_becn(const struct roce_bth *h) { return h->fecn_becn & ROCE_BTH_BECN; }
/* The low 24 bits of the big-endian word at byte off of a header: one
 * load and a byte swap instead of three loads. */
static inline uint32_t
roce_low24(const void *hdr, unsigned int off)
{
	uint32_t w;

	memcpy(&w, (const uint8_t *)hdr + off, sizeof(w));
	return ROCE_BE32(w) & 0xffffff;
}

static inline uint32_t bth_dqpn(const struct roce_bth *h) { return roce_low24(h, 4); }
static inline bool bth_ackreq(const struct roce_bth *h) { return h->ackreq & ROCE_BTH_ACKREQ; }
static inline uint32_t bth_psn(const struct roce_bth *h) { return roce_low24(h, 8); }

/* RETH */
static inline uint64_t reth_va(const struct roce_reth *h) { return ROCE_BE64(h->va); }
static inline uint32_t reth_rkey(const struct roce_reth *h) { return ROCE_BE32(h->rkey); }
static inline uint32_t reth_dmalen(const struct roce_reth *h) { return ROCE_BE32(h->dmalen); }

/* AETH */
static inline uint8_t aeth_syndrome(const struct roce_aeth *h) { return h->syndrome; }
static inline uint32_t aeth_msn(const struct roce_aeth *h) { return roce_low24(h, 0); }

/* AtomicETH */
static inline uint64_t atmeth_va(const struct roce_atmeth *h) { return ROCE_BE64(h->va); }
static inline uint32_t atmeth_rkey(const struct roce_atmeth *h) { return ROCE_BE32(h->rkey); }
static inline uint64_t atmeth_swap_add(const struct roce_atmeth *h) { return ROCE_BE64(h->swap_add); }
static inline uint64_t atmeth_compare(const struct roce_atmeth *h) { return ROCE_BE64(h->compare); }

/* AtomicAckETH, ImmDt, IETH, DETH */
static inline uint64_t atmack_orig(const struct roce_atmack *h) { return ROCE_BE64(h->orig); }
static inline uint32_t immdt_imm(const struct roce_immdt *h) { return ROCE_BE32(h->imm); }
static inline uint32_t ieth_rkey(const struct roce_ieth *h) { return ROCE_BE32(h->rkey); }
static inline uint32_t deth_qkey(const struct roce_deth *h) { return ROCE_BE32(h->qkey); }
static inline uint32_t deth_sqpn(const struct roce_deth *h) { return roce_get24(h->sqpn); }

#endif /* ROCE_HDR_H */
