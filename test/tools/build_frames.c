/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * build_frames OUT.pcap: write one frame per opcode of the table (IPv4 and
 * IPv6, with and without VLAN), plus the responder helpers (ACK, NAKs,
 * RNR NAK, READ responses, ATOMIC ACK), using libmwpath's builders; print
 * on stdout one JSON line per frame with what was asked for, so that
 * test/py/test_builders.py can hold tshark's and scapy's view against it.
 * Needs no EAL.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#include "mwpath.h"

static uint8_t buf[10000];
static pcap_dumper_t *dump;
static unsigned int frame_no;

static struct rte_mbuf *
fresh(struct rte_mbuf *m)
{
	return mwp_mbuf_wrap(m, buf, sizeof(buf), 0);
}

static void
emit(const struct rte_mbuf *m, const struct mwp_flow *f, const struct mwp_hdrs *h,
     uint32_t len)
{
	struct pcap_pkthdr ph = { .caplen = m->data_len, .len = m->data_len };

	ph.ts.tv_sec = 1700000000;
	ph.ts.tv_usec = frame_no;
	pcap_dump((u_char *)dump, &ph, buf);
	printf("{\"frame\": %u, \"ip\": %d, \"vlan\": %s, \"udp6_csum\": %s, \"opcode\": %u, "
	       "\"qpn\": %u, \"psn\": %u, \"ackreq\": %s, \"fecn\": %s, "
	       "\"reth\": [%" PRIu64 ", %u, %u], \"aeth\": [%u, %u], "
	       "\"atomiceth\": [%" PRIu64 ", %u, %" PRIu64 ", %" PRIu64 "], "
	       "\"orig\": %" PRIu64 ", \"imm\": %u, \"ieth\": %u, "
	       "\"deth\": [%u, %u], \"payload_len\": %u}\n",
	       ++frame_no, f->ipv6 ? 6 : 4, f->vlan ? "true" : "false",
	       f->udp6_csum ? "true" : "false",
	       h->opcode, h->dqpn, h->psn, h->ackreq ? "true" : "false",
	       h->fecn ? "true" : "false", h->reth.va, h->reth.rkey,
	       h->reth.dmalen, h->aeth.syndrome, h->aeth.msn, h->atmeth.va,
	       h->atmeth.rkey, h->atmeth.swap_add, h->atmeth.compare,
	       h->atmack_orig, rte_be_to_cpu_32(h->imm), h->ieth_rkey,
	       h->deth.qkey, h->deth.sqpn, len);
}

int
main(int argc, char **argv)
{
	static const uint8_t ops[] = {
#define _(code, name, mask) code,
		ROCE_FOREACH_OPCODE(_)
#undef _
	};
	static uint8_t payload[4096];
	struct mwp_flow f = { .sport = 50000, .tos = 0x02, .flow_label = 0x12345 };
	struct rte_mbuf m;
	pcap_t *pd;

	if (argc != 2) {
		fprintf(stderr, "usage: build_frames OUT.pcap\n");
		return 2;
	}
	pd = pcap_open_dead(DLT_EN10MB, 65535);
	dump = pcap_dump_open(pd, argv[1]);
	if (dump == NULL) {
		fprintf(stderr, "build_frames: %s\n", pcap_geterr(pd));
		return 1;
	}
	for (unsigned int i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	rte_ether_unformat_addr("02:00:00:00:00:01", &f.smac);
	rte_ether_unformat_addr("02:00:00:00:00:02", &f.dmac);
	inet_pton(AF_INET, "192.0.2.1", &f.sip4);
	inet_pton(AF_INET, "192.0.2.2", &f.dip4);
	inet_pton(AF_INET6, "2001:db8::1", f.sip6);
	inet_pton(AF_INET6, "2001:db8::2", f.dip6);

	for (int variant = 0; variant < 4; variant++) {
		f.ipv6 = variant & 1;
		f.vlan = variant & 2;
		f.vlan_tci = 100;
		f.udp6_csum = variant == 3;	/* IPv6 + VLAN: computed */
		for (size_t i = 0; i < sizeof(ops); i++) {
			uint32_t len = roce_opcode[ops[i]].mask & ROCE_M_PAYLOAD ?
				       (uint32_t)(i * 37 % 1025) : 0;
			struct mwp_hdrs h = {
				.opcode = ops[i], .dqpn = 0x10000 + (uint32_t)i,
				.psn = (0xfffff0 + (uint32_t)i) & 0xffffff, .ackreq = i & 1,
				.fecn = i % 3 == 0,
				.reth = { 0xffff800012345678ull + i, 0x4200 + (uint32_t)i, len },
				.aeth = { (uint8_t)(i & 0x1f), 0x100 + (uint32_t)i },
				.atmeth = { 0x7000 + 8 * i, 0x99, 1 + i, 0xdeadbeefcafe },
				.atmack_orig = 0x0102030405060708ull,
				.imm = rte_cpu_to_be_32(0xa5a50000 + (uint32_t)i),
				.ieth_rkey = 0x1234500 + (uint32_t)i,
				.deth = { 0x11111111, 0x22 },
			};

			if (mwp_build(fresh(&m), &f, &h, payload, len, NULL) != 0) {
				fprintf(stderr, "build_frames: opcode 0x%02x failed\n", ops[i]);
				return 1;
			}
			emit(&m, &f, &h, len);
		}
	}

	/* Responder helpers, IPv4 and IPv6. */
	for (int v6 = 0; v6 < 2; v6++) {
		static const uint8_t syn[] = { ROCE_AETH_ACK | 0x1f, ROCE_AETH_RNR_NAK | 0x0e,
			ROCE_AETH_NAK_PSN_SEQ, ROCE_AETH_NAK_INV_REQ,
			ROCE_AETH_NAK_REM_ACC, ROCE_AETH_NAK_REM_OP };
		static const uint8_t rr[] = { ROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
			ROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
			ROCE_OP_RC_RDMA_READ_RESPONSE_LAST,
			ROCE_OP_RC_RDMA_READ_RESPONSE_ONLY };

		f.ipv6 = v6;
		f.vlan = false;
		f.udp6_csum = false;
		for (size_t i = 0; i < sizeof(syn); i++) {
			struct mwp_hdrs h = { .opcode = ROCE_OP_RC_ACKNOWLEDGE,
				.dqpn = 0x33, .psn = 100 + (uint32_t)i,
				.aeth = { syn[i], 7 } };

			if (mwp_build_ack(fresh(&m), &f, 0x33, h.psn, syn[i], 7) != 0)
				return 1;
			emit(&m, &f, &h, 0);
		}
		for (size_t i = 0; i < sizeof(rr); i++) {
			uint32_t len = i == 2 ? 1000 : 1024;
			struct mwp_hdrs h = { .opcode = rr[i], .dqpn = 0x33,
				.psn = 200 + (uint32_t)i, .aeth = { 0x1f, 9 } };

			if (mwp_build_read_resp(fresh(&m), &f, rr[i], 0x33, h.psn,
						0x1f, 9, payload, len) != 0)
				return 1;
			emit(&m, &f, &h, len);
		}
		{
			struct mwp_hdrs h = { .opcode = ROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
				.dqpn = 0x33, .psn = 300, .aeth = { 0x1f, 10 },
				.atmack_orig = 0xfedcba9876543210ull };

			if (mwp_build_atomic_ack(fresh(&m), &f, 0x33, 300, 10,
						 h.atmack_orig) != 0)
				return 1;
			emit(&m, &f, &h, 0);
		}
	}
	pcap_dump_close(dump);
	pcap_close(pd);
	return 0;
}
