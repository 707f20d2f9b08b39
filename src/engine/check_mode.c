/* SPDX-License-Identifier: MIT */
/*
 * check_mode.c - comparing the ranks' calls (see check_mode.h): the scans
 * of the boards and of the other hosts' notes, the OBC_CHECK=1 arrival
 * check, the OBC_CHECK=2 payload hash, and the messages that name the rank
 * and both calls.
 *
 * A note is the latest word of a rank, not a history: a peer may see our
 * note for operation N+1 before (or instead of) the one for N. That is
 * enough for the same reason it is on the boards: a rank moves past N only
 * after it compared N with every rank it could see at N.
 */
#include "engine/check_mode.h"

#include <string.h>

#include "core/hash.h"
#include "core/host_layout.h"
#include "platform/platform.h"

#define NOTE_MAGIC 0x4f42434eu /* "OBCN", version 1 */

/* A call as it travels: fixed layout, no padding, this machine's byte
 * order (as the frame headers). */
struct note_call {
    uint32_t coll;
    int32_t root;
    uint32_t dtype;
    uint32_t redop;
    uint64_t count, nbytes;
};

struct note {
    uint32_t magic;
    int32_t odd_rank; /* a rank whose call this rank found different (`odd`), or -1 */
    uint64_t pos; /* seq + 1 of the calls below */
    struct note_call call; /* this rank's */
    struct note_call odd; /* odd_rank's: passed on to ranks its own note may not reach */
    uint64_t hash_pos, hash; /* the last payload hash this rank posted (OBC_CHECK=2) */
};
_Static_assert(sizeof(struct note) == OBC_P2P_NOTE_BYTES, "a note is one p2p note");

/* After a mismatch was reported to this rank by another, how long it waits
 * for the notes that say which calls differed (they are on their way:
 * every rank posts its note before it tells anybody of a failure). */
#define EXPLAIN_GRACE_NS 300000000ll

obc_result_t obc__check_init(struct obc__check *c, const struct obc__engine_params *p)
{
    memset(c, 0, sizeof(*c));
    c->odd_rank = -1;
    c->level = p->check;
    c->p2p = p->p2p;
    /* Ranks of other machines: their records are notes, not boards. */
    c->remote = p->arena_has_all ? NULL : p->layout->remote;
    c->boards = (struct obc__boards){.arena = p->arena,
                                     .remote = c->remote,
                                     .rank = p->rank,
                                     .nranks = p->nranks,
                                     .check = p->check,
                                     .dump_path = p->dump_path};
    return OBC_SUCCESS;
}

void obc__check_fini(struct obc__check *c)
{
    c->remote = NULL; /* the layout's */
}

static bool is_remote(const struct obc__check *c, int r)
{
    return c->remote != NULL && c->remote[r];
}

static void call_of_args(const struct obc__coll_args *args, struct obc__board_call *c)
{
    memset(c, 0, sizeof(*c));
    c->pos = args->seq + 1;
    c->coll = args->coll;
    c->root = args->root;
    c->dtype = args->dtype;
    c->redop = args->redop;
    c->count = args->count;
    c->nbytes = args->nbytes;
}

static struct note_call note_call_of(const struct obc__board_call *b)
{
    return (struct note_call){(uint32_t)b->coll,  b->root,  (uint32_t)b->dtype,
                              (uint32_t)b->redop, b->count, b->nbytes};
}

static bool board_call_of(const struct note_call *n, uint64_t pos, struct obc__board_call *out)
{
    memset(out, 0, sizeof(*out));
    out->pos = pos;
    out->coll = (obc_coll_t)n->coll;
    out->root = n->root;
    out->dtype = (obc_dtype_t)n->dtype;
    out->redop = (obc_redop_t)n->redop;
    out->count = (size_t)n->count;
    out->nbytes = (size_t)n->nbytes;
    return n->coll < OBC_COLL_COUNT;
}

static void post_note(struct obc__check *c, const struct obc__coll_args *args)
{
    struct obc__board_call mine;
    call_of_args(args, &mine);
    struct note n = {NOTE_MAGIC, -1, mine.pos, note_call_of(&mine), {0}, c->hash_pos, c->hash};
    if (c->odd_rank >= 0 && c->odd.pos == mine.pos) {
        n.odd_rank = c->odd_rank;
        n.odd = note_call_of(&c->odd);
    }
    c->noted = mine.pos;
    obc__p2p_post_note(c->p2p, &n);
}

void obc__check_publish(struct obc__check *c, const struct obc__coll_args *args)
{
    if (c->remote != NULL && c->noted != args->seq + 1) {
        post_note(c, args);
    }
}

/* Remote rank r's latest note, if a well-formed one came; *w (if not
 * NULL) waits for its next. */
static bool read_note(struct obc__check *c, int r, struct note *n, struct obc__wait *w)
{
    return obc__p2p_read_note(c->p2p, r, n, w) && n->magic == NOTE_MAGIC;
}

void obc__check_enter(struct obc__check *c, const struct obc__coll_args *args)
{
    obc__board_enter(&c->boards, args);
    if (c->level >= 1 && c->remote != NULL) {
        post_note(c, args); /* the other hosts' arrival check waits for it */
    }
}

void obc__check_leave(struct obc__check *c, const struct obc__coll_args *args, obc_result_t res)
{
    obc__board_leave(&c->boards, args, res);
}

static bool same_call(const struct obc__board_call *a, const struct obc__board_call *b)
{
    bool rooted = obc__coll_rooted(a->coll);
    bool reduces = a->coll == OBC_COLL_ALLREDUCE || a->coll == OBC_COLL_REDUCE ||
        a->coll == OBC_COLL_REDUCE_SCATTER;
    /* alltoallv's count is this rank's total sent, rightly different on
     * every rank; its pairs' counts are compared message by message. */
    bool counted = a->coll != OBC_COLL_ALLTOALLV;
    return a->coll == b->coll && (!counted || a->count == b->count) && a->dtype == b->dtype &&
        (!rooted || a->root == b->root) && (!reduces || a->redop == b->redop);
}

/* Every rank must learn of a mismatch, also those no wait would wake; the
 * other hosts after our note (they name the calls from it). The verdict
 * names this rank and `other`, whose call or bytes differ from its own. */
static void tell_mismatch(struct obc__check *c, const struct obc__coll_args *args, int other)
{
    if (c->remote != NULL) {
        post_note(c, args);
    }
    uint64_t verdict = obc__verdict_pair(OBC_ERR_MISMATCH, c->boards.rank, other);
    obc__arena_abort_verdict(c->boards.arena, verdict);
    obc__p2p_tell_verdict(c->p2p, verdict);
}

static obc_result_t mismatch_error(struct obc__check *c, const struct obc__coll_args *args,
                                   const struct obc__board_call *mine,
                                   const struct obc__board_call *theirs, int rank,
                                   struct obc__err *err)
{
    char want[96], got[96];
    obc__board_describe_call(mine, want, sizeof(want));
    obc__board_describe_call(theirs, got, sizeof(got));
    c->odd_rank = rank;
    c->odd = *theirs;
    obc__board_post_odd(&c->boards, rank, theirs);
    tell_mismatch(c, args, rank);
    return obc__err_set(err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d called %s while rank %d called %s",
                        obc__coll_name(mine->coll), (unsigned long long)(mine->pos - 1), rank, got,
                        c->boards.rank, want);
}

/* Rank r's call for this operation, wherever its record is. */
static bool call_of(struct obc__check *c, int r, uint64_t seq, struct obc__board_call *out)
{
    struct note n;
    if (!is_remote(c, r)) {
        return obc__board_read(&c->boards, r, seq, out);
    }
    return read_note(c, r, &n, NULL) && n.pos == seq + 1 && board_call_of(&n.call, n.pos, out);
}

/* A call that rank r found different from its own, and whose it is
 * (*odd_rank), if r's note (or board) says so for this operation. */
static bool odd_call_of(struct obc__check *c, int r, uint64_t seq, int *odd_rank,
                        struct obc__board_call *out)
{
    struct note n;
    if (!is_remote(c, r)) {
        return obc__board_odd(&c->boards, r, seq, odd_rank, out) && *odd_rank != c->boards.rank;
    }
    if (!read_note(c, r, &n, NULL) || n.pos != seq + 1 || n.odd_rank < 0 ||
        n.odd_rank >= c->boards.nranks || n.odd_rank == c->boards.rank) {
        return false;
    }
    *odd_rank = n.odd_rank;
    return board_call_of(&n.odd, n.pos, out);
}

/* Rank r's payload hash of this operation, if it posted that one. */
static bool hash_of(struct obc__check *c, int r, uint64_t seq, uint64_t *hash)
{
    struct note n;
    if (!is_remote(c, r)) {
        return obc__board_hash(&c->boards, r, seq, hash);
    }
    if (!read_note(c, r, &n, NULL) || n.hash_pos != seq + 1) {
        return false;
    }
    *hash = n.hash;
    return true;
}

/* Has rank r reached `what` (arrived, hashed) for operation seq? */
static bool reached(struct obc__check *c, int r, int what, uint64_t seq, struct obc__wait *w)
{
    struct note n;
    if (!is_remote(c, r)) {
        return obc__board_reached(&c->boards, r, what, seq, w);
    }
    if (!read_note(c, r, &n, w)) {
        return false;
    }
    return (what == OBC_BOARD_HASHED ? n.hash_pos : n.pos) >= seq + 1;
}

static obc_result_t find_mismatch(struct obc__check *c, const struct obc__coll_args *args,
                                  struct obc__err *err)
{
    struct obc__board_call mine, theirs;
    call_of_args(args, &mine);
    for (int r = 0; r < c->boards.nranks; r++) {
        if (r != c->boards.rank && call_of(c, r, args->seq, &theirs) &&
            !same_call(&mine, &theirs)) {
            return mismatch_error(c, args, &mine, &theirs, r, err);
        }
    }
    /* Another rank may have seen a call whose own note cannot reach us
     * (stuck behind data we will never read): its note or board says. */
    for (int r = 0, odd; r < c->boards.nranks; r++) {
        if (odd_call_of(c, r, args->seq, &odd, &theirs) && !same_call(&mine, &theirs)) {
            return mismatch_error(c, args, &mine, &theirs, odd, err);
        }
    }
    return OBC_SUCCESS;
}

/* Has every other rank reached `what` for this operation? If not, *w
 * waits for one that has not. */
static bool all_reached(struct obc__check *c, int what, uint64_t seq, struct obc__wait *w)
{
    for (int r = 0; r < c->boards.nranks; r++) {
        if (r != c->boards.rank && !reached(c, r, what, seq, w)) {
            return false;
        }
    }
    return true;
}

obc_result_t obc__check_before(struct obc__check *c, const struct obc__coll_args *args,
                               struct obc__err *err, struct obc__wait *w)
{
    if (c->level < 1) {
        return OBC_SUCCESS;
    }
    if (!all_reached(c, OBC_BOARD_ARRIVED, args->seq, w)) {
        return OBC_IN_PROGRESS;
    }
    /* A rank already past this operation checked it against everybody, us
     * included, before it moved on: only the ranks still at it need a look. */
    return find_mismatch(c, args, err);
}

static uint64_t payload_hash(const struct obc__coll_args *args)
{
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < args->nsegs; i++) {
        h = (h ^ obc__hash64(args->segs[i].recv, args->segs[i].nbytes)) * 0x100000001B3ull;
    }
    return h;
}

static bool hashes_payload(const struct obc__check *c, const struct obc__coll_args *args)
{
    return c->level >= 2 && args->coll == OBC_COLL_BROADCAST;
}

static bool reads_nothing(const struct obc__coll_args *args, int rank)
{
    switch (args->coll) {
    case OBC_COLL_BROADCAST:
    case OBC_COLL_SCATTER:
        return args->root == rank;
    case OBC_COLL_GATHER:
        return args->root != rank;
    default:
        return false;
    }
}

obc_result_t obc__check_after(struct obc__check *c, const struct obc__coll_args *args,
                              const struct obc__algo *algo, struct obc__err *err)
{
    if (reads_nothing(args, c->boards.rank) && !obc__algo_finds_second_root(algo)) {
        /* A root reads nothing from its peers, so no stamp checked its call:
         * with two ranks that both believe they are the root, both would
         * "succeed". A look at the peers' calls catches it here (a peer that
         * has not entered yet catches it when it leaves). The same holds for
         * a scatter's root and a gather's other ranks, who only send.
         * The look reads lines that every peer has just written, a cache
         * miss each; on a small broadcast it was most of the root's call.
         * The arena rings' roots need none: the second root's publish
         * fails (obc__algo_finds_second_root), and the first root's next call
         * cannot complete with a rank that broke the communicator. */
        obc_result_t res = find_mismatch(c, args, err);
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    if (hashes_payload(c, args)) {
        c->hash = payload_hash(args);
        c->hash_pos = args->seq + 1;
        obc__board_post_hash(&c->boards, args, c->hash);
        if (c->remote != NULL) {
            post_note(c, args);
        }
    }
    return OBC_SUCCESS;
}

obc_result_t obc__check_after_wait(struct obc__check *c, const struct obc__coll_args *args,
                                   struct obc__err *err, struct obc__wait *w)
{
    if (!hashes_payload(c, args)) {
        return OBC_SUCCESS;
    }
    if (!all_reached(c, OBC_BOARD_HASHED, args->seq, w)) {
        return OBC_IN_PROGRESS;
    }
    uint64_t want, got;
    if (!hash_of(c, args->root, args->seq, &want)) {
        return OBC_SUCCESS; /* the root moved on: it compared this one itself */
    }
    for (int r = 0; r < c->boards.nranks; r++) {
        /* A rank past this operation posted a newer hash; it compared this one itself. */
        if (hash_of(c, r, args->seq, &got) && got != want) {
            tell_mismatch(c, args, r);
            return obc__err_set(err, OBC_ERR_MISMATCH,
                                "broadcast #%llu: rank %d holds bytes that differ from root "
                                "rank %d's after the broadcast (OBC_CHECK=2 payload hash)",
                                (unsigned long long)args->seq, r, args->root);
        }
    }
    return OBC_SUCCESS;
}

obc_result_t obc__check_stalled(struct obc__check *c, const struct obc__coll_args *args,
                                struct obc__err *err)
{
    obc__check_publish(c, args);
    return find_mismatch(c, args, err);
}

obc_result_t obc__check_explain(struct obc__check *c, const struct obc__coll_args *args,
                                obc_result_t res, struct obc__err *err)
{
    if (res != OBC_ERR_MISMATCH && res != OBC_ERR_ABORTED) {
        return res;
    }
    /* Told by the rank that saw it, or by an abort: the culprit named from
     * here too, when the calls show one. Told of a mismatch with other
     * hosts, wait briefly for their notes (and let them have ours). */
    int64_t until = obc__now_ns() + EXPLAIN_GRACE_NS;
    bool grace = res == OBC_ERR_MISMATCH && c->remote != NULL;
    if (grace) {
        obc__check_publish(c, args);
    }
    for (;;) {
        if (find_mismatch(c, args, err) != OBC_SUCCESS) {
            return OBC_ERR_MISMATCH;
        }
        if (!grace || obc__now_ns() >= until) {
            return res;
        }
        obc__sleep_ns(2000000);
    }
}
