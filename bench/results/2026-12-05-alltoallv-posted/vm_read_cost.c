/* SPDX-License-Identifier: MIT */
/*
 * vm_read_cost.c - what one process_vm_readv costs on this machine: a
 * child sleeps, the parent reads from it 200 000 times, one iovec of
 * 8 B .. 32 KiB, and two 8-byte words from two places in one call.
 *   gcc -O2 vm_read_cost.c -o /tmp/vm_read_cost && /tmp/vm_read_cost
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALLS 200000

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
    static size_t words[1024];
    char *remote = aligned_alloc(4096, 1 << 20), *local = aligned_alloc(4096, 1 << 20);
    size_t two[2];
    if (remote == NULL || local == NULL) {
        return 1;
    }
    pid_t child = fork(); /* the same addresses in the child: read its copies */
    if (child == 0) {
        for (;;) {
            pause();
        }
    }
    for (size_t size = 8; size <= 32768; size *= 8) {
        double t0 = now_ns();
        for (int i = 0; i < CALLS; i++) {
            struct iovec l = {local, size}, r = {size == 8 ? (void *)&words[5] : remote, size};
            if (process_vm_readv(child, &l, 1, &r, 1, 0) != (ssize_t)size) {
                perror("process_vm_readv");
                return 1;
            }
        }
        printf("one iovec of %5zu B: %.2f us per call\n", size, (now_ns() - t0) / CALLS / 1e3);
    }
    double t0 = now_ns();
    for (int i = 0; i < CALLS; i++) {
        struct iovec l = {two, sizeof(two)}, r[2] = {{&words[5], 8}, {&words[900], 8}};
        if (process_vm_readv(child, &l, 1, r, 2, 0) != (ssize_t)sizeof(two)) {
            perror("process_vm_readv");
            return 1;
        }
    }
    printf("two words from two places: %.2f us per call\n", (now_ns() - t0) / CALLS / 1e3);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}
