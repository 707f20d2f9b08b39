/* SPDX-License-Identifier: MIT */
/* killcheck.c - the killed-peer scenario's checks (killcheck.h). */
#include "killcheck.h"

#include <signal.h>
#include <stdio.h>

#include "data.h"
#include "obct.h"

void obct_kill_and_check(struct obct_job *job, const char *test, const char *name, int victim,
                         const char *what, double limit_s)
{
    int named = 0;
    OBCT_ASSERT_MSG(obct_wait_progress(job, victim, 4, 60) == 0,
                    "rank %d never reached its 4th call", victim);
    obct_sleep(0.030);
    double t_kill = obct_signal(job, victim, SIGKILL);
    if (obct_join(job, 40) != 0) {
        OBCT_FAIL("%s: survivors did not exit within 40 s of the kill", name);
    }
    OBCT_CHECK_EQ_INT(obct_exit_code(job, victim), -SIGKILL);
    for (int r = 0; r < job->nranks; r++) {
        const struct obct_report *rep = &job->reports[r];
        double dt = rep->t_event - t_kill;
        if (r == victim) {
            continue;
        }
        printf("%s: %s: rank %d got %s after %.3f s (%ld %s), next call %s in %.3f s; "
               "message: \"%s\"\n",
               test, name, r, obct_rc_name(rep->rc), dt, (long)atomic_load(&rep->progress), what,
               obct_rc_name(rep->rc_after), rep->after_s, rep->msg);
        OBCT_CHECK_EQ_INT(obct_exit_code(job, r), 0);
        OBCT_CHECK(rep->rc == OBC_ERR_PEER_LOST || rep->rc == OBC_ERR_ABORTED);
        OBCT_CHECK_LE_DBL(dt, limit_s);
        OBCT_CHECK(rep->rc_after != OBC_SUCCESS && rep->rc_after != OBC_IN_PROGRESS);
        OBCT_CHECK(rep->rc_after == OBC_ERR_ABORTED || rep->rc_after == rep->rc);
        OBCT_CHECK_LE_DBL(rep->after_s, 0.5);
        if (obct_msg_names_rank(rep->msg, victim)) {
            named++;
        } else if (rep->rc == OBC_ERR_PEER_LOST) {
            OBCT_LOG("%s: rank %d reports PEER_LOST without naming rank %d: \"%s\"", name, r,
                     victim, rep->msg);
            OBCT_CHECK(obct_msg_names_rank(rep->msg, victim));
        }
    }
    OBCT_CHECK(named > 0);
    obct_job_check_shm(job);
    obct_job_free(job);
    fflush(stdout);
}
