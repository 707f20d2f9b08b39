/* SPDX-License-Identifier: MIT */
/*
 * reduce_cma.c - single-copy reductions within a host (allreduce, reduce,
 * reduce_scatter) whose hand-offs do not grow with the message. The ring
 * and the window reductions pass every chunk from one rank to another, so
 * a rank that has no core (a busy process beside the job, more ranks than
 * cores) stalls its partners chunk after chunk. Here the vector is cut
 * into pieces that whoever runs claims from one shared count; the claimer
 * reads that piece of every other rank's input straight from its buffer
 * (process_vm_readv, into the engine's scratch), reduces all of them in
 * rank order, and writes the result straight into every rank that wants
 * it (process_vm_writev). Ranks that have a core share the pieces; one
 * that has none is done for.
 *
 * The kernel's copies run at about half a user-space copy's speed, and
 * every remote byte goes through two of them, so with a CPU per rank the
 * ring is faster (1.3-2.8x, bench/results/2026-12-07-reduce-cma). When
 * ranks outnumber CPUs and run out of step the ring's hand-offs cost more
 * than that: select.c takes this for allreduces from 4 MiB there (below
 * it, ranks that wait in step are faster on the ring); reduce and
 * reduce_scatter only when forced (OBC_ALGO).
 *
 *   1. every rank posts its input and output addresses, its byte count
 *      and the stamp in its mailbox; rank 0 also where its piece counts
 *      stand (base): the pieces are claimed from rank 0's counts;
 *   2. every rank reads all the others' posts (it will read and write all
 *      their buffers) and checks them against its own call;
 *   3. it claims pieces until none is left, counting each one done;
 *   4. every rank adds 1 to the shared CMA counter and waits until all
 *      nranks have (bcast_cma.c's end): nobody returns while a peer may
 *      still touch its buffers, and rank 0 posts its next base only once
 *      nobody claims from this one.
 * Waits per operation: n - 1 posts and the count at the end, whatever the
 * size. Every piece's result is computed once, in rank order 0, 1, ...,
 * n - 1 (the window reductions' order, so the two give the same bits),
 * and copied to its destinations: every rank ends with the same bits.
 *
 * Pieces never straddle a reduce_scatter block (a piece has one owner)
 * and are a 16th of the vector, between PIECE_MIN and PIECE_MAX: at most
 * scratch / n, since a claimer stages n - 1 inputs and (when it keeps no
 * result itself) the result there.
 */
#include <string.h>

#include "algo/algo.h"
#include "core/reduce.h"

#define RCMA_MAX_RANKS 8
#define PIECE_MIN (16u << 10)
#define PIECE_MAX (256u << 10)
#define PIECES_WANTED 16u
#define PAGE 4096u

struct rcma_msg {
    uint64_t in;
    uint64_t out;
    uint64_t nbytes;
    uint64_t stamp;
    uint32_t base; /* rank 0: its piece counts at the start */
};
_Static_assert(sizeof(struct rcma_msg) <= OBC_MAILBOX_BYTES, "a post fits a mailbox");

enum rcma_phase { PHASE_POST, PHASE_POSTS, PHASE_REDUCE, PHASE_WAIT };

struct rcma_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    enum rcma_phase phase;
    uint64_t stamp;
    uint32_t seq;
    uint32_t target; /* CMA counter value when every rank is done */
    uint32_t base; /* rank 0's piece counts at the start */
    uint32_t npieces;
    int peer; /* PHASE_POSTS: the next rank whose post to read */
    size_t esize;
    size_t block_elems; /* reduce_scatter: a rank's block; else the whole vector */
    size_t piece_elems;
    uint32_t per_block; /* pieces per block */
    uint64_t in[RCMA_MAX_RANKS], out[RCMA_MAX_RANKS]; /* every rank's buffers, from the posts */
};
_Static_assert(sizeof(struct rcma_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static bool rcma_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    return (args->coll == OBC_COLL_ALLREDUCE || args->coll == OBC_COLL_REDUCE ||
            args->coll == OBC_COLL_REDUCE_SCATTER) &&
        args->nsegs == 1 && ctx->nranks > 1 && ctx->nranks <= RCMA_MAX_RANKS &&
        ctx->arena_has_all && ctx->cma && ctx->scratch_bytes >= (size_t)ctx->nranks * PIECE_MIN;
}

static void rcma_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct rcma_state *s = state;
    int n = ctx->nranks;
    bool rs = args->coll == OBC_COLL_REDUCE_SCATTER;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->stamp = obc__algo_stamp(args);
    s->seq = (uint32_t)args->seq + 1; /* mailbox words start at 0 */
    s->target = ++ctx->persist->cma_epoch * (uint32_t)n;
    s->peer = 0;
    s->esize = obc_dtype_size(args->dtype);
    s->block_elems = args->count;

    size_t total = (rs ? (size_t)n : 1) * args->count * s->esize;
    size_t most = ctx->scratch_bytes / (size_t)n;
    size_t piece = total / PIECES_WANTED / PAGE * PAGE;
    piece = piece < PIECE_MIN ? PIECE_MIN : piece;
    piece = piece > PIECE_MAX ? PIECE_MAX : piece;
    piece = piece > most ? most / PAGE * PAGE : piece;
    s->piece_elems = piece / s->esize;
    s->per_block = (uint32_t)((s->block_elems + s->piece_elems - 1) / s->piece_elems);
    s->npieces = s->per_block * (rs ? (uint32_t)n : 1u);
}

static obc_result_t bad_peer(struct rcma_state *s, int peer, const struct rcma_msg *m)
{
    const struct obc__coll_args *a = s->args;
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, peer);
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d and rank %d disagree on the operation (%zu bytes "
                        "here, %llu there; stamp %016llx here, %016llx there)",
                        obc__coll_name(a->coll), (unsigned long long)a->seq, s->ctx->rank, peer,
                        a->nbytes, (unsigned long long)m->nbytes, (unsigned long long)s->stamp,
                        (unsigned long long)m->stamp);
}

/* The rank that wants piece p's result: -1 for every rank (allreduce). */
static int piece_owner(const struct rcma_state *s, uint32_t p)
{
    switch (s->args->coll) {
    case OBC_COLL_REDUCE:
        return s->args->root;
    case OBC_COLL_REDUCE_SCATTER:
        return (int)(p / s->per_block);
    default:
        return -1;
    }
}

/* Reduce piece p of every rank's input and deliver it. */
static obc_result_t reduce_piece(struct rcma_state *s, uint32_t p)
{
    const struct obc__seg *g = &s->args->segs[0];
    int n = s->ctx->nranks, me = s->ctx->rank, owner = piece_owner(s, p);
    size_t block = p / s->per_block, within = (size_t)(p % s->per_block) * s->piece_elems;
    size_t k = s->block_elems - within < s->piece_elems ? s->block_elems - within : s->piece_elems;
    size_t from = (block * s->block_elems + within) * s->esize, bytes = k * s->esize;
    size_t to = (s->args->coll == OBC_COLL_REDUCE_SCATTER ? within * s->esize : from);
    size_t slot = s->piece_elems * s->esize;
    unsigned char *staged = s->ctx->scratch;
    const void *in[RCMA_MAX_RANKS];
    obc_result_t res = obc__arena_health(s->ctx->arena);
    for (int r = 0; r < n && res == OBC_SUCCESS; r++) {
        if (r == me) {
            in[r] = (const unsigned char *)g->send + from;
            continue;
        }
        res = obc__arena_peer_read(s->ctx->arena, r, staged,
                                   (const void *)(uintptr_t)(s->in[r] + from), bytes);
        in[r] = staged;
        staged += slot;
    }
    if (res != OBC_SUCCESS) {
        return res;
    }
    void *result = owner < 0 || owner == me ? (unsigned char *)g->recv + to : staged;
    obc__red_many(result, in, n, k, s->args->dtype, s->args->redop, n);
    for (int r = 0; r < n && res == OBC_SUCCESS; r++) {
        if (r != me && (owner < 0 || owner == r)) {
            res = obc__arena_peer_write(s->ctx->arena, r, result,
                                        (void *)(uintptr_t)(s->out[r] + to), bytes);
        }
    }
    return res;
}

static obc_result_t rcma_step(void *state, struct obc__wait *w)
{
    struct rcma_state *s = state;
    const struct obc__seg *g = &s->args->segs[0];
    int n = s->ctx->nranks;
    switch (s->phase) {
    case PHASE_POST: {
        if (s->ctx->rank == 0 && !obc__arena_pieces_base(s->ctx->arena, &s->base, w)) {
            return OBC_IN_PROGRESS;
        }
        struct rcma_msg mine = {.in = (uint64_t)(uintptr_t)g->send,
                                .out = (uint64_t)(uintptr_t)g->recv,
                                .nbytes = s->args->nbytes,
                                .stamp = s->stamp,
                                .base = s->base};
        obc__arena_mailbox_post(s->ctx->arena, s->seq, &mine, sizeof(mine));
        s->in[s->ctx->rank] = mine.in;
        s->out[s->ctx->rank] = mine.out;
        s->phase = PHASE_POSTS;
    }
        __attribute__((fallthrough));
    case PHASE_POSTS:
        for (; s->peer < n; s->peer++) {
            struct rcma_msg m;
            if (s->peer == s->ctx->rank) {
                continue;
            }
            if (!obc__arena_mailbox_read(s->ctx->arena, s->peer, s->seq, &m, sizeof(m), w)) {
                w->peer = s->peer;
                return OBC_IN_PROGRESS;
            }
            if (m.stamp != s->stamp || m.nbytes != s->args->nbytes) {
                return bad_peer(s, s->peer, &m);
            }
            s->in[s->peer] = m.in;
            s->out[s->peer] = m.out;
            if (s->peer == 0) {
                s->base = m.base;
            }
        }
        s->phase = PHASE_REDUCE;
        __attribute__((fallthrough));
    case PHASE_REDUCE: {
        uint32_t p;
        while (obc__arena_piece_claim(s->ctx->arena, 0, s->base, s->npieces, &p)) {
            obc_result_t res = reduce_piece(s, p);
            if (res != OBC_SUCCESS) {
                return res;
            }
            obc__arena_piece_done(s->ctx->arena, 0);
        }
        obc__arena_counter_add(s->ctx->arena, OBC_CTR_CMA_DONE, 1);
        s->phase = PHASE_WAIT;
    }
        __attribute__((fallthrough));
    case PHASE_WAIT:
        return obc__arena_counter_reached(s->ctx->arena, OBC_CTR_CMA_DONE, s->target, w)
            ? OBC_SUCCESS
            : OBC_IN_PROGRESS;
    }
    return OBC_ERR_INTERNAL;
}

const struct obc__algo obc__allreduce_cma = {OBC_COLL_ALLREDUCE, "cma", rcma_supports, rcma_init,
                                             rcma_step};
const struct obc__algo obc__reduce_cma = {OBC_COLL_REDUCE, "cma", rcma_supports, rcma_init,
                                          rcma_step};
const struct obc__algo obc__reduce_scatter_cma = {OBC_COLL_REDUCE_SCATTER, "cma", rcma_supports,
                                                  rcma_init, rcma_step};
