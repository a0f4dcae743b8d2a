#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Install what mwpath needs from Debian 12's packages, and nothing that is
# already there.  Quiet and quick when everything is installed; runs
# `apt-get update` once, only when something must be installed.
#
#   ./install-deps.sh          build, run and test
#   ./install-deps.sh --bench  also what bench/ needs (valgrind)
#   ./install-deps.sh --aarch64
#                              also the aarch64 stage's: the cross compiler,
#                              qemu-user, and the arm64 sysroot of Debian's
#                              own packages (cross/aarch64-sysroot.sh)
#
# Also fetches (not installs) Debian's kernel package into $kcache: the
# interop suite's guest boots it (test/interop/build-guest.sh).
set -euo pipefail

pkgs=(
	# build
	gcc pkg-config meson ninja-build
	dpdk-dev libdpdk-dev libibverbs-dev libpcap-dev
	librdmacm-dev    # the RDMA CM's API, which the libibverbs device gives (docs/cm.md)
	libisal-dev      # ICRC: ISA-L's carry-less-multiply CRC-32 (see lib/wire/roce_icrc.h)
	clang libbpf-dev # net_af_xdp: mwpath's XDP program (pmd/xdp/) and its maps; also
			 # the libFuzzer target and the live tests' BPF (ECN marker, kernel off)
	libjansson-dev   # JSON written with a library (bench results, the app's files)
	# tests
	libcriterion-dev zlib1g-dev
	python3 python3-scapy tshark
	python3-matplotlib dpdk	# bench/plot.py; dpdk-testpmd, pcap_rate.py's baseline (bench-cli)
	iproute2 iputils-ping	# live tests: veths, namespaces, ping
	ethtool          # ... a veth's checksum offload off (test/py/test_host.py)
	qperf libfabric-bin	# qperf -cm1, fi_pingpong: on the exception path and AF_XDP (docs/host.md)
	ibverbs-utils perftest	# the libibverbs device: unmodified tools on it
	python3-pyverbs		# ... and rdma-core's own tests
	rdmacm-utils		# rping, ucmatose, udaddy, riostream: librdmacm programs on it
	ucx-utils openmpi-bin libopenmpi-dev	# UCX (ucx_perftest) and Open MPI over UCX on it
	qemu-system-x86 busybox-static cpio kmod	# the rxe guest of test/interop/
)
aarch64=false
for arg in "$@"; do
	case $arg in
	--bench) pkgs+=(valgrind) ;;	# callgrind, for bench/instr_count.sh
	--aarch64)
		# test/run-all.sh's aarch64 stage (cross/aarch64-linux-gnu.ini)
		pkgs+=(gcc-aarch64-linux-gnu qemu-user)
		aarch64=true ;;
	*) echo "install-deps: unknown option $arg (--bench, --aarch64)" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
kcache=${MWPATH_INTEROP_CACHE:-/var/cache/mwpath-interop}
kernel=$(ls "$kcache"/linux-image-*-amd64_*.deb 2>/dev/null || true)
cross_sysroot() {
	# silent and quick when the sysroot is up to date
	$aarch64 || return 0
	local run=()
	[[ $(id -u) -eq 0 ]] || run=(sudo)
	"${run[@]}" "$(dirname "$0")/cross/aarch64-sysroot.sh"
}
if [[ ${#missing[@]} -eq 0 && -n $kernel ]]; then
	cross_sysroot
	exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
	command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
if [[ ${#missing[@]} -gt 0 ]]; then
	echo "install-deps: installing ${missing[*]}" >&2
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ -z $kernel ]]; then
	# the package linux-image-amd64 points at, downloaded only
	kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
	echo "install-deps: fetching $kpkg into $kcache" >&2
	"${sudo[@]}" mkdir -p "$kcache"
	(cd "$kcache" && "${sudo[@]}" apt-get download -qq "$kpkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
	ls "$kcache"/linux-image-*-amd64_*.deb >/dev/null
fi
cross_sysroot
echo "install-deps: done" >&2
