/* SPDX-License-Identifier: MIT */
/*
 * reduce_scatter.c - reduce_scatter: within a host each rank reduces its
 * own block straight into its output from everybody's windows (shm); the
 * reduce-scatter half of the ring (ring).
 */
#include "algo/p2p/ring.h"
#include "algo/window/win_reduce.h"

union rs_state {
    struct win_reduce_run shm;
    struct ring_run ring;
};
_Static_assert(sizeof(union rs_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static void shm_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    win_reduce_start_world(state, ctx, args, true, WIN_CONSUME_NONE);
}

static void ring_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    ring_start_world(state, ctx, args, true, true, false);
}

const struct obc__algo obc__reduce_scatter_shm = {
    OBC_COLL_REDUCE_SCATTER, "shm", obc__algo_on_one_arena, shm_init, win_reduce_step};
const struct obc__algo obc__reduce_scatter_ring = {OBC_COLL_REDUCE_SCATTER, "ring",
                                                   obc__algo_more_than_one, ring_init, ring_step};
