/* SPDX-License-Identifier: MIT */
/*
 * bind.c - where each rank runs (--bind). With "core", rank r gets the
 * r-th CPU of the set obcrun may use, as mpirun binds ranks to cores when
 * they do not outnumber them: two ranks then never share a core while
 * another one idles, which the scheduler otherwise allows (a busy process
 * beside the job takes one core and both ranks queue on the other, each
 * hand-off then costing a time slice). With more ranks than CPUs, by
 * default, or with "none", every rank keeps obcrun's whole set and the
 * scheduler places it: bound two or more to a core, the ranks stall a
 * whole time slice whenever a busy process shares their core (about 4 ms
 * per small allreduce at 4 and 8 ranks on 2 cores; unbound 37-372 us,
 * but 1.8 ms at 8 ranks and 8 B, where unbound launches are bimodal;
 * bench/results/2026-12-03-oversub-bind). An explicit "core" then goes
 * round-robin: rank r on CPU r mod ncpus.
 */
#include "obcrun.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

int obcrun_bind_parse(const char *s, struct obcrun_opts *opts)
{
    if (strcmp(s, "core") == 0) {
        opts->bind = OBCRUN_BIND_CORE;
    } else if (strcmp(s, "none") == 0) {
        opts->bind = OBCRUN_BIND_NONE;
    } else {
        return -1;
    }
    return 0;
}

int obcrun_bind_cpu(const struct obcrun_opts *opts, int rank)
{
    cpu_set_t set;
    if (opts->bind == OBCRUN_BIND_NONE || sched_getaffinity(0, sizeof(set), &set) != 0) {
        return -1;
    }
    int ncpus = CPU_COUNT(&set);
    if (opts->bind == OBCRUN_BIND_AUTO && (opts->nranks == 1 || opts->nranks > ncpus)) {
        return -1; /* one rank keeps them all; outnumbered: the scheduler places them */
    }
    for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &set) && seen++ == rank % ncpus) {
            return cpu;
        }
    }
    return -1;
}

int obcrun_bind_self(int cpu)
{
    cpu_set_t one;
    if (cpu < 0) {
        return 0;
    }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof(one), &one);
}
