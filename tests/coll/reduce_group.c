/* SPDX-License-Identifier: MIT */
/*
 * reduce_group.c - reductions and gathers between obc_group_start and
 * obc_group_end: many allreduces of different dtypes, ops, sizes and modes
 * and allgathers (with some reduces, reduce_scatters and broadcasts in
 * between), issued blocking (which must return OBC_SUCCESS at once and
 * complete by obc_group_end) and non-blocking (completed by obc_wait after
 * obc_group_end); a group of small allreduces only; nested groups; count 0
 * with NULL buffers; blocking allreduces inside a group that return at once
 * while one rank is 1 s late; and plain calls right after a group. Every
 * result is checked (rcase.h: values, guards, unchanged sendbufs) after the
 * group, and allreduce/allgather results with obc_check_consistency.
 */
/* obct: nranks=1,2,3,4,5,8 san=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16,32 */
/* obct: name=ring env=OBC_ALGO=allreduce=ring nranks=3,4 */
/* obct: name=recdbl env=OBC_ALGO=allreduce=recdbl nranks=3,4 */
/* obct: name=hier_split2 env=OBC_ALGO=allreduce=hier env=OBC_HOST_SPLIT=2 nranks=5 */
/* obct: name=bucket64k env=OBC_GROUP_BUCKET_BYTES=65536 nranks=3 */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"
#include "rcase.h"

#define SEED_BASE 0x72677270ull
#define MAXCASES 200
#define MAXBCASTS 40

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_seed = SEED_BASE;
static struct obct_rcase g_case[MAXCASES];
static int g_ncases;
static struct obct_bcase g_bcast[MAXBCASTS];
static int g_nbcasts;
static size_t g_large;

/* Queue one call (inside a group the blocking form returns at once). */
static void add(enum obct_rkind kind, size_t count, obc_dtype_t dt, obc_redop_t op, int root,
                int in_place, int async)
{
    struct obct_rcase *c = &g_case[g_ncases];
    struct obct_rdata d = {OBCT_RPAT_EXACT, dt, op, g_seed, g_nranks};
    OBCT_ASSERT(g_ncases < MAXCASES);
    g_ncases++;
    obct_rcase_setup(c, kind, &d, count, root, in_place, (int)(g_seed % 2), g_rank);
    g_seed++;
    c->note = async ? "(non-blocking, in a group)" : "(blocking, in a group)";
    c->req = NULL;
    if (async) {
        OBCT_OK(obct_rcall_post(&c->call, g_comm, &c->req), g_comm);
        OBCT_ASSERT(c->req != NULL);
    } else {
        OBCT_OK(obct_rcall_run(&c->call, g_comm, OBCT_SYNC), g_comm);
    }
}

static void add_bcast(size_t count, obc_dtype_t dt, int root)
{
    struct obct_bcase *b = &g_bcast[g_nbcasts];
    OBCT_ASSERT(g_nbcasts < MAXBCASTS);
    g_nbcasts++;
    obct_bcase_setup(b, g_rank, count, dt, root, g_seed++, OBCT_OUT_OF_PLACE);
    OBCT_OK(obc_broadcast(obct_bcase_sendbuf(b), obct_bcase_recvbuf(b), count, dt, root, g_comm),
            g_comm);
}

/* Wait for the requests, check and free everything queued so far. */
static void finish_cases(const char *phase, double t0)
{
    for (int i = 0; i < g_ncases; i++) {
        if (g_case[i].req != NULL) {
            OBCT_OK(obc_wait(g_case[i].req), g_comm);
            g_case[i].req = NULL;
        }
    }
    for (int i = 0; i < g_ncases; i++) {
        obct_rcase_check(&g_case[i]);
        obct_rcase_check_consistent(&g_case[i], g_comm);
        obct_rcase_free(&g_case[i]);
    }
    for (int i = 0; i < g_nbcasts; i++) {
        obct_bcase_check(&g_bcast[i]);
        obct_bcase_free(&g_bcast[i]);
    }
    if (g_rank == 0) {
        printf("reduce_group: nranks=%d %s: %d calls + %d broadcasts, %.3f s\n", g_nranks, phase,
               g_ncases, g_nbcasts, obct_now() - t0);
        fflush(stdout);
    }
    g_ncases = 0;
    g_nbcasts = 0;
}

/* Mostly allreduces and allgathers, every dtype and op, sizes 0 .. ~1M, in and out of
 * place, blocking and not; a reduce, a reduce_scatter and a broadcast every few calls. */
static void mixed_group(int salt)
{
    static const size_t sizes[] = {0, 1, 7, 100, 4099, 1000};
    double t0 = obct_now();
    OBCT_OK(obc_group_start(), NULL);
    for (int i = 0; i < 40; i++) {
        obc_dtype_t dt = (obc_dtype_t)((i + salt) % OBCT_NDTYPES);
        obc_redop_t op = (obc_redop_t)((i / 2 + salt) % OBCT_NREDOPS);
        size_t count = i == 20 ? g_large : sizes[(i * 7 + salt) % 6];
        int in_place = (i + salt) % 3 == 0;
        int async = (i + salt) % 2;
        enum obct_rkind kind = i % 4 == 3 ? OBCT_ALLGATHER : OBCT_ALLREDUCE;
        if (i % 10 == 5) {
            kind = OBCT_REDUCE;
        } else if (i % 10 == 9) {
            kind = OBCT_REDUCE_SCATTER;
        }
        add(kind, count, dt, op, (i + salt) % g_nranks, in_place, async);
        if (i % 5 == 2) {
            add_bcast((size_t)(i * 37 + 1), dt, (i * 3 + salt) % g_nranks);
        }
    }
    OBCT_OK(obc_group_end(), g_comm);
    finish_cases("mixed group", t0);
}

/* Many small allreduces only (what a library may fuse), every dtype x op. */
static void small_allreduces(void)
{
    double t0 = obct_now();
    OBCT_OK(obc_group_start(), NULL);
    for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
        for (int op = 0; op < OBCT_NREDOPS; op++) {
            int k = dt * OBCT_NREDOPS + op;
            add(OBCT_ALLREDUCE, (size_t)(1 + k * 13 % 97), (obc_dtype_t)dt, (obc_redop_t)op, 0,
                k % 3 == 0, k % 2);
        }
    }
    OBCT_OK(obc_group_end(), g_comm);
    finish_cases("small allreduces", t0);
}

static void nested_groups(void)
{
    double t0 = obct_now();
    OBCT_OK(obc_group_start(), NULL);
    add(OBCT_ALLREDUCE, 4099, OBC_FLOAT32, OBC_SUM, 0, 0, 0);
    add(OBCT_ALLGATHER, 333, OBC_INT64, OBC_SUM, 0, 1, 1);
    OBCT_OK(obc_group_start(), NULL);
    add(OBCT_ALLREDUCE, 1001, OBC_BFLOAT16, OBC_AVG, 0, 1, 1);
    add(OBCT_REDUCE, 77, OBC_UINT8, OBC_PROD, g_nranks - 1, 0, 0);
    OBCT_OK(obc_group_end(), g_comm); /* inner: launches nothing yet */
    add(OBCT_ALLREDUCE, 5, OBC_INT8, OBC_MIN, 0, 0, 1);
    add(OBCT_REDUCE_SCATTER, 99, OBC_FLOAT16, OBC_SUM, 0, 1, 0);
    OBCT_OK(obc_group_end(), g_comm);
    finish_cases("nested groups", t0);
}

static void empty_and_zero(void)
{
    obc_request_t *req[3] = {NULL, NULL, NULL};
    double t0 = obct_now();
    OBCT_OK(obc_group_start(), NULL);
    OBCT_OK(obc_group_end(), g_comm);
    OBCT_OK(obc_group_start(), NULL);
    OBCT_OK(obc_allreduce(NULL, NULL, 0, OBC_FLOAT64, OBC_SUM, g_comm), g_comm);
    OBCT_OK(obc_allgather(NULL, NULL, 0, OBC_INT8, g_comm), g_comm);
    OBCT_OK(obc_reduce(NULL, NULL, 0, OBC_UINT32, OBC_MAX, g_nranks - 1, g_comm), g_comm);
    OBCT_OK(obc_reduce_scatter(NULL, NULL, 0, OBC_BFLOAT16, OBC_AVG, g_comm), g_comm);
    OBCT_OK(obc_iallreduce(NULL, NULL, 0, OBC_INT32, OBC_PROD, g_comm, &req[0]), g_comm);
    OBCT_OK(obc_iallgather(NULL, NULL, 0, OBC_FLOAT16, g_comm, &req[1]), g_comm);
    add(OBCT_ALLREDUCE, 7, OBC_UINT64, OBC_SUM, 0, 0, 0);
    OBCT_OK(obc_ireduce_scatter(NULL, NULL, 0, OBC_UINT8, OBC_MIN, g_comm, &req[2]), g_comm);
    OBCT_OK(obc_group_end(), g_comm);
    for (int i = 0; i < 3; i++) {
        OBCT_ASSERT(req[i] != NULL);
        OBCT_OK(obc_wait(req[i]), g_comm);
    }
    finish_cases("empty group, count 0", t0);
}

/* Inside a group a blocking call only queues: with the last rank late, the others'
 * obc_allreduce and obc_allgather must return before that rank even enters the group (an
 * ordering on the host's one CLOCK_MONOTONIC, not a time limit); the data moves at
 * obc_group_end. The lateness scales with OBC_TEST_TIMEOUT_MULTIPLIER (sanitizers). */
static void calls_return_at_once(void)
{
    double t0 = obct_now();
    int late = g_nranks - 1;
    double late_entry = 0.0;
    OBCT_OK(obc_barrier(g_comm), g_comm);
    if (g_rank == late) {
        obct_sleep(1.0 * obct_time_scale());
        late_entry = obct_now();
    }
    OBCT_OK(obc_group_start(), NULL);
    /* Large enough to take real time, small enough that 64 ranks' allgather outputs
     * (nranks x count) fit in memory under TSan's shadow: 4 MiB of output per rank. */
    size_t count = ((size_t)1 << 20) / (size_t)g_nranks;
    for (int i = 0; i < 3; i++) {
        add(i == 1 ? OBCT_ALLGATHER : OBCT_ALLREDUCE, count + (size_t)i, OBC_FLOAT32, OBC_SUM, 0,
            i == 2, 0);
    }
    double returned = obct_now();
    OBCT_OK(obc_group_end(), g_comm);
    OBCT_OK(obc_bcast(&late_entry, 1, OBC_FLOAT64, late, g_comm), g_comm);
    if (g_rank != late && returned > late_entry) {
        obct_soft_fail(__FILE__, __LINE__,
                       "blocking calls inside a group returned %.3f s after rank %d entered the "
                       "group: they waited for it instead of queueing",
                       returned - late_entry, late);
    }
    finish_cases("group calls return at once", t0);
}

/* Ungrouped calls right after a group must run normally (group state reset). */
static void after_group(void)
{
    double t0 = obct_now();
    add(OBCT_ALLREDUCE, 4099, OBC_FLOAT16, OBC_SUM, 0, 0, 0);
    add(OBCT_ALLGATHER, 3, OBC_INT8, OBC_SUM, 0, 0, 1);
    add(OBCT_ALLREDUCE, 1000, OBC_UINT32, OBC_MAX, 0, 1, 1);
    finish_cases("plain calls after groups", t0);
}

int main(void)
{
    size_t counts[OBCT_RCLASSES];
    const char *names[OBCT_RCLASSES];
    obct_rsize_classes(counts, names);
    g_large = counts[OBCT_RCLASS_LARGE];
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    for (int salt = 0; salt < 3; salt++) {
        mixed_group(salt);
    }
    small_allreduces();
    nested_groups();
    empty_and_zero();
    calls_return_at_once();
    after_group();
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("reduce_group");
}
