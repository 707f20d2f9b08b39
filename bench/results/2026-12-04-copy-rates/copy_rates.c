/* SPDX-License-Identifier: MIT */
/*
 * copy_rates.c - how fast one core copies, by the three ways obc's
 * intra-host broadcasts move bytes: glibc memcpy (the root's own copy out
 * of place, the arena's copies), an SSE2 loop with non-temporal stores
 * (obc__copy's streaming mode, the readers' copy out of a mapped block),
 * and process_vm_readv from another process (single-copy reads of malloc'd
 * buffers, bcast_cma.c). Each way copies a buffer of N bytes into another,
 * best of several repetitions, one process copying at a time (the other, for
 * process_vm_readv, only owns the source and sleeps), then the same with
 * two processes copying side by side (each its own pair of buffers), as a
 * root and a reader do at 2 ranks.
 * Build: cc -O2 -o copy_rates copy_rates.c
 * Run:   ./copy_rates            (prints way,copiers,bytes,usec,GBps lines)
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void copy_nt(unsigned char *d, const unsigned char *s, size_t n)
{
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        _mm_stream_si128((__m128i *)(void *)d, a);
        _mm_stream_si128((__m128i *)(void *)(d + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
}

enum way { MEMCPY, NT, CMA };
static const char *way_name[] = {"memcpy", "nt_loop", "process_vm_readv"};

/* Best time of reps copies of n bytes by `way`; for CMA the source lies in
 * process `owner` at address `remote`. */
static double best_time(enum way way, unsigned char *dst, unsigned char *src, size_t n, pid_t owner,
                        int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (way == MEMCPY) {
            memcpy(dst, src, n);
        } else if (way == NT) {
            copy_nt(dst, src, n);
        } else {
            struct iovec l = {dst, n}, rv = {src, n};
            if (process_vm_readv(owner, &l, 1, &rv, 1, 0) != (ssize_t)n) {
                perror("process_vm_readv");
                exit(1);
            }
        }
        double t = now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static unsigned char *buffer(size_t n, int fill)
{
    unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(p, fill, n);
    return p;
}

/* One copier: in this process; for CMA a forked child owns the source (the
 * same address as here: fork copies the mapping) and sleeps. With two
 * copiers, the child also copies, its own pair of buffers, started together
 * through a pipe. Prints the slower copier's best time. */
static void measure(enum way way, size_t n, int copiers)
{
    int reps = n <= (16u << 20) ? 20 : 5;
    unsigned char *src = buffer(n, 1), *dst = buffer(n, 2);
    unsigned char *src2 = buffer(n, 3), *dst2 = buffer(n, 4);
    int go[2], back[2];
    if (pipe(go) != 0 || pipe(back) != 0) {
        perror("pipe");
        exit(1);
    }
    pid_t parent = getpid(), child = fork();
    if (child == 0) {
        char c;
        if (read(go[0], &c, 1) != 1) {
            _exit(1);
        }
        double t = 0;
        if (copiers == 2) { /* CMA: reads the parent's second source */
            t = best_time(way, dst2, src2, n, parent, reps);
        }
        (void)!write(back[1], &t, sizeof(t));
        (void)!read(go[0], &c, 1); /* keep the source until the parent is done */
        _exit(0);
    }
    (void)!write(go[1], "g", 1);
    double mine = best_time(way, dst, src, n, child, reps);
    double theirs = 0;
    (void)!read(back[0], &theirs, sizeof(theirs));
    (void)!write(go[1], "g", 1);
    waitpid(child, NULL, 0);
    double t = mine > theirs ? mine : theirs;
    printf("%s,%d,%zu,%.1f,%.2f\n", way_name[way], copiers, n, t * 1e6, (double)n / t / 1e9);
    fflush(stdout);
    munmap(src, n);
    munmap(dst, n);
    munmap(src2, n);
    munmap(dst2, n);
    close(go[0]);
    close(go[1]);
    close(back[0]);
    close(back[1]);
}

int main(void)
{
    size_t sizes[] = {256u << 10, 1u << 20, 2u << 20, 4u << 20, 16u << 20, 64u << 20, 256u << 20};
    printf("way,copiers,bytes,usec,GBps\n");
    for (int copiers = 1; copiers <= 2; copiers++) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            for (int w = MEMCPY; w <= CMA; w++) {
                measure((enum way)w, sizes[i], copiers);
            }
        }
    }
    return 0;
}
