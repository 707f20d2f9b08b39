/* SPDX-License-Identifier: MIT */
/*
 * killed_rank_allreduce.c - a rank SIGKILLed in the middle of an allreduce:
 * 4 ranks (forked by spawn_ranks.c) loop 32 MiB float32 allreduces; the
 * parent kills rank 2, then in further jobs rank 0, rank 1 under the forced
 * ring algorithm, rank 3 under the hierarchical one with two "hosts"
 * (OBC_HOST_SPLIT=2), and the last rank during a run of small allreduces.
 * Every survivor must return OBC_ERR_PEER_LOST or OBC_ERR_ABORTED within 10 s
 * of the kill (measured times printed), a PEER_LOST message must name the
 * lost rank and at least one survivor's must, the next call must fail at once
 * (the comm is broken), and no /dev/shm segment may be left behind. The same
 * assertions as killed_rank.c (broadcast).
 */
/* obct: timeout=240 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 4
#define LIMIT_S 10.0
#define LOOP_S 30.0 /* loop until the kill, bounded in time (see killed_rank.c) */

struct scenario {
    const char *name;
    int victim;
    size_t count; /* float32 elements */
    const char *algo; /* OBC_ALGO, or NULL */
    const char *split; /* OBC_HOST_SPLIT, or NULL */
};

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    struct obct_buf send;
    struct obct_buf recv;
    float small[8] = {0};
    obc_result_t rc = OBC_SUCCESS;
    int failures0 = obct_failures(); /* inherited from the parent at fork */
    double t;
    (void)nranks;
    obct_buf_alloc(&send, sc->count * sizeof(float), 0);
    obct_buf_alloc(&recv, sc->count * sizeof(float), 0);
    for (size_t i = 0; i < sc->count; i++) {
        ((float *)send.data)[i] = (float)(i % 1000) + (float)rank;
    }
    for (double end = obct_now() + LOOP_S; rc == OBC_SUCCESS && obct_now() < end;) {
        obct_progress(self);
        rc = obc_allreduce(send.data, recv.data, sc->count, OBC_FLOAT32, OBC_SUM, comm);
    }
    self->t_event = obct_now();
    self->rc = rc;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_allreduce(small, small, 8, OBC_FLOAT32, OBC_SUM, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    obct_buf_check("sendbuf", &send);
    obct_buf_check("recvbuf", &recv);
    obct_buf_free(&send);
    obct_buf_free(&recv);
    (void)rank;
    return obct_failures() > failures0 ? 1 : 0;
}

static void set_env(const char *name, const char *value)
{
    if (value != NULL) {
        setenv(name, value, 1);
    } else {
        unsetenv(name);
    }
}

static void run(const struct scenario *sc)
{
    struct obct_job job;
    double t_kill;
    int named = 0;
    printf("killed_rank_allreduce: %s: kill rank %d of %d, %zu-element float32 allreduces "
           "(OBC_ALGO=%s OBC_HOST_SPLIT=%s)\n",
           sc->name, sc->victim, NRANKS, sc->count, sc->algo ? sc->algo : "-",
           sc->split ? sc->split : "-");
    fflush(stdout);
    set_env("OBC_ALGO", sc->algo); /* the children inherit the environment */
    set_env("OBC_HOST_SPLIT", sc->split);
    obct_spawn(&job, NRANKS, rank_main, (void *)sc, 0);
    /* A few allreduces done: everyone is connected and looping; 30 ms more puts the kill
     * inside an allreduce (the loop does nothing else). */
    OBCT_ASSERT_MSG(obct_wait_progress(&job, sc->victim, 4, 60) == 0,
                    "rank %d never reached its 4th allreduce", sc->victim);
    obct_sleep(0.030);
    t_kill = obct_signal(&job, sc->victim, SIGKILL);
    if (obct_join(&job, 40) != 0) {
        OBCT_FAIL("%s: survivors did not exit within 40 s of the kill", sc->name);
    }
    OBCT_CHECK_EQ_INT(obct_exit_code(&job, sc->victim), -SIGKILL);
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        double dt = rep->t_event - t_kill;
        if (r == sc->victim) {
            continue;
        }
        printf("killed_rank_allreduce: %s: rank %d got %s after %.3f s (%ld allreduces), next "
               "call %s in %.3f s; message: \"%s\"\n",
               sc->name, r, obct_rc_name(rep->rc), dt, (long)atomic_load(&rep->progress),
               obct_rc_name(rep->rc_after), rep->after_s, rep->msg);
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        OBCT_CHECK(rep->rc == OBC_ERR_PEER_LOST || rep->rc == OBC_ERR_ABORTED);
        OBCT_CHECK_LE_DBL(dt, LIMIT_S);
        OBCT_CHECK(rep->rc_after != OBC_SUCCESS && rep->rc_after != OBC_IN_PROGRESS);
        OBCT_CHECK(rep->rc_after == OBC_ERR_ABORTED || rep->rc_after == rep->rc);
        OBCT_CHECK_LE_DBL(rep->after_s, 0.5);
        if (obct_msg_names_rank(rep->msg, sc->victim)) {
            named++;
        } else if (rep->rc == OBC_ERR_PEER_LOST) {
            OBCT_LOG("%s: rank %d reports PEER_LOST without naming rank %d: \"%s\"", sc->name, r,
                     sc->victim, rep->msg);
            OBCT_CHECK(obct_msg_names_rank(rep->msg, sc->victim));
        }
    }
    OBCT_CHECK(named > 0);
    obct_job_check_shm(&job);
    obct_job_free(&job);
    set_env("OBC_ALGO", NULL);
    set_env("OBC_HOST_SPLIT", NULL);
    fflush(stdout);
}

int main(void)
{
    static const struct scenario scenarios[] = {
        {"rank 2, large", 2, (size_t)8 << 20, NULL, NULL},
        {"rank 0, large", 0, (size_t)8 << 20, NULL, NULL},
        {"rank 1, large, ring", 1, (size_t)8 << 20, "allreduce=ring", NULL},
        {"rank 3, large, hier on 2 hosts", 3, (size_t)8 << 20, "allreduce=hier", "2"},
        {"last rank, small", 3, 2, NULL, NULL},
    };
    obct_watchdog(220);
    setenv("OBC_TIMEOUT", "20", 1); /* a hang shows as a failure, not a 300 s wait */
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("killed_rank_allreduce");
}
