#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run the benchmarks on this machine and print their figures.  Every figure
# is a median of several runs measured by the code that ships (the
# machine is shared and noisy: compare ratios, not absolute numbers).
#
#   bench/run.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
./install-deps.sh --bench
meson setup "$build" >/dev/null
ninja -C "$build" >/dev/null

echo "# $(date -u +%F) $(uname -m) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
"$build/bench/bench_wire" 2>/dev/null
"$build/bench/bench_keys"
"$build/bench/bench_resp"
"$build/bench/bench_lcores"
"$build/bench/bench_keys_load"
/usr/bin/python3 bench/pcap_rate.py "$build" 3 3
