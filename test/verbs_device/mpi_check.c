/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small MPI program for the suite (test/py/test_verbs_device.py): two
 * ranks, each on its own mwpath device, through Open MPI's UCX PML.
 *
 *   mpi_check ITERS SIZE
 *
 * A ping-pong of ITERS messages of SIZE bytes each way, every byte checked
 * (the message carries its iteration and direction), then an allreduce
 * (MPI_SUM over a vector whose elements depend on the rank and the index)
 * checked against the sum computed here.  Rank 0 prints
 *   pingpong ok ITERS x SIZE B: X us a round trip
 *   allreduce ok N doubles
 * and every rank exits 0, or prints what was wrong and exits 1.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALLREDUCE_N	4096

static uint8_t
pattern(int iter, int dir, size_t i)
{
	return (uint8_t)(iter * 31 + dir * 7 + i * 13 + (i >> 8));
}

static int
pingpong(int rank, int iters, size_t size)
{
	uint8_t *buf = malloc(size);
	double t0;

	if (buf == NULL)
		return 1;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++) {
		for (int dir = 0; dir < 2; dir++) {
			if (rank == dir) {
				for (size_t i = 0; i < size; i++)
					buf[i] = pattern(it, dir, i);
				MPI_Send(buf, (int)size, MPI_BYTE, 1 - rank, it, MPI_COMM_WORLD);
			} else {
				memset(buf, 0, size);
				MPI_Recv(buf, (int)size, MPI_BYTE, 1 - rank, it, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				for (size_t i = 0; i < size; i++)
					if (buf[i] != pattern(it, dir, i)) {
						fprintf(stderr, "rank %d: iteration %d byte %zu is %u, not %u\n",
							rank, it, i, buf[i], pattern(it, dir, i));
						free(buf);
						return 1;
					}
			}
		}
	}
	if (rank == 0)
		printf("pingpong ok %d x %zu B: %.2f us a round trip\n", iters, size,
		       (MPI_Wtime() - t0) * 1e6 / iters);
	free(buf);
	return 0;
}

static int
allreduce(int rank, int nranks)
{
	static double in[ALLREDUCE_N], out[ALLREDUCE_N];

	for (int i = 0; i < ALLREDUCE_N; i++)
		in[i] = (rank + 1) * 1000.0 + i * 0.5;
	MPI_Allreduce(in, out, ALLREDUCE_N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < ALLREDUCE_N; i++) {
		double want = 0;

		for (int r = 0; r < nranks; r++)
			want += (r + 1) * 1000.0 + i * 0.5;
		if (out[i] != want) {
			fprintf(stderr, "rank %d: allreduce element %d is %f, not %f\n", rank, i,
				out[i], want);
			return 1;
		}
	}
	if (rank == 0)
		printf("allreduce ok %d doubles\n", ALLREDUCE_N);
	return 0;
}

int
main(int argc, char **argv)
{
	int rank, nranks, bad;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc != 3 || nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 mpi_check ITERS SIZE\n");
		MPI_Finalize();
		return 2;
	}
	bad = pingpong(rank, atoi(argv[1]), (size_t)strtoul(argv[2], NULL, 0));
	if (bad == 0)
		bad = allreduce(rank, nranks);
	MPI_Finalize();
	return bad;
}
