/* SPDX-License-Identifier: MIT */
/*
 * personal.c - the personalised collectives' registry entries: gather and
 * scatter "direct" (the root exchanges with every rank itself, a few
 * peers at once), alltoall, alltoallv and allgatherv "pairwise" (n units
 * of symmetric pairs), and "self" for one rank. All run the exchange of
 * px.c over p2p, so they work within a host (the arena's channels) and
 * across hosts (TCP) alike; select.c picks them (docs/algorithms.md).
 */
#include "algo/personal/px.h"

_Static_assert(sizeof(struct px_run) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool one_rank(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks == 1;
}

static bool has_p2p(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks > 1 && ctx->p2p != NULL && ctx->p2p_slot_bytes > 8;
}

const struct obc__algo obc__gather_self = {OBC_COLL_GATHER, "self", one_rank, px_init, px_step};
const struct obc__algo obc__gather_direct = {OBC_COLL_GATHER, "direct", has_p2p, px_init, px_step};
const struct obc__algo obc__scatter_self = {OBC_COLL_SCATTER, "self", one_rank, px_init, px_step};
const struct obc__algo obc__scatter_direct = {OBC_COLL_SCATTER, "direct", has_p2p, px_init,
                                              px_step};
const struct obc__algo obc__alltoall_self = {OBC_COLL_ALLTOALL, "self", one_rank, px_init, px_step};
const struct obc__algo obc__alltoall_pairwise = {OBC_COLL_ALLTOALL, "pairwise", has_p2p, px_init,
                                                 px_step};
const struct obc__algo obc__alltoallv_self = {OBC_COLL_ALLTOALLV, "self", one_rank, px_init,
                                              px_step};
const struct obc__algo obc__alltoallv_pairwise = {OBC_COLL_ALLTOALLV, "pairwise", has_p2p, px_init,
                                                  px_step};
const struct obc__algo obc__allgatherv_self = {OBC_COLL_ALLGATHERV, "self", one_rank, px_init,
                                               px_step};
const struct obc__algo obc__allgatherv_pairwise = {OBC_COLL_ALLGATHERV, "pairwise", has_p2p,
                                                   px_init, px_step};
