/* SPDX-License-Identifier: MIT */
/*
 * perf_ops_personal.c - the op table entries of gather, scatter and alltoall
 * (see perf_ops.c for the contract of each function).
 *
 * Sizes and busbw as nccl-tests (and bench/anchors/mpi_coll_bench.c): bytes
 * is the whole buffer of nranks blocks (gather: the root's recvbuf; scatter:
 * the root's sendbuf; alltoall: each rank's sendbuf, so a rank sends
 * bytes / nranks to each peer) and busbw = algbw x (n-1)/n for all three.
 * In place follows obc.h: gather's root sends from its own block of
 * recvbuf, scatter's root receives into its own block of sendbuf, alltoall
 * passes sendbuf == recvbuf. Every block has its own byte pattern, seeded by
 * (iteration, source rank, destination rank), so a block delivered to the
 * wrong rank or at the wrong offset counts as wrong bytes; inputs the call
 * must not modify are checked too.
 */
#include <stdlib.h>

#include "perf.h"

double perf_busbw_personal(int nranks)
{
    return nranks > 0 ? (double)(nranks - 1) / nranks : 0.0;
}

uint64_t perf_block_seed(const struct perf_ctx *ctx, uint64_t iter, int src, int dst)
{
    uint64_t n = (uint64_t)ctx->nranks;
    return (iter * n + (uint64_t)src) * n + (uint64_t)dst;
}

static size_t blk(const struct perf_ctx *ctx)
{
    return ctx->count * ctx->dsize;
}

/* nbytes / nranks per block, whole elements, never a count of 0. */
static void shape_blocks(struct perf_ctx *ctx, size_t want_bytes)
{
    ctx->count = want_bytes / ctx->dsize / (size_t)ctx->nranks;
    if (ctx->count == 0) {
        ctx->count = 1;
    }
    ctx->nbytes = ctx->count * ctx->dsize * (size_t)ctx->nranks;
}

static bool is_root(const struct perf_ctx *ctx)
{
    return ctx->rank == ctx->opts->root;
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

static const char *call_name(const struct perf_ctx *ctx, const char *plain, const char *inplace,
                             const char *async, const char *async_inplace)
{
    const struct perf_opts *o = ctx->opts;
    return o->async ? (o->in_place ? async_inplace : async) : (o->in_place ? inplace : plain);
}

/* ---- gather: the root's block r comes from rank r ----------------------- */

/* Every rank has a one-block sendbuf, the root an n-block recvbuf; in place
 * the root sends from its own block of recvbuf (sendbuf == recvbuf). */
static void gather_setup(struct perf_ctx *ctx)
{
    shape_blocks(ctx, ctx->opts->max_bytes);
    if (is_root(ctx)) {
        ctx->recvbuf = perf_data_alloc_or_exit(ctx->nbytes);
    }
    bool own_block = is_root(ctx) && ctx->opts->in_place;
    ctx->sendbuf = own_block ? ctx->recvbuf : perf_data_alloc_or_exit(blk(ctx));
    ctx->call = call_name(ctx, "obc_gather", "obc_gather(in place)", "obc_igather+obc_wait",
                          "obc_igather(in place)+obc_wait");
}

static void gather_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    shape_blocks(ctx, want_bytes);
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = is_root(ctx) ? ctx->nbytes : 0;
}

static void gather_fill(struct perf_ctx *ctx, uint64_t iter)
{
    int root = ctx->opts->root;
    size_t b = blk(ctx);
    if (ctx->sendbuf != ctx->recvbuf) {
        perf_data_fill(ctx->sendbuf, b, perf_block_seed(ctx, iter, ctx->rank, root), false);
    }
    if (!is_root(ctx)) {
        return;
    }
    for (int r = 0; r < ctx->nranks; r++) {
        bool input = r == root && ctx->sendbuf == ctx->recvbuf;
        perf_data_fill(ctx->recvbuf + (size_t)r * b, b, perf_block_seed(ctx, iter, r, root),
                       !input);
    }
}

static obc_result_t gather_run(struct perf_ctx *ctx)
{
    int root = ctx->opts->root;
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r =
            obc_igather(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, root, ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_gather(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, root, ctx->comm);
}

static uint64_t gather_check(const struct perf_ctx *ctx, uint64_t iter)
{
    int root = ctx->opts->root;
    size_t b = blk(ctx);
    uint64_t wrong = 0;
    if (ctx->sendbuf != ctx->recvbuf) {
        wrong += perf_data_wrong(ctx->sendbuf, b, perf_block_seed(ctx, iter, ctx->rank, root));
    }
    if (is_root(ctx)) {
        for (int r = 0; r < ctx->nranks; r++) {
            wrong += perf_data_wrong(ctx->recvbuf + (size_t)r * b, b,
                                     perf_block_seed(ctx, iter, r, root));
        }
    }
    return wrong;
}

const struct perf_op perf_op_gather = {
    .name = "gather",
    .coll = OBC_COLL_GATHER,
    .has_root = true,
    .has_data = true,
    .out_on_root_only = true,
    .wrong_unit = "bytes",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = perf_busbw_personal,
    .setup = gather_setup,
    .shape = gather_shape,
    .fill = gather_fill,
    .run = gather_run,
    .check = gather_check,
    .teardown = free_buffers,
};

/* ---- scatter: rank r receives the root's block r ------------------------ */

/* The root has an n-block sendbuf; every rank a one-block recvbuf, except an
 * in-place root, whose block stays in sendbuf (recvbuf == sendbuf). */
static void scatter_setup(struct perf_ctx *ctx)
{
    shape_blocks(ctx, ctx->opts->max_bytes);
    if (is_root(ctx)) {
        ctx->sendbuf = perf_data_alloc_or_exit(ctx->nbytes);
    }
    bool own_block = is_root(ctx) && ctx->opts->in_place;
    ctx->recvbuf = own_block ? ctx->sendbuf : perf_data_alloc_or_exit(blk(ctx));
    ctx->call = call_name(ctx, "obc_scatter", "obc_scatter(in place)", "obc_iscatter+obc_wait",
                          "obc_iscatter(in place)+obc_wait");
}

static void scatter_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    shape_blocks(ctx, want_bytes);
    bool own_block = ctx->recvbuf == ctx->sendbuf;
    ctx->out = own_block ? NULL : ctx->recvbuf; /* an in-place root outputs nothing */
    ctx->out_nbytes = own_block ? 0 : blk(ctx);
}

static void scatter_fill(struct perf_ctx *ctx, uint64_t iter)
{
    int root = ctx->opts->root;
    size_t b = blk(ctx);
    if (is_root(ctx)) {
        for (int r = 0; r < ctx->nranks; r++) {
            perf_data_fill(ctx->sendbuf + (size_t)r * b, b, perf_block_seed(ctx, iter, root, r),
                           false);
        }
    }
    if (ctx->recvbuf != ctx->sendbuf) {
        perf_data_fill(ctx->recvbuf, b, perf_block_seed(ctx, iter, root, ctx->rank), true);
    }
}

static obc_result_t scatter_run(struct perf_ctx *ctx)
{
    int root = ctx->opts->root;
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r =
            obc_iscatter(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, root, ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_scatter(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, root, ctx->comm);
}

static uint64_t scatter_check(const struct perf_ctx *ctx, uint64_t iter)
{
    int root = ctx->opts->root;
    size_t b = blk(ctx);
    uint64_t wrong = 0;
    if (is_root(ctx)) {
        for (int r = 0; r < ctx->nranks; r++) {
            wrong += perf_data_wrong(ctx->sendbuf + (size_t)r * b, b,
                                     perf_block_seed(ctx, iter, root, r));
        }
    }
    if (ctx->recvbuf != ctx->sendbuf) {
        wrong += perf_data_wrong(ctx->recvbuf, b, perf_block_seed(ctx, iter, root, ctx->rank));
    }
    return wrong;
}

const struct perf_op perf_op_scatter = {
    .name = "scatter",
    .coll = OBC_COLL_SCATTER,
    .has_root = true,
    .has_data = true,
    .wrong_unit = "bytes",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = perf_busbw_personal,
    .setup = scatter_setup,
    .shape = scatter_shape,
    .fill = scatter_fill,
    .run = scatter_run,
    .check = scatter_check,
    .teardown = free_buffers,
};

/* ---- alltoall: block j of rank i's sendbuf lands in block i of rank j's -- */

static void alltoall_setup(struct perf_ctx *ctx)
{
    shape_blocks(ctx, ctx->opts->max_bytes);
    ctx->recvbuf = perf_data_alloc_or_exit(ctx->nbytes);
    ctx->sendbuf = ctx->opts->in_place ? ctx->recvbuf : perf_data_alloc_or_exit(ctx->nbytes);
    ctx->call = call_name(ctx, "obc_alltoall", "obc_alltoall(in place)", "obc_ialltoall+obc_wait",
                          "obc_ialltoall(in place)+obc_wait");
}

static void alltoall_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    shape_blocks(ctx, want_bytes);
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = ctx->nbytes;
}

static void alltoall_fill(struct perf_ctx *ctx, uint64_t iter)
{
    size_t b = blk(ctx);
    bool in_place = ctx->sendbuf == ctx->recvbuf;
    for (int j = 0; j < ctx->nranks; j++) {
        perf_data_fill(ctx->sendbuf + (size_t)j * b, b, perf_block_seed(ctx, iter, ctx->rank, j),
                       false);
        if (!in_place) {
            perf_data_fill(ctx->recvbuf + (size_t)j * b, b,
                           perf_block_seed(ctx, iter, j, ctx->rank), true);
        }
    }
}

static obc_result_t alltoall_run(struct perf_ctx *ctx)
{
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r =
            obc_ialltoall(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_alltoall(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, ctx->comm);
}

static uint64_t alltoall_check(const struct perf_ctx *ctx, uint64_t iter)
{
    size_t b = blk(ctx);
    uint64_t wrong = 0;
    for (int j = 0; j < ctx->nranks; j++) {
        wrong += perf_data_wrong(ctx->recvbuf + (size_t)j * b, b,
                                 perf_block_seed(ctx, iter, j, ctx->rank));
        if (ctx->sendbuf != ctx->recvbuf) {
            wrong += perf_data_wrong(ctx->sendbuf + (size_t)j * b, b,
                                     perf_block_seed(ctx, iter, ctx->rank, j));
        }
    }
    return wrong;
}

const struct perf_op perf_op_alltoall = {
    .name = "alltoall",
    .coll = OBC_COLL_ALLTOALL,
    .has_data = true,
    .wrong_unit = "bytes",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = perf_busbw_personal,
    .setup = alltoall_setup,
    .shape = alltoall_shape,
    .fill = alltoall_fill,
    .run = alltoall_run,
    .check = alltoall_check,
    .teardown = free_buffers,
};
