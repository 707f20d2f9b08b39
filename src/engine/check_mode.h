/* SPDX-License-Identifier: MIT */
/*
 * check_mode.h - whether the ranks agree on what they call: OBC_CHECK=1
 * compares every rank's call before data moves, OBC_CHECK=2 also a
 * broadcast's payload hash after it, and whatever OBC_CHECK says, a stalled
 * wait looks for a rank that entered the same operation with another call
 * (so a mismatch fails in a fraction of a second, not after OBC_TIMEOUT).
 * Calls are read from this host's boards (board.h).
 *
 * The step functions return OBC_IN_PROGRESS with *w while some rank has
 * not arrived yet; the engine waits on w (wait_for) and calls again.
 */
#ifndef OBC_ENGINE_CHECK_MODE_H
#define OBC_ENGINE_CHECK_MODE_H

#include "engine/board.h"
#include "engine/engine.h"

struct obc__check {
    struct obc__boards boards;
    int level; /* OBC_CHECK */
};

obc_result_t obc__check_init(struct obc__check *c, const struct obc__engine_params *p);
void obc__check_fini(struct obc__check *c);

/* An operation starts (it goes on this rank's board) and ends. */
void obc__check_enter(struct obc__check *c, const struct obc__coll_args *args);
void obc__check_leave(struct obc__check *c, const struct obc__coll_args *args, obc_result_t res);

/* OBC_CHECK >= 1, before data moves: OBC_SUCCESS once every rank entered
 * this operation with the same call (at once without check mode),
 * OBC_ERR_MISMATCH (message in err) when one did not. */
obc_result_t obc__check_before(struct obc__check *c, const struct obc__coll_args *args,
                               struct obc__err *err, struct obc__wait *w);
/* After the data moved: a broadcast's root, which read nothing its peers
 * stamped, looks at their calls; with OBC_CHECK >= 2 every rank posts its
 * broadcast payload's hash. Then obc__check_after_wait compares them. */
obc_result_t obc__check_after(struct obc__check *c, const struct obc__coll_args *args,
                              struct obc__err *err);
obc_result_t obc__check_after_wait(struct obc__check *c, const struct obc__coll_args *args,
                                   struct obc__err *err, struct obc__wait *w);
/* A wait made no progress for a while: OBC_ERR_MISMATCH (message in err)
 * if a rank entered this operation with another call, else OBC_SUCCESS. */
obc_result_t obc__check_stalled(struct obc__check *c, const struct obc__coll_args *args,
                                struct obc__err *err);
/* An operation failed with res: when it is a mismatch, or an abort, that
 * the calls explain, OBC_ERR_MISMATCH with a message naming the rank and
 * both calls; else res. */
obc_result_t obc__check_explain(struct obc__check *c, const struct obc__coll_args *args,
                                obc_result_t res, struct obc__err *err);

#endif
