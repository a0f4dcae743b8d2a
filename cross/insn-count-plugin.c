/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A QEMU TCG plugin (qemu-aarch64 -plugin) that counts the guest
 * instructions executed inside one function, callees included: from each
 * entry into ENTER until execution is back in one of the LEAVE functions
 * (its callers).  Written for cross/instr-count.sh, which counts
 * mwp_queue_rx in bench_resp as bench/instr_count.sh does on x86 with
 * callgrind.  Debian's qemu-user can load plugins but ships none (nor
 * qemu-plugin.h): the few entry points of plugin API version 1 (QEMU 7.2)
 * used here are declared below.
 *
 *   qemu-aarch64 -plugin ./insn-count-plugin.so,enter=F,leave=G[:H...] PROG
 *
 * At exit it prints, on stderr:
 *   insn-count: enter=F calls=N insns=M total=T
 * (M: instructions inside F; T: every instruction the program executed).
 * Instructions are counted a translation block at a time, when the block
 * runs; a block ends at a branch, so a block that starts runs whole
 * (except for a fault, which the benchmark does not take).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the subset of QEMU's plugin API (include/qemu/qemu-plugin.h, v1) --- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const char *qemu_plugin_insn_symbol(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
				    void *userdata);
void qemu_plugin_outs(const char *string);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;
/* --- */

#define MAX_VCPUS 256
#define MAX_LEAVE 8

enum tb_kind { TB_PLAIN, TB_ENTER, TB_LEAVE };

struct tb_info {
	uint32_t n;
	enum tb_kind kind;
};

struct vcpu {
	bool inside;
	uint64_t insns, calls, total;
} __attribute__((aligned(64)));

static struct vcpu vcpus[MAX_VCPUS];
static char *enter;
static char *leave[MAX_LEAVE];
static unsigned int nleave;

static void
tb_exec(unsigned int vcpu_index, void *userdata)
{
	const struct tb_info *t = userdata;
	struct vcpu *v = &vcpus[vcpu_index % MAX_VCPUS];

	if (t->kind == TB_ENTER && !v->inside) {
		v->inside = true;
		v->calls++;
	} else if (t->kind == TB_LEAVE) {
		v->inside = false;
	}
	if (v->inside)
		v->insns += t->n;
	v->total += t->n;
}

static bool
is_leave(const char *sym)
{
	for (unsigned int i = 0; i < nleave; i++)
		if (strcmp(sym, leave[i]) == 0)
			return true;
	return false;
}

static void
tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct tb_info *t = calloc(1, sizeof(*t));
	const char *sym;
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	if (t == NULL)
		abort();
	t->n = (uint32_t)n;
	sym = n ? qemu_plugin_insn_symbol(qemu_plugin_tb_get_insn(tb, 0)) : NULL;
	if (sym != NULL && strcmp(sym, enter) == 0)
		t->kind = TB_ENTER;
	else if (sym != NULL && is_leave(sym))
		t->kind = TB_LEAVE;
	/* the block's memory is kept: QEMU may run a block until exit */
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
}

static void
at_exit(qemu_plugin_id_t id, void *userdata)
{
	uint64_t insns = 0, calls = 0, total = 0;
	char line[256];

	(void)id;
	(void)userdata;
	for (unsigned int i = 0; i < MAX_VCPUS; i++) {
		insns += vcpus[i].insns;
		calls += vcpus[i].calls;
		total += vcpus[i].total;
	}
	snprintf(line, sizeof(line), "insn-count: enter=%s calls=%llu insns=%llu total=%llu\n",
		 enter, (unsigned long long)calls, (unsigned long long)insns,
		 (unsigned long long)total);
	qemu_plugin_outs(line);
}

EXPORT int
qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc,
		    char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "enter=", 6) == 0) {
			enter = strdup(argv[i] + 6);
		} else if (strncmp(argv[i], "leave=", 6) == 0) {
			char *s = strdup(argv[i] + 6), *save = NULL;

			for (char *f = strtok_r(s, ":", &save); f != NULL && nleave < MAX_LEAVE;
			     f = strtok_r(NULL, ":", &save))
				leave[nleave++] = f;
		} else {
			fprintf(stderr, "insn-count: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (enter == NULL || nleave == 0) {
		fprintf(stderr, "insn-count: needs enter=FUNCTION,leave=CALLER[:CALLER...]\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
