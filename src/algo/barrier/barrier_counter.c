/* SPDX-License-Identifier: MIT */
/*
 * barrier_counter.c - barrier of the ranks of one host on a shared counter:
 * every rank adds 1, then waits until the counter reaches epoch * nranks.
 * The counter is never reset (epochs only grow, mod 2^32), so a fast rank
 * entering the next barrier cannot confuse a slow one leaving this one.
 * Cost: one atomic add per rank and one cache line read by all; the last
 * arrival wakes the sleepers with one futex call.
 */
#include <string.h>

#include "algo/algo.h"

struct barrier_state {
    struct obc__algo_ctx *ctx;
    uint32_t target;
    bool arrived;
};
_Static_assert(sizeof(struct barrier_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool counter_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->arena_has_all;
}

static void counter_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct barrier_state *s = state;
    (void)args;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->target = ++ctx->persist->barrier_epoch * (uint32_t)ctx->nranks;
}

static obc_result_t counter_step(void *state, struct obc__wait *w)
{
    struct barrier_state *s = state;
    if (!s->arrived) {
        obc__arena_counter_add(s->ctx->arena, OBC_CTR_BARRIER, 1);
        s->arrived = true;
    }
    return obc__arena_counter_reached(s->ctx->arena, OBC_CTR_BARRIER, s->target, w)
        ? OBC_SUCCESS
        : OBC_IN_PROGRESS;
}

const struct obc__algo obc__barrier_counter = {OBC_COLL_BARRIER, "counter", counter_supports,
                                               counter_init, counter_step};
