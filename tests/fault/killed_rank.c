/* SPDX-License-Identifier: MIT */
/*
 * killed_rank.c - a rank SIGKILLed in the middle of a broadcast: 4 ranks
 * (forked by spawn_ranks.c) loop broadcasts; the parent kills a non-root, then in
 * a second job the root, then a rank during a run of small broadcasts. Every
 * survivor must return OBC_ERR_PEER_LOST or OBC_ERR_ABORTED within 10 s of
 * the kill (measured times printed), the survivors' messages must name the
 * lost rank, and the next call must fail at once (the comm is broken).
 */
/* obct: timeout=180 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 4
#define LIMIT_S 10.0
/* Loop until the kill breaks the communicator: a bound in time, not in calls,
 * because small broadcasts can outrun any fixed count (100000 took < 40 ms). */
#define LOOP_S 30.0

struct scenario {
    const char *name;
    int victim;
    int root;
    size_t nbytes;
};

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    struct obct_buf buf;
    unsigned char small[8] = {0};
    obc_result_t rc = OBC_SUCCESS;
    double t;
    (void)nranks;
    obct_buf_alloc(&buf, sc->nbytes, 0);
    obct_fill(buf.data, sc->nbytes, 1, sc->root);
    for (double end = obct_now() + LOOP_S; rc == OBC_SUCCESS && obct_now() < end;) {
        obct_progress(self);
        rc = obc_bcast(buf.data, sc->nbytes, OBC_UINT8, sc->root, comm);
    }
    self->t_event = obct_now();
    self->rc = rc;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_bcast(small, sizeof(small), OBC_UINT8, sc->root, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    obct_buf_free(&buf);
    (void)rank;
    return 0;
}

static void run(const struct scenario *sc)
{
    struct obct_job job;
    double t_kill;
    int named = 0;
    printf("killed_rank: %s: kill rank %d of %d, root %d, %zu-byte broadcasts\n", sc->name,
           sc->victim, NRANKS, sc->root, sc->nbytes);
    obct_spawn(&job, NRANKS, rank_main, (void *)sc, 0);
    /* A few broadcasts done: everyone is connected and looping; 30 ms more puts the
     * kill inside a broadcast (the loop does nothing else). */
    OBCT_ASSERT_MSG(obct_wait_progress(&job, sc->victim, 4, 60) == 0,
                    "rank %d never reached its 4th broadcast", sc->victim);
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
        printf("killed_rank: %s: rank %d got %s after %.3f s (%ld broadcasts), next call %s in "
               "%.3f s; message: \"%s\"\n",
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
    fflush(stdout);
}

int main(void)
{
    static const struct scenario scenarios[] = {
        {"non-root, large", 2, 0, (size_t)32 << 20},
        {"root, large", 0, 0, (size_t)32 << 20},
        {"last rank, small", 3, 1, 8},
    };
    obct_watchdog(150);
    setenv("OBC_TIMEOUT", "20", 1); /* a hang shows as a failure, not a 300 s wait */
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("killed_rank");
}
