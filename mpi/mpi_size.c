/* SPDX-License-Identifier: MIT */
/*
 * mpi_size.c - the smallest call of each kind that obc serves. Below it the
 * MPI's own small-message path is faster: it spins on a flag where obc pays
 * its per-call checks and, on a crowded host, a sleeping wait. The layer is
 * there to be faster than the MPI under it, so those calls go to PMPI.
 *
 * The sizes are the count times the type's size that the call names (OSU's
 * size column: a bcast's message, an allreduce's vector, an allgather's or
 * a gather's block per rank, an alltoall's block per peer, a
 * reduce_scatter_block's block per rank); a barrier names 0 bytes. Every
 * rank of a call names the same size and agrees on crowding (mpi_layer.c),
 * so every rank makes the same choice.
 *
 * Measured with the OSU micro-benchmarks 7.4 (bench/osu_layer.sh, 1000-2000
 * iterations, the layer against the plain MPI in the same run, 2 ranks idle
 * and 4 and 8 ranks on 2 cores; bench/results/2026-12-02-osu-min-bytes):
 * - Open MPI 4.1: its shared-memory path beats obc below 4 KiB at 2 ranks
 *   (0.15-0.25 against 0.25-0.35 us; allreduce is level at 1-2 KiB), then
 *   falls 2-5x behind at 4 KiB, where its eager protocol ends. On a crowded
 *   host obc's sleeping waits win from 512 B, except bcast and alltoall,
 *   which stay Open MPI's below 4 KiB, and the barrier, which stays its
 *   always (level at 2 ranks, 1.4-2.2x faster at 4 and 8).
 * - MPICH 4.0: obc wins its reductions, alltoall and barrier at every size;
 *   its bcast, scatter, gather and allgather are level or up to 2x faster
 *   than obc's below 16 KiB at 2 ranks. Yet passing those small calls made
 *   things worse: MPICH's waiting ranks spin without yielding, so next to
 *   obc's sleeping waits (a served barrier between passed bcasts, in OSU's
 *   loop) a woken rank waits for a time slice. On a crowded host that took
 *   small bcasts from 2.5 us to 0.5-7 ms. So under MPICH the layer serves
 *   every call it can, and its waits are never mixed with MPICH's.
 * OBC_MPI_MIN_BYTES replaces the table by one size for every call (0: obc
 * serves everything it can).
 */
#include "mpi_layer.h"

struct min_bytes {
    long long idle; /* each host has a CPU for each of the communicator's ranks */
    long long crowded; /* some host has more ranks than CPUs */
};

#if defined(MPICH_VERSION)
/* Everything served: see the comment above. */
static const struct min_bytes table[] = {
    [OBC__MPI_BARRIER] = {0, 0},   [OBC__MPI_BCAST] = {0, 0},
    [OBC__MPI_ALLREDUCE] = {0, 0}, [OBC__MPI_REDUCE] = {0, 0},
    [OBC__MPI_ALLGATHER] = {0, 0}, [OBC__MPI_REDUCE_SCATTER_BLOCK] = {0, 0},
    [OBC__MPI_ALLTOALL] = {0, 0},  [OBC__MPI_GATHER] = {0, 0},
    [OBC__MPI_SCATTER] = {0, 0},   [OBC__MPI_ALLTOALLV] = {0, 0},
};
#else /* Open MPI */
static const struct min_bytes table[] = {
    [OBC__MPI_BARRIER] = {1, 1}, /* always Open MPI's */
    [OBC__MPI_BCAST] = {4096, 4096},
    [OBC__MPI_ALLREDUCE] = {4096, 512},
    [OBC__MPI_REDUCE] = {4096, 512},
    [OBC__MPI_ALLGATHER] = {4096, 512},
    [OBC__MPI_REDUCE_SCATTER_BLOCK] = {4096, 512},
    [OBC__MPI_ALLTOALL] = {4096, 4096},
    [OBC__MPI_GATHER] = {4096, 512},
    [OBC__MPI_SCATTER] = {4096, 512},
    [OBC__MPI_ALLTOALLV] = {0, 0}, /* mpi_vector.c: every size */
};
#endif

bool obc__mpi_size_uses_crowding(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].idle != table[i].crowded) {
            return true;
        }
    }
    return false;
}

long long obc__mpi_min_bytes(const struct obc__mpi_env *env, enum obc__mpi_call call,
                             bool is_crowded)
{
    if (env->min_bytes >= 0) {
        return env->min_bytes;
    }
    return is_crowded ? table[call].crowded : table[call].idle;
}
