/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_RDMACM_H
#define MWP_RDMACM_H

/* What the RDMA CM's files of the provider share: addresses and the
 * devices they belong to (mwp_rdmacm_addr.c).  Private to provider/. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "mwp_ibv.h"

/** sa's address as a GID (IPv4-mapped for IPv4); false: not IP. */
bool mwp_rdmacm_ip_of(const struct sockaddr *sa, uint8_t gid[16]);

/** Is sa the wildcard address of its family? */
bool mwp_rdmacm_any_addr(const struct sockaddr *sa);

/** The device whose port has the address sa, or NULL. */
struct mwp_ibv_dev *mwp_rdmacm_dev_with(const struct sockaddr *sa);

/** The device that reaches dst: one whose port is in its subnet (/24,
 *  /64), else the first of its family; NULL: none. */
struct mwp_ibv_dev *mwp_rdmacm_dev_toward(const struct sockaddr *dst);

/** d's port address of family into sa (port 0); false: it has none. */
bool mwp_rdmacm_dev_addr(const struct mwp_ibv_dev *d, int family,
			 struct sockaddr_storage *sa);

/** A socket address's port, host order; set one. */
uint16_t mwp_rdmacm_port_of(const struct sockaddr *sa);
void mwp_rdmacm_set_port(struct sockaddr *sa, uint16_t port);

/** The length of an AF_INET or AF_INET6 address. */
socklen_t mwp_rdmacm_sa_len(const struct sockaddr *sa);

/** An ephemeral port, as the kernel picks one. */
uint16_t mwp_rdmacm_ephemeral_port(void);

#endif /* MWP_RDMACM_H */
