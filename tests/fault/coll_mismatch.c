/* SPDX-License-Identifier: MIT */
/*
 * coll_mismatch.c - ranks that disagree on a reduction or gather: 4 ranks
 * (forked by spawn_ranks.c; 2 and 8 in the n2/n8 variants; OBC_TIMEOUT=5)
 * make one verified allreduce, then
 * rank 1 (or 3) calls something else than the others: an allreduce with a
 * smaller or larger count, a different dtype of the same size, a different
 * op, a broadcast of the same bytes instead of the allreduce, an allgather
 * with a smaller sendcount, a reduce_scatter with a larger recvcount. Every
 * rank must get an error, not hang and not succeed, and its next call must
 * fail at once. The library reports OBC_ERR_MISMATCH when the operations
 * differ in count, dtype or op (chunks carry a stamp of the operation) - at
 * least one rank, the others MISMATCH or ABORTED (the comm broken by the rank
 * that saw it) - within the timeout plus 5 s. A broadcast against an
 * allreduce never exchanges a chunk the other side reads; the ranks' stalled
 * waits compare the calls on the arena's boards, so it is a MISMATCH too,
 * well before OBC_TIMEOUT, whose message names the rank that called the
 * broadcast.
 * Two more: a broadcast whose root differs on one rank, and a rank that
 * skips the call (its next call, a small allreduce, meets the others'
 * large one). Every MISMATCH message names the odd rank ("rank N") on the
 * ranks that did not differ. The check=1 variant runs all of it again with
 * OBC_CHECK=1, where every rank compares the calls before data moves: each
 * one must itself report OBC_ERR_MISMATCH (never only ABORTED), within 1 s.
 * No rank may write outside its buffers, whatever it was told: the guards
 * around every buffer are checked after the failure, on every rank, and the
 * sendbuf must be unchanged.
 * The tcp variants run it all again with the ranks on two "hosts" (ranks
 * 0-1 and 2-3, TCP between them; OBC_TIMEOUT=20), plus (also on one host)
 * a rank calling an allreduce while the others broadcast: the mismatch
 * must still be found by the calls, across hosts, well before OBC_TIMEOUT
 * (asserted: within 5 s; the time is printed), and with OBC_CHECK=1 every
 * rank's message names the other rank and both calls.
 */
/* obct: timeout=240 san waits */
/* obct: name=check1 env=OBC_CHECK=1 timeout=240 san waits */
/* obct: name=n2 env=OBCT_FAULT_NRANKS=2 timeout=240 waits */
/* obct: name=n8 env=OBCT_FAULT_NRANKS=8 timeout=300 waits */
/* obct: name=check1_n8 env=OBC_CHECK=1 env=OBCT_FAULT_NRANKS=8 timeout=300 waits */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 timeout=300 */
/* obct: name=check1_tcp env=OBC_CHECK=1 env=OBC_HOST_ID=rank/2 timeout=240 waits */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "obct.h"
#include "spawn_ranks.h"

static int NRANKS = 4; /* OBCT_FAULT_NRANKS */
static double TIMEOUT_S = 5.0; /* 20 across hosts (OBC_HOST_ID) */
#define LIMIT_S (TIMEOUT_S + 5.0)
static bool CROSS_HOST; /* OBC_HOST_ID set: the ranks span two hosts */
#define CROSS_HOST_LIMIT_S 5.0 /* a mismatch found by the calls, not the timeout */
#define COUNT 100003 /* elements, a few chunks */

enum call { ALLREDUCE, BROADCAST, ALLGATHER, REDUCE_SCATTER, SKIP };

struct variant {
    enum call call;
    size_t count;
    obc_dtype_t dtype;
    obc_redop_t op;
    int root; /* broadcast */
};

struct scenario {
    const char *name;
    int odd; /* the rank that differs */
    struct variant others;
    struct variant odd_one;
    obc_result_t expect; /* what the library reports: at least one rank, the others this or
                          * OBC_ERR_ABORTED (the comm broken by the rank that saw it) */
    bool agreeing_may_finish; /* without OBC_CHECK: ranks that agree with the root, and
                               * an odd rank that believes itself the root, may complete
                               * before the disagreement is seen; their next call fails */
};

/* One call; its buffers sized exactly for what this rank was asked (elements of dtype):
 * count for allreduce and broadcast, sendcount * nranks received for allgather, recvcount
 * * nranks sent for reduce_scatter. */
static obc_result_t call(const struct variant *v, obc_comm_t *comm, struct obct_buf *send,
                         struct obct_buf *recv)
{
    size_t es = obc_dtype_size(v->dtype);
    size_t n = NRANKS;
    switch (v->call) {
    case ALLREDUCE:
        obct_buf_alloc(send, v->count * es, 0);
        obct_buf_alloc(recv, v->count * es, 0);
        obct_fill(send->data, v->count * es, 1, 0);
        obct_poison(recv->data, v->count * es);
        return obc_allreduce(send->data, recv->data, v->count, v->dtype, v->op, comm);
    case BROADCAST:
        obct_buf_alloc(send, v->count * es, 0);
        obct_buf_alloc(recv, v->count * es, 0);
        obct_fill(send->data, v->count * es, 1, 0);
        obct_poison(recv->data, v->count * es);
        return obc_broadcast(send->data, recv->data, v->count, v->dtype, v->root, comm);
    case SKIP:
        return OBC_SUCCESS;
    case ALLGATHER:
        obct_buf_alloc(send, v->count * es, 0);
        obct_buf_alloc(recv, v->count * es * n, 0);
        obct_fill(send->data, v->count * es, 1, 0);
        obct_poison(recv->data, v->count * es * n);
        return obc_allgather(send->data, recv->data, v->count, v->dtype, comm);
    default:
        obct_buf_alloc(send, v->count * es * n, 0);
        obct_buf_alloc(recv, v->count * es, 0);
        obct_fill(send->data, v->count * es * n, 1, 0);
        obct_poison(recv->data, v->count * es);
        return obc_reduce_scatter(send->data, recv->data, v->count, v->dtype, v->op, comm);
    }
}

/* The rank that differs, within this job's rank count. */
static int odd_rank(const struct scenario *sc)
{
    return sc->odd < NRANKS ? sc->odd : NRANKS - 1;
}

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    const struct variant *v = rank == odd_rank(sc) ? &sc->odd_one : &sc->others;
    struct obct_buf send = {0};
    struct obct_buf recv = {0};
    int small[4] = {1, 2, 3, 4};
    int failures0 = obct_failures(); /* inherited from the parent at fork */
    double t;
    (void)nranks;
    OBCT_OK(obc_allreduce(small, small, 4, OBC_INT32, OBC_SUM, comm), comm);
    OBCT_CHECK_EQ_INT(small[3], 4 * NRANKS);
    obct_progress(self);
    /* A rank that finds the mismatch at once breaks the communicator for
     * all: one still leaving the verified allreduce (descheduled on a busy
     * machine, or its last data coming over TCP) would fail that one
     * instead of the call under test. Let every rank leave it first. */
    usleep(200000);
    t = obct_now();
    self->rc = call(v, comm, &send, &recv);
    self->t_event = obct_now();
    self->value = self->t_event - t;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_allreduce(small, small, 4, OBC_INT32, OBC_SUM, comm);
    self->after_s = obct_now() - t;
    if (v->call == SKIP) { /* the call under test was the one after the skip */
        self->rc = self->rc_after;
        self->value = self->after_s;
        self->rc_after = obc_allreduce(small, small, 4, OBC_INT32, OBC_SUM, comm);
        self->after_s = 0;
        snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    }
    obc_comm_destroy(comm);
    if (v->call != SKIP) {
        obct_buf_check("sendbuf", &send);
        obct_buf_check("recvbuf", &recv);
        obct_verify("sendbuf (must stay unchanged)", send.data, send.nbytes, 1, 0);
    }
    obct_buf_free(&send);
    obct_buf_free(&recv);
    return obct_failures() > failures0 ? 1 : 0;
}

static void run(const struct scenario *sc)
{
    struct obct_job job;
    int nexpect = 0;
    const char *check = getenv("OBC_CHECK");
    bool check_mode = check != NULL && atoi(check) >= 1;
    obct_scenario("coll_mismatch: %s (rank %d differs)", sc->name, odd_rank(sc));
    obct_spawn(&job, NRANKS, rank_main, (void *)sc, 0);
    if (obct_join(&job, LIMIT_S + 30) != 0) {
        OBCT_FAIL("%s: ranks did not exit within %.0f s", sc->name, LIMIT_S + 30);
    }
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        printf("coll_mismatch: %s: rank %d got %s after %.3f s, next call %s in %.3f s; "
               "message: \"%s\"\n",
               sc->name, r, obct_rc_name(rep->rc), rep->value, obct_rc_name(rep->rc_after),
               rep->after_s, rep->msg);
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0); /* guards intact, sendbuf unchanged */
        /* A rank told it is the root (the odd one too, at 2 ranks) sends and
         * may leave before anyone sees the disagreement. */
        bool thinks_root = r == odd_rank(sc) && sc->odd_one.root == r;
        if (rep->rc == OBC_SUCCESS && sc->agreeing_may_finish && !check_mode &&
            (r != odd_rank(sc) || thinks_root)) {
            OBCT_CHECK(rep->rc_after == OBC_ERR_MISMATCH || rep->rc_after == OBC_ERR_ABORTED);
            nexpect += rep->rc_after == (int)sc->expect; /* found one call later */
            continue;
        }
        if (rep->rc != (int)sc->expect && rep->rc != OBC_ERR_ABORTED) {
            obct_soft_fail(__FILE__, __LINE__, "%s: rank %d: the call returned %s, expected %s",
                           sc->name, r, obct_rc_name(rep->rc), obct_rc_name(sc->expect));
            continue; /* after a success the next call is legitimately fine */
        }
        OBCT_CHECK_LE_DBL(rep->value, LIMIT_S);
        if (check_mode) {
            OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_MISMATCH);
            OBCT_CHECK_LE_DBL(rep->value, 1.0 * obct_time_scale());
        }
        if (rep->rc == OBC_ERR_TIMEOUT) {
            OBCT_CHECK(rep->value > TIMEOUT_S - 0.5);
        }
        if (CROSS_HOST && rep->rc == OBC_ERR_MISMATCH) {
            OBCT_CHECK_LE_DBL(rep->value, CROSS_HOST_LIMIT_S * obct_time_scale());
        }
        if (CROSS_HOST &&
            check_mode) { /* "rank 3 called allreduce (...) while rank 0 called ..." */
            OBCT_CHECK(strstr(rep->msg, " called ") != NULL &&
                       strstr(rep->msg, " while rank ") != NULL);
        }
        OBCT_CHECK(rep->rc_after == OBC_ERR_ABORTED || rep->rc_after == rep->rc);
        OBCT_CHECK_LE_DBL(rep->after_s, 0.5);
        if (rep->rc == OBC_ERR_MISMATCH && r != odd_rank(sc)) { /* it names the odd rank */
            char culprit[24];
            snprintf(culprit, sizeof(culprit), "rank %d", odd_rank(sc));
            OBCT_CHECK(strstr(rep->msg, culprit) != NULL);
        }
        nexpect += rep->rc == (int)sc->expect;
    }
    if (nexpect == 0) {
        obct_soft_fail(__FILE__, __LINE__, "%s: no rank reported %s", sc->name,
                       obct_rc_name(sc->expect));
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
    fflush(stdout);
}

int main(void)
{
    static const struct scenario scenarios[] = {
        {"allreduce, one rank's count smaller",
         1,
         {ALLREDUCE, COUNT, OBC_FLOAT32, OBC_SUM, 0},
         {ALLREDUCE, COUNT - 1000, OBC_FLOAT32, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         false},
        {"allreduce, one rank's count larger",
         3,
         {ALLREDUCE, COUNT, OBC_FLOAT32, OBC_SUM, 0},
         {ALLREDUCE, COUNT + 1, OBC_FLOAT32, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         false},
        {"allreduce, another dtype of the same size",
         1,
         {ALLREDUCE, COUNT, OBC_FLOAT32, OBC_SUM, 0},
         {ALLREDUCE, COUNT, OBC_INT32, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         false},
        {"allreduce, another op",
         3,
         {ALLREDUCE, COUNT, OBC_INT64, OBC_SUM, 0},
         {ALLREDUCE, COUNT, OBC_INT64, OBC_MAX, 0},
         OBC_ERR_MISMATCH,
         false},
        {"broadcast instead of allreduce",
         1,
         {ALLREDUCE, COUNT, OBC_UINT8, OBC_SUM, 0},
         {BROADCAST, COUNT, OBC_UINT8, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         false},
        {"allreduce instead of broadcast",
         3,
         {BROADCAST, COUNT, OBC_UINT8, OBC_SUM, 0},
         {ALLREDUCE, COUNT, OBC_UINT8, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         true},
        {"broadcast, one rank's root differs",
         2,
         {BROADCAST, COUNT, OBC_INT32, OBC_SUM, 0},
         {BROADCAST, COUNT, OBC_INT32, OBC_SUM, 1},
         OBC_ERR_MISMATCH,
         true},
        {"a rank skips the call",
         3,
         {ALLREDUCE, COUNT, OBC_FLOAT32, OBC_SUM, 0},
         {SKIP, 0, OBC_FLOAT32, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         false},
        {"allgather, one rank's sendcount smaller",
         1,
         {ALLGATHER, COUNT, OBC_INT32, OBC_SUM, 0},
         {ALLGATHER, COUNT / 2, OBC_INT32, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         false},
        {"reduce_scatter, one rank's recvcount larger",
         3,
         {REDUCE_SCATTER, COUNT, OBC_FLOAT64, OBC_SUM, 0},
         {REDUCE_SCATTER, COUNT + 7, OBC_FLOAT64, OBC_SUM, 0},
         OBC_ERR_MISMATCH,
         false},
    };
    char timeout[32];
    const char *n = getenv("OBCT_FAULT_NRANKS");
    NRANKS = n != NULL ? atoi(n) : 4;
    CROSS_HOST = getenv("OBC_HOST_ID") != NULL;
    TIMEOUT_S = CROSS_HOST ? 20.0 : 5.0;
    OBCT_ASSERT(NRANKS >= 2 && NRANKS <= OBCT_MAX_RANKS);
    obct_watchdog(CROSS_HOST ? 290 : NRANKS > 4 ? 290 : 230);
    snprintf(timeout, sizeof(timeout), "%g", TIMEOUT_S);
    setenv("OBC_TIMEOUT", timeout, 1);
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("coll_mismatch");
}
