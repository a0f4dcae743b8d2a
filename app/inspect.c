/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mwpath-inspect FILE.pcap...: one JSON object per frame, with the RoCEv2
 * fields libmwpath parses and an ICRC verdict ("ok", "bad", or "n/a" where
 * there is no BTH).  tshark decodes RoCE but cannot check an ICRC.
 *
 * Needs no EAL: each frame is wrapped in an rte_mbuf header on the stack.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#include "mwpath.h"

static void
usage(FILE *out)
{
	fprintf(out,
"Usage: mwpath-inspect [-h] FILE.pcap...\n"
"Print one JSON object per frame: frame number, whether it is RoCEv2 and\n"
"why not, opcode, QPN, PSN, BTH flags, extension header fields, payload\n"
"length, pad, and \"icrc\": \"ok\" | \"bad\" | \"n/a\".\n");
}

static void
print_ehs(const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const struct roce_reth *reth = mwp_pkt_eh(m, p, ROCE_EH_RETH);
	const struct roce_aeth *aeth = mwp_pkt_eh(m, p, ROCE_EH_AETH);
	const struct roce_atmeth *atm = mwp_pkt_eh(m, p, ROCE_EH_ATMETH);
	const struct roce_atmack *ack = mwp_pkt_eh(m, p, ROCE_EH_ATMACK);
	const struct roce_immdt *imm = mwp_pkt_eh(m, p, ROCE_EH_IMMDT);
	const struct roce_ieth *ieth = mwp_pkt_eh(m, p, ROCE_EH_IETH);
	const struct roce_deth *deth = mwp_pkt_eh(m, p, ROCE_EH_DETH);

	if (reth != NULL)
		printf(", \"reth\": {\"va\": %" PRIu64 ", \"rkey\": %" PRIu32
		       ", \"dmalen\": %" PRIu32 "}",
		       reth_va(reth), reth_rkey(reth), reth_dmalen(reth));
	if (aeth != NULL)
		printf(", \"aeth\": {\"syndrome\": %u, \"msn\": %" PRIu32 "}",
		       aeth_syndrome(aeth), aeth_msn(aeth));
	if (atm != NULL)
		printf(", \"atomiceth\": {\"va\": %" PRIu64 ", \"rkey\": %" PRIu32
		       ", \"swap_add\": %" PRIu64 ", \"compare\": %" PRIu64 "}",
		       atmeth_va(atm), atmeth_rkey(atm), atmeth_swap_add(atm),
		       atmeth_compare(atm));
	if (ack != NULL)
		printf(", \"atomicacketh\": {\"orig\": %" PRIu64 "}", atmack_orig(ack));
	if (imm != NULL)
		printf(", \"immdt\": %" PRIu32, immdt_imm(imm));
	if (ieth != NULL)
		printf(", \"ieth\": {\"rkey\": %" PRIu32 "}", ieth_rkey(ieth));
	if (deth != NULL)
		printf(", \"deth\": {\"qkey\": %" PRIu32 ", \"sqpn\": %" PRIu32 "}",
		       deth_qkey(deth), deth_sqpn(deth));
}

/*
 * A frame cut short (by the capture or in flight) fails with ip_bad_len.
 * To still show what it holds, parse a copy whose IP and UDP lengths are
 * fitted to the bytes present.  Its ICRC is missing, so it is "bad": a
 * receiver must drop it.  Returns true if the copy parsed as far as a BTH.
 */
static bool
parse_truncated(const struct rte_mbuf *orig, const struct mwp_pkt *p0,
		uint8_t *copy, struct rte_mbuf *m, struct mwp_pkt *p,
		enum mwp_drop *why)
{
	uint32_t len = orig->data_len, l4, ulen;
	uint8_t *ip;

	if (len <= (uint32_t)p0->l3_off + 48)	/* IPv4/IPv6 + UDP at least */
		return false;
	memcpy(copy, rte_pktmbuf_mtod(orig, const void *), len);
	ip = copy + p0->l3_off;
	if ((ip[0] >> 4) == 4 && (ip[0] & 0xf) == 5) {
		uint16_t tot = rte_cpu_to_be_16((uint16_t)(len - p0->l3_off));

		memcpy(ip + 2, &tot, 2);
		l4 = p0->l3_off + 20;
	} else if ((ip[0] >> 4) == 6) {
		uint16_t pl = rte_cpu_to_be_16((uint16_t)(len - p0->l3_off - 40));

		memcpy(ip + 4, &pl, 2);
		l4 = p0->l3_off + 40;
	} else {
		return false;
	}
	ulen = rte_cpu_to_be_16((uint16_t)(len - l4));
	memcpy(copy + l4 + 4, &ulen, 2);
	mwp_mbuf_wrap(m, copy, (uint16_t)len, (uint16_t)len);
	*why = mwp_parse(m, p);
	return (p->flags & MWP_PKT_BTH) != 0;
}

static void
print_frame(uint64_t no, const uint8_t *data, uint32_t caplen, uint32_t len)
{
	static uint8_t copy[UINT16_MAX];
	struct rte_mbuf m, mt;
	struct mwp_pkt p, pt;
	enum mwp_drop why, why_t;
	const struct roce_bth *bth;
	bool truncated = false;

	/* a frame longer than an mbuf can describe is cut to 64 KiB - 1 */
	if (caplen > UINT16_MAX)
		caplen = UINT16_MAX;
	mwp_mbuf_wrap(&m, (void *)(uintptr_t)data, (uint16_t)caplen, (uint16_t)caplen);
	why = mwp_parse(&m, &p);
	if (why == MWP_DROP_IP_BAD_LEN &&
	    parse_truncated(&m, &p, copy, &mt, &pt, &why_t)) {
		truncated = true;
		m = mt;
		p = pt;
		why = why_t != MWP_DROP_NONE ? why_t : MWP_DROP_IP_BAD_LEN;
	}
	printf("{\"frame\": %" PRIu64 ", \"len\": %u", no, len);
	if (caplen != len)
		printf(", \"caplen\": %u", caplen);
	printf(", \"roce\": %s", (p.flags & MWP_PKT_BTH) ? "true" : "false");
	if (truncated)
		printf(", \"truncated\": true");
	if (why != MWP_DROP_NONE)
		printf(", \"error\": \"%s\"", mwp_drop_name(why));
	if (!(p.flags & MWP_PKT_BTH)) {
		printf(", \"icrc\": \"n/a\"}\n");
		return;
	}
	bth = mwp_pkt_bth(&m, &p);
	printf(", \"ip\": %d", (p.flags & MWP_PKT_IPV6) ? 6 : 4);
	if (p.flags & MWP_PKT_VLAN)
		printf(", \"vlan\": %u", p.vlan_tci & 0xfff);
	printf(", \"ecn\": %u, \"opcode\": %u", p.tos & 3, p.opcode);
	if (roce_opcode[p.opcode].name != NULL)
		printf(", \"opcode_name\": \"%s\"", roce_opcode[p.opcode].name);
	printf(", \"qpn\": %" PRIu32 ", \"psn\": %" PRIu32 ", \"ackreq\": %s"
	       ", \"se\": %s, \"fecn\": %s, \"becn\": %s, \"pkey\": %u",
	       p.qpn, p.psn, bth_ackreq(bth) ? "true" : "false",
	       bth_se(bth) ? "true" : "false", bth_fecn(bth) ? "true" : "false",
	       bth_becn(bth) ? "true" : "false", bth_pkey(bth));
	if (why == MWP_DROP_NONE || truncated) {
		print_ehs(&m, &p);
		printf(", \"payload_len\": %u, \"pad\": %u", p.payload_len, p.pad);
	}
	printf(", \"icrc\": \"%s\"}\n",
	       !truncated && mwp_icrc_ok(&m, &p) ? "ok" : "bad");
}

int
main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	int status = 0;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		struct pcap_pkthdr *h;
		const u_char *data;
		uint64_t no = 0;
		pcap_t *pc = pcap_open_offline(argv[a], err);
		int r;

		if (pc == NULL) {
			fprintf(stderr, "mwpath-inspect: %s\n", err);
			status = 1;
			continue;
		}
		if (pcap_datalink(pc) != DLT_EN10MB) {
			fprintf(stderr, "mwpath-inspect: %s: not an Ethernet capture (link type %d)\n",
				argv[a], pcap_datalink(pc));
			pcap_close(pc);
			status = 1;
			continue;
		}
		while ((r = pcap_next_ex(pc, &h, &data)) == 1)
			print_frame(++no, data, h->caplen, h->len);
		if (r == PCAP_ERROR) {
			fprintf(stderr, "mwpath-inspect: %s: %s\n", argv[a], pcap_geterr(pc));
			status = 1;
		}
		pcap_close(pc);
	}
	return status;
}
