/* SPDX-License-Identifier: MIT */
/* time.c - monotonic clock, sleeping and yielding. */
#include "platform/platform.h"

#include <sched.h>
#include <time.h>

int64_t obc__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t obc__coarse_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void obc__sleep_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

void obc__yield(void)
{
    sched_yield();
}

int obc__bound_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) != 1) {
        return -1;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &set)) {
            return cpu;
        }
    }
    return -1;
}

int obc__ncpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 1;
    }
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}
