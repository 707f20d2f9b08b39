/* skew.c - per iteration: barrier, t1 (barrier exit), in-place broadcast of S bytes from 0,
 * t2 (its end), then an allreduce-free pause; every rank writes its t1,t2 per iteration to
 * DIR/rank.txt (CLOCK_MONOTONIC is one clock for the whole machine). Usage: skew S N DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "obc.h"
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}
int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: skew BYTES ITERS DIR\n");
        return 2;
    }
    size_t s = strtoull(argv[1], NULL, 10);
    int n = atoi(argv[2]);
    obc_comm_t *c;
    if (obc_comm_init_env(&c) != OBC_SUCCESS)
        return 1;
    int rank = obc_comm_rank(c);
    unsigned char *b = malloc(s);
    memset(b, rank == 0 ? 7 : 0, s);
    double *t1 = malloc(sizeof(double) * n), *t2 = malloc(sizeof(double) * n);
    for (int i = 0; i < n + 20; i++) {
        obc_barrier(c);
        double a = now();
        obc_bcast(b, s, OBC_UINT8, 0, c);
        double z = now();
        /* what obc-perf does after a call: a small allreduce of times */
        double v[2] = {a, z};
        obc_allreduce(v, v, 2, OBC_FLOAT64, OBC_MAX, c);
        if (i >= 20) {
            t1[i - 20] = a;
            t2[i - 20] = z;
        }
    }
    char p[256];
    snprintf(p, sizeof p, "%s/%d.txt", argv[3], rank);
    FILE *f = fopen(p, "w");
    for (int i = 0; i < n; i++)
        fprintf(f, "%.3f %.3f\n", t1[i], t2[i]);
    fclose(f);
    obc_comm_destroy(c);
    return b[s - 1] == 7 ? 0 : 3;
}
