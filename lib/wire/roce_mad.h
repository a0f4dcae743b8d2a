/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_MAD_H
#define ROCE_MAD_H

/**
 * @file
 * Management datagrams (MADs, IBA 13.4) of the communication management
 * class (IBA chapter 12) as they travel to QP1 over RoCEv2: the 24-byte
 * common MAD header, the CM messages' fields (IBA tables 106 to 120) and
 * the RDMA CM's IP addressing (IBA annex A11: service IDs and the
 * private-data header of a REQ and a SIDR REQ).
 *
 * A field is named by where it sits: its byte in the MAD (the header
 * included), the bit of that byte it starts at (0 is the most significant)
 * and its width; fields are read and written in host order through
 * mad_get()/mad_put(), the 64-bit ones through mad_get64()/mad_put64().
 * The offsets are the IBA tables' (byte N of a message is byte 24 + N of
 * its MAD).
 */

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

/** Every MAD is 256 bytes; QP1 receives it after the 40-byte GRH area. */
#define ROCE_MAD_BYTES 256
/** The common MAD header. */
#define ROCE_MAD_HDR_BYTES 24
/** The well-known Q_Key of QP1 (GSI). */
#define ROCE_GSI_QKEY 0x80010000u
/** QP1's number. */
#define ROCE_GSI_QPN 1
/** The default P_Key, which QP1's frames carry. */
#define ROCE_DEFAULT_PKEY 0xffff

/** Common MAD header (IBA 13.4.3), 24 bytes. */
struct roce_mad_hdr {
	uint8_t base_version;	/**< 1 */
	uint8_t mgmt_class;	/**< ROCE_MAD_CLASS_CM */
	uint8_t class_version;	/**< 2 for the CM */
	uint8_t method;		/**< R(7) method(6:0) */
	rte_be16_t status;
	rte_be16_t class_specific;
	rte_be64_t tid;
	rte_be16_t attr_id;
	rte_be16_t resv;
	rte_be32_t attr_mod;
} __rte_packed;
_Static_assert(sizeof(struct roce_mad_hdr) == ROCE_MAD_HDR_BYTES, "MAD header is 24 bytes");

#define ROCE_MAD_BASE_VERSION 1
#define ROCE_MAD_CLASS_CM 0x07
#define ROCE_MAD_CM_CLASS_VERSION 2
#define ROCE_MAD_METHOD_GET 0x01
#define ROCE_MAD_METHOD_SEND 0x03
#define ROCE_MAD_METHOD_RESP 0x80	/**< the response bit of method */
/** Status "unsupported class or version" (IBA 13.4.7). */
#define ROCE_MAD_STATUS_BAD_VERSION 0x0004
/** Status "method or attribute unsupported". */
#define ROCE_MAD_STATUS_UNSUP_ATTR 0x000c

/** The CM's attributes (IBA table 105). */
enum roce_cm_attr {
	ROCE_CM_CLASS_PORT_INFO = 0x0001,
	ROCE_CM_REQ = 0x0010,
	ROCE_CM_MRA = 0x0011,
	ROCE_CM_REJ = 0x0012,
	ROCE_CM_REP = 0x0013,
	ROCE_CM_RTU = 0x0014,
	ROCE_CM_DREQ = 0x0015,
	ROCE_CM_DREP = 0x0016,
	ROCE_CM_SIDR_REQ = 0x0017,
	ROCE_CM_SIDR_REP = 0x0018,
	ROCE_CM_LAP = 0x0019,
	ROCE_CM_APR = 0x001a,
};

/** REJ reasons (IBA table 109) mwpath sends or names. */
enum roce_cm_rej_reason {
	ROCE_REJ_NO_QP = 1,
	ROCE_REJ_NO_RESOURCES = 3,
	ROCE_REJ_TIMEOUT = 4,
	ROCE_REJ_UNSUPPORTED = 5,
	ROCE_REJ_INVALID_COMM_ID = 6,
	ROCE_REJ_INVALID_COMM_INSTANCE = 7,
	ROCE_REJ_INVALID_SERVICE_ID = 8,
	ROCE_REJ_INVALID_TRANSPORT = 9,
	ROCE_REJ_STALE_CONN = 10,
	ROCE_REJ_INVALID_GID = 12,
	ROCE_REJ_INVALID_MTU = 26,
	ROCE_REJ_CONSUMER = 28,
	ROCE_REJ_INVALID_RNR_RETRY = 29,
	ROCE_REJ_DUPLICATE_COMM_ID = 30,
	ROCE_REJ_INVALID_CLASS_VERSION = 31,
};

/** What a REJ or an MRA answers (its "message rejected/MRAed" field). */
enum roce_cm_msg_ref {
	ROCE_CM_REF_REQ = 0,
	ROCE_CM_REF_REP = 1,
	ROCE_CM_REF_OTHER = 2,
};

/** SIDR REP status (IBA table 121). */
enum roce_sidr_status {
	ROCE_SIDR_OK = 0,
	ROCE_SIDR_NO_SERVICE = 1,
	ROCE_SIDR_REJECT = 2,
	ROCE_SIDR_NO_QP = 3,
};

/** A field of a MAD: byte (header included), first bit (0 = MSB), width. */
struct roce_mad_field {
	uint16_t byte;
	uint8_t bit;
	uint8_t width;	/**< 1..32 */
};

/** A CM message's field at byte b of the message (IBA's tables). */
#define CM_F(b, bit, width) ((struct roce_mad_field){ ROCE_MAD_HDR_BYTES + (b), (bit), (width) })

/* REQ (table 106) */
#define CM_REQ_LOCAL_COMM_ID		CM_F(0, 0, 32)
#define CM_REQ_SERVICE_ID		(ROCE_MAD_HDR_BYTES + 8)	/* 64 bits */
#define CM_REQ_LOCAL_CA_GUID		(ROCE_MAD_HDR_BYTES + 16)	/* 64 bits */
#define CM_REQ_LOCAL_QKEY		CM_F(28, 0, 32)
#define CM_REQ_LOCAL_QPN		CM_F(32, 0, 24)
#define CM_REQ_RESPONDER_RESOURCES	CM_F(35, 0, 8)
#define CM_REQ_INITIATOR_DEPTH		CM_F(39, 0, 8)
#define CM_REQ_REMOTE_CM_TIMEOUT	CM_F(43, 0, 5)
#define CM_REQ_TRANSPORT		CM_F(43, 5, 2)
#define CM_REQ_FLOW_CONTROL		CM_F(43, 7, 1)
#define CM_REQ_STARTING_PSN		CM_F(44, 0, 24)
#define CM_REQ_LOCAL_CM_TIMEOUT		CM_F(47, 0, 5)
#define CM_REQ_RETRY_COUNT		CM_F(47, 5, 3)
#define CM_REQ_PKEY			CM_F(48, 0, 16)
#define CM_REQ_MTU			CM_F(50, 0, 4)
#define CM_REQ_RNR_RETRY_COUNT		CM_F(50, 5, 3)
#define CM_REQ_MAX_CM_RETRIES		CM_F(51, 0, 4)
#define CM_REQ_SRQ			CM_F(51, 4, 1)
#define CM_REQ_PRIMARY_LOCAL_LID	CM_F(52, 0, 16)
#define CM_REQ_PRIMARY_REMOTE_LID	CM_F(54, 0, 16)
#define CM_REQ_PRIMARY_LOCAL_GID	(ROCE_MAD_HDR_BYTES + 56)	/* 16 bytes */
#define CM_REQ_PRIMARY_REMOTE_GID	(ROCE_MAD_HDR_BYTES + 72)	/* 16 bytes */
#define CM_REQ_PRIMARY_FLOW_LABEL	CM_F(88, 0, 20)
#define CM_REQ_PRIMARY_PACKET_RATE	CM_F(91, 2, 6)
#define CM_REQ_PRIMARY_TRAFFIC_CLASS	CM_F(92, 0, 8)
#define CM_REQ_PRIMARY_HOP_LIMIT	CM_F(93, 0, 8)
#define CM_REQ_PRIMARY_SL		CM_F(94, 0, 4)
#define CM_REQ_PRIMARY_SUBNET_LOCAL	CM_F(94, 4, 1)
#define CM_REQ_PRIMARY_ACK_TIMEOUT	CM_F(95, 0, 5)
#define CM_REQ_PRIVATE_DATA		(ROCE_MAD_HDR_BYTES + 140)
#define CM_REQ_PRIVATE_BYTES		92

/* MRA (table 107) */
#define CM_MRA_LOCAL_COMM_ID		CM_F(0, 0, 32)
#define CM_MRA_REMOTE_COMM_ID		CM_F(4, 0, 32)
#define CM_MRA_MESSAGE			CM_F(8, 0, 2)
#define CM_MRA_SERVICE_TIMEOUT		CM_F(9, 0, 5)
#define CM_MRA_PRIVATE_DATA		(ROCE_MAD_HDR_BYTES + 10)
#define CM_MRA_PRIVATE_BYTES		222

/* REJ (table 108) */
#define CM_REJ_LOCAL_COMM_ID		CM_F(0, 0, 32)
#define CM_REJ_REMOTE_COMM_ID		CM_F(4, 0, 32)
#define CM_REJ_MESSAGE			CM_F(8, 0, 2)
#define CM_REJ_INFO_LENGTH		CM_F(9, 0, 7)
#define CM_REJ_REASON			CM_F(10, 0, 16)
#define CM_REJ_ARI			(ROCE_MAD_HDR_BYTES + 12)
#define CM_REJ_ARI_BYTES		72
#define CM_REJ_PRIVATE_DATA		(ROCE_MAD_HDR_BYTES + 84)
#define CM_REJ_PRIVATE_BYTES		148

/* REP (table 110) */
#define CM_REP_LOCAL_COMM_ID		CM_F(0, 0, 32)
#define CM_REP_REMOTE_COMM_ID		CM_F(4, 0, 32)
#define CM_REP_LOCAL_QKEY		CM_F(8, 0, 32)
#define CM_REP_LOCAL_QPN		CM_F(12, 0, 24)
#define CM_REP_STARTING_PSN		CM_F(20, 0, 24)
#define CM_REP_RESPONDER_RESOURCES	CM_F(24, 0, 8)
#define CM_REP_INITIATOR_DEPTH		CM_F(25, 0, 8)
#define CM_REP_TARGET_ACK_DELAY		CM_F(26, 0, 5)
#define CM_REP_FAILOVER			CM_F(26, 5, 2)
#define CM_REP_FLOW_CONTROL		CM_F(26, 7, 1)
#define CM_REP_RNR_RETRY_COUNT		CM_F(27, 0, 3)
#define CM_REP_SRQ			CM_F(27, 3, 1)
#define CM_REP_LOCAL_CA_GUID		(ROCE_MAD_HDR_BYTES + 28)	/* 64 bits */
#define CM_REP_PRIVATE_DATA		(ROCE_MAD_HDR_BYTES + 36)
#define CM_REP_PRIVATE_BYTES		196

/* RTU (table 111), DREQ (112), DREP (113) */
#define CM_RTU_LOCAL_COMM_ID		CM_F(0, 0, 32)
#define CM_RTU_REMOTE_COMM_ID		CM_F(4, 0, 32)
#define CM_RTU_PRIVATE_DATA		(ROCE_MAD_HDR_BYTES + 8)
#define CM_RTU_PRIVATE_BYTES		224
#define CM_DREQ_LOCAL_COMM_ID		CM_F(0, 0, 32)
#define CM_DREQ_REMOTE_COMM_ID		CM_F(4, 0, 32)
#define CM_DREQ_REMOTE_QPN		CM_F(8, 0, 24)
#define CM_DREQ_PRIVATE_DATA		(ROCE_MAD_HDR_BYTES + 12)
#define CM_DREQ_PRIVATE_BYTES		220
#define CM_DREP_LOCAL_COMM_ID		CM_F(0, 0, 32)
#define CM_DREP_REMOTE_COMM_ID		CM_F(4, 0, 32)
#define CM_DREP_PRIVATE_DATA		(ROCE_MAD_HDR_BYTES + 8)
#define CM_DREP_PRIVATE_BYTES		224

/* SIDR REQ (table 119) and REP (table 120) */
#define CM_SIDR_REQ_REQUEST_ID		CM_F(0, 0, 32)
#define CM_SIDR_REQ_PKEY		CM_F(4, 0, 16)
#define CM_SIDR_REQ_SERVICE_ID		(ROCE_MAD_HDR_BYTES + 8)	/* 64 bits */
#define CM_SIDR_REQ_PRIVATE_DATA	(ROCE_MAD_HDR_BYTES + 16)
#define CM_SIDR_REQ_PRIVATE_BYTES	216
#define CM_SIDR_REP_REQUEST_ID		CM_F(0, 0, 32)
#define CM_SIDR_REP_STATUS		CM_F(4, 0, 8)
#define CM_SIDR_REP_INFO_LENGTH		CM_F(5, 0, 8)
#define CM_SIDR_REP_QPN			CM_F(8, 0, 24)
#define CM_SIDR_REP_SERVICE_ID		(ROCE_MAD_HDR_BYTES + 12)	/* 64 bits */
#define CM_SIDR_REP_QKEY		CM_F(20, 0, 32)
#define CM_SIDR_REP_PRIVATE_DATA	(ROCE_MAD_HDR_BYTES + 96)
#define CM_SIDR_REP_PRIVATE_BYTES	136

/** The RDMA CM's IP service IDs (IBA A11.2): prefix, port space, port. */
#define ROCE_CM_IP_SID_PREFIX		0x0000000001000000ull
#define ROCE_CM_IP_SID_MASK		0xffffffffff000000ull
#define ROCE_CM_PS_TCP			0x06
#define ROCE_CM_PS_UDP			0x11
#define ROCE_CM_PS_IB			0x3f

/** The RDMA CM's IP private-data header of a REQ or SIDR REQ (A11.6). */
struct roce_cm_ip_hdr {
	uint8_t version;	/**< 0 */
	uint8_t ip_version;	/**< IP version (4 or 6) in bits 7:4 */
	rte_be16_t src_port;
	uint8_t src_addr[16];	/**< IPv4 in the last 4 bytes */
	uint8_t dst_addr[16];
} __rte_packed;
_Static_assert(sizeof(struct roce_cm_ip_hdr) == 36, "CM IP header is 36 bytes");

/** A field's value, host order. */
static inline uint32_t
mad_get(const uint8_t *mad, struct roce_mad_field f)
{
	const unsigned int n = (f.bit + f.width + 7) / 8;
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | mad[f.byte + i];
	v >>= n * 8 - f.bit - f.width;
	return (uint32_t)(v & ((UINT64_C(1) << f.width) - 1));
}

/** Write a field (only its bits; the value is cut to its width). */
static inline void
mad_put(uint8_t *mad, struct roce_mad_field f, uint32_t val)
{
	const unsigned int n = (f.bit + f.width + 7) / 8;
	const unsigned int shift = n * 8 - f.bit - f.width;
	const uint64_t mask = ((UINT64_C(1) << f.width) - 1) << shift;
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | mad[f.byte + i];
	v = (v & ~mask) | (((uint64_t)val << shift) & mask);
	for (unsigned int i = n; i-- > 0; v >>= 8)
		mad[f.byte + i] = (uint8_t)v;
}

/** A 64-bit field at byte off. */
static inline uint64_t
mad_get64(const uint8_t *mad, unsigned int off)
{
	rte_be64_t v;

	memcpy(&v, mad + off, sizeof(v));
	return rte_be_to_cpu_64(v);
}

static inline void
mad_put64(uint8_t *mad, unsigned int off, uint64_t val)
{
	rte_be64_t v = rte_cpu_to_be_64(val);

	memcpy(mad + off, &v, sizeof(v));
}

/** The header's attribute ID and TID, host order. */
static inline uint16_t
mad_attr(const uint8_t *mad)
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

static inline uint64_t
mad_tid(const uint8_t *mad)
{
	return mad_get64(mad, 8);
}

/** A CM MAD's header: Send, the attribute and transaction given. */
static inline void
mad_cm_hdr(uint8_t *mad, uint16_t attr, uint64_t tid)
{
	struct roce_mad_hdr *h = (struct roce_mad_hdr *)mad;

	memset(h, 0, sizeof(*h));
	h->base_version = ROCE_MAD_BASE_VERSION;
	h->mgmt_class = ROCE_MAD_CLASS_CM;
	h->class_version = ROCE_MAD_CM_CLASS_VERSION;
	h->method = ROCE_MAD_METHOD_SEND;
	h->tid = rte_cpu_to_be_64(tid);
	h->attr_id = rte_cpu_to_be_16(attr);
}

#endif /* ROCE_MAD_H */
