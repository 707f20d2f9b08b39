/* SPDX-License-Identifier: MIT */
/*
 * allreduce.c - the allreduce registry entries over the building blocks:
 *   shm     within a host: every rank reduces one slice of each chunk of
 *           everybody's input in the arena's windows (win_reduce.c);
 *   ring    reduce-scatter then allgather around the ring of ranks over
 *           p2p channels (ring.c): bandwidth-optimal;
 *   recdbl  recursive doubling over p2p channels (recdbl.c): log2(n)
 *           latencies, for small messages.
 * The hierarchical composition is allreduce_hier.c; the single rank is a
 * copy (coll_self.c).
 */
#include "algo/p2p/recdbl.h"
#include "algo/p2p/ring.h"
#include "algo/window/win_reduce.h"

union allreduce_state {
    struct win_reduce_run shm;
    struct ring_run ring;
    struct recdbl_run recdbl;
};
_Static_assert(sizeof(union allreduce_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static void shm_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    win_reduce_start_world(state, ctx, args, false, WIN_CONSUME_ALL);
}

static void ring_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    ring_start_world(state, ctx, args, false, true, true);
}

static void recdbl_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct recdbl_job job = {
        .args = args,
        .team = &ctx->world,
        .in = args->segs[0].send,
        .out = args->segs[0].recv,
        .count = args->count,
        .dtype = args->dtype,
        .op = args->redop,
        .avg_divisor = ctx->nranks,
        .stamp = obc__algo_stamp(args),
    };
    recdbl_start(state, ctx, &job);
}

const struct obc__algo obc__allreduce_shm = {OBC_COLL_ALLREDUCE, "shm", obc__algo_on_one_arena,
                                             shm_init, win_reduce_step};
const struct obc__algo obc__allreduce_ring = {OBC_COLL_ALLREDUCE, "ring", obc__algo_more_than_one,
                                              ring_init, ring_step};
const struct obc__algo obc__allreduce_recdbl = {OBC_COLL_ALLREDUCE, "recdbl",
                                                obc__algo_more_than_one, recdbl_init, recdbl_step};
