#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Make (or refresh) the arm64 sysroot that cross/aarch64-linux-gnu.ini
# builds against and qemu-aarch64 runs from: Debian 12's own arm64
# packages (DPDK 22.11, rdma-core, ISA-L, Criterion, libpcap, ...) with
# every library they need, unpacked with dpkg-deb -x.
#
#   cross/aarch64-sysroot.sh [DIR]     default /var/cache/mwpath-aarch64
#
# Why not multiarch (dpkg --add-architecture arm64; apt-get install
# libdpdk-dev:arm64): libisal-dev and libfdt-dev are not Multi-Arch: same,
# so their arm64 and amd64 packages cannot be installed together, and
# libdpdk-dev depends on both.  Here apt resolves the arm64 packages
# against an empty status file of its own and only downloads them: the
# host's packages and its dpkg database are not touched.
#
# Quiet and quick when DIR/sysroot is already made from the same package
# list (DIR/sysroot/.mwpath-packages).
set -euo pipefail

top=${1:-${MWPATH_AARCH64_CACHE:-/var/cache/mwpath-aarch64}}
pkgs=(
	libc6-dev libdpdk-dev libibverbs-dev librdmacm-dev libisal-dev libpcap-dev
	libcriterion-dev zlib1g-dev libjansson-dev
)
sysroot=$top/sysroot
stamp=$sysroot/.mwpath-packages
[[ -f $stamp && $(cat "$stamp") == "${pkgs[*]}" ]] && exit 0

apt_root=$top/apt
mkdir -p "$apt_root"/state/lists/partial "$apt_root"/cache/archives/partial
: >"$apt_root/status"
apt_opts=(
	-o APT::Architecture=arm64 -o APT::Architectures::=arm64
	-o Dir::State="$apt_root/state" -o Dir::State::status="$apt_root/status"
	-o Dir::Cache="$apt_root/cache" -o Debug::NoLocking=1
	-o APT::Install-Recommends=false -o APT::Sandbox::User=root
)
echo "aarch64-sysroot: resolving ${pkgs[*]} for arm64" >&2
apt-get "${apt_opts[@]}" -qq update
apt-get "${apt_opts[@]}" -qq -y --download-only install "${pkgs[@]}" >/dev/null

rm -rf "$sysroot.new"
mkdir -p "$sysroot.new"
n=0
for deb in "$apt_root"/cache/archives/*_arm64.deb "$apt_root"/cache/archives/*_all.deb; do
	[[ -f $deb ]] || continue
	dpkg-deb -x "$deb" "$sysroot.new"
	n=$((n + 1))
done
# Absolute symlinks (libfoo.so -> /usr/lib/...) would lead the linker and
# the loader out of the sysroot, to the host's amd64 files: make them
# relative.
while IFS= read -r link; do
	target=$(readlink "$link")
	ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot.new$target")" "$link"
done < <(find "$sysroot.new" -type l -lname '/*')
rm -rf "$sysroot"
mv "$sysroot.new" "$sysroot"
echo "${pkgs[*]}" >"$stamp"
echo "aarch64-sysroot: $n packages unpacked into $sysroot" >&2
