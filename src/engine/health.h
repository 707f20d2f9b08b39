/* SPDX-License-Identifier: MIT */
/*
 * health.h - whether a wait is still worth it, and who must hear when it
 * is not: this host's verdict (a local rank died or aborted, read from the
 * arena), the TCP links to other hosts, the culprit passed on from one to
 * the other; and the text of the engine's own failures (a timeout, a
 * broken communicator), which is written here and nowhere else.
 */
#ifndef OBC_ENGINE_HEALTH_H
#define OBC_ENGINE_HEALTH_H

#include "algo/algo.h"
#include "engine/board.h"

/* Wait on a transport's word (engine/wait.c) with this host's policy and
 * health check: OBC_SUCCESS, OBC_ERR_TIMEOUT after timeout_ns, or the
 * host's verdict. */
obc_result_t obc__health_wait(const struct obc__algo_ctx *ctx, const struct obc__wait *w,
                              int64_t timeout_ns);
/* After a wait that returned `waited`: the host's verdict (told to the
 * other hosts), else a failed link's (told to this host's ranks; a remote
 * rank's timeout is one), else OBC_SUCCESS (the word changed) or
 * OBC_IN_PROGRESS (the wait's time ran out: healthy, still waiting). */
obc_result_t obc__health_verdict(const struct obc__algo_ctx *ctx, obc_result_t waited);

/* No progress for timeout_ns: the message names whom w waited for, silent
 * remote peers and (one host) the ranks that have not arrived, the flight
 * recorder goes to the log; the other hosts are told. OBC_ERR_TIMEOUT. */
obc_result_t obc__health_timeout(const struct obc__algo_ctx *ctx, struct obc__boards *boards,
                                 const struct obc__coll_args *args, const struct obc__wait *w,
                                 int64_t timeout_ns);
/* An op not run because the communicator broke earlier with `broken`
 * (whose message was `why`): OBC_ERR_ABORTED. */
obc_result_t obc__health_broken(struct obc__err *err, const struct obc__coll_args *args,
                                obc_result_t broken, const char *why);

#endif
