/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_HEX_H
#define MWP_APP_HEX_H

/*
 * The one style of the numbers a person reads, the same in the summary,
 * objects.json, completions.json, telemetry and mwpath-inspect: keys,
 * QPNs, PSNs, addresses and syndromes in hex, each kind with its own
 * width.  Counts, lengths and wr_ids are decimal.
 */

#include <stddef.h>
#include <stdint.h>

/** What a number is, which says how wide its hex is. */
enum app_hex_kind {
	APP_HEX_KEY,		/**< an L_Key or R_Key (also imm_data): "0x00000100" */
	APP_HEX_QPN,		/**< a QPN: "0x11" */
	APP_HEX_PSN,		/**< a 24-bit PSN: "0x000006" */
	APP_HEX_ADDR,		/**< an address, or a 64-bit operand: "0x10000" */
	APP_HEX_SYNDROME,	/**< an AETH syndrome: "0x62" */
	APP_HEX_PKEY,		/**< a P_Key: "0xffff" */
};

/** Room for any of them and its NUL ("0x" and 16 digits). */
#define APP_HEX_LEN 19

/**
 * Write v as its kind says into buf (APP_HEX_LEN bytes).
 *
 * @return
 *   buf.
 */
char *app_hex(char buf[APP_HEX_LEN], enum app_hex_kind kind, uint64_t v);

#endif
