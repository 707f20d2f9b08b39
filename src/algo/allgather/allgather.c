/* SPDX-License-Identifier: MIT */
/*
 * allgather.c - allgather: within a host every rank posts its block chunk
 * by chunk in its window and copies everybody else's out (shm); across
 * hosts the allgather half of the ring (ring).
 */
#include "algo/p2p/ring.h"
#include "algo/window/win_reduce.h"

union ag_state {
    struct win_gather_run shm;
    struct ring_run ring;
};
_Static_assert(sizeof(union ag_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool more_than_one(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks > 1;
}

static void shm_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct win_gather_job job = {
        .args = args,
        .team = &ctx->world,
        .in = args->segs[0].send,
        .out = args->segs[0].recv,
        .nbytes = args->nbytes,
    };
    win_gather_start(state, ctx, &job);
}

static obc_result_t shm_step(void *state, struct obc__wait *w)
{
    return win_gather_step(state, w);
}

static void ring_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct ring_job job = {
        .args = args,
        .team = &ctx->world,
        .in = args->segs[0].send,
        .out = args->segs[0].recv,
        .count = args->count,
        .dtype = args->dtype,
        .blocks = true,
        .ag = true,
        .stamp = obc__algo_stamp(args),
    };
    ring_start(state, ctx, &job);
}

static obc_result_t ring_algo_step(void *state, struct obc__wait *w)
{
    return ring_step(state, w);
}

const struct obc__algo obc__allgather_shm = {OBC_COLL_ALLGATHER, "shm", obc__algo_on_one_arena,
                                             shm_init, shm_step};
const struct obc__algo obc__allgather_ring = {OBC_COLL_ALLGATHER, "ring", more_than_one, ring_init,
                                              ring_algo_step};
