/* SPDX-License-Identifier: MIT */
/*
 * abort_test.c - obc_comm_abort on one rank fails the others' pending
 * operations promptly (OBC_ERR_ABORTED, or PEER_LOST; < 3 s, measured and
 * printed): the aborting rank is the root of the broadcast the others wait
 * in; or it skips a barrier the others wait in; or a helper thread aborts
 * while its own main thread is blocked in a broadcast. Afterwards every
 * call on the aborted comm fails at once, on the aborting rank too, and
 * every message names the aborting rank. The tcp variant puts ranks 0-1
 * and 2-3 on two "hosts", so the abort crosses a TCP link.
 */
/* obct: timeout=90 san waits */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 timeout=90 san */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 4
#define ABORTER 3
#define LIMIT_S 3.0
#define NBYTES ((size_t)1 << 20)

enum scenario { ROOT_ABORTS, BARRIER_SKIPPED, THREAD_ABORTS, NSCENARIOS };

static const char *const names[NSCENARIOS] = {"root aborts", "aborter skips barrier",
                                              "thread aborts while main blocks"};

struct abort_arg {
    obc_comm_t *comm;
    struct obct_report *self;
    obc_result_t rc; /* of obc_comm_abort */
};

static void *abort_later(void *p)
{
    struct abort_arg *a = p;
    obct_sleep(0.5);
    a->self->value = obct_now();
    a->rc = obc_comm_abort(a->comm);
    return NULL;
}

/* The call every non-aborting rank blocks in. */
static obc_result_t pending_call(enum scenario sc, obc_comm_t *comm, void *buf)
{
    if (sc == BARRIER_SKIPPED) {
        return obc_barrier(comm);
    }
    return obc_bcast(buf, NBYTES, OBC_UINT8, sc == ROOT_ABORTS ? ABORTER : 0, comm);
}

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    enum scenario sc = *(const enum scenario *)arg;
    struct obct_buf buf;
    pthread_t th;
    struct abort_arg a = {comm, self, OBC_ERR_INTERNAL};
    double t;
    (void)nranks;
    obct_buf_alloc(&buf, NBYTES, 0);
    OBCT_OK(obc_barrier(comm), comm);
    if (sc == THREAD_ABORTS && rank == 0) {
        /* The root never joins; it stays alive so that only the abort can end the wait. */
        obct_sleep(3.0);
    } else if (sc != THREAD_ABORTS && rank == ABORTER) {
        obct_sleep(0.5);
        self->value = obct_now();
        OBCT_OK(obc_comm_abort(comm), comm);
        t = obct_now();
        self->rc = obc_barrier(comm);
        self->after_s = obct_now() - t;
        obct_sleep(2.0); /* alive while the others notice the abort */
    } else {
        if (sc == THREAD_ABORTS && rank == ABORTER) {
            OBCT_ASSERT(pthread_create(&th, NULL, abort_later, &a) == 0);
        }
        self->rc = pending_call(sc, comm, buf.data);
        self->t_event = obct_now();
        snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
        if (sc == THREAD_ABORTS && rank == ABORTER) {
            pthread_join(th, NULL);
            OBCT_CHECK_RC(a.rc, OBC_SUCCESS, comm);
        }
        t = obct_now();
        self->rc_after = obc_bcast(buf.data, 8, OBC_UINT8, 1, comm);
        self->after_s = obct_now() - t;
    }
    obc_comm_destroy(comm);
    obct_buf_free(&buf);
    return obct_failures() ? 1 : 0;
}

static void run(enum scenario sc)
{
    struct obct_job job;
    double t_abort;
    obct_scenario("abort_test: %s", names[sc]);
    obct_spawn(&job, NRANKS, rank_main, &sc, 0);
    if (obct_join(&job, 30) != 0) {
        OBCT_FAIL("%s: ranks still running after 30 s", names[sc]);
    }
    t_abort = job.reports[ABORTER].value;
    OBCT_ASSERT_MSG(t_abort > 0, "%s: the aborter never called obc_comm_abort", names[sc]);
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        if (sc == THREAD_ABORTS && r == 0) {
            continue;
        }
        if (sc != THREAD_ABORTS && r == ABORTER) {
            printf("abort_test: %s: aborting rank %d: next call %s in %.3f s\n", names[sc], r,
                   obct_rc_name(rep->rc), rep->after_s);
            OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_ABORTED);
            OBCT_CHECK_LE_DBL(rep->after_s, 0.5);
            continue;
        }
        printf("abort_test: %s: rank %d got %s %.3f s after the abort, next call %s in %.3f s; "
               "message: \"%s\"\n",
               names[sc], r, obct_rc_name(rep->rc), rep->t_event - t_abort,
               obct_rc_name(rep->rc_after), rep->after_s, rep->msg);
        OBCT_CHECK(rep->rc == OBC_ERR_ABORTED || rep->rc == OBC_ERR_PEER_LOST);
        OBCT_CHECK(obct_msg_names_rank(rep->msg, ABORTER));
        OBCT_CHECK_LE_DBL(rep->t_event - t_abort, LIMIT_S);
        OBCT_CHECK(rep->t_event >= t_abort);
        OBCT_CHECK(rep->rc_after != OBC_SUCCESS && rep->rc_after != OBC_IN_PROGRESS);
        OBCT_CHECK_LE_DBL(rep->after_s, 0.5);
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
    fflush(stdout);
}

int main(void)
{
    obct_watchdog(80);
    setenv("OBC_TIMEOUT", "20", 1);
    for (int sc = 0; sc < NSCENARIOS; sc++) {
        run((enum scenario)sc);
    }
    return obct_finish("abort_test");
}
