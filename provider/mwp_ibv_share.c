/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A device shared by processes ([device N] share = on): programs started
 * apart and the processes they fork each drive the port's address with
 * a packet socket of their own on the one kernel interface, so each sees
 * every frame; each takes the QP numbers and CM communication IDs of its
 * own part, and the CMs agree, through a table in shared memory
 * (/dev/shm/mwpath-share-<interface>-<MAC>), who listens on what and who
 * answers for nobody.  docs/verbs-device.md "A device shared by
 * processes".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_memory.h>
#include <rte_pause.h>

#include "mwp_ibv.h"

#define SHARE_LISTENS	256

/* The processes' table: a lock that works across them and survives a
 * process killed holding it (a robust, process-shared mutex, made once:
 * state 0 none, 1 being made, 2 made), the pid that holds each part (0:
 * free), and the listeners. */
struct mwp_ibv_share_tbl {
	uint32_t state;
	pthread_mutex_t lock;
	int32_t member[MWP_IBV_SHARE_PARTS];
	struct {
		uint64_t sid, mask;
		int32_t pid;		/* 0: free */
	} listen[SHARE_LISTENS];
};

/* The table's mutex: made by the first process to come (a new table is
 * zeros); one whose owner died holding it is taken over (the entries it
 * was changing are single words, each whole). */
static void
tbl_lock(struct mwp_ibv_share_tbl *t)
{
	uint32_t none = 0;

	if (__atomic_compare_exchange_n(&t->state, &none, 1, false, __ATOMIC_ACQUIRE,
					__ATOMIC_ACQUIRE)) {
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		pthread_mutex_init(&t->lock, &a);
		pthread_mutexattr_destroy(&a);
		__atomic_store_n(&t->state, 2, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) != 2)
		rte_pause();
	if (pthread_mutex_lock(&t->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&t->lock);
}

static bool
alive(int32_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Parts and listeners of processes gone (a crash leaves them). */
static void
purge(struct mwp_ibv_share_tbl *t)
{
	for (unsigned int i = 0; i < MWP_IBV_SHARE_PARTS; i++)
		if (t->member[i] != 0 && !alive(t->member[i]))
			t->member[i] = 0;
	for (unsigned int i = 0; i < SHARE_LISTENS; i++)
		if (t->listen[i].pid != 0 && !alive(t->listen[i].pid))
			t->listen[i].pid = 0;
}

/* A free part for this process, or -1. */
static int
join(struct mwp_ibv_share_tbl *t)
{
	int part = -1;

	tbl_lock(t);
	purge(t);
	for (unsigned int i = 0; i < MWP_IBV_SHARE_PARTS; i++)
		if (t->member[i] == 0) {
			t->member[i] = (int32_t)getpid();
			part = (int)i;
			break;
		}
	pthread_mutex_unlock(&t->lock);
	return part;
}

int
mwp_ibv_share_create(struct mwp_ibv_dev *d, const char *ifname)
{
	char name[NAME_MAX];
	struct mwp_ibv_share_tbl *t;
	struct stat st;
	int fd, err;

	/* one table per interface and MAC: the processes that are one
	 * device.  A new file is all zeros, which is an empty table (the
	 * lock free, no member, no listener): whoever comes first needs
	 * no step the others could see half done. */
	snprintf(name, sizeof(name), "/mwpath-share-%s-%02x%02x%02x%02x%02x%02x", ifname,
		 d->pc.mac.addr_bytes[0], d->pc.mac.addr_bytes[1], d->pc.mac.addr_bytes[2],
		 d->pc.mac.addr_bytes[3], d->pc.mac.addr_bytes[4], d->pc.mac.addr_bytes[5]);
	fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 ||
	    ((size_t)st.st_size < sizeof(*t) && ftruncate(fd, sizeof(*t)) != 0)) {
		err = errno;
		close(fd);
		return -err;
	}
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (t == MAP_FAILED)
		return -err;
	d->share = t;
	d->share_part = join(t);
	return 0;
}

int
mwp_ibv_share_join(struct mwp_ibv_dev *d)
{
	d->share_part = join(d->share);
	return d->share_part < 0 ? -ENOSPC : 0;
}

void
mwp_ibv_share_leave(struct mwp_ibv_dev *d)
{
	struct mwp_ibv_share_tbl *t = d->share;
	const int32_t me = (int32_t)getpid();

	if (t == NULL || d->share_part < 0)
		return;
	tbl_lock(t);
	if (t->member[d->share_part] == me)
		t->member[d->share_part] = 0;
	for (unsigned int i = 0; i < SHARE_LISTENS; i++)
		if (t->listen[i].pid == me)
			t->listen[i].pid = 0;
	pthread_mutex_unlock(&t->lock);
}

void
mwp_ibv_share_qpns(int part, uint32_t *lo, uint32_t *hi)
{
	const uint32_t span = (ROCE_PSN_MASK + 1) / MWP_IBV_SHARE_PARTS;

	*lo = part == 0 ? 0x11 : (uint32_t)part * span;
	*hi = (uint32_t)part * span + span - 1;
}

int
mwp_ibv_share_listen(struct mwp_ibv_dev *d, uint64_t sid, uint64_t mask)
{
	struct mwp_ibv_share_tbl *t = d->share;
	const int32_t me = (int32_t)getpid();
	int free_slot = -1, ret = 0;

	if (t == NULL)
		return 0;
	if (mask == 0)
		mask = UINT64_MAX;
	tbl_lock(t);
	purge(t);
	for (unsigned int i = 0; i < SHARE_LISTENS; i++) {
		if (t->listen[i].pid == 0) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		/* our own are the CM's to judge (mwp_cm_listen) */
		if (t->listen[i].pid != me &&
		    ((sid ^ t->listen[i].sid) & mask & t->listen[i].mask) == 0)
			ret = EADDRINUSE;
	}
	if (ret == 0 && free_slot < 0)
		ret = ENOSPC;
	if (ret == 0) {
		t->listen[free_slot].sid = sid & mask;
		t->listen[free_slot].mask = mask;
		t->listen[free_slot].pid = me;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

void
mwp_ibv_share_unlisten(struct mwp_ibv_dev *d, uint64_t sid, uint64_t mask)
{
	struct mwp_ibv_share_tbl *t = d->share;
	const int32_t me = (int32_t)getpid();

	if (t == NULL)
		return;
	if (mask == 0)
		mask = UINT64_MAX;
	tbl_lock(t);
	for (unsigned int i = 0; i < SHARE_LISTENS; i++)
		if (t->listen[i].pid == me && t->listen[i].sid == (sid & mask) &&
		    t->listen[i].mask == mask) {
			t->listen[i].pid = 0;
			break;
		}
	pthread_mutex_unlock(&t->lock);
}

/* mwp_cm_share_ops: does another live process listen on sid? */
static bool
others_listen(void *arg, uint64_t sid)
{
	struct mwp_ibv_dev *d = arg;
	struct mwp_ibv_share_tbl *t = d->share;
	const int32_t me = (int32_t)getpid();
	bool yes = false;

	tbl_lock(t);
	for (unsigned int i = 0; i < SHARE_LISTENS && !yes; i++)
		yes = t->listen[i].pid != 0 && t->listen[i].pid != me &&
		      ((sid ^ t->listen[i].sid) & t->listen[i].mask) == 0 &&
		      alive(t->listen[i].pid);
	pthread_mutex_unlock(&t->lock);
	return yes;
}

/* mwp_cm_share_ops: the lowest part alive answers for nobody. */
static bool
answers_strays(void *arg)
{
	struct mwp_ibv_dev *d = arg;
	struct mwp_ibv_share_tbl *t = d->share;
	int first = -1;

	tbl_lock(t);
	for (unsigned int i = 0; i < MWP_IBV_SHARE_PARTS && first < 0; i++)
		if (t->member[i] != 0 && alive(t->member[i]))
			first = (int)i;
	pthread_mutex_unlock(&t->lock);
	return first == d->share_part;
}

int
mwp_ibv_share_cm(struct mwp_ibv_dev *d)
{
	const struct mwp_cm_share_ops ops = {
		.others_listen = others_listen,
		.answers_strays = answers_strays,
		.arg = d,
	};

	return mwp_cm_share(d->cm, (uint32_t)d->share_part, MWP_IBV_SHARE_PART_BITS, &ops);
}

/* One memory list of the EAL's, made this process's own: a copy of what
 * it holds now (the pages in use: those never touched read as zeros) in
 * anonymous memory, moved to the same address. */
static int
privatize(const struct rte_memseg_list *msl, void *arg)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = msl->len;
	unsigned char *in = NULL;
	uint8_t *copy;
	int *err = arg;

	if (msl->external || msl->base_va == NULL || len == 0 || msl->memseg_arr.count == 0)
		return 0;
	copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy == MAP_FAILED) {
		*err = errno;
		return -1;
	}
	in = malloc(len / page + 1);
	if (in != NULL && mincore(msl->base_va, len, in) != 0) {
		free(in);
		in = NULL;
	}
	for (size_t off = 0; off < len; off += page)
		if (in == NULL || (in[off / page] & 1))
			memcpy(copy + off, (const uint8_t *)msl->base_va + off, page);
	free(in);
	if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, msl->base_va) == MAP_FAILED) {
		*err = errno;
		munmap(copy, len);
		return -1;
	}
	return 0;
}

int
mwp_ibv_share_privatize(void)
{
	int err = 0;

	if (rte_memseg_list_walk_thread_unsafe(privatize, &err) != 0)
		return -(err != 0 ? err : EIO);
	return 0;
}
