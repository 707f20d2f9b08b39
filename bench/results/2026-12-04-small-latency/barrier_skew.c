/* SPDX-License-Identifier: MIT */
/*
 * barrier_skew.c - when does each rank leave the barrier that precedes every
 * timed call of the benchmarks? The loop is theirs: barrier, clock, an 8 B
 * broadcast from rank 0, clock, then the untimed reduce of the two times to
 * rank 0. Every rank keeps its start stamps (CLOCK_MONOTONIC: one clock for
 * the host's processes); at the end rank 0 gathers them and prints, per rank,
 * the median over iterations of (its start - rank 0's start) and of its own
 * call's time.
 * Build: mpicc.openmpi -O2 -o bs_mpi barrier_skew.c
 *        cc -O2 -DUSE_OBC -I../../../include -I../../../build/include barrier_skew.c \
 *           -L../../../build/lib -Wl,-rpath,$PWD/../../../build/lib -lobc -o bs_obc
 * Run:   mpirun.openmpi -n 2 --bind-to core ./bs_mpi [ITERS]
 *        ../../../build/bin/obcrun -n 2 ./bs_obc [ITERS]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef USE_OBC
#include "obc.h"
#else
#include <mpi.h>
#endif

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 100000, rank, nranks;
#ifdef USE_OBC
    obc_comm_t *comm;
    if (obc_comm_init_env(&comm) != OBC_SUCCESS) {
        return 1;
    }
    rank = obc_comm_rank(comm);
    nranks = obc_comm_size(comm);
#define BARRIER() obc_barrier(comm)
#define BCAST(p) obc_bcast(p, 1, OBC_INT64, 0, comm)
#define REDUCE_MAX(s, r) obc_reduce(s, r, 2, OBC_FLOAT64, OBC_MAX, 0, comm)
#define GATHER(s, r, n) obc_gather(s, r, n, OBC_FLOAT64, 0, comm)
#else
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
#define BARRIER() MPI_Barrier(MPI_COMM_WORLD)
#define BCAST(p) MPI_Bcast(p, 1, MPI_INT64_T, 0, MPI_COMM_WORLD)
#define REDUCE_MAX(s, r) MPI_Reduce(s, r, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD)
#define GATHER(s, r, n) MPI_Gather(s, n, MPI_DOUBLE, r, n, MPI_DOUBLE, 0, MPI_COMM_WORLD)
#endif
    double *start = malloc(sizeof(double) * (size_t)iters * 2);
    double *all = rank == 0 ? malloc(sizeof(double) * (size_t)iters * 2 * nranks) : NULL;
    long long word = 0;
    for (int i = 0; i < iters; i++) {
        double t[2], m[2];
        BARRIER();
        t[0] = now_us();
        word = rank == 0 ? i : -1;
        BCAST(&word);
        t[1] = now_us();
        if (word != i) {
            fprintf(stderr, "rank %d: got %lld in broadcast %d\n", rank, word, i);
            return 1;
        }
        start[2 * i] = t[0];
        start[2 * i + 1] = t[1] - t[0];
        REDUCE_MAX(t, m);
    }
    GATHER(start, all, 2 * iters);
    if (rank == 0) {
        double *d = malloc(sizeof(double) * (size_t)iters);
        for (int r = 0; r < nranks; r++) {
            for (int i = 0; i < iters; i++) {
                d[i] = all[(size_t)r * 2 * iters + 2 * i] - all[2 * i];
            }
            double skew = median(d, iters);
            for (int i = 0; i < iters; i++) {
                d[i] = all[(size_t)r * 2 * iters + 2 * i + 1];
            }
            printf("rank %d: leaves the barrier %+.3f us after rank 0 (median); its call %.3f us\n",
                   r, skew, median(d, iters));
        }
    }
#ifdef USE_OBC
    obc_comm_destroy(comm);
#else
    MPI_Finalize();
#endif
    return 0;
}
