/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef MWP_PLACE_H
#define MWP_PLACE_H

/*
 * Bytes placed in a program's memory (private to libmwpath): a WRITE's
 * or a SEND's payload, a READ's response.  Every byte is stored once,
 * and the stores go in ascending address order.
 *
 * A program may watch the memory a peer writes into rather than wait for
 * a completion, and change what it finds at once.  rsockets does: a
 * sender reads the length of the buffer grant its peer writes into its
 * target SGL and moves the grant on as it sends.  ib_write_lat polls a
 * buffer's last byte.  A copy that stores some bytes twice -- rte_memcpy
 * and glibc's memcpy both end with a move that overlaps the one before,
 * and the 16..64-byte path once made four overlapping 16-byte moves --
 * puts a byte back after the program may already have changed it,
 * whenever the placing thread is preempted between the two stores.  A
 * grant put back that way had rsockets write two halves of its peer's
 * ring over each other (test_rdmacm.py, rstream through librspreload).
 * A NIC's DMA writes each byte once; so does this.
 */

#include <stdint.h>
#include <string.h>

#include <rte_memcpy.h>

/* n bytes (a constant: one load and one store of type T) if len has
 * them, the cursors moved past. */
#define MWP_PLACE_PIECE(T, dst, src, len) do {			\
	if ((len) & sizeof(T)) {				\
		T v_;						\
								\
		memcpy(&v_, (src), sizeof(T));			\
		memcpy((dst), &v_, sizeof(T));			\
		(dst) += sizeof(T);				\
		(src) += sizeof(T);				\
	}							\
} while (0)

/* Fewer than 16 bytes, in ascending order: 8, 4, 2, 1. */
static __rte_always_inline void
mwp_place_small(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	MWP_PLACE_PIECE(uint64_t, dst, src, len);
	MWP_PLACE_PIECE(uint32_t, dst, src, len);
	MWP_PLACE_PIECE(uint16_t, dst, src, len);
	MWP_PLACE_PIECE(uint8_t, dst, src, len);
}

/* Up to the destination's next 32-byte boundary (len >= 31), in
 * ascending order: each piece leaves the next one aligned.  The bytes
 * placed. */
static __rte_always_inline uint32_t
mwp_place_align(uint8_t *dst, const uint8_t *src)
{
	const uint32_t head = (uint32_t)(-(uintptr_t)dst & 31);

	mwp_place_small(dst, src, head & 1);
	mwp_place_small(dst + (head & 1), src + (head & 1), head & 2);
	mwp_place_small(dst + (head & 3), src + (head & 3), head & 4);
	mwp_place_small(dst + (head & 7), src + (head & 7), head & 8);
	if (head & 16)
		rte_mov16(dst + (head & 15), src + (head & 15));
	return head;
}

/**
 * Copy len bytes from src to dst, every byte of dst stored once, in
 * ascending address order (on x86 a watcher that sees a byte sees every
 * byte before it).  dst and src must not overlap.
 */
static __rte_always_inline void
mwp_place(void *to, const void *from, uint32_t len)
{
	uint8_t *dst = to;
	const uint8_t *src = from;

	if (len >= 256) {
		/* aligned stores for the bulk, as rte_memcpy's, with the
		 * head placed first rather than stored over */
		const uint32_t h = mwp_place_align(dst, src);

		dst += h;
		src += h;
		len -= h;
	}
	for (; len >= 64; len -= 64, dst += 64, src += 64)
		rte_mov64(dst, src);
	if (len & 32) {
		rte_mov32(dst, src);
		dst += 32;
		src += 32;
	}
	if (len & 16) {
		rte_mov16(dst, src);
		dst += 16;
		src += 16;
	}
	mwp_place_small(dst, src, len & 15);
}

#endif /* MWP_PLACE_H */
