/* SPDX-License-Identifier: MIT */
/*
 * futex.c - sleeping on a 32-bit word, process-private or shared through a
 * memory segment. This is how obc waits without burning a core once the
 * brief spin and yield phases are over (8 ranks on 2 cores must not spin).
 */
#include "platform/platform.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int obc__futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns, bool shared)
{
    struct timespec ts, *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = timeout_ns / 1000000000;
        ts.tv_nsec = timeout_ns % 1000000000;
        tsp = &ts;
    }
    int op = shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
    if (syscall(SYS_futex, (uint32_t *)word, op, expected, tsp, NULL, 0) == 0) {
        return 0;
    }
    if (errno == EAGAIN) {
        return 0; /* the value had already changed */
    }
    return -errno;
}

void obc__futex_wake(_Atomic uint32_t *word, bool shared)
{
    int op = shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
    syscall(SYS_futex, (uint32_t *)word, op, INT_MAX, NULL, NULL, 0);
}
