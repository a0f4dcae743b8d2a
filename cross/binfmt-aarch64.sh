#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Let the kernel run arm64 executables through qemu-aarch64 (binfmt_misc),
# as Debian's qemu-user-binfmt would: Criterion's workers re-exec the test
# binary, and test/pcap/run.py starts mwpath itself, so an exe_wrapper
# alone is not enough.  QEMU_LD_PREFIX (the sysroot) and QEMU_CPU come from
# the environment of whatever execs the binary.
#
#   cross/binfmt-aarch64.sh on     register (mounting binfmt_misc if need be);
#                                  prints "registered" if it did, "present"
#                                  if a handler was there already
#   cross/binfmt-aarch64.sh off    remove the handler this script registered
set -euo pipefail

dir=/proc/sys/fs/binfmt_misc
name=qemu-aarch64
# qemu's own entry for aarch64 ELF (scripts/qemu-binfmt-conf.sh)
magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

case ${1:-} in
on)
	qemu=$(command -v qemu-aarch64) || { echo "binfmt-aarch64: no qemu-aarch64 (./install-deps.sh --aarch64)" >&2; exit 1; }
	if [[ ! -w $dir/register ]]; then
		mount -t binfmt_misc binfmt_misc "$dir" 2>/dev/null || true
	fi
	if [[ ! -w $dir/register ]]; then
		echo "binfmt-aarch64: cannot write $dir/register (needs root and binfmt_misc)" >&2
		exit 1
	fi
	for f in "$dir"/*; do
		[[ $f == */register || $f == */status ]] && continue
		if [[ -f $f ]] && grep -q '^magic 7f454c460201010000000000000000000200b700' "$f" &&
		   grep -q '^enabled' "$f"; then
			echo present
			exit 0
		fi
	done
	printf '%s' ":$name:M::$magic:$mask:$qemu:" >"$dir/register"
	echo registered
	;;
off)
	if [[ -f $dir/$name ]] && grep -q "^interpreter $(command -v qemu-aarch64)\$" "$dir/$name"; then
		echo -1 >"$dir/$name"
	fi
	;;
*)
	echo "usage: $0 on|off" >&2
	exit 2
	;;
esac
