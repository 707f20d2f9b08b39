/* SPDX-License-Identifier: MIT */
/*
 * killcheck.h - the killed-peer scenario shared by the fault tests: let a
 * spawned job loop a collective, SIGKILL one rank in the middle, and check
 * every survivor's report (obct_report: rc, rc_after, after_s, msg).
 *
 * Part of the obct test library (tests/harness). Used by
 * fault/killed_rank.c and fault/killed_rank_allreduce.c.
 */
#ifndef OBCT_KILLCHECK_H
#define OBCT_KILLCHECK_H

#include "spawn_ranks.h"

/* Wait until victim made 4 calls, sleep 30 ms (the kill then lands inside
 * a call), SIGKILL it, join the job, and check that every survivor exited
 * 0, got OBC_ERR_PEER_LOST or OBC_ERR_ABORTED within limit_s of the kill,
 * failed its next call at once (<= 0.5 s) with ABORTED or the same code,
 * and that some survivor's message names the victim (every PEER_LOST one
 * must). what/name label the printed lines ("broadcasts", scenario name).
 * Also checks that no /dev/shm segment is left, and frees the job. */
void obct_kill_and_check(struct obct_job *job, const char *test, const char *name, int victim,
                         const char *what, double limit_s);

#endif
