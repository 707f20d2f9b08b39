/* SPDX-License-Identifier: MIT */
/*
 * Kept copy of the design's anchors/memcpy_limit.c (../shared), unchanged but for these
 * lines and clang-format, so that bench/ runs from a fresh clone; its output (CSV and
 * '#' lines) must stay identical, because obc-perf --csv rows are compared with it.
 *
 * memcpy_limit.c - physical-limit probe for intra-host broadcast.
 *
 * Every receiver of an intra-host broadcast has to end up with its own copy
 * of the message, so it has to move at least `bytes` through the memory
 * system once.  The plain memcpy() bandwidth of this machine is therefore the
 * ceiling against which any broadcast (MPI, gloo, ours) should be judged.
 *
 * Three modes are measured for every buffer size:
 *   memcpy_1t        one thread copies `bytes` from src to dst
 *   memcpy_2t_split  two threads copy one `bytes` buffer, half each
 *                    (fastest possible single copy when both cores help)
 *   memcpy_2t_each   two threads each copy their own `bytes` buffer
 *                    concurrently (two receivers copying at the same time;
 *                    aggregate throughput of the machine)
 *
 * Output: the same CSV format as the broadcast benchmarks
 *   impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
 * with, for these rows:
 *   impl    = memcpy_1t | memcpy_2t_split | memcpy_2t_each
 *   nranks  = number of copying threads
 *   bytes   = size of one copy (one buffer)
 *   usec    = median time of one round (all threads done), microseconds
 *   algbw   = bytes / usec  (GB/s, 1 GB = 1e9 B)
 *   busbw   = total bytes copied by all threads / usec (aggregate GB/s)
 *   wrong   = bytes of dst that differ from src after the last round
 *
 * Build: cc -O2 -pthread -o memcpy_limit memcpy_limit.c
 * Usage: memcpy_limit [-b MIN] [-e MAX] [-f FACTOR] [-r REPS] [-t TARGET]
 *                     [-m MODES] [-l LABEL] [-H]
 *   sizes accept K/M/G suffixes (binary).  Defaults: -b 64K -e 1G -f 2 -r 7.
 *   -t TARGET: for small buffers one "round" repeats the copy until at least
 *              TARGET bytes have been copied (default 256M), so the timer
 *              resolution does not matter; usec is still per single copy.
 *   -m MODES : comma list of 1t,2t_split,2t_each (default all)
 *   -l LABEL : impl prefix (default "memcpy" -> memcpy_1t, ...); e.g. run
 *              under GLIBC_TUNABLES=glibc.cpu.x86_non_temporal_threshold=...
 *              with -l memcpy_nt to compare glibc's non-temporal-store path
 *   -H       : print the CSV header line first
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t parse_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) {
        fprintf(stderr, "bad size '%s'\n", s);
        exit(2);
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
        exit(2);
    }
    return (size_t)v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *xalloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n ? n : 1) != 0) {
        fprintf(stderr, "posix_memalign(%zu) failed\n", n);
        exit(1);
    }
    return p;
}

/* Fill with a position-dependent pattern (also faults the pages in). */
static void fill_pattern(unsigned char *p, size_t n, uint64_t seed)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = (i + seed) * 0x9E3779B97F4A7C15ull;
        w ^= w >> 29;
        memcpy(p + i, &w, 8);
    }
    for (; i < n; i++)
        p[i] = (unsigned char)(i * 131u + seed);
}

static size_t count_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += (a[i] != b[i]);
    return wrong;
}

/* ---------------------------------------------------------------------- */
/* Worker threads: a tiny "start round / finish round" protocol built on a  */
/* pthread barrier.  Thread 0 is the main thread and does the timing.       */

struct job {
    unsigned char *src;
    unsigned char *dst;
    size_t len; /* bytes this thread copies per inner repetition */
};

struct team {
    int nthreads;
    pthread_barrier_t bar;
    struct job jobs[2];
    long inner; /* inner repetitions per round */
    int quit;
};

static void do_job(const struct job *j, long inner)
{
    for (long k = 0; k < inner; k++) {
        memcpy(j->dst, j->src, j->len);
        /* keep the compiler from merging repeated copies */
        __asm__ __volatile__("" ::: "memory");
    }
}

static void *worker(void *arg)
{
    struct team *t = arg;
    for (;;) {
        pthread_barrier_wait(&t->bar); /* round start */
        if (t->quit)
            break;
        do_job(&t->jobs[1], t->inner);
        pthread_barrier_wait(&t->bar); /* round end */
    }
    return NULL;
}

/* One round: returns wall seconds for `inner` repetitions on all threads. */
static double round_time(struct team *t)
{
    double t0, t1;
    if (t->nthreads == 1) {
        t0 = now_sec();
        do_job(&t->jobs[0], t->inner);
        t1 = now_sec();
        return t1 - t0;
    }
    pthread_barrier_wait(&t->bar);
    t0 = now_sec();
    do_job(&t->jobs[0], t->inner);
    pthread_barrier_wait(&t->bar);
    t1 = now_sec();
    return t1 - t0;
}

enum mode { M_1T, M_2T_SPLIT, M_2T_EACH };
static const char *mode_name[] = {"1t", "2t_split", "2t_each"};
static const char *label = "memcpy"; /* impl = <label>_<mode> */

static void run_mode(enum mode m, size_t bytes, int reps, size_t target, unsigned char *src0,
                     unsigned char *dst0, unsigned char *src1, unsigned char *dst1)
{
    struct team t;
    memset(&t, 0, sizeof t);
    pthread_t th;
    size_t total_per_rep; /* bytes copied by all threads in one repetition */

    switch (m) {
    case M_1T:
        t.nthreads = 1;
        t.jobs[0] = (struct job){src0, dst0, bytes};
        total_per_rep = bytes;
        break;
    case M_2T_SPLIT: {
        size_t h = (bytes / 2) & ~(size_t)63; /* cache-line aligned split */
        t.nthreads = 2;
        t.jobs[0] = (struct job){src0, dst0, h};
        t.jobs[1] = (struct job){src0 + h, dst0 + h, bytes - h};
        total_per_rep = bytes;
        break;
    }
    case M_2T_EACH:
    default:
        t.nthreads = 2;
        t.jobs[0] = (struct job){src0, dst0, bytes};
        t.jobs[1] = (struct job){src1, dst1, bytes};
        total_per_rep = 2 * bytes;
        break;
    }

    long inner = (long)(target / (total_per_rep ? total_per_rep : 1));
    if (inner < 1)
        inner = 1;
    t.inner = inner;

    /* clear destinations so validation is meaningful */
    memset(dst0, 0, bytes);
    if (m == M_2T_EACH)
        memset(dst1, 0, bytes);

    if (t.nthreads == 2) {
        pthread_barrier_init(&t.bar, NULL, 2);
        if (pthread_create(&th, NULL, worker, &t) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }

    (void)round_time(&t); /* warmup round */

    double *v = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; r++)
        v[r] = round_time(&t) / (double)inner;

    if (t.nthreads == 2) {
        t.quit = 1;
        pthread_barrier_wait(&t.bar);
        pthread_join(th, NULL);
        pthread_barrier_destroy(&t.bar);
    }

    size_t wrong = count_diff(src0, dst0, bytes);
    if (m == M_2T_EACH)
        wrong += count_diff(src1, dst1, bytes);

    double sec = median(v, reps);
    free(v);
    double usec = sec * 1e6;
    double algbw = (double)bytes / sec / 1e9;
    double busbw = (double)total_per_rep / sec / 1e9;
    printf("%s_%s,%d,%zu,%.3f,%.3f,%.3f,%zu\n", label, mode_name[m], t.nthreads, bytes, usec, algbw,
           busbw, wrong);
    fflush(stdout);
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-r REPS] [-t TARGET] "
            "[-m 1t,2t_split,2t_each] [-l LABEL] [-H]\n",
            argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    size_t minb = 64 * 1024, maxb = (size_t)1 << 30, target = (size_t)256 << 20;
    double factor = 2.0;
    int reps = 7, header = 0;
    int want[3] = {1, 1, 1};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-H")) {
            header = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            usage(argv[0]);
        if (i + 1 >= argc)
            usage(argv[0]);
        const char *v = argv[++i];
        if (!strcmp(a, "-b"))
            minb = parse_size(v);
        else if (!strcmp(a, "-e"))
            maxb = parse_size(v);
        else if (!strcmp(a, "-f"))
            factor = atof(v);
        else if (!strcmp(a, "-r"))
            reps = atoi(v);
        else if (!strcmp(a, "-t"))
            target = parse_size(v);
        else if (!strcmp(a, "-l"))
            label = v;
        else if (!strcmp(a, "-m")) {
            want[0] = strstr(v, "1t") != NULL;
            want[1] = strstr(v, "2t_split") != NULL;
            want[2] = strstr(v, "2t_each") != NULL;
        } else
            usage(argv[0]);
    }
    if (factor <= 1.0 || reps < 1 || minb < 64 || maxb < minb)
        usage(argv[0]);

    /* Allocate for the largest size once; 2t_each needs two src/dst pairs. */
    unsigned char *src0 = xalloc(maxb), *dst0 = xalloc(maxb);
    unsigned char *src1 = NULL, *dst1 = NULL;
    if (want[2]) {
        src1 = xalloc(maxb);
        dst1 = xalloc(maxb);
    }
    fill_pattern(src0, maxb, 1);
    memset(dst0, 0, maxb);
    if (want[2]) {
        fill_pattern(src1, maxb, 2);
        memset(dst1, 0, maxb);
    }

    if (header)
        printf("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong\n");

    for (double s = (double)minb; s <= (double)maxb * 1.0000001; s *= factor) {
        size_t bytes = (size_t)(s + 0.5);
        for (int m = 0; m < 3; m++)
            if (want[m])
                run_mode((enum mode)m, bytes, reps, target, src0, dst0, src1, dst1);
    }

    free(src0);
    free(dst0);
    free(src1);
    free(dst1);
    return 0;
}
