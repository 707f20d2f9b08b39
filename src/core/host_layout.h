/* SPDX-License-Identifier: MIT */
/*
 * host_layout.h - where every rank of a communicator runs: which machine
 * (shared-memory domain) and which host as the algorithms see them, and who
 * heads each host. Ground-floor data: setup/host_layout.c computes it once,
 * from the bootstrap's first round, and the communicator owns it; the
 * transports (remote ranks), the engine (teams) and, through algo.h's
 * context, the algorithms read it and never work it out again.
 *
 * Hosts are numbered by their lowest rank, and each host's ranks are kept
 * in ascending order, so every rank derives the same numbers.
 */
#ifndef OBC_CORE_HOST_LAYOUT_H
#define OBC_CORE_HOST_LAYOUT_H

#include <stdbool.h>

struct obc__host_layout {
    int rank; /* this rank */
    int nranks;

    /* Machines: ranks that share memory (same boot id and network
     * namespace, or the same OBC_HOST_ID). One host arena each. */
    int machines;
    int *machine_of; /* [nranks]: machine index of every rank (owns the int block) */
    bool *remote; /* [nranks]: on another machine, reached over TCP */
    int local_rank; /* this rank's index among its machine's ranks */
    int local_nranks;
    int *local; /* [local_nranks]: the ranks of this machine, ascending */
    bool one_arena; /* every rank is on this machine, so in its arena */

    /* Hosts as algorithms see them: the machines, or the cuts of one
     * machine that OBC_HOST_SPLIT asks for (data still moves through its
     * shared memory). */
    int nhosts;
    int *host_of; /* [nranks]: host index of every rank */
    int *head; /* [nhosts]: the rank that heads each host (its lowest) */
    int *host_index; /* [nranks]: every rank's index among its host's ranks */
    int *members; /* [nranks]: ranks grouped by host, ascending in each */
    int *host_start; /* [nhosts + 1]: host h's ranks are members[host_start[h]..host_start[h+1]) */

    /* The CPUs this machine's ranks may run on, from their affinity masks
     * (the same on every rank of the machine): cores_owned when each is
     * bound to a CPU of its own (obcrun, mpirun), so that a waiting rank
     * takes no core from another; machine_cpus counts them then, the
     * distinct CPUs when every rank is bound to one but some share (obcrun
     * with more ranks than CPUs), else the most CPUs any one rank may use. */
    int machine_cpus;
    bool cores_owned;
};

#endif
