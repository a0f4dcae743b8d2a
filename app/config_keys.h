/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_APP_CONFIG_KEYS_H
#define MWP_APP_CONFIG_KEYS_H

/*
 * The keys of a configuration section as a table: each key's name, how its
 * value is read and where it goes.  One function applies a key to the
 * section's struct and reports an error as every error is reported (file,
 * line, section, key); an unknown key lists the table's names.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum app_key_type {
	APP_KEY_UINT,		/* a number from min to max (0x.. allowed) */
	APP_KEY_DEC,		/* the same, decimal digits only */
	APP_KEY_IPV4,		/* an IPv4 address, 4 bytes in network order */
	APP_KEY_IPV4_MAPPED,	/* an IPv4 address as 16 bytes ::ffff:a.b.c.d */
	APP_KEY_IPV6,		/* an IPv6 address, 16 bytes */
	APP_KEY_MAC,		/* a unicast MAC address (struct rte_ether_addr) */
	APP_KEY_ACCESS,		/* a list of access flags by their names
				 * (app_access_names), into an unsigned integer */
	APP_KEY_FN,		/* its own reader */
};

/* A reader: 0, or -1 with a message (without the key) in err. */
typedef int (*app_key_fn)(const char *v, void *obj, char *err, size_t errlen);

/* In a reader: fail with a message (printf-style) in err. */
#define APP_KEY_FAIL(...) do {						\
		snprintf(err, errlen, __VA_ARGS__);			\
		return -1;						\
	} while (0)

struct app_key {
	const char *name;
	enum app_key_type type;
	size_t off;		/* UINT/DEC: the field, an unsigned integer;
				 * the address kinds: where the address goes */
	size_t size;		/* ... of this many bytes */
	ptrdiff_t has;		/* a bool set when the key is given, or -1 */
	uint64_t min, max;	/* ACCESS: max is the IBV_ACCESS_* flags allowed */
	const char *what;	/* UINT/DEC/ACCESS: "'%s' is not <what>" */
	app_key_fn fn;		/* FN */
};

#define APP_FIELD_SIZE(st, f) sizeof(((st *)0)->f)

/* key = a number from lo to hi into st.field; what completes
 * "'<value>' is not ..." */
#define APP_KEY_NUM(st, key, field, lo, hi, what) \
	{ key, APP_KEY_UINT, offsetof(st, field), APP_FIELD_SIZE(st, field), -1, \
	  lo, hi, what, NULL }
/* the same, and st.has_field set */
#define APP_KEY_NUM_HAS(st, key, field, has_field, lo, hi, what) \
	{ key, APP_KEY_UINT, offsetof(st, field), APP_FIELD_SIZE(st, field), \
	  (ptrdiff_t)offsetof(st, has_field), lo, hi, what, NULL }
/* decimal digits only */
#define APP_KEY_DECIMAL(st, key, field, lo, hi, what) \
	{ key, APP_KEY_DEC, offsetof(st, field), APP_FIELD_SIZE(st, field), -1, \
	  lo, hi, what, NULL }
/* key = an address of kind type (APP_KEY_IPV4...) into st.field; st.has_field
 * set, unless has_field is -1 */
#define APP_KEY_ADDR(st, key, type, field, has) \
	{ key, type, offsetof(st, field), APP_FIELD_SIZE(st, field), has, 0, 0, NULL, NULL }
#define APP_HAS(st, has_field) ((ptrdiff_t)offsetof(st, has_field))
/* key = a list of access flag names ("local_write,remote_read"), each
 * of a flag in allowed, into st.field; what completes "'<value>' is not ..." */
#define APP_KEY_ACCESS_LIST(st, key, field, allowed, what) \
	{ key, APP_KEY_ACCESS, offsetof(st, field), APP_FIELD_SIZE(st, field), -1, \
	  0, allowed, what, NULL }
/* the same, setting st.has (APP_HAS) when the key is given */
#define APP_KEY_ACCESS_LIST_HAS(st, key, field, has, allowed, what) \
	{ key, APP_KEY_ACCESS, offsetof(st, field), APP_FIELD_SIZE(st, field), has, \
	  0, allowed, what, NULL }
/* key read by fn(value, &st) */
#define APP_KEY_READER(key, fn) { key, APP_KEY_FN, 0, 0, -1, 0, 0, NULL, fn }

/*
 * Apply key k = v of section sec to obj by the table t[0..n).  Returns 0,
 * or -1 after printing the error (an unknown key: "unknown key (known:
 * <the table's names>)").
 */
int app_key_apply(const struct app_key *t, size_t n, const char *file, const char *sec,
		  const char *k, const char *v, void *obj);

/* A number from 0 to max in C notation (0x.. allowed; no sign). */
int app_key_num(const char *v, uint64_t max, uint64_t *out);

#endif
