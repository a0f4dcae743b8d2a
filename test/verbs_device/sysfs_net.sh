#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
#   sysfs_net.sh DEVICE IFNAME COMMAND...
#
# Run COMMAND in a mount namespace of its own (run it under unshare -m)
# where /sys/class/infiniband/DEVICE/device/net/IFNAME exists: the one
# thing of a kernel RDMA device's sysfs that rdma-core's Python tests read
# to find a device's network interface (tests/base.py, _get_ip_mac: it
# lists that folder, then asks `ip` for the interface's address).  A
# device in user space has no sysfs; everything else under /sys/class is
# the real one, bound in again.  Nothing outside the namespace changes.
set -e
dev=$1
ifname=$2
shift 2
mount --make-rprivate /
t=$(mktemp -d)
mount -t tmpfs mwpath-sysfs "$t"
for e in /sys/class/*; do
	[ "${e##*/}" = infiniband ] && continue
	mkdir "$t/${e##*/}"
	mount --bind "$e" "$t/${e##*/}"
done
# the host's own RDMA devices, if it has any, stay beside it
mkdir "$t/infiniband"
for e in /sys/class/infiniband/*; do
	[ -e "$e" ] || continue
	mkdir "$t/infiniband/${e##*/}"
	mount --bind "$e" "$t/infiniband/${e##*/}"
done
mkdir -p "$t/infiniband/$dev/device/net/$ifname"
mount --bind "$t" /sys/class
exec "$@"
