/* SPDX-License-Identifier: MIT */
/*
 * check_mode.h - whether the ranks agree on what they call: OBC_CHECK=1
 * compares every rank's call before data moves, OBC_CHECK=2 also a
 * broadcast's payload hash after it, and whatever OBC_CHECK says, a stalled
 * wait looks for a rank that entered the same operation with another call
 * (so a mismatch fails in a fraction of a second, not after OBC_TIMEOUT).
 * Calls are read from this host's boards (board.h), and for the ranks of
 * other hosts from their notes: a small record of the call (and payload
 * hash) that a rank posts to every remote peer over the p2p links when
 * check mode is on (at every operation), when a wait stalls, and when an
 * operation fails with a mismatch, so that every rank can name the rank
 * and both calls. Nothing is sent while calls agree and nothing stalls.
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
    struct obc__p2p *p2p;
    const bool *remote; /* [nranks]: on another machine (the layout's); NULL when none is */
    int level; /* OBC_CHECK */
    uint64_t noted; /* seq + 1 of the operation our last note described */
    uint64_t hash_pos, hash; /* the last payload hash posted, for notes */
    int odd_rank; /* the last rank found calling differently (-1: none) ... */
    struct obc__board_call odd; /* ... and its call, passed on in notes */
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
                              const struct obc__algo *algo, struct obc__err *err);
obc_result_t obc__check_after_wait(struct obc__check *c, const struct obc__coll_args *args,
                                   struct obc__err *err, struct obc__wait *w);
/* A wait made no progress for a while: OBC_ERR_MISMATCH (message in err)
 * if a rank entered this operation with another call, else OBC_SUCCESS. */
obc_result_t obc__check_stalled(struct obc__check *c, const struct obc__coll_args *args,
                                struct obc__err *err);
/* Post this rank's note for the operation to the other hosts, unless it
 * went already: a stalled wait, or one about to fail, does so before the
 * other hosts hear of a failure, so that they can compare its call. */
void obc__check_publish(struct obc__check *c, const struct obc__coll_args *args);
/* An operation failed with res: when it is a mismatch, or an abort, that
 * the calls explain, OBC_ERR_MISMATCH with a message naming the rank and
 * both calls; else res. */
obc_result_t obc__check_explain(struct obc__check *c, const struct obc__coll_args *args,
                                obc_result_t res, struct obc__err *err);

#endif
