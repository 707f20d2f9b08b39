/* SPDX-License-Identifier: MIT */
/*
 * reduce_scatter.c - reduce_scatter: within a host each rank reduces its
 * own block straight into its output from everybody's windows (shm);
 * across hosts the reduce-scatter half of the ring (ring).
 */
#include "algo/p2p/ring.h"
#include "algo/window/win_reduce.h"

union rs_state {
    struct win_reduce_run shm;
    struct ring_run ring;
};
_Static_assert(sizeof(union rs_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool more_than_one(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks > 1;
}

static void shm_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct win_reduce_job job = {
        .args = args,
        .team = &ctx->world,
        .in = args->segs[0].send,
        .out = args->segs[0].recv,
        .count = args->count,
        .dtype = args->dtype,
        .op = args->redop,
        .avg_divisor = ctx->nranks,
        .blocks = true,
        .consumers = WIN_CONSUME_NONE,
    };
    win_reduce_start(state, ctx, &job);
}

static obc_result_t shm_step(void *state, struct obc__wait *w)
{
    return win_reduce_step(state, w);
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
        .op = args->redop,
        .avg_divisor = ctx->nranks,
        .blocks = true,
        .rs = true,
        .stamp = obc__algo_stamp(args),
    };
    ring_start(state, ctx, &job);
}

static obc_result_t ring_algo_step(void *state, struct obc__wait *w)
{
    return ring_step(state, w);
}

const struct obc__algo obc__reduce_scatter_shm = {OBC_COLL_REDUCE_SCATTER, "shm",
                                                  obc__algo_on_one_arena, shm_init, shm_step};
const struct obc__algo obc__reduce_scatter_ring = {OBC_COLL_REDUCE_SCATTER, "ring", more_than_one,
                                                   ring_init, ring_algo_step};
