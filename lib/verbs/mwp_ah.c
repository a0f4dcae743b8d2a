/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address handles (ibv_create_ah): the destination of UD sends.  RoCE
 * addresses by GID, so a handle must carry one (a GRH); the destination
 * MAC is not in the handle but found when a send goes, in the port's
 * neighbour table (ARP, ND), as a NIC does.  Multicast is not supported.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>

#include "mwp_ah.h"
#include "mwp_errno.h"
#include "mwp_verbs.h"

/* Is gid IPv4-mapped (::ffff:a.b.c.d)? */
static bool
v4mapped(const uint8_t *gid)
{
	static const uint8_t pre[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, pre, sizeof(pre)) == 0;
}

/* Out of the device's list: its PD is free of it. */
static void
ah_release(struct mwp_dev_obj *o)
{
	struct mwp_ah *ah = container_of(o, struct mwp_ah, obj);

	pthread_mutex_lock(&o->dev->lock);
	to_mpd(ah->ibah.pd)->obj.users--;
	pthread_mutex_unlock(&o->dev->lock);
	free(ah);
}

struct ibv_ah *
mwp_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	static const uint8_t zero[16];
	const uint8_t *gid;
	struct mwp_ah *ah;
	struct mwp_dev *d;

	if (pd == NULL || attr == NULL)
		return mwp_null_errno(EINVAL);
	d = to_mdev(pd->context);
	gid = attr->grh.dgid.raw;
	/* RoCE: a GRH, on the one port */
	if (!attr->is_global || attr->port_num != 1 || memcmp(gid, zero, 16) == 0)
		return mwp_null_errno(EINVAL);
	/* multicast (ff00::/8, or IPv4 224.0.0.0/4): not supported */
	if (gid[0] == 0xff || (v4mapped(gid) && (gid[12] & 0xf0) == 0xe0))
		return mwp_null_errno(EOPNOTSUPP);
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL)
		return mwp_null_errno(ENOMEM);
	memcpy(ah->dest.gid, gid, 16);
	ah->dest.ipv4 = v4mapped(gid);
	ah->dest.flow_label = attr->grh.flow_label & 0xfffff;
	ah->dest.tclass = attr->grh.traffic_class;
	ah->dest.hop_limit = attr->grh.hop_limit != 0 ? attr->grh.hop_limit : 64;
	ah->dest.sl = attr->sl;
	ah->ibah.context = pd->context;
	ah->ibah.pd = pd;
	pthread_mutex_lock(&d->lock);
	to_mpd(pd)->obj.users++;
	pthread_mutex_unlock(&d->lock);
	mwp_dev_obj_add(d, &d->ahs, &ah->obj, ah_release);
	return &ah->ibah;
}

int
mwp_destroy_ah(struct ibv_ah *ibah)
{
	if (ibah == NULL)
		return EINVAL;
	return mwp_dev_obj_del(&to_mah(ibah)->obj);
}

/* Is the GRH area an IPv4 header after twenty bytes (RoCE v2 over
 * IPv4)?  rdma-core's test: not version 6, or an IPv4 header of five
 * words whose checksum holds. */
static bool
grh_is_ipv4(const struct ibv_grh *grh)
{
	const struct iphdr *ip = (const void *)((const uint8_t *)grh + 20);
	const uint8_t *b = (const uint8_t *)ip;
	uint32_t sum = 0;

	if ((be32toh(grh->version_tclass_flow) >> 28) != 6)
		return ip->version == 4;
	if (ip->ihl != 5)
		return false;
	for (unsigned int i = 0; i < 20; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

int
mwp_ah_attr_from_grh(const struct ibv_wc *wc, const struct ibv_grh *grh,
		     struct ibv_ah_attr *a, union ibv_gid *local)
{
	memset(a, 0, sizeof(*a));
	memset(local, 0, sizeof(*local));
	a->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
	a->dlid = wc->slid;
	a->sl = wc->sl;
	a->src_path_bits = wc->dlid_path_bits;
	a->port_num = 1;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	a->is_global = 1;
	if (grh_is_ipv4(grh)) {
		const struct iphdr *ip = (const void *)((const uint8_t *)grh + 20);

		if ((be32toh(ip->daddr) >> 28) == 0xe)
			return EINVAL;
		local->raw[10] = local->raw[11] = 0xff;
		memcpy(&local->raw[12], &ip->daddr, 4);
		memset(&a->grh.dgid, 0, sizeof(a->grh.dgid));
		a->grh.dgid.raw[10] = a->grh.dgid.raw[11] = 0xff;
		memcpy(&a->grh.dgid.raw[12], &ip->saddr, 4);
		a->grh.hop_limit = ip->ttl;
		a->grh.traffic_class = ip->tos;
		return 0;
	}
	if ((be32toh(grh->version_tclass_flow) >> 28) != 6 || grh->next_hdr != IPPROTO_UDP)
		return EPROTONOSUPPORT;
	if (grh->dgid.raw[0] == 0xff)
		return EINVAL;
	*local = grh->dgid;
	a->grh.dgid = grh->sgid;
	a->grh.hop_limit = grh->hop_limit;
	a->grh.traffic_class = (be32toh(grh->version_tclass_flow) >> 20) & 0xff;
	return 0;
}
