/* SPDX-License-Identifier: MIT */
/*
 * split_cost.c - what a communicator's creation costs: N rounds of obc_comm_split (every rank
 * in one child) and obc_comm_destroy; rank 0 prints the mean time of one round.
 * Usage: obcrun -n NP split_cost N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "obc.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

int main(int argc, char **argv)
{
    int n = argc == 2 ? atoi(argv[1]) : 0;
    obc_comm_t *c;
    if (n < 1 || obc_comm_init_env(&c) != OBC_SUCCESS) {
        fprintf(stderr, "usage: obcrun -n NP split_cost N (N >= 1)\n");
        return 2;
    }
    double start = now_us();
    for (int i = 0; i < n; i++) {
        obc_comm_t *child;
        if (obc_comm_split(c, 0, obc_comm_rank(c), &child) != OBC_SUCCESS) {
            return 1;
        }
        obc_comm_destroy(child);
    }
    if (obc_comm_rank(c) == 0) {
        printf("%.0f us per split and destroy\n", (now_us() - start) / n);
    }
    obc_comm_destroy(c);
    return 0;
}
