// SPDX-License-Identifier: BSD-3-Clause
/*
 * tc ingress on an interface mwpath drives through net_af_packet: the
 * kernel's own stack takes nothing received there (a NIC bound to DPDK),
 * while mwpath's packet socket, which the kernel serves before tc, still
 * sees every frame.  Without it, a port whose host keeps its addresses on
 * a tap would be answered twice: by the tap's kernel, and by the same
 * kernel through this interface (Linux answers for any of its addresses
 * on any interface).  This kernel has no matchall or gact, hence BPF.
 *
 *	clang -O2 -target bpf -c kernel_off.bpf.c -o kernel_off.o
 *	tc qdisc add dev IF clsact
 *	tc filter add dev IF ingress bpf da obj kernel_off.o sec tc
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

__attribute__((section("tc"), used)) int
kernel_off(struct __sk_buff *skb)
{
	(void)skb;
	return TC_ACT_SHOT;
}

char _license[] __attribute__((section("license"), used)) = "Dual BSD/GPL";
