/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <rte_ether.h>

#include "config.h"
#include "config_keys.h"

int
app_key_num(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || x > max)
		return -1;
	*out = x;
	return 0;
}

static int
dec(const char *v, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long x;

	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno != 0 || *end != '\0' || x > max)
		return -1;
	*out = x;
	return 0;
}

static void
store(void *field, size_t size, uint64_t x)
{
	switch (size) {
	case 1: *(uint8_t *)field = (uint8_t)x; break;
	case 2: *(uint16_t *)field = (uint16_t)x; break;
	case 4: *(uint32_t *)field = (uint32_t)x; break;
	default: *(uint64_t *)field = x; break;
	}
}

static void
unknown(const struct app_key *t, size_t n, const char *file, const char *sec,
	const char *k)
{
	char names[512];
	size_t len = 0;

	names[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
					i ? ", " : "", t[i].name);
	app_conf_err(file, sec, k, "unknown key (known: %s)", names);
}

/* An address key into field: 0, or -1 with the message in err. */
static int
address(enum app_key_type type, const char *v, uint8_t *field, char *err, size_t errlen)
{
	switch (type) {
	case APP_KEY_IPV4:
		if (inet_pton(AF_INET, v, field) != 1)
			APP_KEY_FAIL("'%s' is not an IPv4 address", v);
		return 0;
	case APP_KEY_IPV4_MAPPED:
		if (inet_pton(AF_INET, v, field + 12) != 1)
			APP_KEY_FAIL("'%s' is not an IPv4 address", v);
		memset(field, 0, 10);
		field[10] = field[11] = 0xff;
		return 0;
	case APP_KEY_IPV6:
		if (inet_pton(AF_INET6, v, field) != 1)
			APP_KEY_FAIL("'%s' is not an IPv6 address", v);
		return 0;
	default:
		if (rte_ether_unformat_addr(v, (struct rte_ether_addr *)field) != 0 ||
		    !rte_is_unicast_ether_addr((struct rte_ether_addr *)field))
			APP_KEY_FAIL("'%s' is not a unicast MAC address", v);
		return 0;
	}
}

/* "local_write,remote_read,..." -> IBV_ACCESS_* flags, each one of allowed */
static int
access_flags(const char *v, uint64_t allowed, uint64_t *flags)
{
	char buf[256], *tok, *save;

	*flags = 0;
	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ", ", &save); tok != NULL; tok = strtok_r(NULL, ", ", &save)) {
		size_t i;

		for (i = 0; i < APP_ACCESS_NAMES; i++)
			if (strcmp(tok, app_access_names[i].name) == 0)
				break;
		if (i == APP_ACCESS_NAMES || (app_access_names[i].bit & allowed) == 0)
			return -1;
		*flags |= app_access_names[i].bit;
	}
	return 0;
}

/* An access key into field: 0, or -1 with the message in err. */
static int
access_list(const struct app_key *e, const char *v, void *field, char *err, size_t errlen)
{
	uint64_t flags;

	if (access_flags(v, e->max, &flags) != 0)
		APP_KEY_FAIL("'%s' is not %s", v, e->what);
	store(field, e->size, flags);
	return 0;
}

int
app_key_apply(const struct app_key *t, size_t n, const char *file, const char *sec,
	      const char *k, const char *v, void *obj)
{
	char err[256];
	uint64_t x;

	for (size_t i = 0; i < n; i++) {
		const struct app_key *e = &t[i];

		if (strcmp(k, e->name) != 0)
			continue;
		if (e->type != APP_KEY_UINT && e->type != APP_KEY_DEC) {
			int ret = e->type == APP_KEY_FN ? e->fn(v, obj, err, sizeof(err)) :
				  e->type == APP_KEY_ACCESS ?
				  access_list(e, v, (char *)obj + e->off, err, sizeof(err)) :
				  address(e->type, v, (uint8_t *)obj + e->off, err,
					  sizeof(err));

			if (ret != 0) {
				app_conf_err(file, sec, k, "%s", err);
				return -1;
			}
		} else {
			if ((e->type == APP_KEY_DEC ? dec(v, e->max, &x) :
			     app_key_num(v, e->max, &x)) != 0 || x < e->min) {
				app_conf_err(file, sec, k, "'%s' is not %s", v, e->what);
				return -1;
			}
			store((char *)obj + e->off, e->size, x);
		}
		if (e->has >= 0)
			*(bool *)((char *)obj + e->has) = true;
		return 0;
	}
	unknown(t, n, file, sec, k);
	return -1;
}
