/* SPDX-License-Identifier: MIT */
/*
 * alltoall_cma.c - single-copy alltoall within a host: every rank reads its
 * block of every peer's sendbuf straight into its own recvbuf with
 * process_vm_readv, so each byte is copied once (the pairwise exchange of
 * px.c copies it twice, into a channel slot and out of it) and every rank
 * copies only what it receives, all ranks at once.
 *
 *   1. every rank posts its sendbuf address, block size and stamp in its
 *      mailbox and copies its own block locally;
 *   2. rank r reads block r of peer p's sendbuf into block p of its
 *      recvbuf, for p = r+1, r+2, ... (mod n): the ranks start on different
 *      peers instead of all reading rank 0 first. A peer that has not
 *      posted yet is passed over and read later (of the next 64 in that
 *      order), so that a rank waits only when no posted peer is left: with
 *      ranks outnumbering cores, a peer may not run for milliseconds;
 *   3. each read is counted in the mailbox of the rank read from (claimed,
 *      then done, as bcast_cma's pieces, whose counts these are), and a
 *      rank returns once its n - 1 readers are counted (its sendbuf is free)
 *      and its own reads are done: it does not wait for ranks that are done
 *      with it but not with each other. Its mailbox is free then too, since
 *      every reader read the post before reading the block.
 * Out of place only: in place, a peer could read a block this rank has
 * already overwritten (select.c leaves in place to the pairwise exchange).
 * A peer whose block size or stamp differs is OBC_ERR_MISMATCH naming it.
 * The reads notice an abort or a dead peer between 8 MiB pieces
 * (obc__arena_peer_read). select.c picks it from OBC_ALLTOALL_CMA_MIN_BYTES per block.
 */
#include <string.h>

#include "algo/personal/px.h"
#include "core/copy.h"

struct a2a_msg {
    uint64_t addr; /* the poster's sendbuf */
    uint64_t nbytes; /* its block */
    uint64_t stamp;
    uint32_t base; /* the poster's piece counts at the start */
};

enum a2a_phase { PHASE_POST, PHASE_COPY, PHASE_DONE, PHASE_WAIT };

struct a2a_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    enum a2a_phase phase;
    uint64_t stamp;
    uint32_t seq;
    uint32_t base; /* this rank's done count at the start (obc__arena_pieces_base) */
    int k; /* peers read in order so far (the next is rank + 1 + k) ... */
    uint64_t ahead; /* ... and bit j: peer rank + 1 + k + j read out of order */
};
_Static_assert(sizeof(struct a2a_state) <= OBC_ALGO_STATE_BYTES, "state must fit");
_Static_assert(sizeof(struct a2a_msg) <= OBC_MAILBOX_BYTES, "a post fits a mailbox");

/* In place is sendbuf == recvbuf with bytes to move; obc_comm_algorithm's
 * query has no buffers (both NULL) and asks about the out-of-place call. */
static bool a2a_cma_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    if (args->coll != OBC_COLL_ALLTOALL || args->nsegs != 1) {
        return false;
    }
    const struct obc__seg *g = &args->segs[0];
    bool in_place = g->send == g->recv && g->send != NULL;
    return !in_place && ctx->nranks > 1 && ctx->arena_has_all && ctx->cma;
}

static void a2a_cma_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct a2a_state *s = state;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->stamp = obc__algo_stamp(args);
    s->seq = (uint32_t)args->seq + 1; /* mailbox words start at 0 */
}

static obc_result_t bad_peer(struct a2a_state *s, int peer, const struct a2a_msg *m)
{
    const struct obc__coll_args *a = s->args;
    size_t es = obc_dtype_size(a->dtype);
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, peer);
    if (m->stamp == s->stamp) {
        return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                            "alltoall #%llu: rank %d sends %llu elements to each rank, but rank "
                            "%d expects %zu (their counts differ)",
                            (unsigned long long)a->seq, peer, (unsigned long long)(m->nbytes / es),
                            s->ctx->rank, a->nbytes / es);
    }
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "alltoall #%llu: rank %d and rank %d disagree on the operation (stamp "
                        "%016llx there, %016llx here)",
                        (unsigned long long)a->seq, s->ctx->rank, peer,
                        (unsigned long long)m->stamp, (unsigned long long)s->stamp);
}

/* Block `me` of peer's sendbuf (at addr) into block `peer` of recvbuf. */
static obc_result_t read_block(struct a2a_state *s, int peer, uint64_t addr)
{
    size_t blk = s->args->nbytes;
    const char *src = (const char *)(uintptr_t)addr + (size_t)s->ctx->rank * blk;
    char *dst = (char *)s->args->segs[0].recv + (size_t)peer * blk;
    return obc__arena_peer_read(s->ctx->arena, peer, dst, src, blk);
}

/* One reader of peer's sendbuf fewer. The piece counts are bcast_cma's
 * too, whose claims start from the done count: claim, then count done, so
 * that the two stay level (each of the n - 1 readers claims one "piece"). */
static void count_read(struct a2a_state *s, int peer, const struct a2a_msg *m)
{
    uint32_t piece;
    (void)obc__arena_piece_claim(s->ctx->arena, peer, m->base, (uint32_t)s->ctx->nranks - 1,
                                 &piece);
    obc__arena_piece_done(s->ctx->arena, peer);
}

static obc_result_t a2a_cma_step(void *state, struct obc__wait *w)
{
    struct a2a_state *s = state;
    const struct obc__seg *g = &s->args->segs[0];
    int me = s->ctx->rank, n = s->ctx->nranks;
    size_t blk = s->args->nbytes;
    switch (s->phase) {
    case PHASE_POST: {
        s->base = obc__arena_pieces_base(s->ctx->arena); /* before anyone can count here */
        struct a2a_msg mine = {(uint64_t)(uintptr_t)g->send, blk, s->stamp, s->base};
        obc__arena_mailbox_post(s->ctx->arena, s->seq, &mine, sizeof(mine));
        if (blk > 0) {
            obc__copy((char *)g->recv + (size_t)me * blk, (const char *)g->send + (size_t)me * blk,
                      blk, 0);
        }
        s->phase = PHASE_COPY;
    }
        __attribute__((fallthrough));
    case PHASE_COPY:
        while (s->k < n - 1) {
            struct obc__wait first = {.peer = -1};
            bool waiting = false;
            for (int j = 0; j < 64 && s->k + j < n - 1; j++) {
                int peer = (me + 1 + s->k + j) % n;
                struct a2a_msg m;
                if (s->ahead >> j & 1) {
                    continue;
                }
                if (!obc__arena_mailbox_read(s->ctx->arena, peer, s->seq, &m, sizeof(m),
                                             waiting ? &(struct obc__wait){.peer = -1} : &first)) {
                    first.peer = waiting ? first.peer : peer;
                    waiting = true;
                    continue;
                }
                if (m.stamp != s->stamp || m.nbytes != blk) {
                    return bad_peer(s, peer, &m);
                }
                obc_result_t res = blk > 0 ? read_block(s, peer, m.addr) : OBC_SUCCESS;
                if (res != OBC_SUCCESS) {
                    return res;
                }
                count_read(s, peer, &m);
                s->ahead |= 1ull << j;
            }
            int moved = 0;
            for (; s->ahead & 1; s->ahead >>= 1) {
                s->k++;
                moved++;
            }
            if (moved == 0 && waiting) {
                *w = first; /* the first peer in order that has not posted */
                return OBC_IN_PROGRESS;
            }
        }
        s->phase = PHASE_DONE;
        __attribute__((fallthrough));
    case PHASE_DONE:
    case PHASE_WAIT:
        return obc__arena_pieces_reached(s->ctx->arena, s->base + (uint32_t)(n - 1), w)
            ? OBC_SUCCESS
            : OBC_IN_PROGRESS;
    }
    return OBC_ERR_INTERNAL;
}

const struct obc__algo obc__alltoall_cma = {OBC_COLL_ALLTOALL, "cma", a2a_cma_supports,
                                            a2a_cma_init, a2a_cma_step};
