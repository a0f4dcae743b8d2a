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

#include <jansson.h>
#include <pcap/pcap.h>

#include "hex.h"
#include "mwpath.h"

static void
usage(FILE *out)
{
	fprintf(out,
"Usage: mwpath-inspect [-h] FILE.pcap...\n"
"Print one JSON object per frame: frame number, whether it is RoCEv2 and\n"
"why not, opcode, QPN, PSN, BTH flags, extension header fields, payload\n"
"length, pad, and \"icrc\": \"ok\" | \"bad\" | \"n/a\".  Keys, QPNs, PSNs,\n"
"addresses and syndromes are hex strings (\"qpn\": \"0x11\", \"psn\": \"0x000006\").\n");
}

/*
 * Keys, QPNs, PSNs, addresses and syndromes are hex strings, as mwpath's
 * summary, objects.json and telemetry write them; so are the 64-bit
 * operands of atomics (a JSON integer of jansson's stops at 2^63 - 1).
 * Lengths, counts and the opcode are integers.
 */
static json_t *
jhex(enum app_hex_kind kind, uint64_t v)
{
	char s[APP_HEX_LEN];

	return json_string(app_hex(s, kind, v));
}

#define KEY(v) jhex(APP_HEX_KEY, (v))
#define QPN(v) jhex(APP_HEX_QPN, (v))
#define PSN(v) jhex(APP_HEX_PSN, (v))
#define HEX(v) jhex(APP_HEX_ADDR, (v))		/* an address, an operand */

static void
add_ehs(json_t *o, const struct rte_mbuf *m, const struct mwp_pkt *p)
{
	const struct roce_reth *reth = mwp_pkt_eh(m, p, ROCE_EH_RETH);
	const struct roce_aeth *aeth = mwp_pkt_eh(m, p, ROCE_EH_AETH);
	const struct roce_atmeth *atm = mwp_pkt_eh(m, p, ROCE_EH_ATMETH);
	const struct roce_atmack *ack = mwp_pkt_eh(m, p, ROCE_EH_ATMACK);
	const struct roce_immdt *imm = mwp_pkt_eh(m, p, ROCE_EH_IMMDT);
	const struct roce_ieth *ieth = mwp_pkt_eh(m, p, ROCE_EH_IETH);
	const struct roce_deth *deth = mwp_pkt_eh(m, p, ROCE_EH_DETH);

	if (reth != NULL)
		json_object_set_new(o, "reth", json_pack("{s:o, s:o, s:I}",
			"va", HEX(reth_va(reth)), "rkey", KEY(reth_rkey(reth)),
			"dmalen", (json_int_t)reth_dmalen(reth)));
	if (aeth != NULL)
		json_object_set_new(o, "aeth", json_pack("{s:o, s:I}",
			"syndrome", jhex(APP_HEX_SYNDROME, aeth_syndrome(aeth)),
			"msn", (json_int_t)aeth_msn(aeth)));
	if (atm != NULL)
		json_object_set_new(o, "atomiceth", json_pack("{s:o, s:o, s:o, s:o}",
			"va", HEX(atmeth_va(atm)), "rkey", KEY(atmeth_rkey(atm)),
			"swap_add", HEX(atmeth_swap_add(atm)),
			"compare", HEX(atmeth_compare(atm))));
	if (ack != NULL)
		json_object_set_new(o, "atomicacketh", json_pack("{s:o}",
			"orig", HEX(atmack_orig(ack))));
	if (imm != NULL)
		json_object_set_new(o, "immdt", KEY(immdt_imm(imm)));
	if (ieth != NULL)
		json_object_set_new(o, "ieth", json_pack("{s:o}", "rkey", KEY(ieth_rkey(ieth))));
	if (deth != NULL)
		json_object_set_new(o, "deth", json_pack("{s:o, s:o}",
			"qkey", KEY(deth_qkey(deth)), "sqpn", QPN(deth_sqpn(deth))));
	/* an ATOMIC WRITE's 8-byte value (IBA 1.5), read in wire order like
	 * the atomics' operands; the responder stores the bytes as they are */
	if (p->opcode == ROCE_OP_RC_ATOMIC_WRITE && p->payload_len == ROCE_ATOMIC_WRITE_BYTES &&
	    p->payload_off + ROCE_ATOMIC_WRITE_BYTES <= m->data_len) {
		uint64_t v;

		memcpy(&v, rte_pktmbuf_mtod_offset(m, const uint8_t *, p->payload_off), sizeof(v));
		json_object_set_new(o, "atomic_write", json_pack("{s:o}",
			"value", HEX(ROCE_BE64(v))));
	}
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

/* One frame's object; NULL when jansson has no memory. */
static json_t *
frame_json(uint64_t no, const uint8_t *data, uint32_t caplen, uint32_t len)
{
	static uint8_t copy[UINT16_MAX];
	struct rte_mbuf m, mt;
	struct mwp_pkt p, pt;
	enum mwp_drop why, why_t;
	const struct roce_bth *bth;
	bool truncated = false;
	json_t *o = json_object();

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
	json_object_set_new(o, "frame", json_integer((json_int_t)no));
	json_object_set_new(o, "len", json_integer(len));
	if (caplen != len)
		json_object_set_new(o, "caplen", json_integer(caplen));
	json_object_set_new(o, "roce", json_boolean(p.flags & MWP_PKT_BTH));
	if (truncated)
		json_object_set_new(o, "truncated", json_true());
	if (why != MWP_DROP_NONE)
		json_object_set_new(o, "error", json_string(mwp_drop_name(why)));
	if (!(p.flags & MWP_PKT_BTH)) {
		json_object_set_new(o, "icrc", json_string("n/a"));
		return o;
	}
	bth = mwp_pkt_bth(&m, &p);
	json_object_set_new(o, "ip", json_integer((p.flags & MWP_PKT_IPV6) ? 6 : 4));
	if (p.flags & MWP_PKT_VLAN)
		json_object_set_new(o, "vlan", json_integer(p.vlan_tci & 0xfff));
	json_object_set_new(o, "ecn", json_integer(p.tos & 3));
	json_object_set_new(o, "opcode", json_integer(p.opcode));
	if (roce_opcode[p.opcode].name != NULL)
		json_object_set_new(o, "opcode_name", json_string(roce_opcode[p.opcode].name));
	json_object_set_new(o, "qpn", QPN(p.qpn));
	json_object_set_new(o, "psn", PSN(p.psn));
	json_object_set_new(o, "ackreq", json_boolean(bth_ackreq(bth)));
	json_object_set_new(o, "se", json_boolean(bth_se(bth)));
	json_object_set_new(o, "fecn", json_boolean(bth_fecn(bth)));
	json_object_set_new(o, "becn", json_boolean(bth_becn(bth)));
	json_object_set_new(o, "pkey", jhex(APP_HEX_PKEY, bth_pkey(bth)));
	if (why == MWP_DROP_NONE || truncated) {
		add_ehs(o, &m, &p);
		json_object_set_new(o, "payload_len", json_integer(p.payload_len));
		json_object_set_new(o, "pad", json_integer(p.pad));
	}
	json_object_set_new(o, "icrc",
			    json_string(!truncated && mwp_icrc_ok(&m, &p) ? "ok" : "bad"));
	return o;
}

/* One line: the frame's object, as {"frame": 1, "len": 60, ...}. */
static int
print_frame(uint64_t no, const uint8_t *data, uint32_t caplen, uint32_t len)
{
	json_t *o = frame_json(no, data, caplen, len);
	int ret = o != NULL ? json_dumpf(o, stdout, JSON_PRESERVE_ORDER) : -1;

	json_decref(o);
	if (ret != 0) {
		fprintf(stderr, "mwpath-inspect: frame %" PRIu64 ": cannot write it\n", no);
		return -1;
	}
	putchar('\n');
	return 0;
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
			if (print_frame(++no, data, h->caplen, h->len) != 0)
				status = 1;
		if (r == PCAP_ERROR) {
			fprintf(stderr, "mwpath-inspect: %s: %s\n", argv[a], pcap_geterr(pc));
			status = 1;
		}
		pcap_close(pc);
	}
	return status;
}
