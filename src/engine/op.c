/* SPDX-License-Identifier: MIT */
/*
 * op.c - the life of one operation: filling its arguments, reference
 * counting (a queued op is shared by the engine and the user's requests),
 * and its end (the private futex word `done` that a waiter sleeps on, in
 * the one wait of wait.c, and that the finishing thread wakes).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/engine_impl.h"
#include "platform/platform.h"

struct obc__op *obc__op_new(void)
{
    struct obc__op *op = aligned_alloc(64, (sizeof(struct obc__op) + 63) / 64 * 64);
    if (op != NULL) {
        obc__op_clear(op);
        atomic_init(&op->refs, 1);
    }
    return op;
}

void obc__op_clear(struct obc__op *op)
{
    memset(op, 0, offsetof(struct obc__op, state));
}

void obc__op_ref(struct obc__op *op)
{
    atomic_fetch_add_explicit(&op->refs, 1, memory_order_relaxed);
}

void obc__op_unref(struct obc__op *op)
{
    if (atomic_fetch_sub_explicit(&op->refs, 1, memory_order_acq_rel) == 1) {
        free(op->fused);
        free(op->vec);
        free(op);
    }
}

void obc__op_set_coll(struct obc__op *op, obc_coll_t coll, const void *sendbuf, void *recvbuf,
                      size_t count, obc_dtype_t dtype, obc_redop_t redop, int root)
{
    size_t nbytes = count * obc_dtype_size(dtype);
    op->args.coll = coll;
    op->args.root = root;
    op->args.dtype = dtype;
    op->args.redop = redop;
    op->args.count = count;
    op->args.nbytes = nbytes;
    op->seg.send = sendbuf;
    op->seg.recv = recvbuf;
    op->seg.nbytes = nbytes;
    op->args.segs = &op->seg;
    op->args.nsegs = 1;
}

void obc__op_set_personal(struct obc__op *op, obc_coll_t coll, const void *sendbuf, void *recvbuf,
                          size_t count, obc_dtype_t dtype, int root)
{
    obc__op_set_coll(op, coll, sendbuf, recvbuf, count, dtype, OBC_SUM, root);
}

obc_result_t obc__op_copy_vec(struct obc__op *op, const size_t *const *arrays, size_t narrays,
                              size_t n)
{
    op->vec = malloc(narrays * n * sizeof(size_t) + 1);
    if (op->vec == NULL) {
        return OBC_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < narrays; i++) {
        memcpy(op->vec + i * n, arrays[i], n * sizeof(size_t));
    }
    op->args.vec = op->vec;
    return OBC_SUCCESS;
}

void obc__op_set_bcast(struct obc__op *op, const void *sendbuf, void *recvbuf, size_t count,
                       obc_dtype_t dtype, int root)
{
    obc__op_set_coll(op, OBC_COLL_BROADCAST, sendbuf, recvbuf, count, dtype, OBC_SUM, root);
}

void obc__op_set_barrier(struct obc__op *op)
{
    op->args.coll = OBC_COLL_BARRIER;
    op->args.root = 0;
    op->args.dtype = OBC_UINT8;
    op->args.segs = &op->seg;
    op->args.nsegs = 0;
}

void obc__op_finish(struct obc__op *op, obc_result_t result)
{
    op->result = result;
    atomic_store_explicit(&op->done, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&op->nwaiters, memory_order_seq_cst) != 0) {
        obc__futex_wake(&op->done, false);
    }
}

bool obc__op_is_done(const struct obc__op *op)
{
    return atomic_load_explicit(&op->done, memory_order_acquire) != 0;
}
