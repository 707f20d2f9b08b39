/* SPDX-License-Identifier: MIT */
/*
 * recdbl.h - recursive-doubling allreduce over p2p channels: log2(n)
 * exchanges of the whole vector, for small messages where latency counts.
 */
#ifndef OBC_ALGO_RECDBL_H
#define OBC_ALGO_RECDBL_H

#include "algo/algo.h"

/* Allreduce of count elements over team: in (dtype, or the accumulator
 * type when in_acc; then it is also used as working space and overwritten)
 * into out (dtype). */
struct recdbl_job {
    const struct obc__coll_args *args;
    const struct obc__team *team;
    const void *in;
    void *out;
    size_t count;
    obc_dtype_t dtype;
    obc_redop_t op;
    int avg_divisor;
    bool in_acc;
    uint64_t stamp;
};

struct recdbl_run {
    struct recdbl_job job;
    const struct obc__algo_ctx *ctx;
    size_t esize, accsize, chunk_elems, seg_elems;
    unsigned char *acc; /* working vector: out, in (in_acc) or scratch */
    bool acc_is_scratch;
    int p2; /* largest power of two <= n */
    size_t seg; /* first element of the segment being reduced */
    int stage; /* see recdbl.c */
    size_t chunk;
    bool sent; /* this chunk's send is done, its receive pending */
};

void recdbl_start(struct recdbl_run *r, const struct obc__algo_ctx *ctx,
                  const struct recdbl_job *job);
/* Advance (state: struct recdbl_run); an algorithm's step. */
obc_result_t recdbl_step(void *state, struct obc__wait *w);

#endif
