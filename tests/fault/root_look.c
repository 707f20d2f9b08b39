/* SPDX-License-Identifier: MIT */
/*
 * root_look.c - ranks that each believe they are the root of a small
 * broadcast (the eager ring). A root reads nothing its peers stamped, so
 * nothing in the data tells it; every rank numbers the ring's positions
 * alike, so the second root to publish finds the position taken and fails
 * (bcast_ring.c), in place of check mode's look at the boards after the
 * call, which cost the root most of a small broadcast. Whatever comes next,
 * the disagreement must not pass unseen:
 *  - "then allreduce": every rank's next call (an 8-byte allreduce) fails
 *    with OBC_ERR_MISMATCH or OBC_ERR_ABORTED, at once: no rank completes a
 *    call with a rank that broke the communicator;
 *  - "then destroy": the communicator is destroyed right after the call;
 *    at least one rank's broadcast fails with OBC_ERR_MISMATCH.
 * Each scenario runs REPEATS jobs (the order in which the ranks publish
 * varies from job to job); no rank may hang or write outside its buffer.
 */
/* obct: name=n2 env=OBCT_FAULT_NRANKS=2 timeout=120 san */
/* obct: name=n4 env=OBCT_FAULT_NRANKS=4 timeout=120 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "obct.h"
#include "spawn_ranks.h"

#define REPEATS 10
#define NBYTES 8 /* the eager ring */

enum next { THEN_ALLREDUCE, THEN_DESTROY };

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    enum next next = *(const enum next *)arg;
    struct obct_buf buf;
    uint64_t x = 1, sum = 0;
    (void)nranks;
    obct_buf_alloc(&buf, NBYTES, 0);
    obct_fill(buf.data, NBYTES, 5, 0);
    self->rc = obc_bcast(buf.data, NBYTES, OBC_UINT8, rank, comm); /* "I am the root" */
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    double t = obct_now();
    if (next == THEN_ALLREDUCE) {
        self->rc_after = obc_allreduce(&x, &sum, 1, OBC_UINT64, OBC_SUM, comm);
        self->after_s = obct_now() - t;
        obc_comm_destroy(comm);
    } else {
        self->rc_after = obc_comm_destroy(comm);
        self->after_s = obct_now() - t;
    }
    int intact = obct_buf_check("broadcast buffer", &buf) == 0;
    obct_buf_free(&buf);
    return intact ? 0 : 3;
}

static void run(int nranks, enum next next, const char *name)
{
    obct_scenario("root_look: %s, %d jobs", name, REPEATS);
    for (int i = 0; i < REPEATS; i++) {
        struct obct_job job;
        int mismatches = 0;
        enum next arg = next;
        obct_spawn(&job, nranks, rank_main, &arg, 0);
        if (obct_join(&job, 60) != 0) {
            OBCT_FAIL("%s: ranks did not exit within 60 s", name);
        }
        for (int r = 0; r < nranks; r++) {
            const struct obct_report *rep = &job.reports[r];
            if (i == 0) {
                printf("root_look: %s: rank %d got %s, then %s in %.3f s; message: \"%s\"\n", name,
                       r, obct_rc_name(rep->rc), obct_rc_name(rep->rc_after), rep->after_s,
                       rep->msg);
            }
            OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0); /* guards intact */
            OBCT_CHECK(rep->rc == OBC_SUCCESS || rep->rc == OBC_ERR_MISMATCH ||
                       rep->rc == OBC_ERR_ABORTED);
            mismatches += rep->rc == OBC_ERR_MISMATCH;
            if (next == THEN_ALLREDUCE) {
                OBCT_CHECK(rep->rc_after == OBC_ERR_MISMATCH || rep->rc_after == OBC_ERR_ABORTED);
                OBCT_CHECK_LE_DBL(rep->after_s, 0.5 * obct_time_scale());
            } else {
                OBCT_CHECK_EQ_INT(rep->rc_after, OBC_SUCCESS); /* destroy is local */
            }
        }
        if (mismatches == 0) {
            obct_soft_fail(__FILE__, __LINE__, "%s, job %d: no rank saw the two roots", name, i);
        }
        obct_job_check_shm(&job);
        obct_job_free(&job);
    }
}

int main(void)
{
    const char *n = getenv("OBCT_FAULT_NRANKS");
    const int nranks = n != NULL ? atoi(n) : 2;
    OBCT_ASSERT(nranks >= 2 && nranks <= OBCT_MAX_RANKS);
    obct_watchdog(100);
    setenv("OBC_TIMEOUT", "10", 1);
    run(nranks, THEN_ALLREDUCE, "then allreduce");
    run(nranks, THEN_DESTROY, "then destroy");
    return obct_finish("root_look");
}
