/* SPDX-License-Identifier: MIT */
/* any_latency.c - a receive from any source on rank 0 whose message comes from the last rank,
 * 0.5-2.25 ms after a barrier, while the other ranks send nothing: the time from the send (the
 * sender puts its CLOCK_MONOTONIC time in the message; one host) to the receive's return, median,
 * 90th percentile and max over 200 messages. */
#include <obc.h>
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
int main(void)
{
    obc_comm_t *c;
    if (obc_comm_init_env(&c))
        return 1;
    int r = obc_comm_rank(c), n = obc_comm_size(c), iters = 200;
    double lat[200];
    for (int i = 0; i < iters; i++) {
        double t;
        obc_barrier(c);
        if (r == n - 1) {
            usleep(500 + (i % 8) * 250);
            t = now_us();
            obc_send(&t, 1, OBC_FLOAT64, 0, c);
        } else if (r == 0) {
            double got;
            int src = -1;
            obc_recv_tag(&got, 1, OBC_FLOAT64, OBC_ANY_SOURCE, 0, &src, c);
            lat[i] = now_us() - got;
        }
    }
    if (r == 0) {
        qsort(lat, iters, sizeof(double), cmp);
        printf("n=%d any-source recv latency us: median %.1f p90 %.1f max %.1f\n", n,
               lat[iters / 2], lat[iters * 9 / 10], lat[iters - 1]);
    }
    obc_comm_destroy(c);
    return 0;
}
