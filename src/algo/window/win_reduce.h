/* SPDX-License-Identifier: MIT */
/*
 * win_reduce.h - reductions and gathers within a host through the arena's
 * windows, as building blocks: the registry entries (allreduce/reduce/
 * reduce_scatter/allgather "shm") and the hierarchical allreduce's host
 * stages are thin wrappers around these jobs.
 */
#ifndef OBC_ALGO_WIN_REDUCE_H
#define OBC_ALGO_WIN_REDUCE_H

#include "algo/window/win.h"

/* Who copies the reduced result out of the windows. */
enum win_consumers { WIN_CONSUME_ALL, WIN_CONSUME_ROOT, WIN_CONSUME_NONE };

/*
 * A reduction over team. Every member contributes `count` elements at in
 * (dtype). Pieces of every chunk are reduced each by one member, left to
 * right over the team's order (so the result does not depend on who
 * reduces). Shapes:
 *  - vector (blocks == false): the result has count elements and goes to
 *    `out` of the consumers (all members, the member at team index root,
 *    or none);
 *  - blocks (reduce_scatter): in holds team->n blocks of count elements;
 *    member m's out receives block m (written by m itself, no consumers).
 * out_acc: the result stays in the accumulator type (no rounding, no AVG
 * division): a partial result for a later stage.
 */
struct win_reduce_job {
    const struct obc__coll_args *args; /* stamp and error messages */
    const struct obc__team *team;
    const void *in;
    void *out;
    size_t count;
    obc_dtype_t dtype;
    obc_redop_t op;
    int avg_divisor;
    bool blocks;
    bool out_acc;
    enum win_consumers consumers;
    int root; /* team index, for WIN_CONSUME_ROOT */
};

/* A copy from the members that post to every member that consumes:
 * allgather (every member posts its count elements; out receives team->n
 * blocks in team order) or broadcast (only team index root posts; in
 * place on the root when in == out). */
struct win_gather_job {
    const struct obc__coll_args *args;
    const struct obc__team *team;
    const void *in;
    void *out;
    size_t nbytes; /* per posting member */
    bool bcast;
    int root; /* team index, for bcast */
};

/* Sizes of the state of a running job; they live inside an op's state. */
struct win_reduce_run {
    struct win_reduce_job job;
    const struct obc__algo_ctx *ctx;
    size_t esize, outsize, chunk_elems;
    uint64_t stamp;
    bool whole; /* small: each consumer reduces the whole chunk itself */
    uint32_t base, nchunks, posted, reduced, done;
    int scan;
};

struct win_gather_run {
    struct win_gather_job job;
    const struct obc__algo_ctx *ctx;
    size_t chunk_bytes;
    uint64_t stamp;
    uint32_t base, nchunks, posted, done;
    int scan;
};

void win_reduce_start(struct win_reduce_run *r, const struct obc__algo_ctx *ctx,
                      const struct win_reduce_job *job);
/* A reduction over the whole communicator on args's buffers (registry entries). */
void win_reduce_start_world(struct win_reduce_run *r, const struct obc__algo_ctx *ctx,
                            const struct obc__coll_args *args, bool blocks,
                            enum win_consumers consumers);
/* Advance (state: struct win_reduce_run); an algorithm's step. */
obc_result_t win_reduce_step(void *state, struct obc__wait *w);

void win_gather_start(struct win_gather_run *r, const struct obc__algo_ctx *ctx,
                      const struct win_gather_job *job);
/* Advance (state: struct win_gather_run); an algorithm's step. */
obc_result_t win_gather_step(void *state, struct obc__wait *w);

#endif
