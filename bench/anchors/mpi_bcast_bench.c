/* SPDX-License-Identifier: MIT */
/*
 * Kept copy of the design's anchors/mpi_bcast_bench.c (../shared), unchanged but for these
 * lines, clang-format, -A (buffer offsets, as obc-perf's) and the warmup rule (the median
 * warmup iteration sizes the timed loop, as obc-perf's), so that bench/ runs from a fresh
 * clone; its output (CSV and '#' lines) must stay identical, because obc-perf --csv rows are
 * compared with it.
 *
 * mpi_bcast_bench.c - MPI_Bcast anchor benchmark with data validation.
 *
 * Builds with any MPI wrapper compiler (Open MPI's mpicc.openmpi, MPICH's
 * mpicc.mpich, ...):   mpicc -O2 -o mpi_bcast_bench mpi_bcast_bench.c
 *
 * For every message size from MIN to MAX (multiplied by FACTOR each step,
 * MAX always included) it runs WARMUP untimed + ITERS timed broadcasts:
 *
 *   root: fill buffer with pattern(iteration)     (not timed)
 *   others: fill buffer with ~pattern(iteration)  (poison, not timed: any
 *           byte the broadcast fails to deliver is then guaranteed wrong)
 *   MPI_Barrier
 *   t = now(); MPI_Bcast(...); t = now() - t      (now = CLOCK_MONOTONIC)
 *   MPI_Reduce(t, MAX)          -> per-iteration time = slowest rank
 *   every rank (root too) compares its buffer with pattern(iteration) and
 *   counts the bytes that differ (not timed)
 *
 * Reported per size: the median over timed iterations of the per-iteration
 * MAX-over-ranks time.  Timestamps come from CLOCK_MONOTONIC, which all
 * processes of one host share, so the "span" = (latest end over ranks) -
 * (root's start) is also computed; it is immune to ranks leaving the barrier
 * at different moments (which can make the max-over-ranks time of tiny
 * messages look shorter than a one-way latency, especially when ranks
 * outnumber cores).  Its median is printed in the -v comment lines, and -S
 * puts it in the usec column instead (single-host runs only).  Bus bandwidth equals algorithm
 * bandwidth for broadcast (nccl-tests convention).  `wrong` is the total number of wrong bytes over
 * all ranks and all (warmup + timed) iterations.
 *
 * The number of timed iterations is adaptive so large sizes stay cheap:
 *   iters = clamp(TIME_BUDGET / (wall time of the median warmup iteration
 *                 incl. fill + validation), MIN_ITERS, MAX_ITERS)
 * decided on rank 0 and broadcast, so all ranks agree.
 *
 * Output (stdout, rank 0 only), one line per size:
 *   impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
 * algbw_GBps = bytes / usec / 1e3  (i.e. bytes / seconds / 1e9)
 *
 * Options:
 *   -i IMPL     impl label in the CSV (default "mpi")
 *   -b MIN      smallest message in bytes, K/M/G suffixes ok (default 8)
 *   -e MAX      largest message (default 256M)
 *   -f FACTOR   size multiplier between steps (default 2)
 *   -r ROOT     broadcast root rank (default 0)
 *   -w WARMUP   untimed iterations per size (default 3, at least 1)
 *   -n MAXIT    maximum timed iterations per size (default 200)
 *   -m MINIT    minimum timed iterations per size (default 5)
 *   -t SECONDS  time budget per size for the timed loop (default 1.0)
 *   -c 0|1      validate data (default 1; 0 skips fill/poison/check)
 *   -H          print the CSV header first
 *   -v          print '#' comment lines (library version, per-size details)
 *   -S          report the "span" instead of the max-over-ranks time (below)
 *   -X          self-test of the checker: the rank after root flips one byte
 *               after every broadcast, so `wrong` must equal the number of
 *               iterations (warmup + timed) per size
 */
#include <mpi.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -w at most this: the warmup iterations' times live on the stack */
#define WARMUP_MAX 1000

struct opts {
    const char *impl;
    size_t minb, maxb;
    double factor;
    int root, warmup, maxit, minit, check, header, verbose, inject, span;
    int offset, offset_step; /* -A OFF[,STEP]: as obc-perf's -A */
    double budget;
};

static size_t parse_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) {
        fprintf(stderr, "bad size '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    switch (*end) {
    case 'k':
    case 'K':
        v *= 1024.0;
        break;
    case 'm':
    case 'M':
        v *= 1024.0 * 1024.0;
        break;
    case 'g':
    case 'G':
        v *= 1024.0 * 1024.0 * 1024.0;
        break;
    case '\0':
        break;
    default:
        fprintf(stderr, "bad size suffix in '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return (size_t)v;
}

static void usage_abort(int rank)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: mpi_bcast_bench [-i IMPL] [-b MIN] [-e MAX] [-f FACTOR] "
                "[-r ROOT] [-w WARMUP] [-n MAXIT] [-m MINIT] [-t SECONDS] "
                "[-c 0|1] [-A OFF[,STEP]] [-H] [-v] [-X] [-S]\n");
    MPI_Finalize();
    exit(2);
}

static void parse_opts(int argc, char **argv, struct opts *o, int rank)
{
    o->impl = "mpi";
    o->minb = 8;
    o->maxb = (size_t)256 << 20;
    o->factor = 2.0;
    o->root = 0;
    o->warmup = 3;
    o->maxit = 200;
    o->minit = 5;
    o->budget = 1.0;
    o->check = 1;
    o->header = 0;
    o->verbose = 0;
    o->inject = 0;
    o->span = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-H")) {
            o->header = 1;
            continue;
        }
        if (!strcmp(a, "-v")) {
            o->verbose = 1;
            continue;
        }
        if (!strcmp(a, "-X")) {
            o->inject = 1;
            continue;
        }
        if (!strcmp(a, "-S")) {
            o->span = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help") || i + 1 >= argc)
            usage_abort(rank);
        const char *v = argv[++i];
        if (!strcmp(a, "-i"))
            o->impl = v;
        else if (!strcmp(a, "-b"))
            o->minb = parse_size(v);
        else if (!strcmp(a, "-e"))
            o->maxb = parse_size(v);
        else if (!strcmp(a, "-f"))
            o->factor = atof(v);
        else if (!strcmp(a, "-r"))
            o->root = atoi(v);
        else if (!strcmp(a, "-w"))
            o->warmup = atoi(v);
        else if (!strcmp(a, "-n"))
            o->maxit = atoi(v);
        else if (!strcmp(a, "-m"))
            o->minit = atoi(v);
        else if (!strcmp(a, "-t"))
            o->budget = atof(v);
        else if (!strcmp(a, "-c"))
            o->check = atoi(v);
        else if (!strcmp(a, "-A")) {
            const char *comma = strchr(v, ',');
            o->offset = atoi(v);
            o->offset_step = comma != NULL ? atoi(comma + 1) : 0;
        } else
            usage_abort(rank);
    }
    if (o->factor <= 1.0 || o->minb < 1 || o->maxb < o->minb || o->warmup < 1 ||
        o->warmup > WARMUP_MAX || o->minit < 1 || o->maxit < o->minit ||
        o->maxb > (size_t)INT32_MAX || o->offset < 0 || o->offset > 4095 || o->offset_step < 0 ||
        o->offset_step > 4095)
        usage_abort(rank);
}

/* Pattern: a 64-bit mix of (word index, iteration), so misplaced, stale or
 * truncated data is detected.  Bytes are taken little-endian from words. */
static inline uint64_t pat_word(uint64_t k, uint64_t iter)
{
    uint64_t x = k * 0x9E3779B97F4A7C15ull + (iter + 1) * 0xD1B54A32D192ED03ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

static void fill(unsigned char *p, size_t n, uint64_t iter, int invert)
{
    uint64_t inv = invert ? ~0ull : 0ull;
    size_t nw = n / 8, k;
    for (k = 0; k < nw; k++) {
        uint64_t w = pat_word(k, iter) ^ inv;
        memcpy(p + 8 * k, &w, 8);
    }
    if (n % 8) {
        uint64_t w = pat_word(k, iter) ^ inv;
        memcpy(p + 8 * k, &w, n % 8);
    }
}

static uint64_t count_wrong(const unsigned char *p, size_t n, uint64_t iter)
{
    uint64_t wrong = 0;
    size_t nw = n / 8, k;
    for (k = 0; k < nw; k++) {
        uint64_t w, e = pat_word(k, iter);
        memcpy(&w, p + 8 * k, 8);
        if (w != e) {
            uint64_t d = w ^ e;
            for (int b = 0; b < 8; b++)
                wrong += ((d >> (8 * b)) & 0xff) != 0;
        }
    }
    if (n % 8) {
        uint64_t e = pat_word(k, iter);
        for (size_t b = 0; b < n % 8; b++)
            wrong += p[8 * k + b] != (unsigned char)(e >> (8 * b));
    }
    return wrong;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorts v in place */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One broadcast iteration; returns this rank's time and adds wrong bytes. */
static int nranks_g = 1;

/* CLOCK_MONOTONIC is one clock for all processes of a host, so start and
 * end stamps of different ranks can be compared (single-host runs only). */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One broadcast iteration; stores this rank's start/end stamps (seconds)
 * and adds wrong bytes. */
static void one_iter(unsigned char *buf, size_t n, uint64_t iter, const struct opts *o, int rank,
                     uint64_t *wrong, double *t0_out, double *t1_out)
{
    if (o->check)
        fill(buf, n, iter, rank != o->root);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = mono_now();
    MPI_Bcast(buf, (int)n, MPI_BYTE, o->root, MPI_COMM_WORLD);
    double t1 = mono_now();
    if (o->inject && rank == (o->root + 1) % nranks_g)
        buf[n / 2] ^= 0x5a; /* self-test: the checker must count 1 byte */
    if (o->check)
        *wrong += count_wrong(buf, n, iter);
    *t0_out = t0;
    *t1_out = t1;
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    nranks_g = nranks;

    struct opts o;
    parse_opts(argc, argv, &o, rank);
    if (o.root < 0 || o.root >= nranks)
        usage_abort(rank);

    if (rank == 0 && o.verbose) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(ver, &len);
        for (int i = 0; i < len; i++) /* keep it on one comment line */
            if (ver[i] == '\n' || ver[i] == '\r')
                ver[i] = ' ';
        if (len > 160) /* MPICH appends its whole configure line */
            len = 160;
        printf("# impl=%s nranks=%d root=%d library=%.*s\n", o.impl, nranks, o.root, len, ver);
    }
    if (rank == 0 && o.header)
        printf("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong\n");
    fflush(stdout);

    /* Page-aligned, or -A's bytes past a page boundary (as obc-perf's -A). */
    size_t offset = (size_t)(o.offset + (long)rank * o.offset_step) % 4096;
    unsigned char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, o.maxb + offset) != 0) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", rank, o.maxb);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 0, o.maxb + offset); /* fault pages in before any timing */
    buf += offset;

    double *times = malloc(sizeof(double) * (size_t)o.maxit);
    double *spans = malloc(sizeof(double) * (size_t)o.maxit);
    uint64_t iter_seed = 0; /* global iteration counter -> pattern seed */

    /* size list: MIN, MIN*F, ... and MAX always included */
    double s = (double)o.minb;
    for (;;) {
        size_t n = (size_t)(s + 0.5);
        if (n > o.maxb)
            n = o.maxb;
        uint64_t wrong = 0;

        /* warmup (also measures wall time per iteration incl. validation; the
         * median iteration sizes the timed loop, as obc-perf's does) */
        double warm[WARMUP_MAX];
        for (int i = 0; i < o.warmup; i++) {
            double a, b, w0 = MPI_Wtime();
            one_iter(buf, n, iter_seed++, &o, rank, &wrong, &a, &b);
            warm[i] = MPI_Wtime() - w0;
        }
        double per_iter = median(warm, o.warmup);

        int iters = 0;
        if (rank == 0) {
            double want = per_iter > 0 ? o.budget / per_iter : o.maxit;
            iters = want > o.maxit ? o.maxit : (int)want;
            if (iters < o.minit)
                iters = o.minit;
        }
        MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);

        for (int i = 0; i < iters; i++) {
            double t0, t1, in[3], out[3] = {0, 0, 0};
            one_iter(buf, n, iter_seed++, &o, rank, &wrong, &t0, &t1);
            in[0] = t1 - t0; /* own duration */
            in[1] = t1; /* latest end */
            in[2] = rank == o.root ? -t0 : -1e300; /* root's start */
            MPI_Reduce(in, out, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            times[i] = out[0]; /* max over ranks */
            spans[i] = out[1] + out[2]; /* last end - root start */
        }

        unsigned long long wl = wrong, wsum = 0;
        MPI_Reduce(&wl, &wsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

        if (rank == 0) {
            double med_max = median(times, iters), med_span = median(spans, iters);
            double med = o.span ? med_span : med_max;
            double usec = med * 1e6;
            double algbw = med > 0 ? (double)n / med / 1e9 : 0.0;
            printf("%s,%d,%zu,%.3f,%.6f,%.6f,%llu\n", o.impl, nranks, n, usec, algbw, algbw, wsum);
            if (o.verbose)
                printf("# bytes=%zu iters=%d maxrank_median_usec=%.3f "
                       "maxrank_min_usec=%.3f maxrank_max_usec=%.3f "
                       "span_median_usec=%.3f span_min_usec=%.3f "
                       "warmup_wall_usec=%.1f\n",
                       n, iters, med_max * 1e6, times[0] * 1e6, times[iters - 1] * 1e6,
                       med_span * 1e6, spans[0] * 1e6, per_iter * 1e6);
            fflush(stdout);
        }

        if (n >= o.maxb)
            break;
        s *= o.factor;
    }

    free(times);
    free(spans);
    free(buf - offset);
    MPI_Finalize();
    return 0;
}
