/* SPDX-License-Identifier: MIT */
/*
 * perf_ops_alltoallv.c - the op table entry of alltoallv, with uneven
 * blocks as a mixture of experts routes them (see perf_ops.c for the
 * contract of each function).
 *
 * Sizes as alltoall: bytes is the nominal whole buffer, so a block is
 * about bytes / nranks. The block from rank i to rank j holds
 * unit x ((i + 2j) mod 3 + 1) elements, unit = half a nominal block (at
 * least 1): every rank sends and receives blocks of one, two and three
 * units, the same pattern as bench/anchors/mpi_coll_bench.c's alltoallv,
 * so the two move the same bytes. Blocks are packed in rank order. Every
 * block has its own byte pattern, seeded by (iteration, source,
 * destination); the sendbuf is checked too. busbw = algbw x (n-1)/n, from
 * the nominal bytes. There is no in-place form (obc.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "perf.h"

/* ctx->vec holds four arrays of nranks entries, as obc_alltoallv takes them. */
enum { SENDCOUNTS, SDISPLS, RECVCOUNTS, RDISPLS, NARRAYS };

static size_t *arr(const struct perf_ctx *ctx, int which)
{
    return ctx->vec + (size_t)which * (size_t)ctx->nranks;
}

static size_t units_of(int src, int dst)
{
    return (size_t)((src + 2 * dst) % 3 + 1);
}

/* The unit of a requested size: half of bytes / nranks, at least one element. */
static size_t unit_of(const struct perf_ctx *ctx, size_t want_bytes, size_t *count)
{
    *count = want_bytes / ctx->dsize / (size_t)ctx->nranks;
    if (*count == 0) {
        *count = 1;
    }
    return *count / 2 > 0 ? *count / 2 : 1;
}

static void alltoallv_setup(struct perf_ctx *ctx)
{
    size_t count;
    if (ctx->opts->in_place) {
        fprintf(stderr, "obc-perf: alltoallv has no in-place form (-i 0)\n");
        exit(2);
    }
    size_t most = 3 * unit_of(ctx, ctx->opts->max_bytes, &count) * (size_t)ctx->nranks;
    ctx->sendbuf = perf_data_alloc_or_exit(most * ctx->dsize);
    ctx->recvbuf = perf_data_alloc_or_exit(most * ctx->dsize);
    ctx->vec = malloc(sizeof(size_t) * NARRAYS * (size_t)ctx->nranks);
    if (ctx->vec == NULL) {
        fprintf(stderr, "obc-perf: out of memory\n");
        exit(1);
    }
    ctx->call = ctx->opts->async ? "obc_ialltoallv+obc_wait" : "obc_alltoallv";
}

static void alltoallv_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    size_t unit = unit_of(ctx, want_bytes, &ctx->count), sent = 0, got = 0;
    for (int p = 0; p < ctx->nranks; p++) {
        arr(ctx, SENDCOUNTS)[p] = unit * units_of(ctx->rank, p);
        arr(ctx, SDISPLS)[p] = sent;
        sent += arr(ctx, SENDCOUNTS)[p];
        arr(ctx, RECVCOUNTS)[p] = unit * units_of(p, ctx->rank);
        arr(ctx, RDISPLS)[p] = got;
        got += arr(ctx, RECVCOUNTS)[p];
    }
    ctx->nbytes = ctx->count * ctx->dsize * (size_t)ctx->nranks;
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = got * ctx->dsize;
}

static void alltoallv_fill(struct perf_ctx *ctx, uint64_t iter)
{
    size_t es = ctx->dsize;
    for (int p = 0; p < ctx->nranks; p++) {
        perf_data_fill(ctx->sendbuf + arr(ctx, SDISPLS)[p] * es, arr(ctx, SENDCOUNTS)[p] * es,
                       perf_block_seed(ctx, iter, ctx->rank, p), false);
        perf_data_fill(ctx->recvbuf + arr(ctx, RDISPLS)[p] * es, arr(ctx, RECVCOUNTS)[p] * es,
                       perf_block_seed(ctx, iter, p, ctx->rank), true);
    }
}

static obc_result_t alltoallv_run(struct perf_ctx *ctx)
{
    const size_t *sc = arr(ctx, SENDCOUNTS), *sd = arr(ctx, SDISPLS);
    const size_t *rc = arr(ctx, RECVCOUNTS), *rd = arr(ctx, RDISPLS);
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r =
            obc_ialltoallv(ctx->sendbuf, sc, sd, ctx->recvbuf, rc, rd, ctx->dtype, ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_alltoallv(ctx->sendbuf, sc, sd, ctx->recvbuf, rc, rd, ctx->dtype, ctx->comm);
}

static uint64_t alltoallv_check(const struct perf_ctx *ctx, uint64_t iter)
{
    size_t es = ctx->dsize;
    uint64_t wrong = 0;
    for (int p = 0; p < ctx->nranks; p++) {
        wrong +=
            perf_data_wrong(ctx->recvbuf + arr(ctx, RDISPLS)[p] * es, arr(ctx, RECVCOUNTS)[p] * es,
                            perf_block_seed(ctx, iter, p, ctx->rank));
        wrong +=
            perf_data_wrong(ctx->sendbuf + arr(ctx, SDISPLS)[p] * es, arr(ctx, SENDCOUNTS)[p] * es,
                            perf_block_seed(ctx, iter, ctx->rank, p));
    }
    return wrong;
}

static void alltoallv_teardown(struct perf_ctx *ctx)
{
    perf_data_free(ctx->sendbuf);
    perf_data_free(ctx->recvbuf);
    free(ctx->vec);
    ctx->sendbuf = ctx->recvbuf = NULL;
    ctx->vec = NULL;
}

const struct perf_op perf_op_alltoallv = {
    .name = "alltoallv",
    .coll = OBC_COLL_ALLTOALLV,
    .has_data = true,
    .wrong_unit = "bytes",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = perf_busbw_personal,
    .setup = alltoallv_setup,
    .shape = alltoallv_shape,
    .fill = alltoallv_fill,
    .run = alltoallv_run,
    .check = alltoallv_check,
    .teardown = alltoallv_teardown,
};
