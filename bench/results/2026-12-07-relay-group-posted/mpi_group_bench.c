/* SPDX-License-Identifier: MIT */
/*
 * mpi_group_bench.c - group_bench.c's anchor: the same K buffers of S bytes
 * from rank 0, one MPI_Bcast each (MPI has no group to fuse them), R rounds,
 * the same per-rank figures (median round time, process CPU over all
 * rounds) and the same one-byte check. Usage: mpirun -n N mpi_group_bench K S R
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
        (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: mpi_group_bench K S R\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int k_max = atoi(argv[1]), rounds = atoi(argv[3]), rank;
    size_t s = strtoull(argv[2], NULL, 10);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    unsigned char **buf = malloc(sizeof(*buf) * (size_t)k_max);
    double *t = malloc(sizeof(*t) * (size_t)rounds);
    for (int k = 0; k < k_max; k++) {
        buf[k] = malloc(s);
        memset(buf[k], rank == 0 ? k + 1 : 0, s);
    }
    double c0 = cpu();
    for (int r = 0; r < rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int k = 0; k < k_max; k++) {
            MPI_Bcast(buf[k], (int)s, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
        }
        t[r] = MPI_Wtime() - t0;
    }
    double used = cpu() - c0;
    for (int k = 0; k < k_max; k++) {
        if (buf[k][s / 2] != (unsigned char)(k + 1)) {
            fprintf(stderr, "mpi_group_bench: rank %d, buffer %d is wrong\n", rank, k);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    qsort(t, (size_t)rounds, sizeof(*t), by_value);
    printf("rank %d median %.2f ms cpu %.3f s\n", rank, t[rounds / 2] * 1e3, used);
    MPI_Finalize();
    return 0;
}
