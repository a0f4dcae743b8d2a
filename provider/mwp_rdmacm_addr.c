/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RDMA CM's addresses on mwpath's devices: which device an address is
 * (its port's IPv4 or IPv6 address), which reaches a destination, ports;
 * and librdmacm's calls that are about addresses and devices alone:
 * rdma_getaddrinfo (getaddrinfo's answers as librdmacm shapes them over
 * IP), rdma_freeaddrinfo, rdma_get_devices, rdma_free_devices.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rte_random.h>

#include "mwp_rdmacm.h"

bool
mwp_rdmacm_ip_of(const struct sockaddr *sa, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	return false;
}

bool
mwp_rdmacm_any_addr(const struct sockaddr *sa)
{
	static const uint8_t zero[16];
	uint8_t g[16];

	if (!mwp_rdmacm_ip_of(sa, g))
		return false;
	return sa->sa_family == AF_INET ? memcmp(g + 12, zero, 4) == 0 :
					  memcmp(g, zero, 16) == 0;
}

/* The device whose port has the address sa, or NULL. */
struct mwp_ibv_dev *
mwp_rdmacm_dev_with(const struct sockaddr *sa)
{
	struct mwp_ibv_dev *devs;
	const unsigned int n = mwp_ibv_devices(&devs);
	uint8_t g[16];

	if (!mwp_rdmacm_ip_of(sa, g))
		return NULL;
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int k = 0; k < devs[i].nb_gids; k++)
			if (memcmp(devs[i].gid[k].raw, g, 16) == 0)
				return &devs[i];
	return NULL;
}

/* The device that reaches dst: one in its subnet, else (or_first) the
 * first of its family. */
struct mwp_ibv_dev *
mwp_rdmacm_dev_toward(const struct sockaddr *dst, bool or_first)
{
	struct mwp_ibv_dev *devs, *first = NULL;
	const unsigned int n = mwp_ibv_devices(&devs);
	uint8_t g[16];

	if (!mwp_rdmacm_ip_of(dst, g))
		return NULL;
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int k = 0; k < devs[i].nb_gids; k++) {
			const uint8_t *m = devs[i].gid[k].raw;
			const bool v4 = mwp_ip_is_v4mapped(m);

			if (v4 != (dst->sa_family == AF_INET))
				continue;
			if (first == NULL)
				first = &devs[i];
			if (v4 ? memcmp(m, g, 15) == 0 : memcmp(m, g, 8) == 0)
				return &devs[i];
		}
	return or_first ? first : NULL;
}

/* The address of d's port in family, into sa (port 0). */
bool
mwp_rdmacm_dev_addr(const struct mwp_ibv_dev *d, int family, struct sockaddr_storage *sa)
{
	for (unsigned int k = 0; k < d->nb_gids; k++) {
		const uint8_t *m = d->gid[k].raw;

		memset(sa, 0, sizeof(*sa));
		if (family == AF_INET && mwp_ip_is_v4mapped(m)) {
			struct sockaddr_in *s = (struct sockaddr_in *)sa;

			s->sin_family = AF_INET;
			memcpy(&s->sin_addr, m + 12, 4);
			return true;
		}
		if (family == AF_INET6 && !mwp_ip_is_v4mapped(m)) {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;

			s->sin6_family = AF_INET6;
			memcpy(&s->sin6_addr, m, 16);
			return true;
		}
	}
	return false;
}

uint16_t
mwp_rdmacm_port_of(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port :
						 ((const struct sockaddr_in *)sa)->sin_port);
}

void
mwp_rdmacm_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

socklen_t
mwp_rdmacm_sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

/* An ephemeral port, as the kernel picks one (32768-60999). */
uint16_t
mwp_rdmacm_ephemeral_port(void)
{
	return (uint16_t)(32768 + rte_rand_max(61000 - 32768));
}


/* mwpath's devices, then the system librdmacm's (the host's own). */
struct ibv_context **
rdma_get_devices(int *num)
{
	struct mwp_ibv_dev *devs;
	const unsigned int n = mwp_ibv_devices(&devs);
	const struct mwp_sys_rdmacm *sys = mwp_rdmacm_sys();
	struct ibv_context **theirs = NULL, **list;
	unsigned int k = 0;
	int m = 0;

	if (sys != NULL && (theirs = sys->get_devices(&m)) == NULL)
		m = 0;
	list = calloc(n + (unsigned int)m + 1, sizeof(*list));
	if (list == NULL) {
		if (theirs != NULL)
			sys->free_devices(theirs);
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct ibv_context *ctx = mwp_ibv_open(&devs[i]);

		if (ctx != NULL)
			list[k++] = ctx;
	}
	/* (their contexts stay open in librdmacm: only the array is freed) */
	for (int i = 0; i < m; i++)
		list[k++] = theirs[i];
	if (theirs != NULL)
		sys->free_devices(theirs);
	if (num != NULL)
		*num = (int)k;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* rdma_getaddrinfo as librdmacm answers it over IP: getaddrinfo's
 * addresses, the port space from the hints (TCP unless UDP/UD), a passive
 * one bound to any address. */
static struct rdma_addrinfo *
rai_from(const struct addrinfo *ai, const struct rdma_addrinfo *hints)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	struct sockaddr *sa;

	if (r == NULL)
		return NULL;
	sa = malloc(ai->ai_addrlen);
	if (sa == NULL) {
		free(r);
		return NULL;
	}
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = hints != NULL && hints->ai_qp_type != 0 ? hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints != NULL && hints->ai_port_space != 0 ? hints->ai_port_space :
			   r->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP;
	if (r->ai_flags & RAI_PASSIVE) {
		r->ai_src_addr = sa;
		r->ai_src_len = ai->ai_addrlen;
	} else {
		r->ai_dst_addr = sa;
		r->ai_dst_len = ai->ai_addrlen;
		if (hints != NULL && hints->ai_src_addr != NULL) {
			r->ai_src_addr = malloc(hints->ai_src_len);
			if (r->ai_src_addr != NULL) {
				memcpy(r->ai_src_addr, hints->ai_src_addr, hints->ai_src_len);
				r->ai_src_len = hints->ai_src_len;
			}
		}
	}
	return r;
}

static int
copy_addr(struct sockaddr **dst, socklen_t *dst_len, const struct sockaddr *src,
	  socklen_t len)
{
	*dst = malloc(len);
	if (*dst == NULL)
		return -1;
	memcpy(*dst, src, len);
	*dst_len = len;
	return 0;
}

/* No node and no service: the hints' addresses as they are (librdmacm:
 * libfabric's verbs provider asks so with the address it was given). */
static int
rai_from_hints(const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		errno = ENOMEM;
		return -1;
	}
	r->ai_flags = hints->ai_flags;
	r->ai_family = hints->ai_family;
	r->ai_qp_type = hints->ai_qp_type;
	r->ai_port_space = hints->ai_port_space;
	if ((hints->ai_dst_len != 0 &&
	     copy_addr(&r->ai_dst_addr, &r->ai_dst_len, hints->ai_dst_addr,
		       hints->ai_dst_len) != 0) ||
	    (hints->ai_src_len != 0 &&
	     copy_addr(&r->ai_src_addr, &r->ai_src_len, hints->ai_src_addr,
		       hints->ai_src_len) != 0)) {
		rdma_freeaddrinfo(r);
		errno = ENOMEM;
		return -1;
	}
	*res = r;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	struct rdma_addrinfo *r = NULL;
	int ret;

	if (res == NULL || (node == NULL && service == NULL && hints == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (node == NULL && service == NULL)
		return rai_from_hints(hints, res);
	if (hints != NULL) {
		h.ai_family = hints->ai_family;
		if (hints->ai_flags & RAI_PASSIVE)
			h.ai_flags |= AI_PASSIVE;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
	}
	/* getaddrinfo's own error code, as librdmacm returns it */
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret != 0)
		return ret;
	/* the first IP answer, as librdmacm keeps one */
	for (a = ai; a != NULL && r == NULL; a = a->ai_next)
		if (a->ai_family == AF_INET || a->ai_family == AF_INET6)
			r = rai_from(a, hints);
	freeaddrinfo(ai);
	if (r == NULL)
		return EAI_NONAME;
	*res = r;
	return 0;
}
