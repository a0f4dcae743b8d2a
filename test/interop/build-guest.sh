#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the rxe guest of the interop suite (docs/interop.md) from Debian's
# own packages, in OUTDIR:
#
#   build-guest.sh OUTDIR [EXTRA_BINARY...]
#
#   OUTDIR/vmlinuz     Debian's kernel (linux-image-amd64, fetched by
#                      install-deps.sh into /var/cache/mwpath-interop)
#   OUTDIR/initrd.gz   busybox-static as /init (test/interop/guest-init.sh),
#                      the modules rxe, virtio-net, netem and the RDMA CM
#                      need, and rdma-core's tools, rdmacm-utils'
#                      rping, ucmatose, udaddy and riostream, perftest, iproute2 and each
#                      EXTRA_BINARY (at its own path if under /usr, else as
#                      /usr/bin/NAME) with every library they load
#
# Takes about 5 s; rebuilds only when an input is newer than the image.
set -euo pipefail

out=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
cache=${MWPATH_INTEROP_CACHE:-/var/cache/mwpath-interop}
deb=$(ls "$cache"/linux-image-*-amd64_*.deb 2>/dev/null | sort -V | tail -1 || true)
[[ -n $deb ]] || { echo "build-guest: no kernel package in $cache (run ./install-deps.sh)" >&2; exit 1; }

tools=(
	/usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong
	/usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong
	/usr/bin/ib_write_bw /usr/bin/ib_read_bw /usr/bin/ib_send_bw
	/usr/bin/ib_atomic_bw /usr/bin/ib_write_lat /usr/bin/ib_read_lat
	/usr/bin/rdma /usr/sbin/ip /usr/sbin/tc
	/usr/bin/rping /usr/bin/ucmatose /usr/bin/udaddy /usr/bin/riostream
)
extra=("$@")
# the order insmod loads them in (modprobe --show-depends gives each one's
# dependencies first); crc32_generic is needed by rxe but not listed
mods=(virtio_pci virtio_net crc32_generic udp_tunnel ip6_udp_tunnel ib_core
	ib_uverbs rdma_rxe sch_netem ifb act_mirred sch_ingress cls_matchall
	ib_cm iw_cm rdma_cm rdma_ucm)

mkdir -p "$out"
if [[ -e $out/initrd.gz ]]; then
	stale=0
	for f in "$deb" "$here/guest-init.sh" "$0" "${tools[@]}" "${extra[@]}"; do
		[[ $f -nt $out/initrd.gz ]] && stale=1
	done
	[[ $stale -eq 0 ]] && exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kroot=$work/kernel
dpkg-deb -x "$deb" "$kroot"
kver=$(ls "$kroot/lib/modules")
depmod -b "$kroot" "$kver"
cp "$kroot/boot/vmlinuz-$kver" "$out/vmlinuz"

root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,var/run,etc/libibverbs.d,lib/modules,usr/bin,usr/sbin}
cp /bin/busybox "$root/bin/busybox"
install -m 755 "$here/guest-init.sh" "$root/init"

: >"$root/modules.list"
for m in "${mods[@]}"; do
	modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
	name=$(basename "$ko")
	case $name in
	*.ko.xz) xz -dc "$ko" >"$root/lib/modules/${name%.xz}"; name=${name%.xz} ;;
	*) cp "$ko" "$root/lib/modules/$name" ;;
	esac
	echo "$name" >>"$root/modules.list"
done

# the tools, rxe's provider, and every library any of them loads
rxe=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so)
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
for f in "${tools[@]}" "$rxe" "${extra[@]}"; do
	case $f in
	/usr/*) dest=$f ;;
	*) dest=/usr/bin/$(basename "$f") ;;
	esac
	mkdir -p "$root$(dirname "$dest")"
	cp -L "$f" "$root$dest"
	# (a script has none)
	{ ldd "$f" 2>/dev/null || true; } | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -Ln "$lib" "$root$lib"
	done
done
mkdir -p "$root/lib64"
cp -Ln /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
# glibc loads libgcc_s at pthread_exit (rping's threads end that way)
gcc_s=$(ls /lib/x86_64-linux-gnu/libgcc_s.so.1)
cp -Ln "$gcc_s" "$root$gcc_s"
# coreutils' stdbuf library: guest-init.sh line-buffers each job's stdout
mkdir -p "$root/usr/libexec/coreutils"
cp /usr/libexec/coreutils/libstdbuf.so "$root/usr/libexec/coreutils/"

(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out/initrd.gz.tmp"
mv "$out/initrd.gz.tmp" "$out/initrd.gz"
