/* SPDX-License-Identifier: MIT */
/*
 * reduce_scatter_matrix.c - obc_reduce_scatter and obc_ireduce_scatter over
 * the matrix: every dtype x every op x (in place, out of place) at recvcounts
 * 0, 1 and 4099, completed blocking, by obc_wait, by obc_test polling or by
 * obc_comm_synchronize (rotating); every dtype at about a million elements
 * reduced (recvcount 1000003 / nranks, odd) in and out of place, blocking and
 * not, the op rotating; general random floats within the tolerance rules of
 * tests/harness/rdata.h.
 *
 * sendbuf holds nranks * recvcount elements: element j of rank r's sendbuf is
 * input element j of rank r (rdata.h), so the result of rank q, element i,
 * must be the reference reduction of input element q * recvcount + i (exact
 * integer wrap, AVG truncating toward zero, float16/bfloat16 rounded once to
 * nearest even, NaN through MIN/MAX). In place (as NCCL) recvbuf is sendbuf +
 * rank * recvcount elements; the other blocks of sendbuf must still hold the
 * input afterwards (sendbuf is const in obc.h; no block but the rank's own is
 * an output). Out of place the whole sendbuf must be unchanged. Guards are
 * checked around every buffer.
 */
/* clang-format off */
/* obct: nranks=1,2,3,4,5,8 asan=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16 */
/* obct: name=shm env=OBC_ALGO=reduce_scatter=shm nranks=2,3,4 label=variant asan=4 */
/* obct: name=shm_quick env=OBC_ALGO=reduce_scatter=shm env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=ring env=OBC_ALGO=reduce_scatter=ring nranks=2,3,4 label=variant */
/* obct: name=ring_quick env=OBC_ALGO=reduce_scatter=ring env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=cma env=OBC_ALGO=reduce_scatter=cma nranks=2,3,4 label=variant asan=3 */
/* obct: name=cma_quick env=OBC_ALGO=reduce_scatter=cma env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=split2 env=OBC_HOST_SPLIT=2 nranks=4 label=variant */
/* obct: name=split2_quick env=OBC_HOST_SPLIT=2 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=chunk5003 env=OBC_CHUNK_BYTES=5003 nranks=3 label=variant */
/* obct: name=chunk5003_quick env=OBC_CHUNK_BYTES=5003 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=ring_chunk5003 env=OBC_ALGO=reduce_scatter=ring env=OBC_CHUNK_BYTES=5003 nranks=3 label=variant */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 env=OBCT_QUICK=1 nranks=4 label=variant */
/* clang-format on */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"
#include "rcase.h"

#define SEED_BASE 0x72736361ull

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_case;

static void run_case(enum obct_rpat pat, size_t recvcount, obc_dtype_t dt, obc_redop_t op,
                     int in_place, enum obct_completion how)
{
    struct obct_rdata d = {pat, dt, op, SEED_BASE + g_case++, g_nranks};
    obct_rcase_run(OBCT_REDUCE_SCATTER, &d, recvcount, 0, in_place, 0, g_comm, how);
}

static void report(const char *phase, unsigned long cases, double t0)
{
    if (g_rank == 0) {
        printf("reduce_scatter_matrix: nranks=%d %s cases=%lu time=%.3f s\n", g_nranks, phase,
               cases, obct_now() - t0);
        fflush(stdout);
    }
}

static void small_classes(const size_t *counts, const char *const *names)
{
    for (int cls = 0; cls < OBCT_RCLASS_LARGE; cls++) {
        double t0 = obct_now();
        unsigned long cases = 0;
        for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
            for (int op = 0; op < OBCT_NREDOPS; op++) {
                for (int ip = 0; ip < 2; ip++) {
                    enum obct_completion how =
                        (enum obct_completion)((cls + dt + op + ip) % OBCT_NCOMPLETIONS);
                    run_case(OBCT_RPAT_EXACT, counts[cls], (obc_dtype_t)dt, (obc_redop_t)op, ip,
                             how);
                    cases++;
                }
            }
        }
        OBCT_OK(obc_barrier(g_comm), g_comm);
        report(names[cls], cases, t0);
    }
}

static void large_class(size_t count)
{
    double t0 = obct_now();
    unsigned long cases = 0;
    for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
        for (int ip = 0; ip < 2; ip++) {
            for (int async = 0; async < 2; async++) {
                obc_redop_t op = (obc_redop_t)((dt * 4 + ip * 2 + async) % OBCT_NREDOPS);
                enum obct_completion how =
                    async ? (enum obct_completion)(1 + (dt + ip) % 3) : OBCT_SYNC;
                run_case(OBCT_RPAT_EXACT, count, (obc_dtype_t)dt, op, ip, how);
                cases++;
            }
        }
    }
    report("large", cases, t0);
}

static void random_floats(size_t large)
{
    static const obc_dtype_t fts[] = {OBC_FLOAT16, OBC_BFLOAT16, OBC_FLOAT32, OBC_FLOAT64};
    static const obc_redop_t ops[] = {OBC_SUM, OBC_AVG, OBC_PROD};
    double t0 = obct_now();
    unsigned long cases = 0;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 3; j++) {
            run_case(OBCT_RPAT_RANDOM, 4099, fts[i], ops[j], (i + j) % 2,
                     (enum obct_completion)((i + j) % OBCT_NCOMPLETIONS));
            cases++;
        }
        run_case(OBCT_RPAT_RANDOM, large, fts[i], OBC_SUM, i % 2, i < 2 ? OBCT_SYNC : OBCT_WAIT);
        cases++;
    }
    report("random floats", cases, t0);
}

int main(void)
{
    size_t counts[OBCT_RCLASSES];
    const char *names[OBCT_RCLASSES];
    size_t large;
    double t0 = obct_now();
    obct_rsize_classes(counts, names);
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    large = (counts[OBCT_RCLASS_LARGE] / (size_t)g_nranks) | 1;
    small_classes(counts, names);
    large_class(large);
    random_floats(large);
    report("total", (unsigned long)g_case, t0);
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("reduce_scatter_matrix");
}
