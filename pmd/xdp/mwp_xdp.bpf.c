// SPDX-License-Identifier: BSD-3-Clause
/*
 * mwpath's XDP program for net_af_xdp (docs/host.md "AF_XDP"): a kernel
 * interface stays the kernel's -- its addresses, ARP, ND, TCP, SSH -- and
 * only RoCEv2 for the port's own addresses goes to mwpath's AF_XDP
 * sockets, on the queue it arrived on.
 *
 * The PMD loads it (devarg xdp_prog=; mwpath adds it to a net_af_xdp vdev
 * that has none) and fills xsks_map with its sockets; mwpath puts the
 * port's addresses in mwp_addrs once the port has started.  Until then,
 * and for any address not in it, everything passes to the kernel.
 *
 * Goes to mwpath: Ethernet, at most one 802.1Q/802.1ad tag, IPv4 without
 * options and not a fragment, or IPv6 with UDP as its first next header;
 * UDP to port 4791; destination one of mwp_addrs (IPv4 as ::ffff:a.b.c.d,
 * as RoCE GIDs are).  A RoCE frame that is anything else (IPv4 options,
 * fragments, IPv6 extension headers) is not one mwpath would take either:
 * the kernel gets it, and answers UDP 4791 as it answers any closed port.
 * mwp_stats counts what each verdict took, per CPU.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROCE_V2_PORT 4791
#define MWP_XDP_QUEUES 64

/* the PMD's: socket of each rx queue (its name is the PMD's contract) */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MWP_XDP_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* the port's addresses: IPv6, or IPv4-mapped; the value is unused */
struct mwp_xdp_addr {
	__u8 ip[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, struct mwp_xdp_addr);
	__type(value, __u32);
} mwp_addrs SEC(".maps");

/* 0: to mwpath, 1: RoCE for an address not mwpath's, 2: everything else
 * to the kernel, 3: to mwpath but its queue had no socket (passed) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} mwp_stats SEC(".maps");

static __always_inline void
count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&mwp_stats, &what);

	if (n != NULL)
		(*n)++;
}

static __always_inline int
to_kernel(__u32 what)
{
	count(what);
	return XDP_PASS;
}

SEC("xdp")
int
mwp_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct mwp_xdp_addr a = { .ip = { 0 } };
	__u32 q = ctx->rx_queue_index;
	struct udphdr *udp;
	__u16 proto;
	void *l3;

	if ((void *)(eth + 1) > end)
		return to_kernel(2);
	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		__u16 *tag = l3;

		if ((void *)(tag + 2) > end)
			return to_kernel(2);
		proto = tag[1];
		l3 = tag + 2;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & bpf_htons(0x3fff)) != 0)
			return to_kernel(2);
		udp = (void *)(ip + 1);
		a.ip[10] = 0xff;
		a.ip[11] = 0xff;
		__builtin_memcpy(&a.ip[12], &ip->daddr, 4);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return to_kernel(2);
		udp = (void *)(ip6 + 1);
		__builtin_memcpy(a.ip, &ip6->daddr, 16);
	} else {
		return to_kernel(2);
	}
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(ROCE_V2_PORT))
		return to_kernel(2);
	if (bpf_map_lookup_elem(&mwp_addrs, &a) == NULL)
		return to_kernel(1);
	if (bpf_map_lookup_elem(&xsks_map, &q) == NULL)
		return to_kernel(3);
	count(0);
	return bpf_redirect_map(&xsks_map, q, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
