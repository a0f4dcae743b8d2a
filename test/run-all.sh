#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build and run every test twice: in a normal build (build/) and in one
# with AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/).
# Exits non-zero if anything fails; ends with one "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
passed=0
failed=0

run_build() {
	local dir=$1; shift
	echo "== $dir: meson setup $*"
	if ! meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 &&
	   ! meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1; then
		cat "$dir.setup.log"
		status=1
		failed=$((failed + 1))
		return
	fi
	rm -f "$dir.setup.log"
	if ! ninja -C "$dir"; then
		status=1
		failed=$((failed + 1))
		return
	fi
	meson test -C "$dir" --print-errorlogs --num-processes 2 || status=1
	local log="$dir/meson-logs/testlog.json"
	if [[ -f $log ]]; then
		local p f
		p=$(grep -c '"result": "OK"' "$log")
		f=$(grep -vc '"result": "OK"' "$log")
		passed=$((passed + p))
		failed=$((failed + f))
	fi
}

run_build build
run_build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	-Dbenchmarks=false

echo "$passed passed, $failed failed"
exit $status
