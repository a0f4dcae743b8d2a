/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table against IBA Table 37 and rocev2-wire.md: every opcode
 * the spec lists is present with the right headers, offsets and lengths.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "mwpath.h"

struct want {
	uint8_t code;
	const char *name;
	uint8_t hdr_len;	/* BTH + extension headers */
	bool payload;
};

/* Lengths from the IBA header sizes: BTH 12, RETH 16, AETH 4, AtomicETH 28,
 * AtomicAckETH 8, ImmDt 4, IETH 4, DETH 8; CNP 16 reserved bytes. */
static const struct want want[] = {
	{ 0x00, "RC_SEND_FIRST", 12, true },
	{ 0x01, "RC_SEND_MIDDLE", 12, true },
	{ 0x02, "RC_SEND_LAST", 12, true },
	{ 0x03, "RC_SEND_LAST_WITH_IMMEDIATE", 16, true },
	{ 0x04, "RC_SEND_ONLY", 12, true },
	{ 0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", 16, true },
	{ 0x06, "RC_RDMA_WRITE_FIRST", 28, true },
	{ 0x07, "RC_RDMA_WRITE_MIDDLE", 12, true },
	{ 0x08, "RC_RDMA_WRITE_LAST", 12, true },
	{ 0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", 16, true },
	{ 0x0a, "RC_RDMA_WRITE_ONLY", 28, true },
	{ 0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", 32, true },
	{ 0x0c, "RC_RDMA_READ_REQUEST", 28, false },
	{ 0x0d, "RC_RDMA_READ_RESPONSE_FIRST", 16, true },
	{ 0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", 12, true },
	{ 0x0f, "RC_RDMA_READ_RESPONSE_LAST", 16, true },
	{ 0x10, "RC_RDMA_READ_RESPONSE_ONLY", 16, true },
	{ 0x11, "RC_ACKNOWLEDGE", 16, false },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", 24, false },
	{ 0x13, "RC_COMPARE_SWAP", 40, false },
	{ 0x14, "RC_FETCH_ADD", 40, false },
	{ 0x16, "RC_SEND_LAST_WITH_INVALIDATE", 16, true },
	{ 0x17, "RC_SEND_ONLY_WITH_INVALIDATE", 16, true },
	{ 0x1d, "RC_ATOMIC_WRITE", 28, true },	/* IBA 1.5: RETH + 8 bytes */
	{ 0x20, "UC_SEND_FIRST", 12, true },
	{ 0x23, "UC_SEND_LAST_WITH_IMMEDIATE", 16, true },
	{ 0x26, "UC_RDMA_WRITE_FIRST", 28, true },
	{ 0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", 16, true },
	{ 0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", 32, true },
	{ 0x64, "UD_SEND_ONLY", 20, true },
	{ 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", 24, true },
	{ 0x81, "CNP", 28, false },
};

Test(opcode, every_spec_opcode_has_its_name_length_and_payload_flag)
{
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct roce_opcode_info *op = &roce_opcode[want[i].code];

		cr_assert_not_null(op->name, "opcode 0x%02x missing", want[i].code);
		cr_expect_str_eq(op->name, want[i].name);
		cr_expect_eq(op->hdr_len, want[i].hdr_len, "%s: %u != %u",
			     op->name, op->hdr_len, want[i].hdr_len);
		cr_expect_eq(!!(op->mask & ROCE_M_PAYLOAD), want[i].payload,
			     "%s payload flag", op->name);
	}
}

Test(opcode, headers_follow_iba_order_and_offsets_add_up)
{
	for (unsigned int c = 0; c < 256; c++) {
		const struct roce_opcode_info *op = &roce_opcode[c];
		unsigned int end = sizeof(struct roce_bth);

		if (op->mask == 0)
			continue;
		for (unsigned int eh = 0; eh < ROCE_EH__MAX; eh++) {
			if (!(op->mask & (1u << eh)))
				continue;
			cr_expect_eq(op->off[eh], end, "%s %s at %u, want %u",
				     op->name, roce_eh_name(eh), op->off[eh], end);
			end += roce_eh_len[eh];
		}
		cr_expect_eq(op->hdr_len, end, "%s length", op->name);
	}
}

Test(opcode, every_opcode_is_exactly_one_of_start_middle_end_positions)
{
	for (unsigned int c = 0; c < 256; c++) {
		uint32_t m = roce_opcode[c].mask;

		if (m == 0)
			continue;
		/* ONLY = START|END; MIDDLE alone; never MIDDLE with another */
		cr_expect(m & (ROCE_M_START | ROCE_M_MIDDLE | ROCE_M_END),
			  "%s has no position", roce_opcode[c].name);
		if (m & ROCE_M_MIDDLE)
			cr_expect(!(m & (ROCE_M_START | ROCE_M_END)),
				  "%s", roce_opcode[c].name);
		cr_expect(!!(m & ROCE_M_REQ) + !!(m & ROCE_M_RESP) <= 1,
			  "%s", roce_opcode[c].name);
	}
}

Test(opcode, uc_mirrors_rc_for_send_and_write)
{
	for (unsigned int c = 0x00; c <= 0x0b; c++) {
		const struct roce_opcode_info *rc = &roce_opcode[c];
		const struct roce_opcode_info *uc = &roce_opcode[c | 0x20];

		cr_assert_not_null(uc->name);
		cr_expect_eq(rc->mask, uc->mask, "%s vs %s", rc->name, uc->name);
		cr_expect_str_eq(rc->name + 2, uc->name + 2);
		cr_expect_eq(roce_opcode_transport(c | 0x20), ROCE_TRANSPORT_UC);
	}
}

Test(opcode, atomic_write_is_an_rc_atomic_request_with_a_reth_and_payload)
{
	const struct roce_opcode_info *op = &roce_opcode[ROCE_OP_RC_ATOMIC_WRITE];

	cr_expect_eq(ROCE_OP_RC_ATOMIC_WRITE, 0x1d);
	cr_expect_eq(op->mask & (ROCE_M_REQ | ROCE_M_CONN | ROCE_M_ATOMIC |
				 ROCE_M_ATOMIC_WRITE | ROCE_M_RETH | ROCE_M_PAYLOAD |
				 ROCE_M_ONLY),
		     ROCE_M_REQ | ROCE_M_CONN | ROCE_M_ATOMIC | ROCE_M_ATOMIC_WRITE |
		     ROCE_M_RETH | ROCE_M_PAYLOAD | ROCE_M_ONLY);
	/* neither a WRITE (no message, no WRITE path) nor an AtomicETH */
	cr_expect_eq(op->mask & (ROCE_M_WRITE | ROCE_M_ATMETH | ROCE_M_AETH), 0);
	cr_expect_eq(op->off[ROCE_EH_RETH], 12);
	cr_expect_eq(roce_opcode_transport(ROCE_OP_RC_ATOMIC_WRITE), ROCE_TRANSPORT_RC);
	/* only this opcode carries the bit */
	for (unsigned int c = 0; c < 256; c++)
		if (c != ROCE_OP_RC_ATOMIC_WRITE)
			cr_expect_eq(roce_opcode[c].mask & ROCE_M_ATOMIC_WRITE, 0, "0x%02x", c);
}

Test(opcode, unknown_opcodes_have_no_entry)
{
	/* 0x1c: FLUSH (IBA 1.5), not implemented; 0x3d: UC has no ATOMIC
	 * WRITE */
	const uint8_t unknown[] = { 0x15, 0x18, 0x1c, 0x2c, 0x3d, 0x40, 0x60, 0x66,
				    0x80, 0xa0, 0xc0, 0xff };

	for (size_t i = 0; i < sizeof(unknown); i++) {
		cr_expect_eq(roce_opcode[unknown[i]].mask, 0, "0x%02x", unknown[i]);
		cr_expect_null(roce_opcode[unknown[i]].name);
	}
}

Test(drop, every_reason_has_a_distinct_name_and_text)
{
	for (unsigned int i = 0; i < MWP_DROP__MAX; i++) {
		cr_assert_not_null(mwp_drop_text(i));
		cr_expect_neq(strlen(mwp_drop_name(i)), 0);
		for (unsigned int j = 0; j < i; j++)
			cr_expect_str_neq(mwp_drop_name(i), mwp_drop_name(j));
	}
	cr_expect_str_eq(mwp_drop_name(MWP_DROP_BAD_ICRC), "bad_icrc");
	cr_expect_str_eq(mwp_drop_name(MWP_DROP__MAX), "invalid");
}
