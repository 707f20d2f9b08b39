/* SPDX-License-Identifier: MIT */
/*
 * coll_mixed.c - different collectives in flight together: each round posts
 * 20 non-blocking operations, interleaving obc_ibroadcast, obc_iallreduce,
 * obc_iallgather, obc_ibarrier, obc_ireduce_scatter and obc_ireduce with
 * varied dtypes, ops, roots, modes and sizes (a ~1M one in front of small
 * ones in some rounds), then completes them in reverse order of posting
 * (some rounds: obc_test polling in a scrambled order, or
 * obc_comm_synchronize first), and checks every result (rcase.h / bcase.h).
 * A blocking allreduce issued behind pending operations must complete after
 * them, correctly. Also obc_ibarrier: it completes on no rank before the
 * last rank entered it (the rank that enters late records the time on the
 * shared monotonic clock and broadcasts it; every rank's completion must be
 * later), and obc_test says IN_PROGRESS meanwhile.
 */
/* obct: nranks=1,2,3,4,5,8 san=4 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16,32 */
/* clang-format off */
/* obct: name=ring env=OBC_ALGO=allreduce=ring,allgather=ring,reduce_scatter=ring,reduce=ring nranks=3,5 */
/* clang-format on */
/* obct: name=dissemination env=OBC_ALGO=barrier=dissemination nranks=2,3,5,8 san=3 */
/* obct: name=hier_split2 env=OBC_ALGO=allreduce=hier env=OBC_HOST_SPLIT=2 nranks=4,5 */
/* obct: name=check2 env=OBC_CHECK=2 nranks=3,8 */
/* obct: name=check2_tcp env=OBC_CHECK=2 env=OBC_HOST_ID=rank/2 nranks=5 */
#include <sched.h>
#include <stdio.h>

#include "bcase.h"
#include "obct.h"
#include "rcase.h"

#define SEED_BASE 0x6d697864ull
#define PER_ROUND 20
#define ROUNDS 8

enum item_kind { ITEM_BCAST, ITEM_BARRIER, ITEM_R };

struct item {
    enum item_kind kind;
    struct obct_bcase b;
    struct obct_rcase r;
    obc_request_t *req;
    int done;
};

enum finish { REVERSE, TEST_SCRAMBLED, SYNC_THEN_REVERSE, NFINISH };

static const char *const finish_names[NFINISH] = {"wait-reversed", "test-scrambled",
                                                  "synchronize-then-wait-reversed"};

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_seed = SEED_BASE;
static size_t g_large;

static void post_r(struct item *it, enum obct_rkind kind, size_t count, obc_dtype_t dt,
                   obc_redop_t op, int root, int in_place)
{
    struct obct_rdata d = {OBCT_RPAT_EXACT, dt, op, g_seed, g_nranks};
    it->kind = ITEM_R;
    obct_rcase_setup(&it->r, kind, &d, count, root, in_place, (int)(g_seed % 2), g_rank);
    it->r.note = "(non-blocking, mixed with other collectives)";
    g_seed++;
    OBCT_OK(obct_rcall_post(&it->r.call, g_comm, &it->req), g_comm);
}

static void post(struct item *it, int round, int i)
{
    obc_dtype_t dt = (obc_dtype_t)((round * 3 + i) % OBCT_NDTYPES);
    obc_redop_t op = (obc_redop_t)((round + i) % OBCT_NREDOPS);
    int root = (round + i) % g_nranks;
    int in_place = (round + i) % 3 == 0;
    size_t count = (size_t)((i * 977 + round * 31) % 5000);
    it->req = NULL;
    it->done = 0;
    if (round % 3 == 1 && i == 1) {
        count = g_large; /* the small ones queue behind a large one */
    }
    switch (i % 6) {
    case 0:
        it->kind = ITEM_BCAST;
        obct_bcase_setup(&it->b, g_rank, count, dt, root, g_seed++,
                         in_place ? OBCT_IN_PLACE : OBCT_OUT_OF_PLACE);
        OBCT_OK(obc_ibroadcast(obct_bcase_sendbuf(&it->b), obct_bcase_recvbuf(&it->b), count, dt,
                               root, g_comm, &it->req),
                g_comm);
        break;
    case 1:
        post_r(it, OBCT_ALLREDUCE, count, dt, op, 0, in_place);
        break;
    case 2:
        post_r(it, OBCT_ALLGATHER, count / (size_t)g_nranks, dt, op, 0, in_place);
        break;
    case 3:
        it->kind = ITEM_BARRIER;
        OBCT_OK(obc_ibarrier(g_comm, &it->req), g_comm);
        break;
    case 4:
        post_r(it, OBCT_REDUCE_SCATTER, count / (size_t)g_nranks, dt, op, 0, in_place);
        break;
    default:
        post_r(it, OBCT_REDUCE, count, dt, op, root, in_place);
        break;
    }
    OBCT_ASSERT(it->req != NULL);
}

static void check_free(struct item *it)
{
    if (it->kind == ITEM_BCAST) {
        obct_bcase_check(&it->b);
        obct_bcase_free(&it->b);
    } else if (it->kind == ITEM_R) {
        obct_rcase_check(&it->r);
        obct_rcase_free(&it->r);
    }
}

static void complete(struct item *items, int n, enum finish f, int round)
{
    int left = 0;
    double deadline = obct_now() + 120 * obct_time_scale();
    for (int i = 0; i < n; i++) {
        left += !items[i].done;
    }
    if (f == SYNC_THEN_REVERSE) {
        OBCT_OK(obc_comm_synchronize(g_comm), g_comm);
    }
    if (f == TEST_SCRAMBLED) {
        while (left > 0) {
            for (int k = 0; k < n; k++) {
                int i = (k * 11 + round) % n; /* n is 20 or 21: 11 is coprime to both */
                int done = -1;
                obc_result_t rc;
                if (items[i].done) {
                    continue;
                }
                rc = obc_test(items[i].req, &done);
                OBCT_ASSERT_MSG((rc == OBC_IN_PROGRESS) == (done == 0),
                                "obc_test returned %s with done=%d", obct_rc_name(rc), done);
                if (done) {
                    OBCT_RC(rc, OBC_SUCCESS, g_comm);
                    items[i].done = 1;
                    left--;
                }
            }
            OBCT_ASSERT_MSG(obct_now() < deadline, "requests not done after 120 s");
            sched_yield();
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        if (!items[i].done) {
            OBCT_OK(obc_wait(items[i].req), g_comm);
            items[i].done = 1;
        }
    }
}

static void run_round(int round)
{
    static struct item items[PER_ROUND + 1];
    enum finish f = (enum finish)(round % NFINISH);
    int n = PER_ROUND;
    double t0 = obct_now();
    for (int i = 0; i < PER_ROUND; i++) {
        post(&items[i], round, i);
    }
    if (round % 4 == 3) { /* a blocking call behind 20 pending ones */
        struct obct_rcase *c = &items[n].r;
        struct obct_rdata d = {OBCT_RPAT_EXACT, OBC_INT32, OBC_SUM, g_seed++, g_nranks};
        items[n].kind = ITEM_R;
        items[n].req = NULL;
        items[n].done = 1;
        obct_rcase_setup(c, OBCT_ALLREDUCE, &d, 4099, 0, 0, 0, g_rank);
        c->note = "(blocking, behind 20 pending operations)";
        OBCT_OK(obct_rcall_run(&c->call, g_comm, OBCT_SYNC), g_comm);
        n++;
    }
    complete(items, n, f, round);
    for (int i = 0; i < n; i++) {
        check_free(&items[i]);
    }
    if (g_rank == 0) {
        printf("coll_mixed: nranks=%d round %d (%s, %d operations) %.3f s\n", g_nranks, round,
               finish_names[f], n, obct_now() - t0);
        fflush(stdout);
    }
}

/* The late rank enters obc_ibarrier 0.5 s after the others; no rank may see it complete
 * before then. Times are on CLOCK_MONOTONIC, one clock for all processes of a host. */
static void ibarrier_waits(int late)
{
    obc_request_t *req = NULL;
    double t_enter = 0;
    double t_done;
    int done = -1;
    obc_result_t rc;
    OBCT_OK(obc_barrier(g_comm), g_comm);
    if (g_rank == late) {
        obct_sleep(0.5);
        t_enter = obct_now();
    }
    OBCT_OK(obc_ibarrier(g_comm, &req), g_comm);
    OBCT_ASSERT(req != NULL);
    if (g_rank != late) {
        rc = obc_test(req, &done);
        if (rc != OBC_IN_PROGRESS || done != 0) {
            obct_soft_fail(__FILE__, __LINE__,
                           "obc_test right after obc_ibarrier, rank %d 0.5 s late: %s done=%d",
                           late, obct_rc_name(rc), done);
        }
    }
    if (done != 1) {
        OBCT_OK(obc_wait(req), g_comm);
    }
    t_done = obct_now();
    OBCT_OK(obc_bcast(&t_enter, 1, OBC_FLOAT64, late, g_comm), g_comm);
    if (t_done < t_enter) {
        obct_soft_fail(__FILE__, __LINE__,
                       "obc_ibarrier completed %.6f s before rank %d entered it", t_enter - t_done,
                       late);
    }
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
    for (int round = 0; round < ROUNDS; round++) {
        run_round(round);
    }
    if (g_nranks > 1) {
        ibarrier_waits(g_nranks - 1);
        ibarrier_waits(0);
        ibarrier_waits(g_nranks / 2);
    }
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("coll_mixed");
}
