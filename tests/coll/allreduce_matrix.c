/* SPDX-License-Identifier: MIT */
/*
 * allreduce_matrix.c - obc_allreduce and obc_iallreduce over the matrix:
 * every dtype x every op x (in place, out of place) at counts 0, 1 and 4099,
 * completed blocking, by obc_wait, by obc_test polling or by
 * obc_comm_synchronize (rotating so that every dtype x op sees all four);
 * every dtype at ~1M elements (1000003) in and out of place, blocking and
 * not, the op rotating; and general random floats (SUM, AVG, PROD at 4099,
 * SUM at ~1M) held to the tolerance rules of tests/harness/rdata.h, and
 * rerun with the same inputs to give the same bytes (obc.h: determinism).
 *
 * Every rank computes the expected result itself from all ranks' inputs
 * (rdata.h): exact for integers (SUM/PROD wrap, AVG truncates toward zero,
 * also for negative sums) and for the chosen floats (float16/bfloat16
 * accumulated in float32 and rounded once to nearest even, ties included;
 * products that overflow float16 give inf); NaN on one rank makes MIN/MAX
 * NaN. After every call: the result, the guards around every buffer, the
 * out-of-place sendbuf unchanged, and obc_check_consistency(recvbuf, bytes,
 * root 0) reporting ndiff == 0 and first_diff_rank == -1 (every rank holds
 * bitwise identical bytes, as obc.h promises); and, once per dtype, that it
 * does see one byte flipped by one rank in a copy of a result (roots vary).
 * OBCT_QUICK=1 shrinks ~1M to 30011 (sanitizer runs, 64 ranks, and the forced
 * variants at 5 and 8 ranks: their full sizes run at 2-4). From 16384 elements each
 * rank checks only its slice of the result (rcase.h, .sliced): the consistency
 * check proves the other slices equal.
 * The variants force each allreduce algorithm; OBC_HOST_SPLIT=K makes every K
 * consecutive ranks a separate "host", so the hierarchical one has several.
 */
/* clang-format off */
/* obct: nranks=1,2,3,4,5,8 asan=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16,64 */
/* obct: name=shm env=OBC_ALGO=allreduce=shm nranks=2,3,4 label=variant */
/* obct: name=ring env=OBC_ALGO=allreduce=ring nranks=2,3,4 label=variant asan=3 */
/* obct: name=recdbl env=OBC_ALGO=allreduce=recdbl nranks=2,3,4 label=variant asan=4 */
/* obct: name=cma env=OBC_ALGO=allreduce=cma nranks=2,3,4 label=variant asan=3 */
/* obct: name=cma_quick env=OBC_ALGO=allreduce=cma env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=recdbl_quick env=OBC_ALGO=allreduce=recdbl env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=hier env=OBC_ALGO=allreduce=hier nranks=2,3,4 label=variant */
/* obct: name=hier_split2 env=OBC_ALGO=allreduce=hier env=OBC_HOST_SPLIT=2 nranks=2,3,4 label=variant asan=4 */
/* obct: name=hier_split2_quick env=OBC_ALGO=allreduce=hier env=OBC_HOST_SPLIT=2 env=OBCT_QUICK=1 nranks=5,8 label=variant */
/* obct: name=hier_split3 env=OBC_ALGO=allreduce=hier env=OBC_HOST_SPLIT=3 nranks=3,4 label=variant */
/* obct: name=split2 env=OBC_HOST_SPLIT=2 nranks=4 label=variant */
/* obct: name=split2_quick env=OBC_HOST_SPLIT=2 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=dissemination env=OBC_ALGO=barrier=dissemination nranks=2,3 label=variant */
/* obct: name=chunk5003 env=OBC_CHUNK_BYTES=5003 nranks=3 label=variant */
/* obct: name=chunk5003_quick env=OBC_CHUNK_BYTES=5003 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=ring_chunk5003 env=OBC_ALGO=allreduce=ring env=OBC_CHUNK_BYTES=5003 nranks=3,4 label=variant */
/* obct: name=recdbl_chunk5003 env=OBC_ALGO=allreduce=recdbl env=OBC_CHUNK_BYTES=5003 nranks=3 label=variant */
/* obct: name=hier_chunk5003 env=OBC_ALGO=allreduce=hier env=OBC_HOST_SPLIT=2 env=OBC_CHUNK_BYTES=5003 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 san */
/* obct: name=tcp1 env=OBC_HOST_ID=rank/1 env=OBCT_QUICK=1 nranks=3 label=variant */
/* clang-format on */
#include <stdio.h>
#include <string.h>

#include "bcase.h"
#include "obct.h"
#include "rcase.h"

#define SEED_BASE 0x616c6c72ull

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_case;

static void run_case(enum obct_rpat pat, size_t count, obc_dtype_t dt, obc_redop_t op, int in_place,
                     enum obct_completion how)
{
    struct obct_rdata d = {pat, dt, op, SEED_BASE + g_case++, g_nranks};
    obct_rcase_run(OBCT_ALLREDUCE, &d, count, 0, in_place, 0, g_comm, how);
}

static void report(const char *phase, unsigned long cases, double t0)
{
    if (g_rank == 0) {
        printf("allreduce_matrix: nranks=%d %s cases=%lu time=%.3f s\n", g_nranks, phase, cases,
               obct_now() - t0);
        fflush(stdout);
    }
}

/* Counts 0, 1, 4099: every dtype x op x place; the completion rotates with
 * (class + dtype + op + place), so each dtype x op meets all four. */
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

/* ~1M: every dtype in and out of place, blocking and not; the op rotates. */
static void large_class(size_t count, const char *name)
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
    report(name, cases, t0);
}

/* General random floats, within tolerance. */
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

/* obc_check_consistency must also see a difference in a real result: one rank flips one
 * byte of a copy of it; the flipping rank and the root vary (a flipped root makes every
 * other rank differ). */
static void consistency_sees_flip(void)
{
    double t0 = obct_now();
    for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
        struct obct_rdata d = {OBCT_RPAT_EXACT, (obc_dtype_t)dt, OBC_MAX, SEED_BASE + g_case++,
                               g_nranks};
        struct obct_rcase c;
        struct obct_buf copy;
        size_t nbytes = 4099 * obc_dtype_size((obc_dtype_t)dt);
        int victim = dt % g_nranks;
        int root = (dt / 2 + 1) % g_nranks;
        int want_ndiff = victim == root ? g_nranks - 1 : 1;
        int want_first = victim != root ? victim : (root == 0 ? 1 : 0);
        int ndiff = -7;
        int first = -7;
        obct_rcase_setup(&c, OBCT_ALLREDUCE, &d, 4099, 0, dt % 2, 0, g_rank);
        OBCT_OK(obct_rcall_run(&c.call, g_comm, OBCT_SYNC), g_comm);
        obct_rcase_check(&c);
        obct_buf_alloc(&copy, nbytes, 0);
        memcpy(copy.data, c.recv.data, nbytes);
        if (g_rank == victim) {
            copy.data[(size_t)dt * 977 % nbytes] ^= 0x10;
        }
        if (g_nranks == 1) {
            want_ndiff = 0;
            want_first = -1;
        }
        OBCT_OK(obc_check_consistency(copy.data, nbytes, root, &ndiff, &first, g_comm), g_comm);
        if (ndiff != want_ndiff || first != want_first) {
            obct_soft_fail(__FILE__, __LINE__,
                           "allreduce %s result, rank %d flipped a byte of its copy, root %d: "
                           "obc_check_consistency gave ndiff=%d first_diff_rank=%d, expected %d "
                           "and %d",
                           obct_dtype_name((obc_dtype_t)dt), victim, root, ndiff, first, want_ndiff,
                           want_first);
        }
        obct_buf_free(&copy);
        obct_rcase_free(&c);
    }
    report("consistency sees a flip", OBCT_NDTYPES, t0);
}

/* obc.h: a rerun with the same inputs, ranks and algorithm reproduces the result bit for
 * bit (the order of additions is fixed by the algorithm, never by timing). Random floats,
 * whose sums round differently in every order; once blocking, once not. */
static void rerun_identical(size_t large)
{
    static const obc_dtype_t fts[] = {OBC_FLOAT16, OBC_BFLOAT16, OBC_FLOAT32, OBC_FLOAT64};
    double t0 = obct_now();
    unsigned long cases = 0;
    for (int i = 0; i < 4; i++) {
        for (int big = 0; big < 2; big++) {
            struct obct_rdata d = {OBCT_RPAT_RANDOM, fts[i], big ? OBC_SUM : OBC_AVG,
                                   SEED_BASE + g_case++, g_nranks};
            struct obct_rcase c[2];
            char desc[240];
            for (int k = 0; k < 2; k++) {
                obct_rcase_setup(&c[k], OBCT_ALLREDUCE, &d, big ? large : 4099, 0, big, 0, g_rank);
                c[k].note = k ? "(rerun, iwait)" : "(first run, sync)";
                /* each rank checks its slice of the first run, whose ranks agree byte for
                 * byte; the rerun must equal the first run byte for byte */
                c[k].sliced = 1;
                OBCT_OK(obct_rcall_run(&c[k].call, g_comm, k ? OBCT_WAIT : OBCT_SYNC), g_comm);
                obct_rcase_check(&c[k]);
                if (k == 0) {
                    obct_rcase_check_consistent(&c[0], g_comm);
                }
            }
            obct_rcase_describe(&c[1], desc, sizeof(desc));
            obct_same_bytes(desc, c[1].recv.data, c[0].recv.data, c[0].recv.nbytes);
            obct_rcase_free(&c[0]);
            obct_rcase_free(&c[1]);
            cases++;
        }
    }
    report("reruns", cases, t0);
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
    small_classes(counts, names);
    large_class(counts[OBCT_RCLASS_LARGE], names[OBCT_RCLASS_LARGE]);
    random_floats(counts[OBCT_RCLASS_LARGE]);
    rerun_identical(counts[OBCT_RCLASS_LARGE]);
    consistency_sees_flip();
    report("total", (unsigned long)g_case, t0);
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("allreduce_matrix");
}
