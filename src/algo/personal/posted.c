/* SPDX-License-Identifier: MIT */
/*
 * posted.c - the personal collectives that post their buffers once within
 * a host: alltoall (cma), alltoallv and allgatherv (posted). Every rank
 * says once where its blocks are, and every rank fetches its block of
 * every peer itself, all ranks at once, with no hand-off per pair (the
 * pairwise exchange of px.c meets each partner in turn and copies every
 * byte twice, into a channel slot and out of it).
 *
 * alltoall, cma (every block one size, from OBC_ALLTOALL_CMA_MIN_BYTES):
 *   1. every rank posts its sendbuf address, block size and stamp in its
 *      mailbox and copies its own block locally;
 *   2. rank r reads block r of peer p's sendbuf into block p of its
 *      recvbuf with process_vm_readv.
 * alltoallv and allgatherv, posted (blocks of any size): a post must say
 * where each of n blocks is, which a 48-byte mailbox cannot, so it goes in
 * the rank's window input slot (algo/window/win.h, one chunk number per
 * call): a head (stamp, source address, piece base) and a table of n
 * entries, one per receiver, of the block's length and where it is. A
 * block under plan.pull_min_bytes is deposited in the slot after the table
 * while room lasts (a system call costs about 2 us here, more than copying
 * a few KiB twice); a larger one stays where it is and is read
 * single-copy. The sender alone decides per block, and the receiver
 * follows the table, so sizes that differ between pairs need no
 * agreement. allgatherv's every entry is the rank's one block, deposited
 * once for all readers.
 *
 * Then, for all: rank r fetches its block of peer p for p = r+1, r+2, ...
 * (mod n): the ranks start on different peers instead of all reading rank
 * 0 first. A peer that has not posted yet is passed over and read later
 * (of the next 64 in that order), so that a rank waits only when no posted
 * peer is left: with ranks outnumbering cores, a peer may not run for
 * milliseconds. Each fetch is counted in the sender's piece counts
 * (claimed, then done, as bcast_cma's pieces, whose counts these are), and
 * a rank returns once its n - 1 readers are counted (its buffer and its
 * post are free) and its own fetches are done: it does not wait for ranks
 * that are done with it but not with each other. A rank whose blocks all
 * went into its slot does not wait for its readers either: nothing of its
 * caller's is read any more, the slot is rewritten only when every rank is
 * DONE with it (win.h), and its next operation to count pieces waits for
 * these counts first (obc__arena_pieces_owe). Small alltoallvs on crowded
 * hosts lose a hand-off per call so.
 * alltoall(v) out of place only: in place, a peer could read a block this
 * rank has already overwritten (select.c leaves in place to the pairwise
 * exchange). allgatherv in place is fine: its own block, which the peers
 * read, is the one region of recvbuf it does not write.
 * A peer whose stamp, block size (alltoall) or count for this rank
 * differs is OBC_ERR_MISMATCH naming it. The reads notice an abort or a
 * dead peer between 8 MiB pieces (obc__arena_peer_read).
 */
#include <string.h>

#include "algo/personal/px.h"
#include "algo/window/win.h"
#include "core/copy.h"

struct mailbox_post {
    uint64_t addr; /* the poster's sendbuf */
    uint64_t nbytes; /* its block (alltoall) */
    uint64_t stamp;
    uint32_t base; /* the poster's piece counts at the start */
};

/* A posted table's head, at the start of the window input slot. */
struct post_head {
    uint64_t stamp;
    uint64_t source; /* alltoallv: sendbuf; allgatherv: the rank's own block */
    uint32_t base;
    uint32_t nranks;
};

/* An entry of the table after the head: the block for one receiver. */
struct post_entry {
    uint64_t nbytes;
    uint64_t where; /* DEPOSITED | offset in the slot, or offset from source */
};
#define DEPOSITED (1ull << 63)

enum post_phase { PHASE_SLOT, PHASE_POST, PHASE_COPY, PHASE_DONE };

struct post_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    enum post_phase phase;
    uint64_t stamp;
    uint32_t seq;
    uint32_t g; /* posted: the window chunk of this call */
    uint32_t base; /* this rank's done count at the start (obc__arena_pieces_base) */
    bool all_deposited; /* posted: no peer reads this rank's own buffers */
    int k; /* peers read in order so far (the next is rank + 1 + k) ... */
    uint64_t ahead; /* ... and bit j: peer rank + 1 + k + j read out of order */
};
_Static_assert(sizeof(struct post_state) <= OBC_ALGO_STATE_BYTES, "state must fit");
_Static_assert(sizeof(struct mailbox_post) <= OBC_MAILBOX_BYTES, "a post fits a mailbox");

/* alltoallv and allgatherv post a table in the window slot; alltoall
 * posts in its mailbox. */
static bool is_posted(const struct post_state *s)
{
    return s->args->coll != OBC_COLL_ALLTOALL;
}

/* The block for receiver p from this rank's source (recv: the block from
 * p in recvbuf): its length and, in *off, its offset in bytes.
 * Arrays (obc__coll_args.vec): alltoallv sendcounts, sdispls, recvcounts,
 * rdispls; allgatherv recvcounts, displs. */
static size_t block_at(const struct post_state *s, int p, bool recv, size_t *off)
{
    const struct obc__coll_args *a = s->args;
    size_t n = (size_t)s->ctx->nranks, es = obc_dtype_size(a->dtype);
    const size_t *v = a->vec;
    switch (a->coll) {
    case OBC_COLL_ALLTOALL:
        *off = (size_t)p * a->nbytes;
        return a->nbytes;
    case OBC_COLL_ALLTOALLV: {
        size_t k = recv ? 2 * n : 0;
        *off = v[k + n + (size_t)p] * es;
        return v[k + (size_t)p] * es;
    }
    default: { /* allgatherv: the one block of its owner */
        size_t owner = recv ? (size_t)p : (size_t)s->ctx->rank;
        *off = recv ? v[n + owner] * es : 0;
        return v[owner] * es;
    }
    }
}

/* Where this rank's blocks are read from: sendbuf, or allgatherv's own
 * block (in recvbuf when in place). */
static const char *source(const struct post_state *s)
{
    const struct obc__seg *g = &s->args->segs[0];
    if (s->args->coll == OBC_COLL_ALLGATHERV && g->send == g->recv) {
        size_t at;
        (void)block_at(s, s->ctx->rank, true, &at);
        return (const char *)g->recv + at;
    }
    return g->send;
}

static size_t table_bytes(int nranks)
{
    return sizeof(struct post_head) + (size_t)nranks * sizeof(struct post_entry);
}

/* A posted table must fit a window slot: one of the smallest
 * OBC_CHUNK_BYTES (4 KiB) holds it up to 246 ranks. */
#define SMALLEST_SLOT (4096u - 128u)

/* One host, single-copy permitted, out of place unless allgatherv. In
 * place is sendbuf == recvbuf with bytes to move; obc_comm_algorithm's
 * query has no buffers (both NULL) and asks about the out-of-place call. */
static bool single_copy_possible(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    if (args->nsegs != 1) {
        return false;
    }
    const struct obc__seg *g = &args->segs[0];
    bool in_place = g->send == g->recv && g->send != NULL;
    return (!in_place || args->coll == OBC_COLL_ALLGATHERV) && ctx->nranks > 1 &&
        ctx->arena_has_all && ctx->cma;
}

static bool a2a_cma_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    return args->coll == OBC_COLL_ALLTOALL && single_copy_possible(ctx, args);
}

static bool posted_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    return (args->coll == OBC_COLL_ALLTOALLV || args->coll == OBC_COLL_ALLGATHERV) &&
        single_copy_possible(ctx, args) && table_bytes(ctx->nranks) <= SMALLEST_SLOT;
}

static void post_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct post_state *s = state;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->stamp = obc__algo_stamp(args);
    s->seq = (uint32_t)args->seq + 1; /* mailbox words start at 0 */
    if (is_posted(s)) {
        s->g = win_reserve(ctx, 1); /* once per call on every rank: the numbers agree */
    } else {
        s->phase = PHASE_POST;
    }
}

static obc_result_t bad_stamp(struct post_state *s, int peer, uint64_t stamp)
{
    const struct obc__coll_args *a = s->args;
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, peer);
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d and rank %d disagree on the operation (stamp "
                        "%016llx there, %016llx here)",
                        obc__coll_name(a->coll), (unsigned long long)a->seq, s->ctx->rank, peer,
                        (unsigned long long)stamp, (unsigned long long)s->stamp);
}

static obc_result_t bad_count(struct post_state *s, int peer, size_t theirs, size_t mine)
{
    const struct obc__coll_args *a = s->args;
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, peer);
    if (a->coll == OBC_COLL_ALLGATHERV) {
        return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                            "allgatherv #%llu: rank %d's block has %zu elements, but rank %d's "
                            "recvcounts say %zu (their recvcounts differ)",
                            (unsigned long long)a->seq, peer, theirs, s->ctx->rank, mine);
    }
    if (a->coll == OBC_COLL_ALLTOALLV) {
        return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                            "alltoallv #%llu: rank %d sends %zu elements to rank %d, but rank %d "
                            "expects %zu from rank %d (their counts differ)",
                            (unsigned long long)a->seq, peer, theirs, s->ctx->rank, s->ctx->rank,
                            mine, peer);
    }
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "alltoall #%llu: rank %d sends %zu elements to each rank, but rank %d "
                        "expects %zu (their counts differ)",
                        (unsigned long long)a->seq, peer, theirs, s->ctx->rank, mine);
}

/* alltoall: block `me` of peer's sendbuf into block `peer` of recvbuf. */
static obc_result_t fetch_block(struct post_state *s, int peer, const struct mailbox_post *m)
{
    size_t blk = s->args->nbytes, es = obc_dtype_size(s->args->dtype);
    if (m->stamp != s->stamp) {
        return bad_stamp(s, peer, m->stamp);
    }
    if (m->nbytes != blk) {
        return bad_count(s, peer, (size_t)m->nbytes / es, blk / es);
    }
    const char *src = (const char *)(uintptr_t)m->addr + (size_t)s->ctx->rank * blk;
    char *dst = (char *)s->args->segs[0].recv + (size_t)peer * blk;
    return blk > 0 ? obc__arena_peer_read(s->ctx->arena, peer, dst, src, blk) : OBC_SUCCESS;
}

/* alltoallv: this rank's entry of peer's table, then the block, from the
 * slot or from peer's sendbuf, into its place in recvbuf. */
static obc_result_t fetch_posted(struct post_state *s, int peer, const struct post_head *h)
{
    size_t es = obc_dtype_size(s->args->dtype), to;
    if (h->stamp != s->stamp) {
        return bad_stamp(s, peer, h->stamp);
    }
    const struct post_entry *e = (const struct post_entry *)(h + 1) + s->ctx->rank;
    size_t nbytes = (size_t)e->nbytes, want = block_at(s, peer, true, &to);
    if (nbytes != want) {
        return bad_count(s, peer, nbytes / es, want / es);
    }
    char *dst = (char *)s->args->segs[0].recv + to;
    if (nbytes == 0) {
        return OBC_SUCCESS;
    }
    if (e->where & DEPOSITED) {
        obc__copy(dst, (const unsigned char *)h + (e->where & ~DEPOSITED), nbytes, 0);
        return OBC_SUCCESS;
    }
    const char *src = (const char *)(uintptr_t)h->source + e->where;
    return obc__arena_peer_read(s->ctx->arena, peer, dst, src, nbytes);
}

/* This rank's own block into its place in recvbuf (allgatherv in place:
 * it is there already). */
static void copy_own(const struct post_state *s)
{
    const char *src = source(s);
    char *recv = s->args->segs[0].recv;
    size_t from, to, bytes = block_at(s, s->ctx->rank, false, &from);
    (void)block_at(s, s->ctx->rank, true, &to);
    if (bytes > 0 && src + from != recv + to) {
        obc__copy(recv + to, src + from, bytes, 0);
    }
}

/* Posted: the head and table in this rank's slot, small blocks after
 * them while they fit (allgatherv's one block once, for every entry). */
static void post_table(struct post_state *s)
{
    const struct obc__coll_args *a = s->args;
    int n = s->ctx->nranks;
    const char *src = source(s);
    size_t room = win_chunk_bytes(s->ctx);
    unsigned char *slot = win_input(s->ctx, s->ctx->rank, s->g);
    struct post_head *h = (struct post_head *)slot;
    struct post_entry *e = (struct post_entry *)(h + 1);
    size_t used = table_bytes(n);
    uint64_t one_block = 0; /* allgatherv: where its block was deposited, once it is */
    *h = (struct post_head){s->stamp, (uint64_t)(uintptr_t)src, s->base, (uint32_t)n};
    for (int p = 0; p < n; p++) {
        size_t off, nbytes = block_at(s, p, false, &off);
        size_t at = (used + 63) & ~(size_t)63; /* deposits start on a cache line */
        e[p] = (struct post_entry){nbytes, off};
        if (p == s->ctx->rank || nbytes == 0 || nbytes >= a->plan.pull_min_bytes) {
            continue;
        }
        if (one_block != 0) {
            e[p].where = one_block;
        } else if (at + nbytes <= room) {
            obc__copy(slot + at, src + off, nbytes, 0);
            e[p].where = DEPOSITED | at;
            used = at + nbytes;
            one_block = a->coll == OBC_COLL_ALLGATHERV ? e[p].where : 0;
        }
    }
    s->all_deposited = true;
    for (int p = 0; p < n; p++) {
        s->all_deposited &= p == s->ctx->rank || e[p].nbytes == 0 || (e[p].where & DEPOSITED);
    }
    win_stamp(s->ctx, s->g, s->stamp, used); /* a window algorithm reading this slot mismatches */
}

/* One reader of peer's post and blocks fewer. The piece counts are
 * bcast_cma's too, whose claims start from the done count: claim, then
 * count done, so that the two stay level (each of the n - 1 readers
 * claims one "piece"). */
static void count_read(struct post_state *s, int peer, uint32_t base)
{
    uint32_t piece;
    (void)obc__arena_piece_claim(s->ctx->arena, peer, base, (uint32_t)s->ctx->nranks - 1, &piece);
    obc__arena_piece_done(s->ctx->arena, peer);
}

/* Fetch peer's block for this rank if peer has posted; false (with *w
 * set) if not yet. */
static bool fetch_from(struct post_state *s, int peer, struct obc__wait *w, obc_result_t *res)
{
    uint32_t base;
    if (is_posted(s)) {
        if (!obc__arena_flag_reached(s->ctx->arena, peer, WIN_POSTED, s->g + 1, w)) {
            return false;
        }
        const struct post_head *h = (const struct post_head *)win_input(s->ctx, peer, s->g);
        base = h->base;
        *res = fetch_posted(s, peer, h);
    } else {
        struct mailbox_post m;
        if (!obc__arena_mailbox_read(s->ctx->arena, peer, s->seq, &m, sizeof(m), w)) {
            return false;
        }
        base = m.base;
        *res = fetch_block(s, peer, &m);
    }
    if (*res == OBC_SUCCESS) {
        count_read(s, peer, base);
    }
    return true;
}

static obc_result_t post_step(void *state, struct obc__wait *w)
{
    struct post_state *s = state;
    int me = s->ctx->rank, n = s->ctx->nranks;
    switch (s->phase) {
    case PHASE_SLOT:
        if (!win_slot_free(s->ctx, s->g, w)) { /* every rank done with this slot's last use */
            return OBC_IN_PROGRESS;
        }
        s->phase = PHASE_POST;
        __attribute__((fallthrough));
    case PHASE_POST:
        /* before anyone can count here */
        if (!obc__arena_pieces_base(s->ctx->arena, &s->base, w)) {
            return OBC_IN_PROGRESS;
        }
        if (is_posted(s)) {
            post_table(s);
            win_set(s->ctx, WIN_POSTED, s->g);
        } else {
            struct mailbox_post mine = {(uint64_t)(uintptr_t)s->args->segs[0].send, s->args->nbytes,
                                        s->stamp, s->base};
            obc__arena_mailbox_post(s->ctx->arena, s->seq, &mine, sizeof(mine));
        }
        copy_own(s);
        s->phase = PHASE_COPY;
        __attribute__((fallthrough));
    case PHASE_COPY:
        while (s->k < n - 1) {
            struct obc__wait first = {.peer = -1};
            bool waiting = false;
            for (int j = 0; j < 64 && s->k + j < n - 1; j++) {
                int peer = (me + 1 + s->k + j) % n;
                obc_result_t res = OBC_SUCCESS;
                if (s->ahead >> j & 1) {
                    continue;
                }
                if (!fetch_from(s, peer, waiting ? &(struct obc__wait){.peer = -1} : &first,
                                &res)) {
                    first.peer = waiting ? first.peer : peer;
                    waiting = true;
                    continue;
                }
                if (res != OBC_SUCCESS) {
                    return res;
                }
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
        if (is_posted(s)) {
            win_set(s->ctx, WIN_DONE, s->g); /* read every peer's slot */
        }
        s->phase = PHASE_DONE;
        __attribute__((fallthrough));
    case PHASE_DONE:
        if (s->all_deposited) {
            /* Nothing of the caller's is read any more, and the slot is
             * not reused before every reader is done with it (PHASE_SLOT):
             * leave, and let the next operation's base wait for the
             * readers' counts. A waited-for count cost a hand-off per
             * call: at 4 ranks on 2 CPUs a 4-byte osu_alltoallv took
             * 15.7 us with it and 10.3 without (medians of three rounds). */
            obc__arena_pieces_owe(s->ctx->arena, s->base + (uint32_t)(n - 1));
            return OBC_SUCCESS;
        }
        return obc__arena_pieces_reached(s->ctx->arena, s->base + (uint32_t)(n - 1), w)
            ? OBC_SUCCESS
            : OBC_IN_PROGRESS;
    }
    return OBC_ERR_INTERNAL;
}

const struct obc__algo obc__alltoall_cma = {OBC_COLL_ALLTOALL, "cma", a2a_cma_supports, post_init,
                                            post_step};
const struct obc__algo obc__alltoallv_posted = {OBC_COLL_ALLTOALLV, "posted", posted_supports,
                                                post_init, post_step};
const struct obc__algo obc__allgatherv_posted = {OBC_COLL_ALLGATHERV, "posted", posted_supports,
                                                 post_init, post_step};
