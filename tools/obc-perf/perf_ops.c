/* SPDX-License-Identifier: MIT */
/*
 * perf_ops.c - the op table, and its broadcast and barrier entries: for each
 * collective obc-perf can measure, how to allocate its buffers, size a call,
 * fill inputs and poison outputs, make the timed call and count wrong bytes
 * afterwards, plus its busbw factor. The reductions and allgather live in
 * perf_ops_reduce.c, gather, scatter and alltoall in perf_ops_personal.c,
 * alltoallv and allgatherv in perf_ops_alltoallv.c and perf_ops_allgatherv.c.
 *
 * To add a collective, write those functions and one table entry. nccl-tests'
 * busbw factors, which make busbw comparable across collectives: allreduce
 * 2(n-1)/n, allgather and reduce_scatter (n-1)/n, broadcast and reduce 1.
 * For allgather and reduce_scatter nccl-tests counts the size as the whole
 * gathered buffer, so their shape() divides by nranks.
 */
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static double busbw_factor_one(int nranks)
{
    (void)nranks;
    return 1.0;
}

/* Whole elements only, and never a count of 0 (a zero-length call measures nothing). */
static void shape_elements(struct perf_ctx *ctx, size_t want_bytes)
{
    ctx->count = want_bytes / ctx->dsize;
    if (ctx->count == 0) {
        ctx->count = 1;
    }
    ctx->nbytes = ctx->count * ctx->dsize;
}

static void bcast_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    shape_elements(ctx, want_bytes);
    ctx->out = ctx->recvbuf;
    ctx->out_nbytes = ctx->nbytes;
}

/* ---- broadcast -------------------------------------------------------- */

/* Out of place, only the root has a separate sendbuf: other ranks pass NULL,
 * as the API allows, so that case is exercised too. */
static void bcast_setup(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    shape_elements(ctx, o->max_bytes);
    ctx->recvbuf = perf_data_alloc_or_exit(ctx->nbytes);
    if (o->in_place) {
        ctx->sendbuf = ctx->recvbuf;
        ctx->call = o->async ? "obc_ibroadcast(in place)+obc_wait" : "obc_bcast";
    } else {
        ctx->sendbuf = ctx->rank == o->root ? perf_data_alloc_or_exit(ctx->nbytes) : NULL;
        ctx->call = o->async ? "obc_ibroadcast+obc_wait" : "obc_broadcast";
    }
}

static void bcast_fill(struct perf_ctx *ctx, uint64_t iter)
{
    bool is_root = ctx->rank == ctx->opts->root;
    if (ctx->sendbuf != NULL && ctx->sendbuf != ctx->recvbuf) {
        perf_data_fill(ctx->sendbuf, ctx->nbytes, iter, false);
    }
    /* The root's recvbuf is poisoned too out of place: it must receive a copy. */
    bool recv_is_input = is_root && ctx->sendbuf == ctx->recvbuf;
    perf_data_fill(ctx->recvbuf, ctx->nbytes, iter, !recv_is_input);
}

static obc_result_t bcast_run(struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    if (o->async) {
        obc_request_t *req = NULL;
        obc_result_t r = obc_ibroadcast(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, o->root,
                                        ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    if (o->in_place) {
        return obc_bcast(ctx->recvbuf, ctx->count, ctx->dtype, o->root, ctx->comm);
    }
    return obc_broadcast(ctx->sendbuf, ctx->recvbuf, ctx->count, ctx->dtype, o->root, ctx->comm);
}

/* The root's sendbuf is checked as well: the API promises never to modify it. */
static uint64_t bcast_check(const struct perf_ctx *ctx, uint64_t iter)
{
    uint64_t wrong = perf_data_wrong(ctx->recvbuf, ctx->nbytes, iter);
    if (ctx->sendbuf != NULL && ctx->sendbuf != ctx->recvbuf) {
        wrong += perf_data_wrong(ctx->sendbuf, ctx->nbytes, iter);
    }
    return wrong;
}

static void bcast_teardown(struct perf_ctx *ctx)
{
    if (ctx->sendbuf != ctx->recvbuf) {
        perf_data_free(ctx->sendbuf);
    }
    perf_data_free(ctx->recvbuf);
    ctx->sendbuf = NULL;
    ctx->recvbuf = NULL;
}

/* ---- barrier: no data, one row of bytes 0 ------------------------------ */

static void barrier_setup(struct perf_ctx *ctx)
{
    ctx->call = ctx->opts->async ? "obc_ibarrier+obc_wait" : "obc_barrier";
}

static void barrier_shape(struct perf_ctx *ctx, size_t want_bytes)
{
    (void)want_bytes;
    ctx->count = 0;
    ctx->nbytes = 0;
    ctx->out = NULL;
    ctx->out_nbytes = 0;
}

static void barrier_fill(struct perf_ctx *ctx, uint64_t iter)
{
    (void)ctx;
    (void)iter;
}

static obc_result_t barrier_run(struct perf_ctx *ctx)
{
    if (ctx->opts->async) {
        obc_request_t *req = NULL;
        obc_result_t r = obc_ibarrier(ctx->comm, &req);
        return r != OBC_SUCCESS ? r : obc_wait(req);
    }
    return obc_barrier(ctx->comm);
}

static uint64_t barrier_check(const struct perf_ctx *ctx, uint64_t iter)
{
    (void)ctx;
    (void)iter;
    return 0;
}

static void barrier_teardown(struct perf_ctx *ctx)
{
    (void)ctx;
}

static const struct perf_op op_broadcast = {
    .name = "broadcast",
    .coll = OBC_COLL_BROADCAST,
    .has_root = true,
    .has_data = true,
    .wrong_unit = "bytes",
    .default_dtype = OBC_FLOAT32, /* as nccl-tests' -d float */
    .busbw_factor = busbw_factor_one,
    .setup = bcast_setup,
    .shape = bcast_shape,
    .fill = bcast_fill,
    .run = bcast_run,
    .check = bcast_check,
    .teardown = bcast_teardown,
};

static const struct perf_op op_barrier = {
    .name = "barrier",
    .coll = OBC_COLL_BARRIER,
    .has_root = false,
    .has_data = false,
    .wrong_unit = "bytes",
    .default_dtype = OBC_UINT8,
    .busbw_factor = busbw_factor_one,
    .setup = barrier_setup,
    .shape = barrier_shape,
    .fill = barrier_fill,
    .run = barrier_run,
    .check = barrier_check,
    .teardown = barrier_teardown,
};

static const struct perf_op *const op_table[] = {
    &op_broadcast,     &op_barrier,        &perf_op_allreduce,
    &perf_op_reduce,   &perf_op_allgather, &perf_op_reduce_scatter,
    &perf_op_sendrecv, &perf_op_gather,    &perf_op_scatter,
    &perf_op_alltoall, &perf_op_alltoallv, &perf_op_allgatherv,
};

#define N_OPS (sizeof(op_table) / sizeof(op_table[0]))

const struct perf_op *perf_op_find(const char *name)
{
    for (size_t i = 0; i < N_OPS; i++) {
        if (strcmp(op_table[i]->name, name) == 0) {
            return op_table[i];
        }
    }
    return NULL;
}

void perf_op_list(FILE *out)
{
    fprintf(out, "collectives:");
    for (size_t i = 0; i < N_OPS; i++) {
        fprintf(out, " %s", op_table[i]->name);
    }
    fprintf(out, "\n");
}
