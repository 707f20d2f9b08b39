/* SPDX-License-Identifier: MIT */
/*
 * perf_ops_p2p.c - obc-perf's sendrecv: an osu_latency-style ping-pong
 * between rank 0 and the last rank (so that with OBC_HOST_ID=rank/K, or on
 * several hosts, it crosses the network); ranks in between only take part
 * in the timing barriers. Rank 0 sends the pattern of the iteration and
 * receives it back; the last rank receives it and sends its copy back, so
 * both received buffers are validated, and rank 0's sendbuf must be
 * unchanged. The time is the round trip; busbw (factor 2) is the one-way
 * bandwidth, 2 x bytes / round trip, and half the round trip is the
 * one-way latency that osu_latency prints (bench/anchors/mpi_pingpong.c
 * measures MPI the same way).
 */
#include <stdlib.h>

#include "perf.h"

static double busbw_factor_two(int nranks)
{
    (void)nranks;
    return 2.0;
}

static int partner(const struct perf_ctx *ctx)
{
    if (ctx->rank == 0) {
        return ctx->nranks - 1;
    }
    return ctx->rank == ctx->nranks - 1 ? 0 : -1;
}

static void sr_setup(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    size_t count = o->max_bytes / ctx->dsize > 0 ? o->max_bytes / ctx->dsize : 1;
    if (partner(ctx) >= 0) {
        ctx->recvbuf = perf_data_alloc_or_exit(count * ctx->dsize);
        ctx->sendbuf = ctx->rank == 0 ? perf_data_alloc_or_exit(count * ctx->dsize) : NULL;
    }
    ctx->call = o->async ? "obc_isend+obc_irecv+obc_wait" : "obc_send+obc_recv";
}

static void sr_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    ctx->count = want_bytes / ctx->dsize > 0 ? want_bytes / ctx->dsize : 1;
    ctx->nbytes = ctx->count * ctx->dsize;
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = ctx->recvbuf != NULL ? ctx->nbytes : 0;
}

static void sr_fill(struct perf_ctx *ctx, uint64_t iter)
{
    if (ctx->sendbuf != NULL) {
        perf_data_fill(ctx->sendbuf, ctx->nbytes, iter, false);
    }
    if (ctx->recvbuf != NULL) {
        perf_data_fill(ctx->recvbuf, ctx->nbytes, iter, true);
    }
}

/* One message, blocking or through a request. */
static obc_result_t one(struct perf_ctx *ctx, bool send, void *buf, int peer)
{
    obc_request_t *req = NULL;
    obc_result_t r;
    if (!ctx->opts->async) {
        return send ? obc_send(buf, ctx->count, ctx->dtype, peer, ctx->comm)
                    : obc_recv(buf, ctx->count, ctx->dtype, peer, ctx->comm);
    }
    r = send ? obc_isend(buf, ctx->count, ctx->dtype, peer, ctx->comm, &req)
             : obc_irecv(buf, ctx->count, ctx->dtype, peer, ctx->comm, &req);
    return r != OBC_SUCCESS ? r : obc_wait(req);
}

static obc_result_t sr_run(struct perf_ctx *ctx)
{
    int peer = partner(ctx);
    obc_result_t r = OBC_SUCCESS;
    if (peer < 0) {
        return OBC_SUCCESS;
    }
    if (ctx->rank == 0) {
        r = one(ctx, true, ctx->sendbuf, peer);
        return r != OBC_SUCCESS ? r : one(ctx, false, ctx->recvbuf, peer);
    }
    r = one(ctx, false, ctx->recvbuf, peer);
    return r != OBC_SUCCESS ? r : one(ctx, true, ctx->recvbuf, peer);
}

static uint64_t sr_check(const struct perf_ctx *ctx, uint64_t iter)
{
    uint64_t wrong = 0;
    if (ctx->recvbuf != NULL) {
        wrong += perf_data_wrong(ctx->recvbuf, ctx->nbytes, iter);
    }
    if (ctx->sendbuf != NULL) {
        wrong += perf_data_wrong(ctx->sendbuf, ctx->nbytes, iter);
    }
    return wrong;
}

static void sr_teardown(struct perf_ctx *ctx)
{
    perf_data_free(ctx->sendbuf);
    perf_data_free(ctx->recvbuf);
    ctx->sendbuf = NULL;
    ctx->recvbuf = NULL;
}

const struct perf_op perf_op_sendrecv = {
    .name = "sendrecv",
    .coll = OBC_COLL_BROADCAST, /* unused: is_p2p */
    .is_p2p = true,
    .has_root = false,
    .has_data = true,
    .out_on_root_only = true, /* -X damages rank 0's copy (-r stays 0): ranks between are idle */
    .wrong_unit = "bytes",
    .default_dtype = OBC_UINT8, /* as osu_latency: bytes */
    .busbw_factor = busbw_factor_two,
    .setup = sr_setup,
    .shape = sr_shape,
    .fill = sr_fill,
    .run = sr_run,
    .check = sr_check,
    .teardown = sr_teardown,
};
