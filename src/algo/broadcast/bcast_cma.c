/* SPDX-License-Identifier: MIT */
/*
 * bcast_cma.c - single-copy broadcast: every reader copies the root's
 * buffer straight into its own with process_vm_readv, and the root copies
 * a share of every reader's buffer with process_vm_writev, so that all
 * ranks (hence both cores of a 2-core host) copy, and no byte is staged.
 *
 *   1. every rank posts its buffer address in its mailbox (stamped);
 *   2. reader r reads [0, split) of the root's buffer into its own;
 *      the root writes [split, n) into each reader, in rank order;
 *   3. every rank adds 1 to the shared CMA counter and waits until all
 *      nranks have, so nobody returns while a peer still touches its buffer.
 *   split = n - n / nranks (page aligned): each of the nranks processes
 *   copies about (nranks - 1) / nranks of n; total (nranks - 1) * n bytes,
 *   the minimum for a broadcast.
 * Cost: one mailbox round trip plus page pinning (a few us), then n bytes
 * per reader at kernel copy speed. select.c picks it from OBC_CMA_MIN_BYTES
 * when the CMA probe at init succeeded. Copies go in pieces of CMA_PIECE so
 * that an abort or a dead peer is noticed between them.
 */
#include <string.h>

#include "algo/algo.h"

#define CMA_PIECE (8u << 20)
#define PAGE 4096u

struct cma_msg {
    uint64_t addr;
    uint64_t nbytes;
    uint64_t stamp;
};

enum cma_phase { PHASE_POST, PHASE_COPY, PHASE_DONE, PHASE_WAIT };

struct cma_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    enum cma_phase phase;
    bool is_root;
    uint64_t stamp;
    uint32_t seq;
    uint32_t target; /* CMA counter value when every rank is done */
    size_t split;
    int peer; /* root: next reader to write to */
    size_t done; /* bytes of the current copy finished */
    struct cma_msg remote;
};
_Static_assert(sizeof(struct cma_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool cma_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    return args->nsegs == 1 && ctx->nranks > 1 && ctx->arena_has_all &&
        obc__arena_has_cma(ctx->arena);
}

static void cma_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct cma_state *s = state;
    size_t n = args->nbytes;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->is_root = ctx->rank == args->root;
    s->stamp = obc__algo_stamp(args);
    s->seq = (uint32_t)args->seq + 1; /* mailbox words start at 0 */
    s->target = ++ctx->persist->cma_epoch * (uint32_t)ctx->nranks;
    s->split = n - (n / (size_t)ctx->nranks) / PAGE * PAGE;
    s->peer = args->root == 0 ? 1 : 0;
}

static obc_result_t bad_peer(struct cma_state *s, int peer)
{
    obc__arena_abort(s->ctx->arena, OBC_ERR_MISMATCH, s->ctx->rank);
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "broadcast #%llu: rank %d and rank %d disagree on the operation "
                        "(%zu bytes from root %d here, %llu bytes there)",
                        (unsigned long long)s->args->seq, s->ctx->rank, peer, s->args->nbytes,
                        s->args->root, (unsigned long long)s->remote.nbytes);
}

/* Copy [from, to) of the current transfer in pieces; IN_PROGRESS between
 * pieces is not used: pieces only bound the time between health checks. */
static obc_result_t copy_range(struct cma_state *s, int peer, size_t from, size_t to)
{
    const struct obc__seg *g = &s->args->segs[0];
    for (size_t off = from; off < to; off += CMA_PIECE) {
        size_t k = to - off < CMA_PIECE ? to - off : CMA_PIECE;
        obc_result_t res = obc__arena_health(s->ctx->arena);
        if (res == OBC_SUCCESS && s->is_root) {
            res = obc__arena_peer_write(s->ctx->arena, peer, (const char *)g->send + off,
                                        (char *)(uintptr_t)s->remote.addr + off, k);
        } else if (res == OBC_SUCCESS) {
            res = obc__arena_peer_read(s->ctx->arena, peer, (char *)g->recv + off,
                                       (const char *)(uintptr_t)s->remote.addr + off, k);
        }
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    return OBC_SUCCESS;
}

static obc_result_t root_copy(struct cma_state *s, struct obc__wait *w)
{
    for (; s->peer < s->ctx->nranks; s->peer++) {
        if (s->peer == s->args->root) {
            continue;
        }
        if (!obc__arena_mailbox_read(s->ctx->arena, s->peer, s->seq, &s->remote, sizeof(s->remote),
                                     w)) {
            return OBC_IN_PROGRESS;
        }
        if (s->remote.stamp != s->stamp || s->remote.nbytes != s->args->nbytes) {
            return bad_peer(s, s->peer);
        }
        obc_result_t res = copy_range(s, s->peer, s->split, s->args->nbytes);
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    return OBC_SUCCESS;
}

static obc_result_t reader_copy(struct cma_state *s, struct obc__wait *w)
{
    int root = s->args->root;
    if (!obc__arena_mailbox_read(s->ctx->arena, root, s->seq, &s->remote, sizeof(s->remote), w)) {
        w->peer = root;
        return OBC_IN_PROGRESS;
    }
    if (s->remote.stamp != s->stamp || s->remote.nbytes != s->args->nbytes) {
        return bad_peer(s, root);
    }
    return copy_range(s, root, 0, s->split);
}

static obc_result_t cma_step(void *state, struct obc__wait *w)
{
    struct cma_state *s = state;
    const struct obc__seg *g = &s->args->segs[0];
    obc_result_t res;
    switch (s->phase) {
    case PHASE_POST: {
        struct cma_msg mine = {(uint64_t)(uintptr_t)(s->is_root ? g->send : g->recv),
                               s->args->nbytes, s->stamp};
        obc__arena_mailbox_post(s->ctx->arena, s->seq, &mine, sizeof(mine));
        if (s->is_root && g->recv != g->send) {
            memcpy(g->recv, g->send, s->args->nbytes);
        }
        s->phase = PHASE_COPY;
    }
        __attribute__((fallthrough));
    case PHASE_COPY:
        res = s->is_root ? root_copy(s, w) : reader_copy(s, w);
        if (res != OBC_SUCCESS) {
            return res;
        }
        s->phase = PHASE_DONE;
        __attribute__((fallthrough));
    case PHASE_DONE:
        obc__arena_counter_add(s->ctx->arena, OBC_CTR_CMA_DONE, 1);
        s->phase = PHASE_WAIT;
        __attribute__((fallthrough));
    case PHASE_WAIT:
        return obc__arena_counter_reached(s->ctx->arena, OBC_CTR_CMA_DONE, s->target, w)
            ? OBC_SUCCESS
            : OBC_IN_PROGRESS;
    }
    return OBC_ERR_INTERNAL;
}

const struct obc__algo obc__bcast_cma = {OBC_COLL_BROADCAST, "cma", cma_supports, cma_init,
                                         cma_step};
