/* SPDX-License-Identifier: MIT */
/*
 * coll_self.c - the reductions and gathers of a single-rank communicator:
 * a local copy (nothing when in place). A reduction over one rank is its
 * input: SUM, PROD, MIN, MAX of one value are the value, and AVG divides
 * by 1, exact in every type. Chosen by select.c whenever nranks == 1.
 */
#include <string.h>

#include "algo/algo.h"
#include "core/copy.h"

static bool self_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks == 1;
}

static void self_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)ctx;
    memcpy(state, &args, sizeof(args));
}

static obc_result_t self_step(void *state, struct obc__wait *w)
{
    const struct obc__coll_args *args;
    (void)w;
    memcpy(&args, state, sizeof(args));
    const struct obc__seg *g = &args->segs[0];
    if (args->nbytes > 0 && g->recv != NULL && g->recv != g->send) {
        obc__copy(g->recv, g->send, args->nbytes, 0);
    }
    return OBC_SUCCESS;
}

const struct obc__algo obc__allreduce_self = {OBC_COLL_ALLREDUCE, "self", self_supports, self_init,
                                              self_step};
const struct obc__algo obc__reduce_self = {OBC_COLL_REDUCE, "self", self_supports, self_init,
                                           self_step};
const struct obc__algo obc__allgather_self = {OBC_COLL_ALLGATHER, "self", self_supports, self_init,
                                              self_step};
const struct obc__algo obc__reduce_scatter_self = {OBC_COLL_REDUCE_SCATTER, "self", self_supports,
                                                   self_init, self_step};
