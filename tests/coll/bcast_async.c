/* SPDX-License-Identifier: MIT */
/*
 * bcast_async.c - several obc_ibroadcast calls in flight at once, completed
 * by every combination of obc_wait (in order, reversed), obc_test polling,
 * obc_comm_synchronize followed by test or wait, a mix of them, and a
 * blocking broadcast issued behind pending ones. Sizes, roots, dtypes and
 * modes differ within each round, a large one sits in front of small ones
 * in some rounds, and a final round keeps 64 small ones in flight. Also:
 * obc_ibroadcast returns at once (and obc_test says IN_PROGRESS) while the
 * root is late.
 */
/* obct: nranks=1,2,3,4,5,8 san=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=64 */
/* obct: name=eager env=OBC_ALGO=broadcast=eager nranks=2,4,8 */
/* obct: name=arena env=OBC_ALGO=broadcast=arena nranks=2,4,8 */
/* obct: name=cma env=OBC_ALGO=broadcast=cma nranks=2,4,8 san=2 */
/* obct: name=chunk5003 env=OBC_ALGO=broadcast=arena env=OBC_CHUNK_BYTES=5003 nranks=3 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 label=variant san */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "bcase.h"
#include "obct.h"

#define SEED_BASE 0x6173796eull
#define PER_ROUND 5
#define MANY 64

enum strategy {
    WAIT_IN_ORDER,
    WAIT_REVERSED,
    TEST_POLL,
    SYNC_THEN_TEST,
    SYNC_THEN_WAIT,
    MIXED,
    BLOCKING_BEHIND,
    NSTRATEGIES
};

static const char *const strategy_names[NSTRATEGIES] = {
    "wait-in-order",  "wait-reversed", "test-poll",      "sync-then-test",
    "sync-then-wait", "mixed",         "blocking-behind"};

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_seed = SEED_BASE;

static void post(struct obct_bcase *c, obc_request_t **req, size_t count, obc_dtype_t dt, int root,
                 enum obct_mode mode)
{
    obct_bcase_setup(c, g_rank, count, dt, root, g_seed++, mode);
    *req = NULL;
    OBCT_OK(
        obc_ibroadcast(obct_bcase_sendbuf(c), obct_bcase_recvbuf(c), count, dt, root, g_comm, req),
        g_comm);
    OBCT_ASSERT(*req != NULL);
}

/* obc_test until done; IN_PROGRESS must come with done == 0 and nothing else. */
static obc_result_t test_once(obc_request_t *req, int *done)
{
    int d = -1;
    obc_result_t rc = obc_test(req, &d);
    OBCT_ASSERT_MSG(d == 0 || d == 1, "obc_test left done=%d", d);
    OBCT_ASSERT_MSG((rc == OBC_IN_PROGRESS) == (d == 0), "obc_test returned %s with done=%d",
                    obct_rc_name(rc), d);
    *done = d;
    return rc;
}

static void complete_all(obc_request_t **req, int n, enum strategy s)
{
    int done[MANY] = {0};
    int left = n;
    double deadline = obct_now() + 120 * obct_time_scale();
    switch (s) {
    case WAIT_IN_ORDER:
    case BLOCKING_BEHIND:
        break;
    case WAIT_REVERSED:
        for (int i = n - 1; i >= 0; i--) {
            OBCT_OK(obc_wait(req[i]), g_comm);
            done[i] = 1;
        }
        break;
    case TEST_POLL:
        while (left > 0) {
            for (int i = 0; i < n; i++) {
                if (!done[i] && test_once(req[i], &done[i]) != OBC_IN_PROGRESS) {
                    OBCT_ASSERT_MSG(done[i], "request %d", i);
                    left--;
                }
            }
            OBCT_ASSERT_MSG(obct_now() < deadline, "obc_test never reported done");
            sched_yield();
        }
        break;
    case SYNC_THEN_TEST:
        OBCT_OK(obc_comm_synchronize(g_comm), g_comm);
        for (int i = 0; i < n; i++) {
            obc_result_t rc = test_once(req[i], &done[i]);
            OBCT_ASSERT_MSG(done[i] == 1 && rc == OBC_SUCCESS,
                            "after obc_comm_synchronize, obc_test of request %d gave %s done=%d", i,
                            obct_rc_name(rc), done[i]);
        }
        break;
    case SYNC_THEN_WAIT:
        OBCT_OK(obc_comm_synchronize(g_comm), g_comm);
        break;
    case MIXED:
        for (int i = 0; i < n; i++) {
            obc_result_t rc = test_once(req[i], &done[i]);
            OBCT_ASSERT(rc == OBC_IN_PROGRESS || rc == OBC_SUCCESS);
        }
        if (!done[n - 1]) {
            OBCT_OK(obc_wait(req[n - 1]), g_comm);
            done[n - 1] = 1;
        }
        OBCT_OK(obc_comm_synchronize(g_comm), g_comm);
        break;
    case NSTRATEGIES:
        OBCT_FAIL("bad strategy");
    }
    for (int i = 0; i < n; i++) {
        if (!done[i]) {
            OBCT_OK(obc_wait(req[i]), g_comm);
        }
    }
}

static void run_round(int round, enum strategy s)
{
    struct obct_bcase c[PER_ROUND + 1];
    obc_request_t *req[PER_ROUND];
    size_t counts[8];
    const char *names[8];
    int ncases = PER_ROUND;
    for (int i = 0; i < PER_ROUND; i++) {
        obc_dtype_t dt = (obc_dtype_t)((round * 3 + i) % OBCT_NDTYPES);
        int cls = 1 + (round + i) % 3; /* one, odd, 1 MiB + odd */
        if (round % 4 == 1 && i == 1) {
            cls = obct_size_class_large(); /* small ones queue behind a large one */
        }
        if (round % 5 == 3 && i == 2) {
            cls = 0;
        }
        obct_size_classes(dt, counts, names);
        post(&c[i], &req[i], counts[cls], dt, (round + i) % g_nranks,
             (round + i) % 3 == 0 ? OBCT_IN_PLACE
                                  : ((i % 2) ? OBCT_OUT_OF_PLACE : OBCT_OUT_OF_PLACE_DECOY));
    }
    if (s == BLOCKING_BEHIND) {
        struct obct_bcase *b = &c[PER_ROUND];
        obct_bcase_setup(b, g_rank, 4099, OBC_FLOAT32, g_nranks - 1, g_seed++, OBCT_IN_PLACE);
        OBCT_OK(obc_bcast(obct_bcase_recvbuf(b), b->count, b->dtype, b->root, g_comm), g_comm);
        ncases++;
    }
    complete_all(req, PER_ROUND, s);
    for (int i = 0; i < ncases; i++) {
        obct_bcase_check(&c[i]);
        obct_bcase_free(&c[i]);
    }
}

static void run_many(void)
{
    static struct obct_bcase c[MANY];
    obc_request_t *req[MANY];
    for (int i = 0; i < MANY; i++) {
        post(&c[i], &req[i], (size_t)(i * 67 % 4099), (obc_dtype_t)(i % OBCT_NDTYPES),
             (i / 3) % g_nranks, i % 2 ? OBCT_IN_PLACE : OBCT_OUT_OF_PLACE);
    }
    complete_all(req, MANY, SYNC_THEN_WAIT);
    for (int i = 0; i < MANY; i++) {
        obct_bcase_check(&c[i]);
        obct_bcase_free(&c[i]);
    }
}

/* obc_ibroadcast queues and returns: on a non-root whose root is 1 s late it must
 * return at once (0.5 s allows for 64 ranks on 2 cores under TSan), and obc_test
 * must then say IN_PROGRESS. */
static void returns_at_once(void)
{
    struct obct_bcase c;
    obc_request_t *req = NULL;
    int done = -1;
    double dt;
    obc_result_t rc;
    int root = g_nranks - 1;
    obct_bcase_setup(&c, g_rank, (1 << 20) + 1, OBC_UINT8, root, g_seed++, OBCT_OUT_OF_PLACE);
    OBCT_OK(obc_barrier(g_comm), g_comm);
    if (g_rank == root) {
        obct_sleep(1.0);
    }
    dt = obct_now();
    OBCT_OK(obc_ibroadcast(obct_bcase_sendbuf(&c), obct_bcase_recvbuf(&c), c.count, c.dtype, root,
                           g_comm, &req),
            g_comm);
    dt = obct_now() - dt;
    if (g_rank != root) {
        rc = obc_test(req, &done);
        if (rc != OBC_IN_PROGRESS || done != 0) {
            obct_soft_fail(__FILE__, __LINE__,
                           "obc_test right after obc_ibroadcast, root 1 s late: %s done=%d",
                           obct_rc_name(rc), done);
        }
        if (dt > 0.5) {
            obct_soft_fail(__FILE__, __LINE__,
                           "obc_ibroadcast took %.3f s to return while its root was late", dt);
        }
    }
    if (done != 1) {
        OBCT_OK(obc_wait(req), g_comm);
    }
    obct_bcase_check(&c);
    obct_bcase_free(&c);
}

int main(void)
{
    double t0 = obct_now();
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    for (int round = 0; round < 2 * NSTRATEGIES; round++) {
        double t = obct_now();
        run_round(round, (enum strategy)(round % NSTRATEGIES));
        if (g_rank == 0) {
            printf("bcast_async: nranks=%d round=%d %s time=%.3f s\n", g_nranks, round,
                   strategy_names[round % NSTRATEGIES], obct_now() - t);
        }
    }
    run_many();
    returns_at_once();
    if (g_rank == 0) {
        printf("bcast_async: nranks=%d total=%.3f s\n", g_nranks, obct_now() - t0);
    }
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("bcast_async");
}
