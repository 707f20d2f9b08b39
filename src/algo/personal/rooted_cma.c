/* SPDX-License-Identifier: MIT */
/*
 * rooted_cma.c - single-copy gather and scatter within a host: every rank
 * but the root moves its own block straight between its buffer and the
 * root's, gather by process_vm_writev into the root's recvbuf, scatter by
 * process_vm_readv out of the root's sendbuf. Each byte is copied once
 * (the direct exchange of px.c copies it twice, into a channel slot and
 * out of it), the n - 1 copies run side by side on whatever cores there
 * are, and the root copies nothing but its own block.
 *
 *   1. the root posts its nranks-block buffer's address, the block size,
 *      the stamp and where its piece counts stand (base) in its mailbox,
 *      and copies its own block unless it is in place;
 *   2. every other rank reads the root's post, checks it against its own
 *      call, claims one of the root's n - 1 pieces (bcast_cma.c's counts,
 *      which must move in step: claimed and done alike), copies its block,
 *      counts its piece done, and returns: nobody else touches its buffer;
 *   3. the root waits until its done count is base + n - 1: it must not
 *      return while a rank still writes into or reads from its buffer.
 * A rank that returns early cannot disturb the root's counts in a later
 * call: whoever touches a rank's counts (a single-copy broadcast's root,
 * another gather's ranks) first reads that rank's post for that call,
 * which it makes only once this one is over. Nor does the root need the
 * others' posts, so they make none. A root whose block size or stamp
 * differs from a rank's is OBC_ERR_MISMATCH on that rank, naming both.
 * select.c picks it from OBC_GATHER_CMA_MIN_BYTES per block.
 */
#include <string.h>

#include "algo/personal/px.h"
#include "core/copy.h"

struct rooted_msg {
    uint64_t addr; /* the root's nranks-block buffer */
    uint64_t nbytes; /* a block */
    uint64_t stamp;
    uint32_t base; /* the root's piece counts at the start */
};
_Static_assert(sizeof(struct rooted_msg) <= OBC_MAILBOX_BYTES, "a post fits a mailbox");

enum rooted_phase { PHASE_POST, PHASE_COPY, PHASE_WAIT };

struct rooted_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    enum rooted_phase phase;
    bool gather;
    uint64_t stamp;
    uint32_t seq;
    uint32_t base; /* the root: its piece counts at the start */
};
_Static_assert(sizeof(struct rooted_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool rooted_cma_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    return (args->coll == OBC_COLL_GATHER || args->coll == OBC_COLL_SCATTER) && args->nsegs == 1 &&
        ctx->nranks > 1 && ctx->arena_has_all && ctx->cma;
}

static void rooted_cma_init(void *state, struct obc__algo_ctx *ctx,
                            const struct obc__coll_args *args)
{
    struct rooted_state *s = state;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->gather = args->coll == OBC_COLL_GATHER;
    s->stamp = obc__algo_stamp(args);
    s->seq = (uint32_t)args->seq + 1; /* mailbox words start at 0 */
}

static obc_result_t bad_root(struct rooted_state *s, const struct rooted_msg *m)
{
    const struct obc__coll_args *a = s->args;
    size_t es = obc_dtype_size(a->dtype);
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, a->root);
    if (m->stamp == s->stamp) {
        return obc__err_set(
            s->ctx->err, OBC_ERR_MISMATCH,
            "%s #%llu: root rank %d has blocks of %llu elements, but rank %d %s %zu "
            "(their counts differ)",
            obc__coll_name(a->coll), (unsigned long long)a->seq, a->root,
            (unsigned long long)(m->nbytes / es), s->ctx->rank, s->gather ? "sends" : "expects",
            a->nbytes / es);
    }
    return obc__err_set(
        s->ctx->err, OBC_ERR_MISMATCH,
        "%s #%llu: rank %d and root rank %d disagree on the operation (stamp %016llx "
        "there, %016llx here)",
        obc__coll_name(a->coll), (unsigned long long)a->seq, s->ctx->rank, a->root,
        (unsigned long long)m->stamp, (unsigned long long)s->stamp);
}

/* This rank's block between its buffer and block `rank` of the root's. */
static obc_result_t copy_block(struct rooted_state *s, uint64_t root_addr)
{
    const struct obc__seg *g = &s->args->segs[0];
    size_t blk = s->args->nbytes;
    char *remote = (char *)(uintptr_t)root_addr + (size_t)s->ctx->rank * blk;
    return s->gather ? obc__arena_peer_write(s->ctx->arena, s->args->root, g->send, remote, blk)
                     : obc__arena_peer_read(s->ctx->arena, s->args->root, g->recv, remote, blk);
}

/* The root's own block, unless the call is in place (send == recv). */
static void root_own_block(const struct rooted_state *s)
{
    const struct obc__seg *g = &s->args->segs[0];
    size_t blk = s->args->nbytes, at = (size_t)s->ctx->rank * blk;
    if (blk == 0 || g->send == g->recv) {
        return;
    }
    if (s->gather) {
        obc__copy((char *)g->recv + at, g->send, blk, 0);
    } else {
        obc__copy(g->recv, (const char *)g->send + at, blk, 0);
    }
}

static obc_result_t rooted_cma_step(void *state, struct obc__wait *w)
{
    struct rooted_state *s = state;
    const struct obc__seg *g = &s->args->segs[0];
    bool is_root = s->ctx->rank == s->args->root;
    int root = s->args->root;
    switch (s->phase) {
    case PHASE_POST:
        if (is_root) {
            if (!obc__arena_pieces_base(s->ctx->arena, &s->base, w)) {
                return OBC_IN_PROGRESS;
            }
            const void *buf = s->gather ? g->recv : g->send;
            struct rooted_msg mine = {(uint64_t)(uintptr_t)buf, s->args->nbytes, s->stamp, s->base};
            obc__arena_mailbox_post(s->ctx->arena, s->seq, &mine, sizeof(mine));
            root_own_block(s);
        }
        s->phase = is_root ? PHASE_WAIT : PHASE_COPY;
        return rooted_cma_step(state, w);
    case PHASE_COPY: {
        struct rooted_msg m;
        uint32_t piece;
        if (!obc__arena_mailbox_read(s->ctx->arena, root, s->seq, &m, sizeof(m), w)) {
            w->peer = root;
            return OBC_IN_PROGRESS;
        }
        if (m.stamp != s->stamp || m.nbytes != s->args->nbytes) {
            return bad_root(s, &m);
        }
        if (!obc__arena_piece_claim(s->ctx->arena, root, m.base, (uint32_t)s->ctx->nranks - 1,
                                    &piece)) {
            return obc__err_set(s->ctx->err, OBC_ERR_INTERNAL,
                                "%s #%llu: rank %d found no piece of root rank %d left to claim",
                                obc__coll_name(s->args->coll), (unsigned long long)s->args->seq,
                                s->ctx->rank, root);
        }
        obc_result_t res = m.nbytes > 0 ? copy_block(s, m.addr) : OBC_SUCCESS;
        if (res == OBC_SUCCESS) {
            obc__arena_piece_done(s->ctx->arena, root);
        }
        return res;
    }
    case PHASE_WAIT:
        if (!obc__arena_pieces_reached(s->ctx->arena, s->base + (uint32_t)s->ctx->nranks - 1, w)) {
            return OBC_IN_PROGRESS;
        }
        return OBC_SUCCESS;
    }
    return OBC_ERR_INTERNAL;
}

const struct obc__algo obc__gather_cma = {OBC_COLL_GATHER, "cma", rooted_cma_supports,
                                          rooted_cma_init, rooted_cma_step};
const struct obc__algo obc__scatter_cma = {OBC_COLL_SCATTER, "cma", rooted_cma_supports,
                                           rooted_cma_init, rooted_cma_step};
