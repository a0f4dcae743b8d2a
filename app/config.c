/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "config_keys.h"

#define LINE_MAX_LEN 1024

/* rte_cfgfile does not keep line numbers; find them again for messages.
 * Returns the line of "[section]" or, with key set, of "key =" inside it. */
static unsigned int
find_line(const char *file, const char *section, const char *key)
{
	char line[LINE_MAX_LEN];
	unsigned int n = 0, found = 0;
	bool in = false;
	FILE *f = fopen(file, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line, *e;

		n++;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '[') {
			e = strchr(s, ']');
			in = e != NULL && (size_t)(e - s - 1) == strlen(section) &&
			     strncmp(s + 1, section, e - s - 1) == 0;
			if (in && key == NULL) {
				found = n;
				break;
			}
		} else if (in && key != NULL && strncmp(s, key, strlen(key)) == 0) {
			e = s + strlen(key);
			while (isspace((unsigned char)*e))
				e++;
			if (*e == '=') {
				found = n;
				break;
			}
		}
	}
	fclose(f);
	return found;
}

void
app_conf_err(const char *file, const char *section, const char *key,
	     const char *fmt, ...)
{
	va_list ap;
	unsigned int line = section ? find_line(file, section, key) : 0;

	/* a missing key: point at its section */
	if (line == 0 && section != NULL && key != NULL)
		line = find_line(file, section, NULL);

	fprintf(stderr, "mwpath: %s", file);
	if (line != 0)
		fprintf(stderr, ":%u", line);
	if (section != NULL)
		fprintf(stderr, ": [%s]", section);
	if (key != NULL)
		fprintf(stderr, " %s", key);
	fprintf(stderr, ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Names already met while checking the syntax, with their lines: the
 * sections of the file, or the keys of one section. */
struct seen {
	char (*name)[LINE_MAX_LEN];
	unsigned int *line;
	unsigned int n, cap;
};

/* The line NAME was first met on, or 0 after noting it at line N; -1 when
 * out of memory. */
static long
seen_before(struct seen *t, const char *name, size_t len, unsigned int n)
{
	for (unsigned int i = 0; i < t->n; i++)
		if (strlen(t->name[i]) == len && strncmp(t->name[i], name, len) == 0)
			return t->line[i];
	if (t->n == t->cap) {
		unsigned int cap = t->cap ? 2 * t->cap : 16;
		void *nm = realloc(t->name, cap * sizeof(t->name[0]));

		if (nm == NULL)
			return -1;
		t->name = nm;
		nm = realloc(t->line, cap * sizeof(t->line[0]));
		if (nm == NULL)
			return -1;
		t->line = nm;
		t->cap = cap;
	}
	memcpy(t->name[t->n], name, len);
	t->name[t->n][len] = '\0';
	t->line[t->n++] = n;
	return 0;
}

/* S up to END, without the spaces around it: its start, and *len. */
static const char *
trimmed(const char *s, const char *end, size_t *len)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*len = (size_t)(end - s);
	return s;
}

/* rte_cfgfile_load accepts almost anything; check the syntax first so that
 * a stray line gets its line number, and so does a section or a key met a
 * second time (rte_cfgfile would keep both and use the first). */
static int
check_syntax(const char *file, FILE *f)
{
	char line[LINE_MAX_LEN], section[LINE_MAX_LEN] = "";
	struct seen sections = { 0 }, keys = { 0 };
	unsigned int n = 0;
	bool in_section = false;
	int ret = -1;

	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line, *e;
		size_t len = strlen(line);
		const char *name;
		long first;

		n++;
		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			fprintf(stderr, "mwpath: %s:%u: line longer than %d characters\n",
				file, n, LINE_MAX_LEN - 2);
			goto out;
		}
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0' || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			e = strchr(s, ']');
			if (e == NULL) {
				fprintf(stderr, "mwpath: %s:%u: section header without ']'\n",
					file, n);
				goto out;
			}
			name = trimmed(s + 1, e, &len);
			first = seen_before(&sections, name, len, n);
			if (first < 0)
				goto oom;
			if (first > 0) {
				fprintf(stderr, "mwpath: %s:%u: [%.*s]: section appears twice"
					" (first at line %ld)\n", file, n, (int)len, name, first);
				goto out;
			}
			memcpy(section, name, len);
			section[len] = '\0';
			keys.n = 0;
			in_section = true;
		} else if ((e = strchr(s, '=')) == NULL) {
			fprintf(stderr, "mwpath: %s:%u: expected 'key = value' or '[section]'\n",
				file, n);
			goto out;
		} else if (!in_section) {
			fprintf(stderr, "mwpath: %s:%u: key outside any section\n",
				file, n);
			goto out;
		} else {
			name = trimmed(s, e, &len);
			first = seen_before(&keys, name, len, n);
			if (first < 0)
				goto oom;
			if (first > 0) {
				fprintf(stderr, "mwpath: %s:%u: [%s] %.*s: key appears twice in the"
					" section (first at line %ld)\n", file, n, section, (int)len,
					name, first);
				goto out;
			}
		}
	}
	ret = 0;
	goto out;
oom:
	fprintf(stderr, "mwpath: %s:%u: out of memory\n", file, n);
out:
	free(sections.name);
	free(sections.line);
	free(keys.name);
	free(keys.line);
	return ret;
}

/* "port 3" -> kind "port", index 3. */
static int
split_section(const char *name, char *kind, size_t kind_len, unsigned long *idx)
{
	const char *sp = strchr(name, ' ');
	char *end;

	if (sp == NULL || (size_t)(sp - name) >= kind_len)
		return -1;
	memcpy(kind, name, sp - name);
	kind[sp - name] = '\0';
	errno = 0;
	*idx = strtoul(sp + 1, &end, 0);
	if (errno != 0 || end == sp + 1 || *end != '\0' || sp[1] == '-')
		return -1;
	return 0;
}

/* ---- [port N] ---- */

static int
port_mtu(const char *v, void *obj, char *err, size_t errlen)
{
	char *end;
	unsigned long mtu = strtoul(v, &end, 10);

	if (*v == '\0' || *end != '\0' || !mwp_mtu_valid(mtu))
		APP_KEY_FAIL("'%s' is not a RoCE path MTU (256, 512, 1024, 2048, 4096)", v);
	((struct app_port *)obj)->conf.mtu = (uint16_t)mtu;
	return 0;
}

static int
port_cm(const char *v, void *obj, char *err, size_t errlen)
{
	if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
		APP_KEY_FAIL("'%s' is not on or off", v);
	((struct app_port *)obj)->cm_off = strcmp(v, "off") == 0;
	return 0;
}

static int
port_ecn(const char *v, void *obj, char *err, size_t errlen)
{
	uint8_t *ecn = &((struct app_port *)obj)->conf.cc.ecn;

	if (strcmp(v, "ect0") == 0)
		*ecn = MWP_ECN_MODE_ECT0;
	else if (strcmp(v, "ect1") == 0)
		*ecn = MWP_ECN_MODE_ECT1;
	else if (strcmp(v, "off") == 0)
		*ecn = MWP_ECN_MODE_OFF;
	else
		APP_KEY_FAIL("'%s' is not ect0, ect1 or off", v);
	return 0;
}

static int
port_cnp(const char *v, void *obj, char *err, size_t errlen)
{
	if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
		APP_KEY_FAIL("'%s' is not on or off", v);
	((struct app_port *)obj)->conf.cc.notify = strcmp(v, "on") == 0;
	return 0;
}

static int
port_cc(const char *v, void *obj, char *err, size_t errlen)
{
	if (strcmp(v, "dcqcn") != 0 && strcmp(v, "off") != 0)
		APP_KEY_FAIL("'%s' is not dcqcn or off", v);
	((struct app_port *)obj)->conf.cc.react = strcmp(v, "dcqcn") == 0;
	return 0;
}

static int
port_exception(const char *v, void *obj, char *err, size_t errlen)
{
	struct app_port *p = obj;

	if (strcmp(v, "tap") != 0 && strcmp(v, "off") != 0)
		APP_KEY_FAIL("'%s' is not tap or off", v);
	p->host.on = strcmp(v, "tap") == 0;
	p->conf.host_path = p->host.on;
	return 0;
}

static int
port_exception_tap(const char *v, void *obj, char *err, size_t errlen)
{
	struct app_port *p = obj;

	if (v[0] == '\0' || strlen(v) >= sizeof(p->host.ifname) || strchr(v, '/') != NULL ||
	    strchr(v, ',') != NULL || strchr(v, ' ') != NULL)
		APP_KEY_FAIL("'%s' is not an interface name (1 to %zu characters, no '/', ',' or space)",
			     v, sizeof(p->host.ifname) - 1);
	strcpy(p->host.ifname, v);
	return 0;
}

/* DCQCN's parameters, by ConnectX's names (mwp_dcqcn.h); their ranges
 * together are mwp_dcqcn_params_check's. */
#define DCQCN_KEY(name, lo, hi, what) \
	APP_KEY_DECIMAL(struct app_port, #name, conf.cc.dcqcn.name, lo, hi, what)

/* Probes are counted in a byte; the neighbour table is searched linearly
 * (a few hosts on a link, not a data centre). */
static const struct app_key port_keys[] = {
	APP_KEY_ADDR(struct app_port, "mac", APP_KEY_MAC, conf.mac, -1),
	APP_KEY_ADDR(struct app_port, "ipv4", APP_KEY_IPV4, conf.ipv4,
		     APP_HAS(struct app_port, conf.has_ipv4)),
	APP_KEY_ADDR(struct app_port, "ipv6", APP_KEY_IPV6, conf.ipv6,
		     APP_HAS(struct app_port, conf.has_ipv6)),
	APP_KEY_READER("mtu", port_mtu),
	APP_KEY_READER("cm", port_cm),
	APP_KEY_DECIMAL(struct app_port, "neigh_reachable_ms", conf.neigh.reachable_ms, 1,
			10000000, "a number from 1 to 10000000"),
	APP_KEY_DECIMAL(struct app_port, "neigh_probe_ms", conf.neigh.probe_ms, 1, 10000000,
			"a number from 1 to 10000000"),
	APP_KEY_DECIMAL(struct app_port, "neigh_probes", conf.neigh.max_probes, 1, 255,
			"a number from 1 to 255"),
	APP_KEY_DECIMAL(struct app_port, "neigh_size", conf.neigh_size, 1, 4096,
			"a number from 1 to 4096"),
	APP_KEY_DECIMAL(struct app_port, "ctrl_rate", conf.ctrl_rate, 1, 10000000,
			"a number from 1 to 10000000"),
	APP_KEY_READER("ecn", port_ecn),
	APP_KEY_READER("cnp", port_cnp),
	APP_KEY_DECIMAL(struct app_port, "cnp_dscp", conf.cc.cnp_dscp, 0, 63,
			"a DSCP from 0 to 63"),
	APP_KEY_DECIMAL(struct app_port, "min_time_between_cnps",
			conf.cc.min_time_between_cnps, 0, 100000000,
			"microseconds, 0 to 100000000"),
	APP_KEY_READER("cc", port_cc),
	APP_KEY_DECIMAL(struct app_port, "line_rate", conf.cc.line_rate, 1, 10000000,
			"Mb/s, 1 to 10000000"),
	DCQCN_KEY(rpg_max_rate, 0, 10000000, "Mb/s, 0 (the line rate) to 10000000"),
	DCQCN_KEY(rpg_min_rate, 1, 10000000, "Mb/s, 1 to 10000000"),
	DCQCN_KEY(rpg_ai_rate, 1, 10000000, "Mb/s, 1 to 10000000"),
	DCQCN_KEY(rpg_hai_rate, 1, 10000000, "Mb/s, 1 to 10000000"),
	DCQCN_KEY(rpg_time_reset, 1, 100000000, "microseconds, 1 to 100000000"),
	DCQCN_KEY(rpg_byte_reset, 1, UINT32_MAX, "bytes, 1 to 4294967295"),
	DCQCN_KEY(rpg_threshold, 1, 31, "a number from 1 to 31"),
	DCQCN_KEY(rpg_gd, 10, 11, "10 or 11"),
	DCQCN_KEY(rpg_min_dec_fac, 0, 100, "a percentage, 0 to 100"),
	DCQCN_KEY(rate_to_set_on_first_cnp, 0, 10000000, "Mb/s, 0 (off) to 10000000"),
	DCQCN_KEY(rate_reduce_monitor_period, 0, 100000000, "microseconds, 0 to 100000000"),
	DCQCN_KEY(dce_tcp_g, 0, 1023, "1024ths, 0 to 1023"),
	DCQCN_KEY(dce_tcp_rtt, 1, 131071, "microseconds, 1 to 131071"),
	DCQCN_KEY(initial_alpha_value, 1, 1023, "1024ths, 1 to 1023"),
	APP_KEY_DECIMAL(struct app_port, "cc_burst", conf.cc.dcqcn.burst, 64, 1 << 24,
			"bytes, 64 to 16777216"),
	APP_KEY_READER("exception", port_exception),
	APP_KEY_READER("exception_tap", port_exception_tap),
	APP_KEY_DECIMAL(struct app_port, "ipv4_prefix", host.prefix4, 1, 32,
			"a prefix length, 1 to 32"),
	APP_KEY_DECIMAL(struct app_port, "ipv6_prefix", host.prefix6, 1, 128,
			"a prefix length, 1 to 128"),
};

static int
load_port(struct rte_cfgfile *cf, struct app_config *cfg, const char *sec,
	  unsigned long idx)
{
	if (idx >= RTE_MAX_ETHPORTS) {
		app_conf_err(cfg->file, sec, NULL, "port number must be below %d",
			 RTE_MAX_ETHPORTS);
		return -1;
	}
	if (cfg->port_present[idx]) {
		app_conf_err(cfg->file, sec, NULL, "section appears twice");
		return -1;
	}
	cfg->port_present[idx] = true;
	if (app_config_apply(cf, cfg, sec, port_keys, RTE_DIM(port_keys), &cfg->port[idx]) != 0)
		return -1;
	if (cfg->port[idx].conf.cc.react) {
		char err[160];

		if (mwp_dcqcn_params_check(&cfg->port[idx].conf.cc.dcqcn, err, sizeof(err)) != 0) {
			app_conf_err(cfg->file, sec, NULL, "DCQCN: %s", err);
			return -1;
		}
	}
	return 0;
}

/* ---- [device N] ---- */

static int
device_eal(const char *v, void *obj, char *err, size_t errlen)
{
	struct app_device *d = obj;

	if (strlen(v) >= sizeof(d->eal))
		APP_KEY_FAIL("EAL arguments longer than %zu bytes", sizeof(d->eal) - 1);
	strcpy(d->eal, v);
	return 0;
}

static int
device_progress(const char *v, void *obj, char *err, size_t errlen)
{
	static const char *const names[] = {
		[APP_PROGRESS_THREAD] = "thread",
		[APP_PROGRESS_CALLS] = "calls",
		[APP_PROGRESS_LCORE] = "lcore",
	};

	for (unsigned int i = 0; i < RTE_DIM(names); i++)
		if (strcmp(v, names[i]) == 0) {
			((struct app_device *)obj)->progress = (enum app_progress)i;
			return 0;
		}
	APP_KEY_FAIL("'%s' is not thread, calls or lcore", v);
}

static int
device_start(const char *v, void *obj, char *err, size_t errlen)
{
	if (strcmp(v, "open") == 0)
		((struct app_device *)obj)->start = APP_START_OPEN;
	else if (strcmp(v, "load") == 0)
		((struct app_device *)obj)->start = APP_START_LOAD;
	else
		APP_KEY_FAIL("'%s' is not open or load", v);
	return 0;
}

static int
device_share(const char *v, void *obj, char *err, size_t errlen)
{
	if (strcmp(v, "on") == 0)
		((struct app_device *)obj)->share = true;
	else if (strcmp(v, "off") == 0)
		((struct app_device *)obj)->share = false;
	else
		APP_KEY_FAIL("'%s' is not on or off", v);
	return 0;
}

static const struct app_key device_keys[] = {
	APP_KEY_DECIMAL(struct app_device, "port", port, 0, RTE_MAX_ETHPORTS - 1,
			"a DPDK port number"),
	APP_KEY_READER("eal", device_eal),
	APP_KEY_READER("progress", device_progress),
	APP_KEY_READER("start", device_start),
	APP_KEY_READER("share", device_share),
	APP_KEY_DECIMAL(struct app_device, "max_keys", max_keys, 1, 1 << 23,
			"a number from 1 to 8388608"),
	APP_KEY_DECIMAL(struct app_device, "peer_wait_ms", peer_wait_ms, 0, 600000,
			"milliseconds, 0 to 600000"),
};

static int
load_device(struct rte_cfgfile *cf, struct app_config *cfg, const char *sec,
	    unsigned long idx)
{
	struct app_device *d;

	if (idx >= APP_MAX_DEVICES) {
		app_conf_err(cfg->file, sec, NULL, "device numbers go up to %d",
			     APP_MAX_DEVICES - 1);
		return -1;
	}
	d = &cfg->device[idx];
	if (d->present) {
		app_conf_err(cfg->file, sec, NULL, "section appears twice");
		return -1;
	}
	d->present = true;
	d->port = (uint16_t)idx;
	d->peer_wait_ms = APP_DEVICE_PEER_WAIT_MS;
	return app_config_apply(cf, cfg, sec, device_keys, RTE_DIM(device_keys), d);
}

/* ---- [security] (one, unnumbered) ---- */

static int
security_keys(const char *v, void *obj, char *err, size_t errlen)
{
	if (strcmp(v, "random") == 0 || strcmp(v, "sequential") == 0) {
		((struct app_config *)obj)->sequential_keys = v[0] == 's';
		return 0;
	}
	APP_KEY_FAIL("'%s' is not random or sequential", v);
}

static const struct app_key security_keys_tbl[] = {
	APP_KEY_READER("keys", security_keys),
	APP_KEY_DECIMAL(struct app_config, "guess_threshold", guess_threshold, 0, UINT32_MAX,
			"a number of refused requests (0: never block)"),
	APP_KEY_DECIMAL(struct app_config, "guess_block_ms", guess_block_ms, 1, 86400000,
			"milliseconds, 1 to 86400000"),
};

int
app_config_load(const char *file, struct app_config *cfg)
{
	struct rte_cfgfile *cf;
	char (*names)[CFG_NAME_LEN] = NULL;
	char **namep = NULL;
	int nsec, ret = -1;
	FILE *f;

	memset(cfg, 0, sizeof(*cfg));
	cfg->file = file;
	for (unsigned int i = 0; i < RTE_MAX_ETHPORTS; i++) {
		cfg->port[i].conf.mtu = APP_DEFAULT_MTU;
		mwp_port_cc_defaults(&cfg->port[i].conf.cc);
		cfg->port[i].host.prefix4 = 24;
		cfg->port[i].host.prefix6 = 64;
	}

	f = fopen(file, "r");
	if (f == NULL) {
		fprintf(stderr, "mwpath: cannot read config '%s': %s\n",
			file, strerror(errno));
		return -1;
	}
	ret = check_syntax(file, f);
	fclose(f);
	if (ret != 0)
		return -1;
	ret = -1;

	cf = rte_cfgfile_load(file, 0);
	if (cf == NULL) {
		fprintf(stderr, "mwpath: %s: not a valid INI file\n", file);
		return -1;
	}
	nsec = rte_cfgfile_num_sections(cf, NULL, 0);
	names = calloc(nsec > 0 ? nsec : 1, sizeof(*names));
	namep = calloc(nsec > 0 ? nsec : 1, sizeof(*namep));
	if (names == NULL || namep == NULL) {
		fprintf(stderr, "mwpath: %s: out of memory\n", file);
		goto out;
	}
	for (int i = 0; i < nsec; i++)
		namep[i] = names[i];
	rte_cfgfile_sections(cf, namep, nsec);
	for (int i = 0; i < nsec; i++) {
		char kind[CFG_NAME_LEN];
		unsigned long idx;

		if (strcmp(names[i], "security") == 0) {
			if (app_config_apply(cf, cfg, names[i], security_keys_tbl,
					     RTE_DIM(security_keys_tbl), cfg) != 0)
				goto out;
			continue;
		}
		if (split_section(names[i], kind, sizeof(kind), &idx) != 0) {
			app_conf_err(file, names[i], NULL,
				 "section names are '<kind> <number>', e.g. [port 0], or [security]");
			goto out;
		}
		if (strcmp(kind, "port") == 0) {
			if (load_port(cf, cfg, names[i], idx) != 0)
				goto out;
		} else if (strcmp(kind, "device") == 0) {
			if (load_device(cf, cfg, names[i], idx) != 0)
				goto out;
		} else if (app_config_verbs_section(cf, cfg, kind, names[i], idx) != 0) {
			goto out;
		}
	}
	ret = app_config_verbs_check(cfg);
out:
	free(namep);
	free(names);
	rte_cfgfile_close(cf);
	return ret;
}

bool
app_config_port_cm(const struct app_config *cfg, unsigned int port)
{
	const struct app_port *p = &cfg->port[port];

	return !p->cm_off && (p->conf.has_ipv4 || p->conf.has_ipv6);
}

void
app_config_port(const struct app_config *cfg, unsigned int port,
		struct mwp_port_conf *out)
{
	*out = cfg->port[port].conf;
	out->guess_threshold = cfg->guess_threshold;
	out->guess_block_ms = cfg->guess_block_ms;
}
