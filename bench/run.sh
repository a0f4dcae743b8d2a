#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run every benchmark on this machine, print its figures, and write each
# program's results as JSON into OUTDIR (then plot.py's pictures there).
# Every figure is a median of several runs measured by the code that
# ships (the machine is shared and noisy: compare ratios, not absolute
# numbers; bench/compare.py sets two OUTDIRs' files side by side).
#
#   bench/run.sh [--build DIR] [--quick] [OUTDIR]
#
# DIR: the meson build directory (default: build); OUTDIR: default
# DIR/bench-results/DATE.  --quick: every program's smoke run (seconds,
# not figures).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build quick=() out=
while [[ $# -gt 0 ]]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--quick) quick=(--quick); shift ;;
	-h|--help) sed -n '3,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "usage: bench/run.sh [--build DIR] [--quick] [OUTDIR]" >&2; exit 2 ;;
	*) out=$1; shift ;;
	esac
done
out=${out:-$build/bench-results/$(date -u +%Y%m%dT%H%M%SZ)}
./install-deps.sh --bench
[[ -f $build/build.ninja ]] || meson setup "$build" >/dev/null
ninja -C "$build" >/dev/null
mkdir -p "$out"
b=$build/bench

echo "# $(date -u +%F) $(uname -m) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; results in $out"
"$b/bench_wire" "${quick[@]}" --json "$out/bench_wire.json" 2>/dev/null
"$b/bench_keys" "${quick[@]}" --json "$out/bench_keys.json"
if [[ ${#quick[@]} -eq 0 ]]; then
	"$b/bench_resp" --keys 1024,65536,1048576 --payloads 64,256,1024 --json "$out/bench_resp.json"
else
	"$b/bench_resp" --quick --keys 1024,65536 --payloads 64,1024 --json "$out/bench_resp.json"
fi
"$b/bench_req" "${quick[@]}" --json "$out/bench_req.json"
"$b/bench_lcores" "${quick[@]}" --json "$out/bench_lcores.json"
"$b/bench_keys_load" "${quick[@]}" --json "$out/bench_keys_load.json"
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
printf '[device 0]\neal = --no-huge --no-pci --no-shconf -m 256 --vdev=net_null0,no-rx=1\n[port 0]\nmac = 02:00:00:00:00:01\nipv4 = 192.0.2.1\n' >"$cfg"
"$build/provider/mwpath-run" -c "$cfg" -- "$b/mw_verbs_bench" -d mwpath0 "${quick[@]}" \
	--json "$out/mw_verbs_bench.json"
"$build/provider/mwpath-run" -c "$cfg" -- "$b/loop_verbs_bench" -d mwpath0 "${quick[@]}" \
	--json "$out/loop_verbs_bench.json"
/usr/bin/python3 bench/pcap_rate.py "$build" 3 3 "${quick[@]}" --json "$out/pcap_rate.json"
/usr/bin/python3 bench/perftest_rate.py "$build" 3 "${quick[@]}" --json "$out/perftest_rate.json" ||
	echo "# perftest_rate: a test failed (see above)"
/usr/bin/python3 bench/cm_rate.py "$build" 3 "${quick[@]}" --json "$out/cm_rate.json" ||
	echo "# cm_rate: a run failed (see above)"
/usr/bin/python3 bench/plot.py "$out"/*.json -o "$out"
