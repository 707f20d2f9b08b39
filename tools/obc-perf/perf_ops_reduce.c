/* SPDX-License-Identifier: MIT */
/*
 * perf_ops_reduce.c - the op table entries of allreduce, reduce, allgather
 * and reduce_scatter (see perf_ops.c for the contract of each function).
 *
 * Sizes follow nccl-tests: allreduce and reduce count the whole vector;
 * allgather and reduce_scatter count the whole gathered (scattered) buffer,
 * so each rank contributes or receives nbytes / nranks. In place follows
 * obc.h: allreduce and reduce pass sendbuf == recvbuf, allgather sends from
 * its own block of recvbuf, reduce_scatter receives into its own block of
 * sendbuf. Out of place, the input is checked too (the calls must not modify
 * it); in place, only the output is. Reductions count wrong elements
 * (perf_rdata.c), allgather wrong bytes (perf_data.c's byte pattern, one
 * seed per source rank), like broadcast.
 */
#include <stdlib.h>

#include "perf.h"

static double busbw_factor_allreduce(int nranks)
{
    return nranks > 0 ? 2.0 * (nranks - 1) / nranks : 0.0;
}

static double busbw_factor_gather(int nranks)
{
    return nranks > 0 ? (double)(nranks - 1) / nranks : 0.0;
}

static double busbw_factor_one(int nranks)
{
    (void)nranks;
    return 1.0;
}

/* Whole elements, never a count of 0. */
static size_t count_for(const struct perf_ctx *ctx, size_t want_bytes, int parts)
{
    size_t count = want_bytes / ctx->dsize / (size_t)parts;
    return count > 0 ? count : 1;
}

static void free_buffers(struct perf_ctx *ctx)
{
    if (ctx->sendbuf != ctx->recvbuf) {
        perf_data_free(ctx->sendbuf);
    }
    perf_data_free(ctx->recvbuf);
    ctx->sendbuf = NULL;
    ctx->recvbuf = NULL;
}

/* ---- allreduce --------------------------------------------------------- */

static void allreduce_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    ctx->count = count_for(ctx, want_bytes, 1);
    ctx->nbytes = ctx->count * ctx->dsize;
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = ctx->nbytes;
}

static void allreduce_setup(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    allreduce_shape(ctx, o->max_bytes);
    ctx->recvbuf = perf_data_alloc_or_exit(ctx->nbytes);
    ctx->sendbuf = o->in_place ? ctx->recvbuf : perf_data_alloc_or_exit(ctx->nbytes);
    if (o->async) {
        ctx->call = o->in_place ? "obc_iallreduce(in place)+obc_wait" : "obc_iallreduce+obc_wait";
    } else {
        ctx->call = o->in_place ? "obc_allreduce(in place)" : "obc_allreduce";
    }
}

static void allreduce_fill(struct perf_ctx *ctx, uint64_t iter)
{
    perf_rdata_input(ctx, ctx->sendbuf, 0, ctx->count, ctx->rank, iter);
    if (ctx->sendbuf != ctx->recvbuf) {
        perf_rdata_poison(ctx, ctx->recvbuf, 0, ctx->count, iter);
    }
}

static obc_result_t allreduce_run(struct perf_ctx *ctx)
{
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r = obc_iallreduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype,
                                        ctx->redop, ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_allreduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, ctx->redop, ctx->comm);
}

static uint64_t allreduce_check(const struct perf_ctx *ctx, uint64_t iter)
{
    uint64_t wrong = perf_rdata_result_wrong(ctx, ctx->recvbuf, 0, ctx->count, iter);
    if (ctx->sendbuf != ctx->recvbuf) {
        wrong += perf_rdata_input_wrong(ctx, ctx->sendbuf, 0, ctx->count, ctx->rank, iter);
    }
    return wrong;
}

const struct perf_op perf_op_allreduce = {
    .name = "allreduce",
    .coll = OBC_COLL_ALLREDUCE,
    .has_data = true,
    .has_redop = true,
    .wrong_unit = "elements",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = busbw_factor_allreduce,
    .setup = allreduce_setup,
    .shape = allreduce_shape,
    .fill = allreduce_fill,
    .run = allreduce_run,
    .check = allreduce_check,
    .teardown = free_buffers,
};

/* ---- reduce: only the root receives ------------------------------------- */

/* Out of place, non-roots pass recvbuf NULL, as the API allows; in place
 * every rank passes sendbuf == recvbuf (nccl-tests' in-place reduce), and
 * only the root's buffer is checked: obc.h promises nothing for the others. */
static void reduce_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    bool is_root = ctx->rank == ctx->opts->root;
    ctx->count = count_for(ctx, want_bytes, 1);
    ctx->nbytes = ctx->count * ctx->dsize;
    ctx->out = is_root ? ctx->recvbuf : NULL;
    ctx->out_nbytes = is_root ? ctx->nbytes : 0;
}

static void reduce_setup(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    reduce_shape(ctx, o->max_bytes);
    ctx->sendbuf = perf_data_alloc_or_exit(ctx->nbytes);
    if (o->in_place) {
        ctx->recvbuf = ctx->sendbuf;
    } else if (ctx->rank == o->root) {
        ctx->recvbuf = perf_data_alloc_or_exit(ctx->nbytes);
    }
    if (o->async) {
        ctx->call = o->in_place ? "obc_ireduce(in place)+obc_wait" : "obc_ireduce+obc_wait";
    } else {
        ctx->call = o->in_place ? "obc_reduce(in place)" : "obc_reduce";
    }
}

static void reduce_fill(struct perf_ctx *ctx, uint64_t iter)
{
    perf_rdata_input(ctx, ctx->sendbuf, 0, ctx->count, ctx->rank, iter);
    if (ctx->recvbuf != NULL && ctx->recvbuf != ctx->sendbuf) {
        perf_rdata_poison(ctx, ctx->recvbuf, 0, ctx->count, iter);
    }
}

static obc_result_t reduce_run(struct perf_ctx *ctx)
{
    int root = ctx->opts->root;
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r = obc_ireduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, ctx->redop,
                                     root, ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_reduce(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, ctx->redop, root,
                      ctx->comm);
}

static uint64_t reduce_check(const struct perf_ctx *ctx, uint64_t iter)
{
    uint64_t wrong = 0;
    if (ctx->rank == ctx->opts->root) {
        wrong += perf_rdata_result_wrong(ctx, ctx->recvbuf, 0, ctx->count, iter);
    }
    if (ctx->sendbuf != ctx->recvbuf) {
        wrong += perf_rdata_input_wrong(ctx, ctx->sendbuf, 0, ctx->count, ctx->rank, iter);
    }
    return wrong;
}

const struct perf_op perf_op_reduce = {
    .name = "reduce",
    .coll = OBC_COLL_REDUCE,
    .has_root = true,
    .has_data = true,
    .has_redop = true,
    .out_on_root_only = true,
    .wrong_unit = "elements",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = busbw_factor_one,
    .setup = reduce_setup,
    .shape = reduce_shape,
    .fill = reduce_fill,
    .run = reduce_run,
    .check = reduce_check,
    .teardown = free_buffers,
};

/* ---- allgather: block r of recvbuf is rank r's sendbuf ------------------ */

/* Each source rank's block has its own byte pattern (seed iter * n + r). */
static uint64_t block_seed(const struct perf_ctx *ctx, uint64_t iter, int rank)
{
    return iter * (uint64_t)ctx->nranks + (uint64_t)rank;
}

static size_t block_bytes(const struct perf_ctx *ctx)
{
    return ctx->count * ctx->dsize;
}

/* In place the sendbuf is this rank's block of recvbuf (ctx->sendbuf NULL). */
static unsigned char *allgather_send(const struct perf_ctx *ctx)
{
    return ctx->sendbuf != NULL ? ctx->sendbuf
                                : ctx->recvbuf + (size_t)ctx->rank * block_bytes(ctx);
}

static void allgather_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    ctx->count = count_for(ctx, want_bytes, ctx->nranks);
    ctx->nbytes = ctx->count * ctx->dsize * (size_t)ctx->nranks;
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = ctx->nbytes;
}

static void allgather_setup(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    allgather_shape(ctx, o->max_bytes);
    ctx->recvbuf = perf_data_alloc_or_exit(ctx->nbytes);
    ctx->sendbuf = o->in_place ? NULL : perf_data_alloc_or_exit(block_bytes(ctx));
    if (o->async) {
        ctx->call = o->in_place ? "obc_iallgather(in place)+obc_wait" : "obc_iallgather+obc_wait";
    } else {
        ctx->call = o->in_place ? "obc_allgather(in place)" : "obc_allgather";
    }
}

static void allgather_fill(struct perf_ctx *ctx, uint64_t iter)
{
    size_t blk = block_bytes(ctx);
    perf_data_fill(allgather_send(ctx), blk, block_seed(ctx, iter, ctx->rank), false);
    for (int r = 0; r < ctx->nranks; r++) {
        if (ctx->sendbuf != NULL || r != ctx->rank) {
            perf_data_fill(ctx->recvbuf + (size_t)r * blk, blk, block_seed(ctx, iter, r), true);
        }
    }
}

static obc_result_t allgather_run(struct perf_ctx *ctx)
{
    const unsigned char *send = allgather_send(ctx);
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r =
            obc_iallgather(send, ctx->recvbuf, ctx->count, ctx->dtype, ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_allgather(send, ctx->recvbuf, ctx->count, ctx->dtype, ctx->comm);
}

static uint64_t allgather_check(const struct perf_ctx *ctx, uint64_t iter)
{
    size_t blk = block_bytes(ctx);
    uint64_t wrong = 0;
    for (int r = 0; r < ctx->nranks; r++) {
        wrong += perf_data_wrong(ctx->recvbuf + (size_t)r * blk, blk, block_seed(ctx, iter, r));
    }
    if (ctx->sendbuf != NULL) {
        wrong += perf_data_wrong(ctx->sendbuf, blk, block_seed(ctx, iter, ctx->rank));
    }
    return wrong;
}

const struct perf_op perf_op_allgather = {
    .name = "allgather",
    .coll = OBC_COLL_ALLGATHER,
    .has_data = true,
    .wrong_unit = "bytes",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = busbw_factor_gather,
    .setup = allgather_setup,
    .shape = allgather_shape,
    .fill = allgather_fill,
    .run = allgather_run,
    .check = allgather_check,
    .teardown = free_buffers,
};

/* ---- reduce_scatter: rank r receives block r of the reduction ----------- */

/* In place the recvbuf is this rank's block of sendbuf (ctx->recvbuf NULL). */
static unsigned char *rs_recv(const struct perf_ctx *ctx)
{
    return ctx->recvbuf != NULL ? ctx->recvbuf
                                : ctx->sendbuf + (size_t)ctx->rank * ctx->count * ctx->dsize;
}

static void rs_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    ctx->count = count_for(ctx, want_bytes, ctx->nranks);
    ctx->nbytes = ctx->count * ctx->dsize * (size_t)ctx->nranks;
    ctx->out = ctx->sendbuf != NULL ? rs_recv(ctx) : NULL;
    ctx->out_nbytes = ctx->count * ctx->dsize;
}

static void rs_setup(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    rs_shape(ctx, o->max_bytes);
    ctx->sendbuf = perf_data_alloc_or_exit(ctx->nbytes);
    ctx->recvbuf = o->in_place ? NULL : perf_data_alloc_or_exit(ctx->nbytes / ctx->nranks);
    if (o->async) {
        ctx->call =
            o->in_place ? "obc_ireduce_scatter(in place)+obc_wait" : "obc_ireduce_scatter+obc_wait";
    } else {
        ctx->call = o->in_place ? "obc_reduce_scatter(in place)" : "obc_reduce_scatter";
    }
}

static void rs_fill(struct perf_ctx *ctx, uint64_t iter)
{
    size_t total = ctx->count * (size_t)ctx->nranks;
    perf_rdata_input(ctx, ctx->sendbuf, 0, total, ctx->rank, iter);
    if (ctx->recvbuf != NULL) {
        perf_rdata_poison(ctx, ctx->recvbuf, (size_t)ctx->rank * ctx->count, ctx->count, iter);
    }
}

static obc_result_t rs_run(struct perf_ctx *ctx)
{
    unsigned char *recv = rs_recv(ctx);
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r = obc_ireduce_scatter(ctx->sendbuf, recv, ctx->count, ctx->dtype, ctx->redop,
                                             ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_reduce_scatter(ctx->sendbuf, recv, ctx->count, ctx->dtype, ctx->redop, ctx->comm);
}

static uint64_t rs_check(const struct perf_ctx *ctx, uint64_t iter)
{
    size_t first = (size_t)ctx->rank * ctx->count;
    uint64_t wrong = perf_rdata_result_wrong(ctx, rs_recv(ctx), first, ctx->count, iter);
    if (ctx->recvbuf != NULL) {
        size_t total = ctx->count * (size_t)ctx->nranks;
        wrong += perf_rdata_input_wrong(ctx, ctx->sendbuf, 0, total, ctx->rank, iter);
    }
    return wrong;
}

const struct perf_op perf_op_reduce_scatter = {
    .name = "reduce_scatter",
    .coll = OBC_COLL_REDUCE_SCATTER,
    .has_data = true,
    .has_redop = true,
    .wrong_unit = "elements",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = busbw_factor_gather,
    .setup = rs_setup,
    .shape = rs_shape,
    .fill = rs_fill,
    .run = rs_run,
    .check = rs_check,
    .teardown = free_buffers,
};
