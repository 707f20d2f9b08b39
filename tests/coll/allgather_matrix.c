/* SPDX-License-Identifier: MIT */
/*
 * allgather_matrix.c - obc_allgather and obc_iallgather over the matrix: every
 * dtype x (in place, out of place) x every completion (blocking, obc_wait,
 * obc_test polling, obc_comm_synchronize) at sendcounts 0, 1 and 4099, and
 * every dtype at about a million elements gathered (sendcount 1000003 /
 * nranks, odd) in and out of place, blocking and not.
 *
 * Rank r's block is the byte pattern (seed, r) of data.h, so a block from the
 * wrong rank, a shifted block or stale data never passes. In place (as NCCL)
 * the rank's sendbuf is recvbuf + rank * sendcount elements, its own block
 * already there and every other block poisoned. Checked after every call:
 * every block, the guards, the out-of-place sendbuf unchanged, and
 * obc_check_consistency(recvbuf, bytes, root 0) reporting ndiff == 0 and
 * first_diff_rank == -1.
 */
/* clang-format off */
/* obct: nranks=1,2,3,4,5,8 asan=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16,64 */
/* obct: name=shm env=OBC_ALGO=allgather=shm nranks=2,3,4,5,8 label=variant */
/* obct: name=ring env=OBC_ALGO=allgather=ring nranks=2,3,4,5,8 label=variant asan=3 */
/* obct: name=split2 env=OBC_HOST_SPLIT=2 nranks=4,5 label=variant */
/* obct: name=chunk5003 env=OBC_CHUNK_BYTES=5003 nranks=3,5 label=variant */
/* obct: name=ring_chunk5003 env=OBC_ALGO=allgather=ring env=OBC_CHUNK_BYTES=5003 nranks=3 label=variant */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 env=OBCT_QUICK=1 nranks=4 label=variant san */
/* clang-format on */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"
#include "rcase.h"

#define SEED_BASE 0x61676174ull

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_case;

static void run_case(size_t sendcount, obc_dtype_t dt, int in_place, enum obct_completion how)
{
    struct obct_rdata d = {OBCT_RPAT_EXACT, dt, OBC_SUM, SEED_BASE + g_case++, g_nranks};
    obct_rcase_run(OBCT_ALLGATHER, &d, sendcount, 0, in_place, 0, g_comm, how);
}

static void report(const char *phase, unsigned long cases, double t0)
{
    if (g_rank == 0) {
        printf("allgather_matrix: nranks=%d %s cases=%lu time=%.3f s\n", g_nranks, phase, cases,
               obct_now() - t0);
        fflush(stdout);
    }
}

int main(void)
{
    size_t counts[OBCT_RCLASSES];
    const char *names[OBCT_RCLASSES];
    size_t large;
    double t0 = obct_now();
    double t;
    unsigned long cases = 0;
    obct_rsize_classes(counts, names);
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    for (int cls = 0; cls < OBCT_RCLASS_LARGE; cls++) {
        t = obct_now();
        cases = 0;
        for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
            for (int ip = 0; ip < 2; ip++) {
                for (int how = 0; how < OBCT_NCOMPLETIONS; how++) {
                    run_case(counts[cls], (obc_dtype_t)dt, ip, (enum obct_completion)how);
                    cases++;
                }
            }
        }
        OBCT_OK(obc_barrier(g_comm), g_comm);
        report(names[cls], cases, t);
    }
    large = (counts[OBCT_RCLASS_LARGE] / (size_t)g_nranks) | 1;
    t = obct_now();
    cases = 0;
    for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
        for (int ip = 0; ip < 2; ip++) {
            for (int async = 0; async < 2; async++) {
                enum obct_completion how =
                    async ? (enum obct_completion)(1 + (dt + ip) % 3) : OBCT_SYNC;
                run_case(large, (obc_dtype_t)dt, ip, how);
                cases++;
            }
        }
    }
    report(names[OBCT_RCLASS_LARGE], cases, t);
    report("total", (unsigned long)g_case, t0);
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("allgather_matrix");
}
