/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_RDMACM_H
#define MWP_RDMACM_H

/* What the RDMA CM's files of the provider share: addresses and the
 * devices they belong to (mwp_rdmacm_addr.c).  Private to provider/. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>

#include "mwp_ibv.h"

/** sa's address as a GID (IPv4-mapped for IPv4); false: not IP. */
bool mwp_rdmacm_ip_of(const struct sockaddr *sa, uint8_t gid[16]);

/** Is sa the wildcard address of its family? */
bool mwp_rdmacm_any_addr(const struct sockaddr *sa);

/** The device whose port has the address sa, or NULL. */
struct mwp_ibv_dev *mwp_rdmacm_dev_with(const struct sockaddr *sa);

/** The device that reaches dst: one whose port is in its subnet (/24,
 *  /64), else (with or_first) the first of its family; NULL: none. */
struct mwp_ibv_dev *mwp_rdmacm_dev_toward(const struct sockaddr *dst, bool or_first);

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

/**
 * A synchronous id's call that found its channel non-blocking (it said
 * EAGAIN): its event now, as the call would have waited for it; want:
 * the event that is success.  0, or -1 with errno (EAGAIN: not yet; the
 * event's status, as the call says it).  For rsockets' non-blocking
 * connect and accept (mwp_rsocket.c), as librdmacm's ucma_complete.
 */
int mwp_rdmacm_complete(struct rdma_cm_id *id, enum rdma_cm_event_type want);

/** The system's librdmacm (mwp_rdmacm_sys.c): its functions. */
struct mwp_sys_rdmacm {
	struct rdma_event_channel *(*create_event_channel)(void);
	void (*destroy_event_channel)(struct rdma_event_channel *ch);
	int (*get_cm_event)(struct rdma_event_channel *ch, struct rdma_cm_event **ev);
	int (*ack_cm_event)(struct rdma_cm_event *ev);
	int (*create_id)(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx,
			 enum rdma_port_space ps);
	int (*destroy_id)(struct rdma_cm_id *id);
	int (*bind_addr)(struct rdma_cm_id *id, struct sockaddr *addr);
	int (*resolve_addr)(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
			    int timeout_ms);
	int (*resolve_route)(struct rdma_cm_id *id, int timeout_ms);
	int (*listen)(struct rdma_cm_id *id, int backlog);
	int (*connect)(struct rdma_cm_id *id, struct rdma_conn_param *p);
	int (*accept)(struct rdma_cm_id *id, struct rdma_conn_param *p);
	int (*reject)(struct rdma_cm_id *id, const void *pd, uint8_t len);
	int (*disconnect)(struct rdma_cm_id *id);
	int (*establish)(struct rdma_cm_id *id);
	int (*notify)(struct rdma_cm_id *id, enum ibv_event_type event);
	int (*set_option)(struct rdma_cm_id *id, int level, int optname, void *optval,
			  size_t optlen);
	int (*init_qp_attr)(struct rdma_cm_id *id, struct ibv_qp_attr *a, int *mask);
	int (*create_qp)(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *a);
	int (*create_qp_ex)(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *a);
	void (*destroy_qp)(struct rdma_cm_id *id);
	int (*create_srq)(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *a);
	int (*create_srq_ex)(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *a);
	void (*destroy_srq)(struct rdma_cm_id *id);
	int (*join_multicast)(struct rdma_cm_id *id, struct sockaddr *addr, void *ctx);
	int (*join_multicast_ex)(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *a,
				 void *ctx);
	int (*leave_multicast)(struct rdma_cm_id *id, struct sockaddr *addr);
	int (*set_local_ece)(struct rdma_cm_id *id, struct ibv_ece *ece);
	int (*get_remote_ece)(struct rdma_cm_id *id, struct ibv_ece *ece);
	int (*reject_ece)(struct rdma_cm_id *id, const void *pd, uint8_t len);
	struct ibv_context **(*get_devices)(int *num);
	void (*free_devices)(struct ibv_context **list);
};

/** The system's librdmacm where the kernel's RDMA CM is and it loaded;
 *  NULL: every address is mwpath's. */
const struct mwp_sys_rdmacm *mwp_rdmacm_sys(void);

#endif /* MWP_RDMACM_H */
