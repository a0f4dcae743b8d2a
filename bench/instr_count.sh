#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per request inside mwp_queue_rx, by callgrind: a figure
# the machine's noise does not move, for comparing builds of the responder
# (docs/benchmarks.md quotes it).  valgrind runs the four-lane CRC (it has
# no VPCLMULQDQ), so the CRC's share is larger than on the machine.
#
#   bench/instr_count.sh [BUILD_DIR]
#
# BUILD_DIR (default: build-instr, made here with
# -Dcpu_instruction_set=generic -Dtests=false) must be a build valgrind
# can run: a -march=native build on a CPU with AVX-512 stops valgrind 3.19
# at its first AVX-512 instruction ("Illegal instruction").
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
-h|--help)
	sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'
	exit 0 ;;
-*)
	echo "usage: bench/instr_count.sh [BUILD_DIR]" >&2
	exit 2 ;;
esac
build=${1:-build-instr}
./install-deps.sh --bench
if [[ ! -d $build ]]; then
	meson setup "$build" -Dcpu_instruction_set=generic -Dtests=false >/dev/null
fi
ninja -C "$build" bench/bench_resp >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# bench_resp --quick: 2000 bursts of 32, 5 runs
reqs=$((2000 * 32 * 5))
names=("64 B WRITE ONLY" "8 B READ" "FETCH_ADD" "WRITE, 10% denied keys"
       "5 KB WRITE, 1 KB packets")
printf '%-26s %14s\n' "workload (1K keys)" "instr/request"
for w in 0 1 2 3 4; do
	valgrind --tool=callgrind --callgrind-out-file="$out/cg.$w" \
		"$build/bench/bench_resp" --quick --workload "$w" >/dev/null 2>&1
	n=$(callgrind_annotate --inclusive=yes "$out/cg.$w" 2>/dev/null |
		awk '/:mwp_queue_rx / && !done { gsub(",", "", $1); print $1; done = 1 }')
	awk -v n="$n" -v r="$reqs" -v name="${names[$w]}" \
		'BEGIN { printf "%-26s %14.1f\n", name, n / r }'
done
