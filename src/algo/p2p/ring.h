/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the pipelined ring over p2p channels, as a building block of
 * allreduce (reduce-scatter then allgather), reduce_scatter and allgather
 * across hosts, and of the hierarchical allreduce's leader stage.
 */
#ifndef OBC_ALGO_RING_H
#define OBC_ALGO_RING_H

#include "algo/algo.h"

/*
 * A ring job over team. The data is cut into team->n blocks:
 *  - blocks == false (allreduce): `count` elements split evenly;
 *  - blocks == true: block x is elements [x * count, (x + 1) * count) of
 *    `in` (reduce_scatter) or of `out` (allgather).
 * Phases: reduce_scatter (rs) leaves block m, reduced, in member m's out;
 * allgather (ag) then gives every member every block. in holds this
 * member's contribution, in the accumulator type when in_acc (a partial
 * result of an earlier stage). out is in the dtype: the whole vector, or
 * with blocks && !ag only block m.
 */
struct ring_job {
    const struct obc__coll_args *args; /* for stamps' error messages */
    const struct obc__team *team;
    const void *in;
    void *out;
    size_t count;
    obc_dtype_t dtype;
    obc_redop_t op;
    int avg_divisor;
    bool blocks, in_acc, rs, ag;
    uint64_t stamp;
};

struct ring_run {
    struct ring_job job;
    const struct obc__algo_ctx *ctx;
    size_t esize, accsize, insize, chunk_elems;
    size_t nchunks; /* of the longest block */
    size_t chunk; /* chunk index being moved */
    int action; /* position in the chunk's list of sends and receives */
    int next, prev; /* ranks */
};

void ring_start(struct ring_run *r, const struct obc__algo_ctx *ctx, const struct ring_job *job);
/* A ring over the whole communicator on args's buffers (registry entries). */
void ring_start_world(struct ring_run *r, const struct obc__algo_ctx *ctx,
                      const struct obc__coll_args *args, bool blocks, bool rs, bool ag);
/* Advance a started ring (state: struct ring_run); an algorithm's step. */
obc_result_t ring_step(void *state, struct obc__wait *w);

#endif
