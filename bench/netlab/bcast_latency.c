/* SPDX-License-Identifier: MIT */
/*
 * bcast_latency.c - one-way latency of a small obc_broadcast across hosts, measured
 * from the root's start to each receiver's return on one shared clock.
 *
 * netlab's hosts are network namespaces of one kernel, so CLOCK_REALTIME is the same
 * clock on every rank. Per iteration:
 *   obc_barrier; every rank sleeps SLEEP ms (receivers are then already waiting inside
 *   the broadcast when the root starts, so barrier exit skew is not measured);
 *   root: t0 = CLOCK_REALTIME, writes t0 into the message, obc_broadcast;
 *   receiver: obc_broadcast, t1 = CLOCK_REALTIME right after it returns, d = t1 - t0;
 *   obc_allreduce(MAX) of d over ranks (the root contributes 0).
 * Prints the median, p10 and p90 over ITERS iterations of that maximum, and each rank's
 * own median (which shows the hops of the tree). Uses only the public API (obc.h); joins
 * through the environment (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, or obcrun's).
 *
 * Build: cc -O2 -Iinclude bench/netlab/bcast_latency.c -Lbuild/lib -lobc \
 *            -Wl,-rpath,$PWD/build/lib -o build/bench/bcast_latency
 * Usage: bcast_latency [-n ITERS=200] [-w WARMUP=10] [-s SLEEP_MS=3] [-b BYTES=8]
 *                      [-r ROOT=0] [-l LABEL=obc]
 * Output (rank 0): '#' lines, then
 *   latency,LABEL,nranks,bytes,root,iters,median_us,p10_us,p90_us,min_us,max_us,bad
 */
#define _POSIX_C_SOURCE 200809L
#include <obc.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of n sorted values (nearest rank). */
static double quantile(const double *v, int n, double q)
{
    int i = (int)(q * (n - 1) + 0.5);
    return v[i < 0 ? 0 : (i >= n ? n - 1 : i)];
}

static void die(const char *what, obc_result_t r, obc_comm_t *comm)
{
    fprintf(stderr, "bcast_latency: %s: %s (%s)\n", what, obc_strerror(r),
            comm ? obc_comm_last_error(comm) : "");
    exit(1);
}

#define CHECK(call, what) \
    do { \
        obc_result_t r_ = (call); \
        if (r_ != OBC_SUCCESS) \
            die(what, r_, comm); \
    } while (0)

int main(int argc, char **argv)
{
    int iters = 200, warmup = 10, root = 0, opt;
    double sleep_ms = 3.0;
    size_t nbytes = 8;
    const char *label = "obc";
    while ((opt = getopt(argc, argv, "n:w:s:b:r:l:h")) != -1) {
        switch (opt) {
        case 'n':
            iters = atoi(optarg);
            break;
        case 'w':
            warmup = atoi(optarg);
            break;
        case 's':
            sleep_ms = atof(optarg);
            break;
        case 'b':
            nbytes = (size_t)atol(optarg);
            break;
        case 'r':
            root = atoi(optarg);
            break;
        case 'l':
            label = optarg;
            break;
        default:
            fprintf(stderr,
                    "usage: %s [-n ITERS] [-w WARMUP] [-s SLEEP_MS] [-b BYTES>=8] "
                    "[-r ROOT] [-l LABEL]\n",
                    argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (iters < 1 || warmup < 0 || nbytes < sizeof(int64_t)) {
        fprintf(stderr, "bcast_latency: need -n >= 1, -w >= 0, -b >= 8\n");
        return 2;
    }

    obc_comm_t *comm = NULL;
    CHECK(obc_comm_init_env(&comm), "obc_comm_init_env");
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    if (root < 0 || root >= nranks) {
        fprintf(stderr, "bcast_latency: root %d out of range\n", root);
        return 2;
    }
    unsigned char *buf = calloc(1, nbytes);
    double *maxes = calloc((size_t)iters, sizeof(double));
    double *mine = calloc((size_t)iters, sizeof(double));
    double *medians = calloc((size_t)nranks, sizeof(double));
    if (!buf || !maxes || !mine || !medians) {
        fprintf(stderr, "bcast_latency: out of memory\n");
        return 1;
    }
    struct timespec nap = {.tv_sec = (time_t)(sleep_ms / 1e3),
                           .tv_nsec = (long)((sleep_ms - 1e3 * (time_t)(sleep_ms / 1e3)) * 1e6)};
    int bad = 0; /* receiver saw a stale or implausible timestamp */
    int64_t last_t0 = 0;

    for (int it = -warmup; it < iters; it++) {
        CHECK(obc_barrier(comm), "obc_barrier");
        nanosleep(&nap, NULL);
        double d = 0.0;
        if (rank == root) {
            int64_t t0 = now_ns();
            memcpy(buf, &t0, sizeof t0);
            CHECK(obc_broadcast(buf, buf, nbytes, OBC_UINT8, root, comm), "obc_broadcast");
        } else {
            CHECK(obc_broadcast(NULL, buf, nbytes, OBC_UINT8, root, comm), "obc_broadcast");
            int64_t t1 = now_ns(), t0;
            memcpy(&t0, buf, sizeof t0);
            if (t0 <= last_t0 || t1 < t0 || t1 - t0 > 1000000000)
                bad++;
            last_t0 = t0;
            d = (double)(t1 - t0) / 1e3; /* microseconds */
        }
        double m = 0.0;
        CHECK(obc_allreduce(&d, &m, 1, OBC_FLOAT64, OBC_MAX, comm), "obc_allreduce");
        if (it >= 0) {
            maxes[it] = m;
            mine[it] = d;
        }
    }

    qsort(mine, (size_t)iters, sizeof(double), cmp_double);
    double my_median = quantile(mine, iters, 0.5);
    CHECK(obc_allgather(&my_median, medians, 1, OBC_FLOAT64, comm), "obc_allgather");
    int bad_all = 0;
    CHECK(obc_allreduce(&bad, &bad_all, 1, OBC_INT32, OBC_SUM, comm), "obc_allreduce");

    if (rank == 0) {
        qsort(maxes, (size_t)iters, sizeof(double), cmp_double);
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        printf("# bcast_latency: %s, %d ranks, %zu B, root %d, %d warmup + %d iterations, "
               "sleep %.1f ms; us from the root's start to the last receiver's return "
               "(CLOCK_REALTIME shared by all hosts)\n",
               obc_version(), nranks, nbytes, root, warmup, iters, sleep_ms);
        printf("# per-rank median us:");
        for (int r = 0; r < nranks; r++)
            printf(" r%d=%.1f", r, medians[r]);
        printf("\n");
        printf("latency,%s,%d,%zu,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%d\n", label, nranks, nbytes, root,
               iters, quantile(maxes, iters, 0.5), quantile(maxes, iters, 0.1),
               quantile(maxes, iters, 0.9), maxes[0], maxes[iters - 1], bad_all);
        fflush(stdout);
    }
    obc_comm_destroy(comm);
    free(buf);
    free(maxes);
    free(mine);
    free(medians);
    return bad_all ? 3 : 0;
}
