/* SPDX-License-Identifier: MIT */
/*
 * mpi_pingpong.c - the MPI anchor for point-to-point: an osu_latency-style
 * ping-pong of MPI_Send/MPI_Recv between rank 0 and the last rank (the
 * ranks between only join the barriers), measured as obc-perf's
 * `-o sendrecv` measures obc_send/obc_recv, so both print comparable lines:
 *
 *   impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
 *
 * usec is the round trip (half of it is the one-way latency osu_latency
 * prints); algbw = bytes / round trip, busbw = 2 x algbw (the one-way
 * bandwidth). Build with any MPI wrapper:
 *   mpicc.openmpi -O2 -o /tmp/mpi_pingpong.openmpi bench/anchors/mpi_pingpong.c
 *   mpirun.openmpi -n 2 /tmp/mpi_pingpong.openmpi -b 8 -e 64M
 *
 * Per size (MIN, MIN*F, ..., MAX always included): WARMUP untimed and ITERS
 * timed iterations of: rank 0 fills its send buffer with the iteration's
 * pattern and both partners poison their receive buffers (untimed),
 * MPI_Barrier, each partner times its own send+recv (rank 0) or recv+send
 * (the last rank, which sends back what it received), the max over ranks
 * goes to rank 0, and both received buffers and rank 0's send buffer are
 * checked byte by byte (untimed). Reported: the median over timed
 * iterations. ITERS = clamp(BUDGET / wall time of the median warmup
 * iteration, MINIT, MAXIT), decided on rank 0.
 *
 * Options: -i IMPL (label, default "mpi"), -b MIN, -e MAX (K/M/G suffixes,
 * default 8 and 64M), -f FACTOR (2), -w WARMUP (3), -n MAXIT (1000), -m
 * MINIT (10), -t BUDGET seconds (0.5), -c 0|1 (validate, 1), -H (header).
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -w at most this: the warmup iterations' times live on the stack */
#define WARMUP_MAX 1000

struct opts {
    const char *impl;
    size_t min_bytes, max_bytes;
    double factor, budget_s;
    int warmup, max_iters, min_iters;
    int check, header;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t parse_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    switch (end != NULL ? *end : '\0') {
    case 'K':
    case 'k':
        v *= 1024.0;
        break;
    case 'M':
    case 'm':
        v *= 1024.0 * 1024.0;
        break;
    case 'G':
    case 'g':
        v *= 1024.0 * 1024.0 * 1024.0;
        break;
    default:
        break;
    }
    return (size_t)v;
}

static unsigned char pattern(size_t i, uint64_t iter)
{
    return (unsigned char)((i * 131u + iter * 29u + (i >> 12) + 1u) & 0xffu);
}

static void fill(unsigned char *buf, size_t n, uint64_t iter, int poison)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = poison ? (unsigned char)~pattern(i, iter) : pattern(i, iter);
    }
}

static uint64_t wrong(const unsigned char *buf, size_t n, uint64_t iter)
{
    uint64_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += buf[i] != pattern(i, iter);
    }
    return bad;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place. */
static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){"mpi", 8, (size_t)64 << 20, 2.0, 0.5, 3, 1000, 10, 1, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-H") == 0) {
            o->header = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "mpi_pingpong: %s needs a value\n", a);
            exit(2);
        }
        i++;
        if (strcmp(a, "-i") == 0) {
            o->impl = v;
        } else if (strcmp(a, "-b") == 0) {
            o->min_bytes = parse_size(v);
        } else if (strcmp(a, "-e") == 0) {
            o->max_bytes = parse_size(v);
        } else if (strcmp(a, "-f") == 0) {
            o->factor = atof(v);
        } else if (strcmp(a, "-w") == 0) {
            o->warmup = atoi(v);
        } else if (strcmp(a, "-n") == 0) {
            o->max_iters = atoi(v);
        } else if (strcmp(a, "-m") == 0) {
            o->min_iters = atoi(v);
        } else if (strcmp(a, "-t") == 0) {
            o->budget_s = atof(v);
        } else if (strcmp(a, "-c") == 0) {
            o->check = atoi(v);
        } else {
            fprintf(stderr, "mpi_pingpong: unknown option %s\n", a);
            exit(2);
        }
    }
    if (o->min_bytes < 1 || o->max_bytes < o->min_bytes || o->factor <= 1.0 || o->warmup < 0 ||
        o->warmup > WARMUP_MAX) {
        fprintf(stderr, "mpi_pingpong: need 1 <= -b <= -e, -f > 1 and 0 <= -w <= %d\n", WARMUP_MAX);
        exit(2);
    }
}

/* One iteration: returns the max over ranks of each partner's own time
 * (on rank 0) and adds the wrong bytes (summed on rank 0). */
static double one(const struct opts *o, int rank, int last, unsigned char *sbuf,
                  unsigned char *rbuf, size_t n, uint64_t iter, uint64_t *bad)
{
    int partner = rank == 0 ? last : (rank == last ? 0 : -1);
    double t = 0.0, tmax = 0.0;
    unsigned long long mine = 0, sum = 0;
    if (partner >= 0 && o->check) {
        if (rank == 0) {
            fill(sbuf, n, iter, 0);
        }
        fill(rbuf, n, iter, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (partner >= 0) {
        double t0 = now_s();
        if (rank == 0) {
            MPI_Send(sbuf, (int)n, MPI_BYTE, partner, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)n, MPI_BYTE, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)n, MPI_BYTE, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(rbuf, (int)n, MPI_BYTE, partner, 2, MPI_COMM_WORLD);
        }
        t = now_s() - t0;
        if (o->check) {
            mine = wrong(rbuf, n, iter) + (rank == 0 ? wrong(sbuf, n, iter) : 0);
        }
    }
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    *bad += sum;
    return tmax;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    parse(argc, argv, &o);
    if (nranks < 2) {
        fprintf(stderr, "mpi_pingpong: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (o.max_bytes > (size_t)2147483647) {
        fprintf(stderr, "mpi_pingpong: -e above 2 GiB does not fit MPI's int count\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int last = nranks - 1;
    unsigned char *sbuf = malloc(o.max_bytes), *rbuf = malloc(o.max_bytes);
    double *times = malloc(sizeof(double) * (size_t)o.max_iters);
    if (sbuf == NULL || rbuf == NULL || times == NULL) {
        fprintf(stderr, "mpi_pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 0, o.max_bytes); /* touch every page before timing */
    memset(rbuf, 0, o.max_bytes);
    if (rank == 0 && o.header) {
        printf("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong\n");
    }
    uint64_t iter = 0, total_bad = 0;
    for (double size = (double)o.min_bytes;; size *= o.factor) {
        size_t n = size < (double)o.max_bytes ? (size_t)size : o.max_bytes;
        uint64_t bad = 0;
        double warm[WARMUP_MAX];
        for (int i = 0; i < o.warmup; i++) {
            double w0 = now_s();
            one(&o, rank, last, sbuf, rbuf, n, iter++, &bad);
            warm[i] = now_s() - w0;
        }
        /* the median iteration, as obc-perf's */
        double per = o.warmup > 0 ? median_of(warm, o.warmup) : 1e-3;
        int iters = per > 0 ? (int)(o.budget_s / per) : o.max_iters;
        iters = iters < o.min_iters ? o.min_iters : (iters > o.max_iters ? o.max_iters : iters);
        MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < iters; i++) {
            times[i] = one(&o, rank, last, sbuf, rbuf, n, iter++, &bad);
        }
        if (rank == 0) {
            double med = median_of(times, iters);
            double algbw = (double)n / med / 1e9;
            printf("%s,%d,%zu,%.3f,%.4f,%.4f,%llu\n", o.impl, nranks, n, med * 1e6, algbw,
                   2.0 * algbw, (unsigned long long)bad);
            fflush(stdout);
        }
        total_bad += bad;
        if (n == o.max_bytes) {
            break;
        }
    }
    free(sbuf);
    free(rbuf);
    free(times);
    MPI_Finalize();
    return rank == 0 && total_bad != 0 ? 1 : 0;
}
