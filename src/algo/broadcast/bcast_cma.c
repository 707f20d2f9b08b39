/* SPDX-License-Identifier: MIT */
/*
 * bcast_cma.c - single-copy broadcast: the bytes go straight from the
 * root's buffer into every reader's, by process_vm_readv (the reader
 * pulls) or process_vm_writev (the root pushes), and no byte is staged.
 * Each reader's buffer is cut into pieces that whoever runs claims from a
 * shared count: the reader and the root copy side by side while both have
 * a core, and when one of them has none (a busy process beside the job,
 * more ranks than cores) the other does the rest, so nobody waits for a
 * rank that is not running. Hand-offs per operation stay at about nranks
 * whatever the size (tests/coll/handoff_count.sh).
 *
 *   1. every rank posts its buffer address (a reader also the base of its
 *      piece counts, where they stand now) in its mailbox, stamped;
 *   2. a reader claims pieces of its own buffer and reads them from the
 *      root; the root, reader after reader, claims the same reader's
 *      pieces and writes them; each copied piece is counted in the
 *      reader's mailbox; the reader waits until all of its are;
 *   3. every rank adds 1 to the shared CMA counter and waits until all
 *      nranks have, so nobody returns while a peer still touches its buffer.
 * Pieces: a 16th of the message, between PIECE_MIN and PIECE_MAX (which
 * also bounds the time between health checks), but at least two, so that
 * the root and a reader copy side by side: a 256 KiB broadcast in place at
 * 2 ranks took 24.8-25.4 us as one piece (whoever claimed it copied alone)
 * and 12.7-13.1 as two; out of place 21.9-23.2 and 17.2-17.8.
 *
 * A rank whose buffer lies in an obc_mem_alloc block names it in its post
 * (fd, serial, offset), and the other side maps it (kept for later calls,
 * transport/shm/shm_map.c) and copies with memcpy, no system call: a
 * reader from the root's block, the root into a reader's block. A root
 * whose own buffer is a block pushes nothing into a reader whose buffer is
 * not: its process_vm_writev beside the reader's memcpy made 64 MiB 1.3x
 * slower at 2 ranks (9.9 against 7.7 ms; measured while the root's own
 * copy still used plain memcpy, not re-measured since).
 */
#include <string.h>

#include "algo/algo.h"
#include "core/copy.h"
#include "core/mem.h"

#define PIECE_MIN (256u << 10)
#define PIECE_MAX (8u << 20)
#define PIECES_WANTED 16u
#define PIECES_AT_LEAST 2u
#define PAGE 4096u

struct cma_msg {
    uint64_t addr;
    uint64_t nbytes;
    uint64_t stamp;
    uint32_t base; /* a reader's piece counts at the start */
    int32_t fd; /* the obc_mem_alloc block the poster's buffer lies in, else -1 */
    uint64_t serial; /* the block's */
    uint64_t offset; /* of addr in the block */
};
_Static_assert(sizeof(struct cma_msg) <= OBC_MAILBOX_BYTES, "a post fits a mailbox");

enum cma_phase { PHASE_POST, PHASE_COPY, PHASE_FILLED, PHASE_DONE, PHASE_WAIT };

struct cma_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    enum cma_phase phase;
    bool is_root;
    uint64_t stamp;
    uint32_t seq;
    uint32_t target; /* CMA counter value when every rank is done */
    uint32_t base; /* reader: its piece counts at the start */
    uint32_t npieces;
    size_t piece_bytes;
    int peer; /* root: the reader whose pieces it claims now */
    struct cma_msg remote;
    const unsigned char *mapped; /* reader: the root's buffer, mapped here; NULL: read by CMA */
    bool root_shared; /* root: its buffer is a block */
    unsigned char *push_to; /* root: the current reader's buffer, mapped here; NULL: CMA */
};
_Static_assert(sizeof(struct cma_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool cma_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    return args->nsegs == 1 && ctx->nranks > 1 && ctx->arena_has_all && ctx->cma;
}

/* n bytes rounded up to whole pages (at least one) */
static size_t pages_for(size_t n)
{
    return n == 0 ? PAGE : (n + PAGE - 1) / PAGE * PAGE;
}

static void cma_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct cma_state *s = state;
    size_t n = args->nbytes, piece = pages_for(n / PIECES_WANTED);
    size_t least = pages_for(n / PIECES_AT_LEAST), smallest = least < PIECE_MIN ? least : PIECE_MIN;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->is_root = ctx->rank == args->root;
    s->stamp = obc__algo_stamp(args);
    s->seq = (uint32_t)args->seq + 1; /* mailbox words start at 0 */
    s->target = ++ctx->persist->cma_epoch * (uint32_t)ctx->nranks;
    s->piece_bytes = piece < smallest ? smallest : piece > PIECE_MAX ? PIECE_MAX : piece;
    s->npieces = (uint32_t)((n + s->piece_bytes - 1) / s->piece_bytes);
    s->peer = args->root == 0 ? 1 : 0;
}

static obc_result_t bad_peer(struct cma_state *s, int peer)
{
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, peer);
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "broadcast #%llu: rank %d and rank %d disagree on the operation "
                        "(%zu bytes from root %d here, %llu bytes there)",
                        (unsigned long long)s->args->seq, s->ctx->rank, peer, s->args->nbytes,
                        s->args->root, (unsigned long long)s->remote.nbytes);
}

/* Claim and copy pieces of `owner`'s buffer (the root writes into it, the
 * owner reads into it) until none is left; every copied piece is counted
 * in the owner's mailbox. A health check before each piece. */
static obc_result_t copy_pieces(struct cma_state *s, int owner, uint32_t base)
{
    const struct obc__seg *g = &s->args->segs[0];
    size_t n = s->args->nbytes;
    uint32_t piece;
    while (obc__arena_piece_claim(s->ctx->arena, owner, base, s->npieces, &piece)) {
        size_t off = (size_t)piece * s->piece_bytes;
        size_t k = n - off < s->piece_bytes ? n - off : s->piece_bytes;
        char *remote = (char *)(uintptr_t)s->remote.addr + off;
        obc_result_t res = obc__arena_health(s->ctx->arena);
        if (res == OBC_SUCCESS) {
            if (s->is_root && s->push_to != NULL) {
                obc__copy(s->push_to + off, (const unsigned char *)g->send + off, k,
                          s->args->plan.streaming);
            } else if (s->is_root) {
                res = obc__arena_peer_write(s->ctx->arena, owner, (const char *)g->send + off,
                                            remote, k);
            } else if (s->mapped == NULL) {
                res = obc__arena_peer_read(s->ctx->arena, s->args->root, (char *)g->recv + off,
                                           remote, k);
            } else {
                obc__copy((unsigned char *)g->recv + off, s->mapped + off, k,
                          s->args->plan.streaming);
            }
        }
        if (res != OBC_SUCCESS) {
            return res;
        }
        obc__arena_piece_done(s->ctx->arena, owner);
    }
    return OBC_SUCCESS;
}

static bool same_op(const struct cma_state *s)
{
    return s->remote.stamp == s->stamp && s->remote.nbytes == s->args->nbytes;
}

/* The peer's buffer that s->remote names, in this process's view of its
 * block; NULL when it cannot be mapped (then CMA copies it). */
static unsigned char *map_peer(struct cma_state *s, int peer, bool writable)
{
    size_t mapped = 0;
    unsigned char *m =
        obc__arena_peer_map(s->ctx->arena, peer, s->remote.fd, s->remote.serial, writable, &mapped);
    bool inside = s->remote.offset <= mapped && s->remote.nbytes <= mapped - s->remote.offset;
    return m != NULL && inside ? m + s->remote.offset : NULL;
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
        if (!same_op(s)) {
            return bad_peer(s, s->peer);
        }
        s->push_to = s->remote.fd >= 0 ? map_peer(s, s->peer, true) : NULL;
        bool push = s->push_to != NULL || !s->root_shared;
        obc_result_t res = push ? copy_pieces(s, s->peer, s->remote.base) : OBC_SUCCESS;
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
    if (!same_op(s)) {
        return bad_peer(s, root);
    }
    if (s->remote.fd >= 0 && s->mapped == NULL) {
        s->mapped = map_peer(s, root, false);
    }
    return copy_pieces(s, s->ctx->rank, s->base);
}

static obc_result_t cma_step(void *state, struct obc__wait *w)
{
    struct cma_state *s = state;
    const struct obc__seg *g = &s->args->segs[0];
    obc_result_t res;
    switch (s->phase) {
    case PHASE_POST: {
        if (!s->is_root && !obc__arena_pieces_base(s->ctx->arena, &s->base, w)) {
            return OBC_IN_PROGRESS;
        }
        struct cma_msg mine = {.addr = (uint64_t)(uintptr_t)(s->is_root ? g->send : g->recv),
                               .nbytes = s->args->nbytes,
                               .stamp = s->stamp,
                               .base = s->base,
                               .fd = -1};
        struct obc__mem_where at;
        if (s->ctx->mem != NULL &&
            obc__mem_list_find(s->ctx->mem, (void *)(uintptr_t)mine.addr, s->args->nbytes, &at)) {
            mine.fd = at.fd;
            mine.serial = at.serial;
            mine.offset = at.offset;
            s->root_shared = s->is_root;
        }
        obc__arena_mailbox_post(s->ctx->arena, s->seq, &mine, sizeof(mine));
        if (s->is_root && g->recv != g->send) {
            obc__copy(g->recv, g->send, s->args->nbytes, s->args->plan.streaming);
        }
        s->phase = PHASE_COPY;
    }
        __attribute__((fallthrough));
    case PHASE_COPY:
        res = s->is_root ? root_copy(s, w) : reader_copy(s, w);
        if (res != OBC_SUCCESS) {
            return res;
        }
        s->phase = PHASE_FILLED;
        __attribute__((fallthrough));
    case PHASE_FILLED: /* a reader: the root may still be copying its last pieces */
        if (!s->is_root && !obc__arena_pieces_reached(s->ctx->arena, s->base + s->npieces, w)) {
            w->peer = s->args->root;
            return OBC_IN_PROGRESS;
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
