#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per request inside mwp_queue_rx, by callgrind: a figure
# the machine's noise does not move, for comparing builds of the responder
# (docs/benchmarks.md quotes it).  Then the requester's (bench_req): per
# work request, in ibv_post_send, in sending (mwp_engine_run and
# mwp_queue_tx) and in completing (mwp_queue_rx taking the answers and
# ibv_poll_cq).  And the whole path (loop_verbs_bench on mwpath0 with
# progress = calls: one thread does it all): per operation, from
# ibv_post_send to the completion polled.  valgrind runs the four-lane CRC (it has
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
	sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'
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
ninja -C "$build" bench/bench_resp bench/bench_req bench/loop_verbs_bench \
	provider/libmwpath-ibverbs.so >/dev/null
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

# Inclusive instructions of the functions named (callgrind's file $1).
incl() {
	local f=$1; shift
	callgrind_annotate --inclusive=yes "$f" 2>/dev/null | awk -v names="$*" '
		BEGIN { split(names, want, " "); for (i in want) need[want[i]] = 1 }
		{
			for (fn in need)
				if (index($0, ":" fn " ") && !(fn in got)) {
					v = $1; gsub(",", "", v); got[fn] = v; sum += v
				}
		}
		END { print sum + 0 }'
}
# bench_req --quick: 2000 passes of 32 work requests, 5 runs
wrs=$((2000 * 32 * 5))
rnames=("64 B WRITE" "64 B SEND" "64 B READ" "FETCH_ADD" "CMP_SWAP")
printf '\n%-26s %10s %10s %10s\n' "requester, workload" "post" "send" "complete"
for w in 0 1 2 3 4; do
	valgrind --tool=callgrind --callgrind-out-file="$out/cr.$w" \
		"$build/bench/bench_req" --quick --workload "$w" >/dev/null 2>&1
	post=$(incl "$out/cr.$w" mwp_op_post_send)
	send=$(incl "$out/cr.$w" mwp_engine_run mwp_queue_tx)
	comp=$(incl "$out/cr.$w" mwp_queue_rx mwp_op_poll_cq)
	awk -v p="$post" -v s="$send" -v c="$comp" -v r="$wrs" -v name="${rnames[$w]}" \
		'BEGIN { printf "%-26s %10.1f %10.1f %10.1f\n", name, p / r, s / r, c / r }'
done

# loop_verbs_bench --quick: 3000 operations of each kind, 64 B
printf '[device 0]\neal = --no-huge --no-pci --no-shconf -m 256 --vdev=net_null0,no-rx=1\nprogress = calls\n[port 0]\nmac = 02:00:00:00:00:01\nipv4 = 192.0.2.1\n' >"$out/loop.ini"
printf '\n%-26s %10s\n' "whole path, operation" "instr/op"
ops=(write send read fetch_add cmp_swap)
onames=("64 B WRITE" "64 B SEND" "64 B READ" "FETCH_ADD" "CMP_SWAP")
for i in 0 1 2 3 4; do
	op=${ops[$i]}
	"$build/provider/mwpath-run" -c "$out/loop.ini" -- valgrind --tool=callgrind \
		--callgrind-out-file="$out/cl.$op" "$build/bench/loop_verbs_bench" --quick \
		--op "$op" >/dev/null 2>&1
	n=$(incl "$out/cl.$op" run_op)
	awk -v n="$n" -v name="${onames[$i]}" 'BEGIN { printf "%-26s %10.1f\n", name, n / 3000 }'
done
