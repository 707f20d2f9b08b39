/* SPDX-License-Identifier: MIT */
/*
 * reduce_matrix.c - obc_reduce and obc_ireduce over the matrix: every dtype x
 * every op x roots first/middle/last x (in place, out of place) at counts 0,
 * 1 and 4099, completed blocking, by obc_wait, by obc_test polling or by
 * obc_comm_synchronize (rotating); every dtype at ~1M elements (1000003) in
 * and out of place, blocking and not, root and op rotating; general random
 * floats within the tolerance rules of tests/harness/rdata.h.
 *
 * The root checks its result against the reference every rank can compute
 * (rdata.h: exact integer wrap, AVG truncating toward zero, float16/bfloat16
 * rounded once to nearest even, NaN through MIN/MAX). recvbuf is used on the
 * root only, so non-roots alternate between passing recvbuf NULL (allowed)
 * and passing a poisoned buffer that must stay untouched; in place, non-roots
 * alternate between (sendbuf, NULL) and (buf, buf), whose buf is their
 * sendbuf and must hold their input afterwards. Every sendbuf must be
 * unchanged (except the root's in-place buffer), every guard intact.
 */
/* clang-format off */
/* obct: nranks=1,2,3,4,5,8 asan=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16,32 */
/* obct: name=shm env=OBC_ALGO=reduce=shm nranks=2,3,4 label=variant */
/* obct: name=shm_quick env=OBC_ALGO=reduce=shm env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=ring env=OBC_ALGO=reduce=ring nranks=2,3,4 label=variant asan=3 */
/* obct: name=ring_quick env=OBC_ALGO=reduce=ring env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=cma env=OBC_ALGO=reduce=cma nranks=2,3,4 label=variant asan=3 */
/* obct: name=cma_quick env=OBC_ALGO=reduce=cma env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=split2 env=OBC_HOST_SPLIT=2 nranks=4 label=variant */
/* obct: name=split2_quick env=OBC_HOST_SPLIT=2 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=chunk5003 env=OBC_CHUNK_BYTES=5003 nranks=3 label=variant */
/* obct: name=chunk5003_quick env=OBC_CHUNK_BYTES=5003 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=ring_chunk5003 env=OBC_ALGO=reduce=ring env=OBC_CHUNK_BYTES=5003 nranks=3 label=variant */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 env=OBCT_QUICK=1 nranks=4 label=variant */
/* clang-format on */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"
#include "rcase.h"

#define SEED_BASE 0x72656475ull

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_case;
static int g_roots[3];
static int g_nroots;

static void pick_roots(void)
{
    int cand[3] = {0, g_nranks / 2, g_nranks - 1};
    for (int i = 0; i < 3; i++) {
        int dup = 0;
        for (int j = 0; j < g_nroots; j++) {
            dup |= g_roots[j] == cand[i];
        }
        if (!dup) {
            g_roots[g_nroots++] = cand[i];
        }
    }
}

/* Non-roots alternate between passing recvbuf NULL and passing a buffer (rcase.h). */
static void run_case(enum obct_rpat pat, size_t count, obc_dtype_t dt, obc_redop_t op, int root,
                     int in_place, enum obct_completion how)
{
    struct obct_rdata d = {pat, dt, op, SEED_BASE + g_case, g_nranks};
    int variant = (int)(g_case % 2);
    g_case++;
    obct_rcase_run(OBCT_REDUCE, &d, count, root, in_place, variant, g_comm, how);
}

static void report(const char *phase, unsigned long cases, double t0)
{
    if (g_rank == 0) {
        printf("reduce_matrix: nranks=%d %s cases=%lu time=%.3f s\n", g_nranks, phase, cases,
               obct_now() - t0);
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
                for (int r = 0; r < g_nroots; r++) {
                    for (int ip = 0; ip < 2; ip++) {
                        enum obct_completion how =
                            (enum obct_completion)((cls + dt + op + r + ip) % OBCT_NCOMPLETIONS);
                        run_case(OBCT_RPAT_EXACT, counts[cls], (obc_dtype_t)dt, (obc_redop_t)op,
                                 g_roots[r], ip, how);
                        cases++;
                    }
                }
            }
        }
        OBCT_OK(obc_barrier(g_comm), g_comm);
        report(names[cls], cases, t0);
    }
}

static void large_class(size_t count, const char *name)
{
    double t0 = obct_now();
    unsigned long cases = 0;
    for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
        for (int ip = 0; ip < 2; ip++) {
            for (int async = 0; async < 2; async++) {
                int k = dt * 4 + ip * 2 + async;
                enum obct_completion how =
                    async ? (enum obct_completion)(1 + (dt + ip) % 3) : OBCT_SYNC;
                run_case(OBCT_RPAT_EXACT, count, (obc_dtype_t)dt, (obc_redop_t)(k % OBCT_NREDOPS),
                         g_roots[k % g_nroots], ip, how);
                cases++;
            }
        }
    }
    report(name, cases, t0);
}

static void random_floats(size_t large)
{
    static const obc_dtype_t fts[] = {OBC_FLOAT16, OBC_BFLOAT16, OBC_FLOAT32, OBC_FLOAT64};
    static const obc_redop_t ops[] = {OBC_SUM, OBC_AVG, OBC_PROD};
    double t0 = obct_now();
    unsigned long cases = 0;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 3; j++) {
            run_case(OBCT_RPAT_RANDOM, 4099, fts[i], ops[j], g_roots[(i + j) % g_nroots],
                     (i + j) % 2, (enum obct_completion)((i + j) % OBCT_NCOMPLETIONS));
            cases++;
        }
        run_case(OBCT_RPAT_RANDOM, large, fts[i], OBC_SUM, g_roots[i % g_nroots], i % 2,
                 i < 2 ? OBCT_SYNC : OBCT_WAIT);
        cases++;
    }
    report("random floats", cases, t0);
}

int main(void)
{
    size_t counts[OBCT_RCLASSES];
    const char *names[OBCT_RCLASSES];
    double t0 = obct_now();
    obct_rsize_classes(counts, names);
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    pick_roots();
    small_classes(counts, names);
    large_class(counts[OBCT_RCLASS_LARGE], names[OBCT_RCLASS_LARGE]);
    random_floats(counts[OBCT_RCLASS_LARGE]);
    report("total", (unsigned long)g_case, t0);
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("reduce_matrix");
}
