/* SPDX-License-Identifier: MIT */
/*
 * reduce.c - reduce within a host: the shared-memory slice reduction
 * (win_reduce.c) with only the root copying the result out. Across hosts
 * the pipelined chain (reduce "ring", chain.c) runs instead.
 */
#include "algo/window/win_reduce.h"

_Static_assert(sizeof(struct win_reduce_run) <= OBC_ALGO_STATE_BYTES, "state must fit");

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
        .consumers = WIN_CONSUME_ROOT,
        .root = args->root,
    };
    win_reduce_start(state, ctx, &job);
}

static obc_result_t shm_step(void *state, struct obc__wait *w)
{
    return win_reduce_step(state, w);
}

const struct obc__algo obc__reduce_shm = {OBC_COLL_REDUCE, "shm", obc__algo_on_one_arena, shm_init,
                                          shm_step};
