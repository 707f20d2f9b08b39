/* SPDX-License-Identifier: MIT */
/*
 * stall_peer.c - a peer that stops (SIGSTOP) mid-broadcast but stays alive:
 * with OBC_TIMEOUT=3 and N ranks (OBCT_FAULT_NRANKS: 2, 4, 8) looping
 * 16 MiB broadcasts, the parent stops a non-root rank (N/2); the others
 * must fail with OBC_ERR_TIMEOUT (the peer is not lost) within 3 s plus a
 * little of their last progress (asserted < 7 s after the stop, measured
 * and printed), each naming the stopped rank ("rank N ... is stopped"), and the next
 * call must fail at once. The stopped rank is killed afterwards.
 */
/* obct: name=n2 env=OBCT_FAULT_NRANKS=2 timeout=90 waits */
/* obct: name=n4 env=OBCT_FAULT_NRANKS=4 timeout=90 san waits */
/* obct: name=n8 env=OBCT_FAULT_NRANKS=8 timeout=90 waits */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NBYTES ((size_t)16 << 20)
#define LIMIT_S 7.0

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    struct obct_buf buf;
    obc_result_t rc = OBC_SUCCESS;
    double t;
    (void)nranks;
    (void)arg;
    obct_buf_alloc(&buf, NBYTES, 0);
    obct_fill(buf.data, NBYTES, 3, 0);
    while (rc == OBC_SUCCESS) {
        obct_progress(self);
        rc = obc_bcast(buf.data, NBYTES, OBC_UINT8, 0, comm);
    }
    self->rc = rc;
    self->t_event = obct_now();
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_barrier(comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    obct_buf_free(&buf);
    (void)rank;
    return 0;
}

int main(void)
{
    struct obct_job job;
    double t_stop;
    const char *n = getenv("OBCT_FAULT_NRANKS");
    const int NRANKS = n != NULL ? atoi(n) : 3;
    const int VICTIM = NRANKS / 2;
    int named = 0;
    OBCT_ASSERT(NRANKS >= 2 && NRANKS <= OBCT_MAX_RANKS);
    obct_watchdog(80);
    setenv("OBC_TIMEOUT", "3", 1);
    obct_scenario("stall_peer: stop rank %d of %d during 16 MiB broadcasts", VICTIM, NRANKS);
    obct_spawn(&job, NRANKS, rank_main, NULL, 0);
    OBCT_ASSERT(obct_wait_progress(&job, VICTIM, 4, 60) == 0);
    obct_sleep(0.020);
    t_stop = obct_signal(&job, VICTIM, SIGSTOP);
    for (int r = 0; r < NRANKS; r++) {
        if (r != VICTIM && obct_join_rank(&job, r, 30) != 0) {
            obct_signal(&job, VICTIM, SIGKILL);
            OBCT_FAIL("rank %d still running 30 s after rank %d was stopped", r, VICTIM);
        }
    }
    obct_signal(&job, VICTIM, SIGKILL);
    OBCT_ASSERT(obct_join(&job, 10) == 0);
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        if (r == VICTIM) {
            continue;
        }
        printf("stall_peer: rank %d got %s %.3f s after rank %d stopped, next call %s in %.3f s; "
               "message: \"%s\"\n",
               r, obct_rc_name(rep->rc), rep->t_event - t_stop, VICTIM, obct_rc_name(rep->rc_after),
               rep->after_s, rep->msg);
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_TIMEOUT);
        OBCT_CHECK(rep->t_event - t_stop > 2.5);
        OBCT_CHECK_LE_DBL(rep->t_event - t_stop, LIMIT_S);
        OBCT_CHECK(rep->rc_after == OBC_ERR_ABORTED || rep->rc_after == OBC_ERR_TIMEOUT);
        OBCT_CHECK_LE_DBL(rep->after_s, 0.5);
        named += obct_msg_names_rank(rep->msg, VICTIM);
    }
    OBCT_CHECK_EQ_INT(named, NRANKS - 1); /* each one names the stopped rank */
    obct_job_check_shm(&job);
    obct_job_free(&job);
    return obct_finish("stall_peer");
}
