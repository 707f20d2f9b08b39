/* SPDX-License-Identifier: MIT */
/* any_latency_mpi.c - any_latency.c's measurement with MPI: rank 0 receives with
 * MPI_ANY_SOURCE a message the last rank sends 0.5-2.25 ms after a barrier, while the
 * other ranks send nothing; time from the send (the sender's CLOCK_MONOTONIC in the
 * message; one host) to MPI_Recv's return, median, 90th percentile and max over 200. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int r, n, iters = 200;
    double lat[200];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 0; i < iters; i++) {
        double t;
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == n - 1) {
            usleep(500 + (i % 8) * 250);
            t = now_us();
            MPI_Send(&t, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
        } else if (r == 0) {
            double got;
            MPI_Recv(&got, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            lat[i] = now_us() - got;
        }
    }
    if (r == 0) {
        qsort(lat, (size_t)iters, sizeof(double), cmp);
        printf("n=%d any-source recv latency us: median %.1f p90 %.1f max %.1f\n", n,
               lat[iters / 2], lat[iters * 9 / 10], lat[iters - 1]);
    }
    MPI_Finalize();
    return 0;
}
