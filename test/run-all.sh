#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build and run every test twice: in a normal build (build/) and in one
# with AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/); then
# run the key-table concurrency scenario and the two-lcore ownership
# scenario under ThreadSanitizer (build-tsan/); fuzz the parser with libFuzzer (clang, ASan+UBSan,
# build-fuzz/) for FUZZ_SECONDS (default 30), seeded from ../shared/captures,
# and the responder for FUZZ_RESP_RUNS inputs (default 10^6).
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

run_fuzz() {
	local dir=build-fuzz
	# a UBSan report is a failure, as in the test builds
	local -x UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	echo "== $dir: libFuzzer on the parser for ${FUZZ_SECONDS:-30} s"
	if ! { CC=clang meson setup "$dir" -Db_sanitize=address,undefined \
		-Db_lundef=false -Dfuzz=enabled -Dtests=false -Dbenchmarks=false \
		>/dev/null || meson setup --reconfigure "$dir" >/dev/null; } ||
	   ! ninja -C "$dir" test/fuzz/fuzz_parse ||
	   ! /usr/bin/python3 test/fuzz/make_corpus.py ../shared/captures "$dir/corpus" ||
	   ! "$dir/test/fuzz/fuzz_parse" -seed=1 -max_len=9216 -artifact_prefix="$dir/" \
		-max_total_time="${FUZZ_SECONDS:-30}" -print_final_stats=1 \
		"$dir/corpus" >"$dir/fuzz.log" 2>&1; then
		tail -40 "$dir/fuzz.log" 2>/dev/null
		echo "fuzz_parse: FAIL"
		status=1
		failed=$((failed + 1))
		return
	fi
	grep -E '^stat::(number_of_executed_units|new_units_added)' "$dir/fuzz.log"
	echo "fuzz_parse: OK"
	passed=$((passed + 1))

	# the responder, with its oracle on memory, keys and mbufs:
	# FUZZ_RESP_RUNS inputs (default 10^6); first, the oracle must catch
	# a byte the harness itself writes outside every window
	echo "== $dir: libFuzzer on the responder for ${FUZZ_RESP_RUNS:-1000000} inputs"
	if ! ninja -C "$dir" test/fuzz/fuzz_resp >/dev/null; then
		echo "fuzz_resp: FAIL (build)"
		status=1
		failed=$((failed + 1))
		return
	fi
	mkdir -p "$dir/corpus-resp"
	if MWP_FUZZ_RESP_BREAK=1 "$dir/test/fuzz/fuzz_resp" -seed=1 -runs=200 \
		-artifact_prefix="$dir/break-" \
		>"$dir/fuzz-resp-break.log" 2>&1 ||
	   ! grep -q 'ORACLE BREACH' "$dir/fuzz-resp-break.log"; then
		tail -20 "$dir/fuzz-resp-break.log"
		echo "fuzz_resp: FAIL (the oracle missed a planted write)"
		status=1
		failed=$((failed + 1))
		return
	fi
	if ! "$dir/test/fuzz/fuzz_resp" -seed=1 -max_len=4096 -artifact_prefix="$dir/" \
		-runs="${FUZZ_RESP_RUNS:-1000000}" -print_final_stats=1 \
		"$dir/corpus-resp" >"$dir/fuzz-resp.log" 2>&1; then
		grep -v '^#[0-9]' "$dir/fuzz-resp.log" | tail -60
		echo "fuzz_resp: FAIL"
		status=1
		failed=$((failed + 1))
		return
	fi
	grep -E '^stat::(number_of_executed_units|new_units_added|average_exec_per_sec)|^fuzz_resp:' \
		"$dir/fuzz-resp.log"
	grep -E '^#[0-9]+.*DONE' "$dir/fuzz-resp.log" | tail -1
	echo "fuzz_resp: OK"
	passed=$((passed + 1))
}

run_tsan() {
	local dir=build-tsan
	echo "== $dir: the concurrency scenarios under ThreadSanitizer"
	if ! { meson setup "$dir" -Db_sanitize=thread -Db_lundef=false \
		-Dbenchmarks=false >/dev/null ||
	       meson setup --reconfigure "$dir" >/dev/null; } ||
	   ! ninja -C "$dir" test/unit/tsan_concurrency test/unit/owners_long; then
		echo "tsan build: FAIL"
		status=1
		failed=$((failed + 1))
		return
	fi
	# the readers and writers of the key table; then two polling lcores
	# with hand-overs, binds and invalidations (10^5 rounds, about 80 s)
	for t in "tsan_concurrency" "owners_long 100000"; do
		# shellcheck disable=SC2086
		if TSAN_OPTIONS="halt_on_error=1:suppressions=$PWD/test/unit/tsan.supp" \
			"$dir"/test/unit/$t; then
			passed=$((passed + 1))
		else
			echo "${t%% *} under TSan: FAIL"
			status=1
			failed=$((failed + 1))
		fi
	done
}

run_build build
run_build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	-Dbenchmarks=false
run_tsan
run_fuzz

echo "$passed passed, $failed failed"
exit $status
