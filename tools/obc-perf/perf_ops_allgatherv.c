/* SPDX-License-Identifier: MIT */
/*
 * perf_ops_allgatherv.c - the op table entry of allgatherv, with uneven
 * blocks (see perf_ops.c for the contract of each function).
 *
 * Sizes as allgather: bytes is the nominal whole gathered buffer, so a
 * nominal block is about bytes / nranks. Rank r's block holds
 * unit x (r mod 3 + 1) elements, unit = half a nominal block (at least 1):
 * blocks of one, two and three units side by side, the same pattern as
 * bench/anchors/mpi_coll_bench.c's allgatherv, so the two move the same
 * bytes. Blocks are packed in rank order (displs = prefix sums of the
 * counts), and the arrays are the same on every rank, as obc.h requires.
 * Every block has its own byte pattern, seeded by (iteration, owner), so a
 * block at another rank's displacement counts as wrong bytes; out of place
 * the sendbuf is checked too. In place follows obc.h: sendbuf == recvbuf,
 * the rank's own block already at its displacement. busbw = algbw x
 * (n-1)/n, from the nominal bytes, as allgather's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "perf.h"

/* ctx->vec holds two arrays of nranks entries, as obc_allgatherv takes them. */
enum { RECVCOUNTS, DISPLS, NARRAYS };

static size_t *arr(const struct perf_ctx *ctx, int which)
{
    return ctx->vec + (size_t)which * (size_t)ctx->nranks;
}

static size_t units_of(int owner)
{
    return (size_t)(owner % 3 + 1);
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

/* Every rank receives the same copy of a block, so its pattern depends on
 * the owner alone: perf_block_seed's (owner, owner) entry, distinct for
 * every iteration and owner. */
static uint64_t owner_seed(const struct perf_ctx *ctx, uint64_t iter, int owner)
{
    return perf_block_seed(ctx, iter, owner, owner);
}

static void allgatherv_setup(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    size_t count;
    size_t unit = unit_of(ctx, o->max_bytes, &count);
    /* Blocks of up to 3 units; a unit is half a nominal block, or all of a
     * one-element one, so never more than a nominal block. */
    ctx->recvbuf = perf_data_alloc_or_exit(3 * unit * (size_t)ctx->nranks * ctx->dsize);
    ctx->sendbuf = o->in_place ? ctx->recvbuf : perf_data_alloc_or_exit(3 * unit * ctx->dsize);
    ctx->vec = malloc(sizeof(size_t) * NARRAYS * (size_t)ctx->nranks);
    if (ctx->vec == NULL) {
        fprintf(stderr, "obc-perf: out of memory\n");
        exit(1);
    }
    if (o->async) {
        ctx->call = o->in_place ? "obc_iallgatherv(in place)+obc_wait" : "obc_iallgatherv+obc_wait";
    } else {
        ctx->call = o->in_place ? "obc_allgatherv(in place)" : "obc_allgatherv";
    }
}

static void allgatherv_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    size_t unit = unit_of(ctx, want_bytes, &ctx->count), got = 0;
    for (int p = 0; p < ctx->nranks; p++) {
        arr(ctx, RECVCOUNTS)[p] = unit * units_of(p);
        arr(ctx, DISPLS)[p] = got;
        got += arr(ctx, RECVCOUNTS)[p];
    }
    ctx->nbytes = ctx->count * ctx->dsize * (size_t)ctx->nranks;
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = got * ctx->dsize;
}

/* In place the own block is the input: written with the pattern, not poisoned. */
static void allgatherv_fill(struct perf_ctx *ctx, uint64_t iter)
{
    size_t es = ctx->dsize;
    bool in_place = ctx->sendbuf == ctx->recvbuf;
    if (!in_place) {
        perf_data_fill(ctx->sendbuf, arr(ctx, RECVCOUNTS)[ctx->rank] * es,
                       owner_seed(ctx, iter, ctx->rank), false);
    }
    for (int p = 0; p < ctx->nranks; p++) {
        perf_data_fill(ctx->recvbuf + arr(ctx, DISPLS)[p] * es, arr(ctx, RECVCOUNTS)[p] * es,
                       owner_seed(ctx, iter, p), !(in_place && p == ctx->rank));
    }
}

static obc_result_t allgatherv_run(struct perf_ctx *ctx)
{
    const size_t *rc = arr(ctx, RECVCOUNTS), *rd = arr(ctx, DISPLS);
    size_t sendcount = rc[ctx->rank]; /* ignored in place, required equal out of place */
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r = obc_iallgatherv(ctx->sendbuf, sendcount, ctx->recvbuf, rc, rd, ctx->dtype,
                                         ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_allgatherv(ctx->sendbuf, sendcount, ctx->recvbuf, rc, rd, ctx->dtype, ctx->comm);
}

/* Every block of recvbuf, the own one included (in place it must survive
 * the call), and out of place the sendbuf, which the call must not modify. */
static uint64_t allgatherv_check(const struct perf_ctx *ctx, uint64_t iter)
{
    size_t es = ctx->dsize;
    uint64_t wrong = 0;
    for (int p = 0; p < ctx->nranks; p++) {
        wrong += perf_data_wrong(ctx->recvbuf + arr(ctx, DISPLS)[p] * es,
                                 arr(ctx, RECVCOUNTS)[p] * es, owner_seed(ctx, iter, p));
    }
    if (ctx->sendbuf != ctx->recvbuf) {
        wrong += perf_data_wrong(ctx->sendbuf, arr(ctx, RECVCOUNTS)[ctx->rank] * es,
                                 owner_seed(ctx, iter, ctx->rank));
    }
    return wrong;
}

static void allgatherv_teardown(struct perf_ctx *ctx)
{
    if (ctx->sendbuf != ctx->recvbuf) {
        perf_data_free(ctx->sendbuf);
    }
    perf_data_free(ctx->recvbuf);
    free(ctx->vec);
    ctx->sendbuf = ctx->recvbuf = NULL;
    ctx->vec = NULL;
}

const struct perf_op perf_op_allgatherv = {
    .name = "allgatherv",
    .coll = OBC_COLL_ALLGATHERV,
    .has_data = true,
    .wrong_unit = "bytes",
    .default_dtype = OBC_FLOAT32,
    .busbw_factor = perf_busbw_personal,
    .setup = allgatherv_setup,
    .shape = allgatherv_shape,
    .fill = allgatherv_fill,
    .run = allgatherv_run,
    .check = allgatherv_check,
    .teardown = allgatherv_teardown,
};
