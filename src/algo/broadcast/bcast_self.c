/* SPDX-License-Identifier: MIT */
/*
 * bcast_self.c - the single-rank communicator: broadcast is a local copy
 * (nothing when in place) and a barrier returns at once. Chosen by
 * select.c whenever nranks == 1, so that the real algorithms never have to
 * treat "no readers" as a special case.
 */
#include <string.h>

#include "algo/algo.h"
#include "core/copy.h"

struct self_state {
    const struct obc__coll_args *args;
};
_Static_assert(sizeof(struct self_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool self_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks == 1;
}

static void self_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct self_state *s = state;
    (void)ctx;
    s->args = args;
}

static obc_result_t bcast_self_step(void *state, struct obc__wait *w)
{
    struct self_state *s = state;
    (void)w;
    for (size_t i = 0; i < s->args->nsegs; i++) {
        const struct obc__seg *g = &s->args->segs[i];
        if (g->recv != g->send && g->nbytes > 0) {
            obc__copy(g->recv, g->send, g->nbytes, 0);
        }
    }
    return OBC_SUCCESS;
}

static obc_result_t barrier_self_step(void *state, struct obc__wait *w)
{
    (void)state;
    (void)w;
    return OBC_SUCCESS;
}

const struct obc__algo obc__bcast_self = {OBC_COLL_BROADCAST, "self", self_supports, self_init,
                                          bcast_self_step};
const struct obc__algo obc__barrier_self = {OBC_COLL_BARRIER, "self", self_supports, self_init,
                                            barrier_self_step};
