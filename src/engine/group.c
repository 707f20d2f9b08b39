/* SPDX-License-Identifier: MIT */
/*
 * group.c - coalescing. Between obc_group_start and obc_group_end a
 * thread's collective calls are collected here instead of run. At the
 * outermost end, consecutive small broadcasts of one communicator with the
 * same root are fused into one op whose segments are the individual
 * buffers (no packing copy), in buckets of at most bucket_bytes, so many
 * tiny tensors cost a few transfers instead of one round each. Fusion
 * depends only on the calls' sizes and roots, so every rank fuses alike.
 * Sends and receives are never fused: they are queued one op each, and the
 * runner takes the run of them as one batch (progress.c, p2p_batch.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "engine/engine.h"
#include "engine/engine_impl.h"

struct entry {
    struct obc__engine *engine;
    struct obc__op *op; /* one reference held by the group */
    struct obc__op **req_slot; /* async call: where its request finds the launched op */
    size_t bucket_bytes;
};

static _Thread_local struct {
    int depth;
    struct entry *entries;
    size_t n, cap;
} group;

/* Threads of this process inside a group: every blocking call asks
 * whether its thread is, and a thread-local in a shared library costs a
 * call to __tls_get_addr, a few percent of a small broadcast. This one
 * word answers "no" for them all while no thread has a group open. */
static _Atomic int threads_in_group;

bool obc__group_active(void)
{
    return atomic_load_explicit(&threads_in_group, memory_order_relaxed) != 0 && group.depth > 0;
}

obc_result_t obc__group_start(void)
{
    if (group.depth++ == 0) {
        atomic_fetch_add_explicit(&threads_in_group, 1, memory_order_relaxed);
    }
    return OBC_SUCCESS;
}

obc_result_t obc__group_add(struct obc__engine *e, struct obc__op *op, struct obc__op **req_slot,
                            size_t bucket_bytes)
{
    if (group.n == group.cap) {
        size_t cap = group.cap ? group.cap * 2 : 64;
        struct entry *grown = realloc(group.entries, cap * sizeof(*grown));
        if (grown == NULL) {
            return OBC_ERR_NO_MEMORY;
        }
        group.entries = grown;
        group.cap = cap;
    }
    group.entries[group.n++] = (struct entry){e, op, req_slot, bucket_bytes};
    return OBC_SUCCESS;
}

static bool fusable(const struct entry *a, const struct entry *b)
{
    const struct obc__coll_args *x = &a->op->args, *y = &b->op->args;
    return a->engine == b->engine && x->coll == OBC_COLL_BROADCAST &&
        y->coll == OBC_COLL_BROADCAST && x->root == y->root && y->nbytes < b->bucket_bytes;
}

/* How many entries from `first` go into one fused op. */
static size_t bucket_len(size_t first)
{
    const struct entry *head = &group.entries[first];
    size_t total = head->op->args.nbytes, n = 1;
    if (head->op->args.coll != OBC_COLL_BROADCAST || head->op->args.p2p != OBC__P2P_NONE ||
        total >= head->bucket_bytes) {
        return 1;
    }
    while (first + n < group.n && fusable(head, &group.entries[first + n]) &&
           total + group.entries[first + n].op->args.nbytes <= head->bucket_bytes) {
        total += group.entries[first + n].op->args.nbytes;
        n++;
    }
    return n;
}

static struct obc__op *fuse(size_t first, size_t n)
{
    struct obc__op *op = obc__op_new();
    if (op == NULL || (op->fused = malloc(n * sizeof(struct obc__seg))) == NULL) {
        free(op);
        return NULL;
    }
    op->args = group.entries[first].op->args;
    op->args.count = 0;
    op->args.nbytes = 0;
    for (size_t i = 0; i < n; i++) {
        const struct obc__op *part = group.entries[first + i].op;
        op->fused[i] = part->seg;
        op->args.count += part->args.count;
        op->args.nbytes += part->args.nbytes;
    }
    op->args.segs = op->fused;
    op->args.nsegs = n;
    return op;
}

/* Launch entries [first, first + n) as one op; returns the op or NULL. */
static struct obc__op *launch(size_t first, size_t n, obc_result_t *res)
{
    struct obc__op *op = group.entries[first].op;
    if (n > 1) {
        op = fuse(first, n);
        if (op == NULL) {
            *res = OBC_ERR_NO_MEMORY;
            return NULL;
        }
    } else {
        obc__op_ref(op);
    }
    *res = obc__engine_submit(group.entries[first].engine, op);
    for (size_t i = first; i < first + n; i++) {
        if (group.entries[i].req_slot != NULL) {
            obc__op_ref(op);
            *group.entries[i].req_slot = op;
        }
    }
    return op;
}

struct launched {
    struct obc__engine *engine;
    struct obc__op *op;
    bool has_blocking;
};

obc_result_t obc__group_end(void)
{
    obc_result_t first_error = OBC_SUCCESS;
    struct launched *ops;
    size_t nops = 0;
    if (group.depth == 0) {
        return OBC_ERR_INVALID_ARG;
    }
    if (--group.depth > 0) {
        return OBC_SUCCESS;
    }
    atomic_fetch_sub_explicit(&threads_in_group, 1, memory_order_relaxed);
    ops = malloc((group.n ? group.n : 1) * sizeof(*ops));
    for (size_t i = 0; i < group.n;) {
        obc_result_t res = OBC_SUCCESS;
        size_t n = bucket_len(i);
        bool has_blocking = false;
        for (size_t k = i; k < i + n; k++) {
            has_blocking |= group.entries[k].req_slot == NULL;
        }
        struct obc__op *op = ops != NULL ? launch(i, n, &res) : NULL;
        if (op != NULL) {
            ops[nops++] = (struct launched){group.entries[i].engine, op, has_blocking};
        }
        if (first_error == OBC_SUCCESS) {
            first_error = ops != NULL ? res : OBC_ERR_NO_MEMORY;
        }
        for (size_t k = i; k < i + n; k++) {
            obc__op_unref(group.entries[k].op);
        }
        i += n;
    }
    /* Blocking calls in a group complete by the end of the group. */
    for (size_t i = 0; i < nops; i++) {
        obc_result_t res =
            ops[i].has_blocking ? obc__engine_wait_op(ops[i].engine, ops[i].op) : OBC_SUCCESS;
        if (first_error == OBC_SUCCESS) {
            first_error = res;
        }
        obc__op_unref(ops[i].op);
    }
    free(ops);
    group.n = 0;
    return first_error;
}
