#!/bin/busybox sh
# SPDX-License-Identifier: BSD-3-Clause
#
# /init of the rxe guest (test/interop/build-guest.sh). Loads the modules,
# gives eth0 the addresses the kernel command line names (mwp.ip4=,
# mwp.ip6=), adds rxe0 on it, waits for its RoCE v2 GIDs, then serves the
# host (test/interop/guest.py) on the second serial port, one line each way:
#
#   host: RUN ID SECS BASE64-COMMAND   guest: STARTED ID
#         (runs `sh -c COMMAND` in the background, killed after SECS)
#   host: WAIT ID                      guest: DONE ID STATUS BASE64-OUTPUT
#   host: QUIT                         (powers off)
#
# The first line the guest writes is READY GID4-INDEX GID6-INDEX or FAIL WHY.
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp

exec 3<>/dev/ttyS1
stty -F /dev/ttyS1 raw -echo
fail() {
	echo "FAIL $*" >&3
	echo "guest: $*"
	poweroff -f
}

for m in $(cat /modules.list); do
	insmod "/lib/modules/$m" || fail "insmod $m"
done
ip4= ip6=
for arg in $(cat /proc/cmdline); do
	case $arg in
	mwp.ip4=*) ip4=${arg#mwp.ip4=} ;;
	mwp.ip6=*) ip6=${arg#mwp.ip6=} ;;
	esac
done
# iproute2's ip, by full path: busybox's applet lacks nodad
/usr/sbin/ip link set lo up
# no duplicate address detection: a tentative link-local address keeps
# the first neighbour solicitations from going out
echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad
/usr/sbin/ip link set eth0 up
/usr/sbin/ip addr add "$ip4" dev eth0 || fail "ip addr $ip4"
/usr/sbin/ip addr add "$ip6" dev eth0 nodad || fail "ip addr $ip6"
/usr/bin/rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add"

# the RoCE v2 GIDs of the two addresses fill in asynchronously
want4=$(echo "${ip4%/*}" | awk -F. '{printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4}')
port=/sys/class/infiniband/rxe0/ports/1
g4= g6= tries=0
while [ -z "$g4" ] || [ -z "$g6" ]; do
	tries=$((tries + 1))
	[ $tries -gt 300 ] && fail "no RoCE v2 GIDs: $(cat $port/gids/* 2>&1 | tr '\n' ' ')"
	for i in 0 1 2 3 4 5 6 7; do
		gid=$(cat $port/gids/$i 2>/dev/null) || continue
		type=$(cat $port/gid_attrs/types/$i 2>/dev/null) || continue
		[ "$type" = "RoCE v2" ] || continue
		case $gid in
		"$want4") g4=$i ;;
		fe80:*|0000:*) ;;
		*) g6=$i ;;
		esac
	done
	[ -n "$g4" ] && [ -n "$g6" ] || sleep 0.1
done
# virtio-net's carrier comes some seconds after the GIDs under TCG; until
# then neighbour discovery fails and rxe cannot resolve a peer
tries=0
until [ "$(cat /sys/class/net/eth0/operstate)" = up ]; do
	tries=$((tries + 1))
	[ $tries -gt 300 ] && fail "eth0 has no carrier"
	sleep 0.1
done
echo "guest: rxe0 ready, RoCE v2 GIDs $g4 (IPv4) and $g6 (IPv6)"

# The server runs in a child of init, and each job is started through a
# subshell that exits at once: the job is then init's orphan, and its end
# signals init, not the server. busybox's `read` restarts from scratch when
# SIGCHLD interrupts it, losing the part of the line it had read (a job
# ending while a command arrived garbled that command).
serve() {
	echo "READY $g4 $g6" >&3
	while read -r cmd id arg1 arg2 <&3; do
		case $cmd in
		RUN)
			echo "$arg2" | base64 -d >/tmp/$id.sh
			# the status in a file, line-buffered stdout: a job killed
			# at its time limit still shows its output
			( (export LD_PRELOAD=/usr/libexec/coreutils/libstdbuf.so _STDBUF_O=L
			   timeout -s KILL "$arg1" sh /tmp/$id.sh >/tmp/$id.out 2>&1
			   echo $? >/tmp/$id.st.tmp && mv /tmp/$id.st.tmp /tmp/$id.st) & )
			echo "STARTED $id" >&3
			;;
		WAIT)
			while [ ! -e /tmp/$id.st ]; do sleep 0.05; done
			echo "DONE $id $(cat /tmp/$id.st) $(base64 -w 0 /tmp/$id.out)" >&3
			;;
		QUIT)
			break
			;;
		*)
			echo "ERROR unknown command $cmd" >&3
			;;
		esac
	done
	poweroff -f
}
serve &
# init reaps the jobs
while :; do
	wait
	sleep 1
done
