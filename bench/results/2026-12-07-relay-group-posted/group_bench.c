/* SPDX-License-Identifier: MIT */
/*
 * group_bench.c - R rounds of one group of K broadcasts of S bytes each from
 * rank 0 (obc fuses them into transfers of up to OBC_GROUP_BUCKET_BYTES);
 * prints per rank the median round time and the process's CPU time (user +
 * system, its TCP thread included) over all rounds, then checks one byte
 * of every buffer. Usage: obcrun -n N group_bench K S R
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "obc.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

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
    if (argc != 4) {
        fprintf(stderr, "usage: group_bench K S R\n");
        return 2;
    }
    int k_max = atoi(argv[1]), rounds = atoi(argv[3]);
    size_t s = strtoull(argv[2], NULL, 10);
    obc_comm_t *c;
    if (obc_comm_init_env(&c) != OBC_SUCCESS) {
        fprintf(stderr, "group_bench: no communicator\n");
        return 1;
    }
    int rank = obc_comm_rank(c);
    unsigned char **buf = malloc(sizeof(*buf) * (size_t)k_max);
    double *t = malloc(sizeof(*t) * (size_t)rounds);
    for (int k = 0; k < k_max; k++) {
        buf[k] = malloc(s);
        memset(buf[k], rank == 0 ? k + 1 : 0, s);
    }
    double c0 = cpu();
    for (int r = 0; r < rounds; r++) {
        obc_barrier(c);
        double t0 = now();
        obc_group_start();
        for (int k = 0; k < k_max; k++) {
            obc_bcast(buf[k], s, OBC_UINT8, 0, c);
        }
        if (obc_group_end() != OBC_SUCCESS) {
            fprintf(stderr, "group_bench: %s\n", obc_comm_last_error(c));
            return 1;
        }
        t[r] = now() - t0;
    }
    double used = cpu() - c0;
    for (int k = 0; k < k_max; k++) {
        if (buf[k][s / 2] != (unsigned char)(k + 1)) {
            fprintf(stderr, "group_bench: rank %d, buffer %d is wrong\n", rank, k);
            return 1;
        }
    }
    qsort(t, (size_t)rounds, sizeof(*t), by_value);
    printf("rank %d median %.2f ms cpu %.3f s\n", rank, t[rounds / 2] * 1e3, used);
    obc_comm_destroy(c);
    return 0;
}
