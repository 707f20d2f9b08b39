/* SPDX-License-Identifier: MIT */
/*
 * first_calls.c - the first calls of a new communicator: N in-place broadcasts of 4 KiB from
 * rank 0, each after a barrier; rank 1 prints the median of its own call time over each run
 * of 10 calls (the first 10, the next 10, ...) and the whole loop's time.
 * Usage: obcrun -n NP first_calls N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "obc.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = argc == 2 ? atoi(argv[1]) : 0;
    obc_comm_t *c;
    if (n < 10 || obc_comm_init_env(&c) != OBC_SUCCESS) {
        fprintf(stderr, "usage: obcrun -n NP first_calls N (N >= 10)\n");
        return 2;
    }
    int rank = obc_comm_rank(c);
    unsigned char buf[4096];
    memset(buf, rank == 0 ? 7 : 0, sizeof(buf));
    double *t = malloc(sizeof(double) * (size_t)n), start = now_us();
    for (int i = 0; i < n; i++) {
        obc_barrier(c);
        double a = now_us();
        obc_bcast(buf, sizeof(buf), OBC_UINT8, 0, c);
        t[i] = now_us() - a;
    }
    double whole = now_us() - start;
    if (rank == 1) {
        for (int k = 0; k + 10 <= n; k += 10) {
            qsort(t + k, 10, sizeof(double), by_value);
            printf("%.1f ", 0.5 * (t[k + 4] + t[k + 5]));
        }
        printf("| whole loop %.0f us\n", whole);
    }
    obc_comm_destroy(c);
    return buf[sizeof(buf) - 1] == 7 ? 0 : 3;
}
