/* SPDX-License-Identifier: MIT */
/*
 * spawn_ranks.h - a fork-based launcher for fault tests, independent of obcrun.
 *
 * Children are forked before the parent calls obc_get_unique_id (no child
 * inherits library state); the id reaches them through pipes. The parent
 * can signal a child once it reached a progress count, and reaps statuses
 * and exit times under a hard deadline (then SIGKILL: no test can hang).
 * Children die with the parent (PR_SET_PDEATHSIG) or at their own alarm.
 * Each job has its own OBC_JOB_ID, to tell its /dev/shm files apart.
 * From obct_spawn to obct_job_free the parent's output and its children's
 * are captured, and printed only if a check fails then (quiet.h; set
 * OBCT_VERBOSE=1 to see everything live).
 *
 * Part of the obct test library (tests/harness). Used by the fault tests
 * (abort_test, bootstrap_auth, timeout_skip, killed_rank* through
 * killcheck.h, coll_mismatch, stall_peer, shm_stale) and by
 * integration/torchrun_env.c and launcher_env.c, which need environments
 * that obcrun does not make.
 */
#ifndef OBCT_SPAWN_RANKS_H
#define OBCT_SPAWN_RANKS_H

#include <stdatomic.h>
#include <sys/types.h>

#include "obc.h"

#define OBCT_MAX_RANKS 64
#define OBCT_EXIT_INIT_FAILED 90

/* What a child tells the parent; lives in shared memory, one per rank. */
struct obct_report {
    atomic_long progress; /* bumped by the child (obct_progress) */
    int rc; /* the result of the call under test */
    int rc_after; /* the result of a call made after it */
    double t_event; /* obct_now() when the call under test returned */
    double after_s; /* how long the later call took */
    double value; /* free use */
    char msg[1024]; /* obc_comm_last_error after the call under test */
};

/* Runs in the child; comm is NULL with OBCT_SPAWN_NO_INIT. Returns the exit status. */
typedef int (*obct_rank_fn)(obc_comm_t *comm, int rank, int nranks, struct obct_report *self,
                            void *arg);

enum { OBCT_SPAWN_NO_INIT = 1 };

struct obct_job {
    int nranks;
    char job_id[32]; /* OBC_JOB_ID of the children: names their /dev/shm segments */
    pid_t pid[OBCT_MAX_RANKS];
    int status[OBCT_MAX_RANKS]; /* waitpid status once reaped */
    int reaped[OBCT_MAX_RANKS];
    double t_exit[OBCT_MAX_RANKS]; /* obct_now() when reaped (polled every 2 ms) */
    double t_start;
    struct obct_report *reports; /* shared with the children */
    int quiet; /* this job opened the quiet scope (quiet.h): obct_job_free closes it */
};

/* Print the name of the scenario whose jobs follow (one line on stdout, live),
 * and label their captured output with it. */
void obct_scenario(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fork nranks children running fn, inside a quiet scope. Fatal on any set-up failure. */
void obct_spawn(struct obct_job *job, int nranks, obct_rank_fn fn, void *arg, int flags);
/* Child side, with OBCT_SPAWN_NO_INIT: the variables obcrun would give this
 * rank (OBC_RANK, OBC_NRANKS, OBC_BOOTSTRAP at 127.0.0.1:port, OBC_SECRET),
 * for a test that calls obc_comm_init_env itself. */
void obct_launch_env(int rank, int nranks, int port, const char *secret);
/* Child side: bump this rank's progress counter. */
void obct_progress(struct obct_report *self);
/* Wait until rank's progress >= min; 0, or -1 after timeout_s or if the child exited. */
int obct_wait_progress(struct obct_job *job, int rank, long min, double timeout_s);
/* Send sig to rank; returns obct_now() taken just before the kill. */
double obct_signal(struct obct_job *job, int rank, int sig);
/* Reap one rank; 0 once it exited, -1 if still running after timeout_s. */
int obct_join_rank(struct obct_job *job, int rank, double timeout_s);
/* Reap all; 0 if all exited within timeout_s, otherwise SIGKILL the rest, reap, -1. */
int obct_join(struct obct_job *job, double timeout_s);
/* Exit code of a reaped rank, or -signal if a signal killed it. */
int obct_exit_code(const struct obct_job *job, int rank);
/* Call once the job's checks are done: ends its quiet scope, which prints what
 * was captured if one of them failed. */
void obct_job_free(struct obct_job *job);
/* Soft-fails for every /dev/shm/obc-<job id>-* file left once the job is over (no
 * launcher cleans up after a forked job), removes them, and returns how many. */
int obct_job_check_shm(const struct obct_job *job);

/* Hard deadline for the whole parent: after seconds (scaled by the timeout
 * multiplier), SIGKILL every spawned child and _exit(1) with a message. */
void obct_watchdog(double seconds);

#endif /* OBCT_SPAWN_RANKS_H */
