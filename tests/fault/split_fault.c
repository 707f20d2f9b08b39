/* SPDX-License-Identifier: MIT */
/*
 * split_fault.c - the failure domain of a child communicator. Four forked
 * ranks split the world by parity: children {0,2} and {1,3}.
 *  - killed: world rank 3 (child rank 1 of {1,3}) is SIGKILLed inside a
 *    1 MiB child broadcast. World rank 1 must get PEER_LOST or ABORTED
 *    within 2 s, its message naming the victim by its child rank (1); the
 *    other child {0,2} goes on broadcasting without a single failure; then
 *    a parent barrier (which needs the dead rank) fails within 3 s, and a
 *    split of the broken parent returns at once with ABORTED.
 *  - inherited timeout: the world's timeout is set to 1 s with
 *    obc_comm_set_timeout (OBC_TIMEOUT says 20) before the split; world
 *    rank 3 skips a child broadcast, so world rank 1 must get TIMEOUT after
 *    about 1 s (the parent's timeout is raised again right after the split:
 *    the child's is its own); meanwhile world rank 0 aborts child {0,2}, whose rank 2
 *    gets ABORTED. Neither breaks the parent: every rank's parent barrier
 *    and allreduce afterwards succeed, and a second split works.
 * The tcp variant puts world ranks 0-1 and 2-3 on two fake hosts, so both
 * children cross a TCP link.
 */
/* obct: timeout=90 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 timeout=90 san */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 4
#define VICTIM 3
#define NBYTES ((size_t)1 << 20)
#define LOOP_S 30.0
#define GOOD_LOOP_S 1.5

static obc_comm_t *split_parity(obc_comm_t *world, int rank)
{
    obc_comm_t *child = NULL;
    OBCT_OK(obc_comm_split(world, rank % 2, rank, &child), world);
    OBCT_ASSERT(child != NULL && obc_comm_size(child) == 2 && obc_comm_rank(child) == rank / 2);
    return child;
}

static int killed_main(obc_comm_t *world, int rank, int nranks, struct obct_report *self, void *arg)
{
    struct obct_buf buf;
    obc_result_t rc = OBC_SUCCESS;
    long failures = 0;
    (void)nranks;
    (void)arg;
    obc_comm_t *child = split_parity(world, rank);
    obct_buf_alloc(&buf, NBYTES, 0);
    if (rank % 2 == 0) {
        /* The other child: not one failure while its sibling dies. Its root
         * decides when to stop (the first byte), so both members run the
         * same number of broadcasts. */
        unsigned char *more = buf.data;
        double end = obct_now() + GOOD_LOOP_S;
        do {
            *more = rank == 0 && obct_now() < end;
            failures += obc_bcast(buf.data, NBYTES, OBC_UINT8, 0, child) != OBC_SUCCESS;
        } while (*more && failures == 0);
        self->value = (double)failures;
    } else {
        for (double end = obct_now() + LOOP_S; rc == OBC_SUCCESS && obct_now() < end;) {
            obct_progress(self);
            rc = obc_bcast(buf.data, NBYTES, OBC_UINT8, 1, child);
        }
        self->t_event = obct_now();
        self->rc = rc;
        snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(child));
    }
    double t = obct_now();
    self->rc_after = obc_barrier(world);
    self->after_s = obct_now() - t;
    if (self->rc_after == OBC_ERR_PEER_LOST &&
        !obct_msg_names_rank(obc_comm_last_error(world), 3)) {
        OBCT_LOG("parent barrier: PEER_LOST without naming world rank 3: %s",
                 obc_comm_last_error(world));
        self->rc_after = OBC_ERR_INTERNAL;
    }
    obc_comm_t *again = (obc_comm_t *)&again;
    t = obct_now();
    obc_result_t rs = obc_comm_split(world, 0, 0, &again);
    if (rs != OBC_ERR_ABORTED || again != NULL || obct_now() - t > 0.5) {
        OBCT_LOG("split of the broken parent: %s after %.3f s", obct_rc_name(rs), obct_now() - t);
        self->rc_after = OBC_ERR_INTERNAL;
    }
    obc_comm_destroy(child);
    obc_comm_destroy(world);
    obct_buf_free(&buf);
    return 0;
}

static void run_killed(void)
{
    struct obct_job job;
    obct_scenario("split_fault: kill world rank %d inside a child broadcast", VICTIM);
    obct_spawn(&job, NRANKS, killed_main, NULL, 0);
    OBCT_ASSERT_MSG(obct_wait_progress(&job, VICTIM, 4, 60) == 0, "the victim never got going");
    obct_sleep(0.030);
    double t_kill = obct_signal(&job, VICTIM, SIGKILL);
    OBCT_ASSERT_MSG(obct_join(&job, 40) == 0, "survivors did not exit within 40 s of the kill");
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        if (r == VICTIM) {
            continue;
        }
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        printf("split_fault: killed: world rank %d: child %s after %.3f s (\"%s\"), %g failures; "
               "parent barrier %s in %.3f s\n",
               r, obct_rc_name(rep->rc), r % 2 ? rep->t_event - t_kill : 0.0, rep->msg, rep->value,
               obct_rc_name(rep->rc_after), rep->after_s);
        if (r % 2 == 1) {
            OBCT_CHECK(rep->rc == OBC_ERR_PEER_LOST || rep->rc == OBC_ERR_ABORTED);
            OBCT_CHECK_LE_DBL(rep->t_event - t_kill, 2.0 * obct_time_scale());
            OBCT_CHECK(obct_msg_names_rank(rep->msg, 1)); /* the victim's child rank */
        } else {
            OBCT_CHECK_EQ_INT(rep->value, 0);
        }
        OBCT_CHECK(rep->rc_after == OBC_ERR_PEER_LOST || rep->rc_after == OBC_ERR_ABORTED);
        OBCT_CHECK_LE_DBL(rep->after_s, 3.0 * obct_time_scale());
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
}

static int domain_main(obc_comm_t *world, int rank, int nranks, struct obct_report *self, void *arg)
{
    unsigned char small[64] = {0};
    int64_t v = 1;
    (void)arg;
    OBCT_OK(obc_comm_set_timeout(world, 1.0), world);
    obc_comm_t *child = split_parity(world, rank);
    /* The child keeps the 1 s it inherited; the parent's later waits (for
     * the rank that skips) need longer. */
    OBCT_OK(obc_comm_set_timeout(world, 20.0), world);
    OBCT_OK(obc_bcast(small, sizeof(small), OBC_UINT8, 1, child), child);
    double t = obct_now();
    if (rank == 0) {
        OBCT_OK(obc_comm_abort(child), child);
        self->rc = OBC_ERR_ABORTED;
    } else if (rank == 3) {
        obct_sleep(2.5); /* skips the broadcast: rank 1 must time out */
        self->rc = OBC_ERR_TIMEOUT;
    } else {
        /* Rooted at the other member (world rank 0 or 3), so this rank waits. */
        self->rc = obc_bcast(small, sizeof(small), OBC_UINT8, 1 - rank / 2, child);
    }
    self->t_event = obct_now() - t;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(child));
    obc_comm_destroy(child);
    /* The parent is whole: its own collectives and a new split work. */
    self->rc_after = obc_barrier(world);
    if (self->rc_after == OBC_SUCCESS) {
        self->rc_after = obc_allreduce(&v, &v, 1, OBC_INT64, OBC_SUM, world);
    }
    if (self->rc_after == OBC_SUCCESS && v != nranks) {
        self->rc_after = OBC_ERR_INTERNAL;
    }
    if (self->rc_after == OBC_SUCCESS) {
        child = NULL;
        self->rc_after = obc_comm_dup(world, &child);
        if (self->rc_after == OBC_SUCCESS) {
            self->rc_after = obc_barrier(child);
        }
        obc_comm_destroy(child);
    }
    snprintf(self->msg + strlen(self->msg), sizeof(self->msg) - strlen(self->msg), " | %s",
             obc_comm_last_error(world));
    obc_comm_destroy(world);
    return 0;
}

static void run_domain(void)
{
    struct obct_job job;
    obct_scenario("split_fault: a child's timeout and abort leave the parent whole");
    obct_spawn(&job, NRANKS, domain_main, NULL, 0);
    OBCT_ASSERT_MSG(obct_join(&job, 40) == 0, "ranks did not exit within 40 s");
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        printf("split_fault: domain: world rank %d: child %s after %.3f s, parent then %s "
               "(\"%s\")\n",
               r, obct_rc_name(rep->rc), rep->t_event, obct_rc_name(rep->rc_after), rep->msg);
        OBCT_CHECK_EQ_INT(rep->rc_after, OBC_SUCCESS);
        if (r == 1) {
            OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_TIMEOUT);
            OBCT_CHECK(rep->t_event >= 0.7 && rep->t_event <= 2.4 * obct_time_scale());
        } else if (r == 2) {
            OBCT_CHECK(rep->rc == OBC_ERR_ABORTED || rep->rc == OBC_ERR_PEER_LOST);
            OBCT_CHECK(obct_msg_names_rank(rep->msg, 0));
        }
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
}

int main(void)
{
    obct_watchdog(80);
    setenv("OBC_TIMEOUT", "20", 1); /* detection must not wait for the timeout */
    run_killed();
    run_domain();
    fflush(stdout);
    return obct_finish("split_fault");
}
