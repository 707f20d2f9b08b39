/* SPDX-License-Identifier: MIT */
/*
 * reduce.c - reduce within a host: the shared-memory slice reduction
 * (win_reduce.c) with only the root copying the result out. The pipelined
 * chain (reduce "ring") is chain.c.
 */
#include "algo/window/win_reduce.h"

_Static_assert(sizeof(struct win_reduce_run) <= OBC_ALGO_STATE_BYTES, "state must fit");

static void shm_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    win_reduce_start_world(state, ctx, args, false, WIN_CONSUME_ROOT);
}

const struct obc__algo obc__reduce_shm = {OBC_COLL_REDUCE, "shm", obc__algo_on_one_arena, shm_init,
                                          win_reduce_step};
