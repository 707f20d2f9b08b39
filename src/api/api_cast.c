/* SPDX-License-Identifier: MIT */
/*
 * api_cast.c - obc_broadcast_as: a broadcast whose bytes travel in a
 * narrower dtype (float32 as bfloat16 or float16).
 *
 * It is a pipeline of ordinary broadcasts of the wire dtype, one per piece
 * of OBC_CAST_CHUNK_BYTES wire bytes, through OBC_CAST_DEPTH staging
 * buffers of that size (allocated per call: memory bounded whatever the
 * count). The pieces are queued as async ops, so the communicator's
 * progress thread moves piece k while the caller's thread converts another:
 *
 *   root:    narrow k -> stage[k % D], queue bcast(stage[k % D]), widen it into recvbuf,
 *            narrow k+1 ... (waits for piece k-D before reusing its stage)
 *   readers: queue bcast(stage[0..D-1]); wait piece k, widen it into recvbuf,
 *            queue piece k+D into the stage just freed
 *
 * The root widens the very bytes it sends, so every rank, the root
 * included, ends bit-identical. Composing broadcasts keeps every algorithm
 * (eager, arena, CMA, the relays across hosts) available unchanged; the
 * price is one op per piece (a few us each: under 1% at 1 MiB pieces).
 *
 * Every piece carries the whole call in its arguments: dtype = the wire
 * dtype, count = the whole count, salt = a hash of (dtype, wire dtype,
 * count), so that the stamps (and the check mode's boards, which compare
 * dtype and count) tell calls with other dtypes or counts apart from the
 * first piece on.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "core/reduce.h"
#include "engine/engine.h"

#define CAST_MAX_DEPTH OBC_COMM_CAST_MAX_DEPTH

/* The (dtype, wire dtype) pairs with a conversion: float32 to a 16-bit float. */
static bool cast_pair(obc_dtype_t dtype, obc_dtype_t wire)
{
    return dtype == OBC_FLOAT32 && (wire == OBC_FLOAT16 || wire == OBC_BFLOAT16);
}

/* One pass of the conversion kernels of core/reduce.c (vectorised, round
 * to nearest even, NaN stays NaN, overflow to infinity). */
static void narrow(void *wire_out, const void *in, size_t n, obc_dtype_t wire)
{
    obc__red_finish(wire_out, in, n, wire, OBC_SUM, 1);
}

static void widen(void *out, const void *wire_in, size_t n, obc_dtype_t wire)
{
    obc__red_widen(out, wire_in, n, wire);
}

struct cast {
    obc_comm_t *comm;
    const unsigned char *send; /* root only */
    unsigned char *recv;
    size_t count;
    obc_dtype_t dtype, wire;
    int root;
    size_t piece; /* elements per piece */
    size_t npieces;
    int depth;
    uint64_t salt;
    unsigned char *stage[CAST_MAX_DEPTH];
    struct obc__op *op[CAST_MAX_DEPTH]; /* in flight in stage[i], or NULL */
    size_t op_piece[CAST_MAX_DEPTH]; /* which piece op[i] carries */
    obc_result_t res; /* the failure of the earliest piece that failed */
    size_t res_piece;
};

static size_t piece_len(const struct cast *c, size_t k)
{
    size_t left = c->count - k * c->piece;
    return left < c->piece ? left : c->piece;
}

static uint64_t cast_salt(obc_dtype_t dtype, obc_dtype_t wire, size_t count)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    uint64_t v[3] = {(uint64_t)dtype, (uint64_t)wire, (uint64_t)count};
    for (int i = 0; i < 3; i++) {
        h = (h ^ v[i]) * 0x100000001B3ull;
    }
    return h | 1; /* never 0: 0 is "a call of one op" */
}

/* Piece k failed with res. The call reports the earliest piece's failure,
 * whichever thread saw it first: when piece 0 finds a disagreement
 * (MISMATCH), piece 1 may be refused (ABORTED: the communicator broke)
 * before anyone waits for piece 0. */
static obc_result_t keep_failure(struct cast *c, obc_result_t res, size_t k)
{
    if (res != OBC_SUCCESS && (c->res == OBC_SUCCESS || k < c->res_piece)) {
        c->res = res;
        c->res_piece = k;
    }
    return res;
}

/* Queue piece k (its wire bytes in stage[k % depth]). */
static obc_result_t queue_piece(struct cast *c, size_t k)
{
    int b = (int)(k % (size_t)c->depth);
    struct obc__op *op = obc__op_new();
    if (op == NULL) {
        return keep_failure(
            c, obc__err_set(&c->comm->err, OBC_ERR_NO_MEMORY, "obc_broadcast_as: operation"), k);
    }
    obc__op_set_bcast(op, c->stage[b], c->stage[b], piece_len(c, k), c->wire, c->root);
    op->args.count = c->count;
    op->args.salt = c->salt;
    obc_result_t res = obc__engine_submit(c->comm->engine, op);
    if (res != OBC_SUCCESS) {
        obc__op_unref(op); /* the engine finished it (broken) and holds none */
        return keep_failure(c, res, k);
    }
    c->op[b] = op; /* ours; the engine holds its own */
    c->op_piece[b] = k;
    return OBC_SUCCESS;
}

/* Wait for the piece in stage b (if any). */
static obc_result_t settle(struct cast *c, int b)
{
    if (c->op[b] == NULL) {
        return OBC_SUCCESS;
    }
    obc_result_t res = obc__engine_wait_op(c->comm->engine, c->op[b]);
    obc__op_unref(c->op[b]);
    c->op[b] = NULL;
    return keep_failure(c, res, c->op_piece[b]);
}

static void run_root(struct cast *c)
{
    size_t esize = obc_dtype_size(c->dtype);
    for (size_t k = 0; k < c->npieces && c->res == OBC_SUCCESS; k++) {
        int b = (int)(k % (size_t)c->depth);
        if (settle(c, b) != OBC_SUCCESS) {
            break;
        }
        size_t n = piece_len(c, k), off = k * c->piece * esize;
        narrow(c->stage[b], c->send + off, n, c->wire);
        if (queue_piece(c, k) != OBC_SUCCESS) {
            break;
        }
        /* Reading the stage beside the transfer is safe: the root's op only
         * reads it. In place, send == recv and piece k is already narrowed. */
        widen(c->recv + off, c->stage[b], n, c->wire);
    }
}

static void run_reader(struct cast *c)
{
    size_t esize = obc_dtype_size(c->dtype);
    size_t first = c->npieces < (size_t)c->depth ? c->npieces : (size_t)c->depth;
    for (size_t k = 0; k < first; k++) {
        if (queue_piece(c, k) != OBC_SUCCESS) {
            break;
        }
    }
    for (size_t k = 0; k < c->npieces && c->res == OBC_SUCCESS; k++) {
        int b = (int)(k % (size_t)c->depth);
        if (settle(c, b) != OBC_SUCCESS) {
            break;
        }
        widen(c->recv + k * c->piece * esize, c->stage[b], piece_len(c, k), c->wire);
        if (k + (size_t)c->depth < c->npieces) {
            queue_piece(c, k + (size_t)c->depth);
        }
    }
}

/* A single rank: the same round trip, piece by piece, no communication. */
static void run_alone(struct cast *c)
{
    size_t esize = obc_dtype_size(c->dtype);
    for (size_t k = 0; k < c->npieces; k++) {
        size_t n = piece_len(c, k), off = k * c->piece * esize;
        narrow(c->stage[0], c->send + off, n, c->wire);
        widen(c->recv + off, c->stage[0], n, c->wire);
    }
}

static obc_result_t check_as(const void *sendbuf, void *recvbuf, size_t count, obc_dtype_t dtype,
                             obc_dtype_t wire, int root, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_bcast("obc_broadcast_as", sendbuf, recvbuf, count, dtype, root, comm));
    if (wire == dtype) {
        return OBC_SUCCESS;
    }
    if (obc_dtype_size(wire) == 0 || !cast_pair(dtype, wire)) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG,
                            "obc_broadcast_as: no conversion from dtype %d to wire dtype %d "
                            "(float32 travels as float16 or bfloat16)",
                            (int)dtype, (int)wire);
    }
    if (obc__group_active()) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG,
                            "obc_broadcast_as: a converting broadcast cannot join a group "
                            "(its pieces are queued as they are converted)");
    }
    return OBC_SUCCESS;
}

static obc_result_t cast_setup(struct cast *c)
{
    const struct obc__config *cfg = &c->comm->config;
    size_t wsize = obc_dtype_size(c->wire);
    size_t chunk = cfg->cast_chunk_bytes;
    if (chunk < 4096 || chunk > (256u << 20) || cfg->cast_depth < 2 ||
        cfg->cast_depth > CAST_MAX_DEPTH) {
        return obc__err_set(&c->comm->err, OBC_ERR_INVALID_ARG,
                            "OBC_CAST_CHUNK_BYTES=%zu (4 KiB .. 256 MiB) or OBC_CAST_DEPTH=%d "
                            "(2 .. %d) out of range",
                            chunk, cfg->cast_depth, CAST_MAX_DEPTH);
    }
    c->piece = chunk / wsize;
    c->npieces = (c->count + c->piece - 1) / c->piece;
    c->depth = cfg->cast_depth;
    size_t bytes = c->piece * wsize; /* a whole piece, whatever this call's count */
    int nstage = c->comm->nranks == 1 ? 1 : c->depth;
    if (c->count == 0) {
        return OBC_SUCCESS; /* the empty op carries no bytes */
    }
    if (c->comm->cast_stage_bytes != bytes) { /* first call, or OBC_CAST_CHUNK_BYTES differs */
        for (int i = 0; i < CAST_MAX_DEPTH; i++) {
            free(c->comm->cast_stage[i]);
            c->comm->cast_stage[i] = NULL;
        }
        c->comm->cast_stage_bytes = bytes;
    }
    for (int i = 0; i < nstage; i++) {
        if (c->comm->cast_stage[i] == NULL) {
            c->comm->cast_stage[i] = malloc(bytes);
        }
        if (c->comm->cast_stage[i] == NULL) {
            return obc__err_set(&c->comm->err, OBC_ERR_NO_MEMORY,
                                "obc_broadcast_as: staging buffer of %zu bytes", bytes);
        }
        c->stage[i] = c->comm->cast_stage[i];
    }
    return OBC_SUCCESS;
}

OBC_API obc_result_t obc_broadcast_as(const void *sendbuf, void *recvbuf, size_t count,
                                      obc_dtype_t dtype, obc_dtype_t wire_dtype, int root,
                                      obc_comm_t *comm)
{
    OBC_CHECK(check_as(sendbuf, recvbuf, count, dtype, wire_dtype, root, comm));
    if (wire_dtype == dtype) {
        return obc_broadcast(sendbuf, recvbuf, count, dtype, root, comm);
    }
    struct cast c = {.comm = comm,
                     .send = comm->rank == root ? sendbuf : NULL,
                     .recv = recvbuf,
                     .count = count,
                     .dtype = dtype,
                     .wire = wire_dtype,
                     .root = root,
                     .salt = cast_salt(dtype, wire_dtype, count)};
    c.res = cast_setup(&c);
    if (c.res == OBC_SUCCESS && comm->nranks == 1) {
        run_alone(&c);
    } else if (c.res == OBC_SUCCESS && count == 0) {
        /* No piece, but still one op, so that the ranks' calls stay in step
         * (and check mode sees this call). */
        c.npieces = 1;
        c.piece = 1;
        queue_piece(&c, 0);
        settle(&c, 0);
    } else if (c.res == OBC_SUCCESS) {
        if (comm->rank == root) {
            run_root(&c);
        } else {
            run_reader(&c);
        }
    }
    for (int b = 0; b < CAST_MAX_DEPTH; b++) {
        settle(&c, b); /* a failed call still waits for what it queued */
    }
    return c.res;
}
