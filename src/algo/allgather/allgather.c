/* SPDX-License-Identifier: MIT */
/*
 * allgather.c - allgather: within a host every rank posts its block chunk
 * by chunk in its window and copies everybody else's out (shm); the
 * allgather half of the ring (ring).
 */
#include "algo/p2p/ring.h"
#include "algo/window/win_reduce.h"

union ag_state {
    struct win_gather_run shm;
    struct ring_run ring;
};
_Static_assert(sizeof(union ag_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

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

static void ring_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    ring_start_world(state, ctx, args, true, false, true);
}

const struct obc__algo obc__allgather_shm = {OBC_COLL_ALLGATHER, "shm", obc__algo_on_one_arena,
                                             shm_init, win_gather_step};
const struct obc__algo obc__allgather_ring = {OBC_COLL_ALLGATHER, "ring", obc__algo_more_than_one,
                                              ring_init, ring_step};
