#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per request inside mwp_queue_rx on aarch64 (callees
# included), counted under qemu-aarch64 by cross/insn-count-plugin.c: the
# aarch64 counterpart of bench/instr_count.sh (callgrind, x86), on the same
# bench_resp workloads (--quick: 2000 bursts of 32, 5 runs, 1K keys).
# EMULATED: these are counts of the instructions an ARMv8 core would
# retire, not a time; qemu's speed says nothing about a real core's.
#
#   cross/instr-count.sh [BUILD_DIR] [CPU]
#       BUILD_DIR: default build-aarch64-bench (a cross build with the
#       benchmarks); CPU: qemu's -cpu model, default max (PMULL and
#       CRC32, so the multi-buffer ICRC runs)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-aarch64-bench}
cpu=${2:-max}
sysroot=/var/cache/mwpath-aarch64/sysroot
./install-deps.sh --aarch64
meson setup "$build" --cross-file cross/aarch64-linux-gnu.ini -Dtests=false >/dev/null 2>&1 ||
	meson setup --reconfigure "$build" --cross-file cross/aarch64-linux-gnu.ini -Dtests=false >/dev/null
ninja -C "$build" bench/bench_resp >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -shared -fPIC -Wall -Wextra -o "$out/insn-count.so" cross/insn-count-plugin.c
# where mwp_queue_rx returns to: the functions that call it
leave=$(aarch64-linux-gnu-objdump -d --no-show-raw-insn "$build/bench/bench_resp" |
	awk '/^[0-9a-f]+ <[^>]+>:$/ { fn = substr($2, 2, length($2) - 3) }
	     /\tbl\t[0-9a-f]+ <mwp_queue_rx>$/ { print fn }' | sort -u | paste -sd:)
[[ -n $leave ]] || { echo "instr-count: no call to mwp_queue_rx in bench_resp" >&2; exit 1; }
names=("64 B WRITE ONLY" "8 B READ" "FETCH_ADD" "WRITE, 10% denied keys"
       "5 KB WRITE, 1 KB packets")
echo "aarch64 (qemu-aarch64 -cpu $cpu, emulated), $(aarch64-linux-gnu-gcc --version | head -1)"
printf '%-26s %14s %8s\n' "workload (1K keys)" "instr/request" "calls"
for w in 0 1 2 3 4; do
	QEMU_LD_PREFIX=$sysroot qemu-aarch64 -cpu "$cpu" \
		-plugin "$out/insn-count.so,enter=mwp_queue_rx,leave=$leave" \
		-d plugin -D "$out/log.$w" \
		"$build/bench/bench_resp" --quick --workload "$w" >/dev/null 2>&1
	# insn-count: enter=mwp_queue_rx calls=N insns=M total=T
	awk -v name="${names[$w]}" -F'[ =]' '/^insn-count:/ {
		for (i = 1; i < NF; i++) { if ($i == "calls") c = $(i + 1); if ($i == "insns") n = $(i + 1) }
		printf "%-26s %14.1f %8d\n", name, n / (c * 32), c }' "$out/log.$w"
done
