// SPDX-License-Identifier: BSD-3-Clause
/*
 * ECN marking for a Linux bottleneck whose kernel has no marking qdisc
 * (this machine's has htb, tbf and fifo, but no red, codel or fq_codel):
 * a tc egress program (clsact, before the qdisc) keeps a virtual queue
 * that drains at the bottleneck's rate -- it grows by every frame and
 * shrinks by RATE_BPS over the time between frames, so it is the backlog
 * of the htb class behind it -- and marks ECN-capable IPv4 frames CE as
 * RED with ECN would on that backlog: never below KMIN bytes, always
 * above KMAX, with a probability rising linearly between (a switch's
 * DCQCN configuration: kmin, kmax, pmax = 1).  The frames themselves are
 * queued and dropped by the real qdisc.  A RoCEv2 frame stays valid: its
 * ICRC masks the TOS byte.
 *
 *   clang -O2 -target bpf -DRATE_BPS=... -DKMIN=... -DKMAX=... -c
 *   tc qdisc add dev IF clsact; tc filter add dev IF egress bpf da obj O sec tc
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <stddef.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef RATE_BPS
#define RATE_BPS 100000000ULL
#endif
#ifndef KMIN
#define KMIN 15000
#endif
#ifndef KMAX
#define KMAX 45000
#endif

struct vq {
	struct bpf_spin_lock lock;
	__u64 last_ns;		/* the last frame's arrival */
	__u64 backlog;		/* bytes, at last_ns */
	__u64 marked;		/* frames marked CE */
	__u64 frames;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vq);
} vq_map SEC(".maps");

SEC("tc")
int ecn_mark(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u64 now = bpf_ktime_get_ns(), drained, q;
	__u32 key = 0;
	struct vq *v = bpf_map_lookup_elem(&vq_map, &key);

	if (v == NULL)
		return TC_ACT_OK;
	bpf_spin_lock(&v->lock);
	drained = (now - v->last_ns) * (RATE_BPS / 8) / 1000000000ULL;
	q = v->backlog > drained ? v->backlog - drained : 0;
	q += skb->len;
	v->backlog = q;
	v->last_ns = now;
	v->frames++;
	bpf_spin_unlock(&v->lock);

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	if ((ip->tos & 3) == 0 || (ip->tos & 3) == 3 || q <= KMIN)
		return TC_ACT_OK;
	if (q < KMAX && bpf_get_prandom_u32() % (KMAX - KMIN) >= q - KMIN)
		return TC_ACT_OK;
	{
		__u16 old = *(__u16 *)ip;
		__u8 tos = ip->tos | 3;
		__u16 new;

		bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos), &tos, 1, 0);
		data = (void *)(long)skb->data;
		end = (void *)(long)skb->data_end;
		ip = (void *)((struct ethhdr *)data + 1);
		if ((void *)(ip + 1) > end)
			return TC_ACT_OK;
		new = *(__u16 *)ip;
		bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old, new, 2);
	}
	__sync_fetch_and_add(&v->marked, 1);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
