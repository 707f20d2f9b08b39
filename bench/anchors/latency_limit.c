/* SPDX-License-Identifier: MIT */
/*
 * Kept copy of the design's anchors/latency_limit.c (../shared), unchanged but for these
 * lines and clang-format, so that bench/ runs from a fresh clone; its output (CSV and
 * '#' lines) must stay identical, because obc-perf --csv rows are compared with it.
 *
 * latency_limit.c - small-message physical limit between two processes.
 *
 * The large-message limit of an intra-host broadcast is memcpy bandwidth
 * (memcpy_limit.c); the small-message limit is how fast one process can make
 * another one notice a change.  Two processes (fork) ping-pong a small
 * payload and the one-way latency (round trip / 2) is reported:
 *
 *   shm_poll   payload + sequence number in a MAP_SHARED cache line, the
 *              receiver busy-polls (what MPI libraries do by default);
 *              processes pinned to CPU 0 and CPU 1 when there are 2+ CPUs
 *   pipe_block 8-byte write()/read() on a pair of pipes, the receiver
 *              sleeps in the kernel and must be woken up (what a blocking
 *              / yielding library pays, e.g. gloo's socket threads)
 *
 * Output, same CSV format as the broadcast benchmarks:
 *   impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
 *   impl = shm_poll | pipe_block, nranks = 2, bytes = payload size (8),
 *   usec = median one-way latency over REPS batches, algbw = busbw =
 *   bytes/usec, wrong = payload mismatches seen by the receiver.
 *
 * Build: cc -O2 -o latency_limit latency_limit.c
 * Usage: latency_limit [-n ROUNDTRIPS_PER_BATCH] [-r REPS] [-H]
 *        defaults: -n 20000 -r 11 (pipe_block uses n/10 round trips)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void pin(int cpu)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2)
        return;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu % ncpu, &s);
    (void)sched_setaffinity(0, sizeof s, &s);
}

static inline uint64_t payload_of(uint64_t seq)
{
    return seq * 0x9E3779B97F4A7C15ull;
}

struct line {
    volatile uint64_t seq;
    volatile uint64_t payload;
    char pad[64 - 2 * sizeof(uint64_t)];
};

struct shared {
    struct line ping __attribute__((aligned(64)));
    struct line pong __attribute__((aligned(64)));
    volatile uint64_t wrong __attribute__((aligned(64)));
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_shm(long n, int reps)
{
    struct shared *sh =
        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset((void *)sh, 0, sizeof *sh);
    long total = n * (reps + 1); /* +1 warmup batch */

    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        pin(1);
        for (uint64_t s = 1; s <= (uint64_t)total; s++) {
            while (sh->ping.seq != s)
                cpu_relax();
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (sh->ping.payload != payload_of(s))
                sh->wrong++;
            sh->pong.payload = payload_of(s);
            __atomic_thread_fence(__ATOMIC_RELEASE);
            sh->pong.seq = s;
        }
        _exit(0);
    }
    pin(0);
    double *v = malloc(sizeof(double) * (size_t)reps);
    uint64_t s = 0;
    for (int r = -1; r < reps; r++) {
        double t0 = now_sec();
        for (long i = 0; i < n; i++) {
            s++;
            sh->ping.payload = payload_of(s);
            __atomic_thread_fence(__ATOMIC_RELEASE);
            sh->ping.seq = s;
            while (sh->pong.seq != s)
                cpu_relax();
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (sh->pong.payload != payload_of(s))
                sh->wrong++;
        }
        double dt = now_sec() - t0;
        if (r >= 0)
            v[r] = dt / (double)n / 2.0;
    }
    waitpid(pid, NULL, 0);
    qsort(v, (size_t)reps, sizeof(double), cmp_double);
    double sec = v[reps / 2];
    printf("shm_poll,2,8,%.3f,%.6f,%.6f,%llu\n", sec * 1e6, 8.0 / sec / 1e9, 8.0 / sec / 1e9,
           (unsigned long long)sh->wrong);
    fflush(stdout);
    free(v);
    munmap(sh, sizeof *sh);
}

static void xwrite(int fd, const void *p, size_t n)
{
    if (write(fd, p, n) != (ssize_t)n) {
        perror("write");
        exit(1);
    }
}

static void xread(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)p + got, n - got);
        if (k <= 0) {
            perror("read");
            exit(1);
        }
        got += (size_t)k;
    }
}

static void run_pipe(long n, int reps)
{
    int a[2], b[2];
    if (pipe(a) || pipe(b)) {
        perror("pipe");
        exit(1);
    }
    long total = n * (reps + 1);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (pid == 0) {
        pin(1);
        uint64_t bad = 0;
        for (uint64_t s = 1; s <= (uint64_t)total; s++) {
            uint64_t x;
            xread(a[0], &x, 8);
            if (x != payload_of(s))
                bad++;
            xwrite(b[1], &x, 8);
        }
        xwrite(b[1], &bad, 8);
        _exit(0);
    }
    pin(0);
    double *v = malloc(sizeof(double) * (size_t)reps);
    uint64_t s = 0, wrong = 0;
    for (int r = -1; r < reps; r++) {
        double t0 = now_sec();
        for (long i = 0; i < n; i++) {
            uint64_t x = payload_of(++s), y;
            xwrite(a[1], &x, 8);
            xread(b[0], &y, 8);
            wrong += (y != x);
        }
        double dt = now_sec() - t0;
        if (r >= 0)
            v[r] = dt / (double)n / 2.0;
    }
    uint64_t bad = 0;
    xread(b[0], &bad, 8);
    waitpid(pid, NULL, 0);
    qsort(v, (size_t)reps, sizeof(double), cmp_double);
    double sec = v[reps / 2];
    printf("pipe_block,2,8,%.3f,%.6f,%.6f,%llu\n", sec * 1e6, 8.0 / sec / 1e9, 8.0 / sec / 1e9,
           (unsigned long long)(wrong + bad));
    fflush(stdout);
    free(v);
}

int main(int argc, char **argv)
{
    long n = 20000;
    int reps = 11, header = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-H"))
            header = 1;
        else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-n ROUNDTRIPS] [-r REPS] [-H]\n", argv[0]);
            return 2;
        }
    }
    if (n < 10 || reps < 1)
        return 2;
    if (header)
        printf("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong\n");
    run_shm(n, reps);
    run_pipe(n / 10, reps);
    return 0;
}
