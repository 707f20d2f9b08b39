/* SPDX-License-Identifier: MIT */
/*
 * check_mode.c - comparing the ranks' calls (see check_mode.h): the scans
 * of the boards, the OBC_CHECK=1 arrival check, the OBC_CHECK=2 payload
 * hash, and the messages that name the rank and both calls.
 */
#include "engine/check_mode.h"

#include <string.h>

#include "core/hash.h"

obc_result_t obc__check_init(struct obc__check *c, const struct obc__engine_params *p)
{
    c->level = p->check;
    c->boards = (struct obc__boards){.arena = p->arena_has_all ? p->arena : NULL,
                                     .rank = p->rank,
                                     .nranks = p->nranks,
                                     .check = p->check,
                                     .dump_path = p->dump_path};
    return OBC_SUCCESS;
}

void obc__check_fini(struct obc__check *c)
{
    (void)c;
}

void obc__check_enter(struct obc__check *c, const struct obc__coll_args *args)
{
    obc__board_enter(&c->boards, args);
}

void obc__check_leave(struct obc__check *c, const struct obc__coll_args *args, obc_result_t res)
{
    obc__board_leave(&c->boards, args, res);
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

static bool same_call(const struct obc__board_call *a, const struct obc__board_call *b)
{
    bool rooted = a->coll == OBC_COLL_BROADCAST || a->coll == OBC_COLL_REDUCE;
    bool reduces = a->coll == OBC_COLL_ALLREDUCE || a->coll == OBC_COLL_REDUCE ||
        a->coll == OBC_COLL_REDUCE_SCATTER;
    return a->coll == b->coll && a->count == b->count && a->dtype == b->dtype &&
        (!rooted || a->root == b->root) && (!reduces || a->redop == b->redop);
}

/* Every rank must learn of a mismatch, also those no wait would wake. */
static void tell_mismatch(struct obc__check *c)
{
    obc__arena_abort(c->boards.arena, OBC_ERR_MISMATCH, c->boards.rank);
}

static obc_result_t mismatch_error(struct obc__check *c, const struct obc__board_call *mine,
                                   const struct obc__board_call *theirs, int rank,
                                   struct obc__err *err)
{
    char want[96], got[96];
    obc__board_describe_call(mine, want, sizeof(want));
    obc__board_describe_call(theirs, got, sizeof(got));
    tell_mismatch(c);
    return obc__err_set(err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d called %s while rank %d called %s",
                        obc__coll_name(mine->coll), (unsigned long long)(mine->pos - 1), rank, got,
                        c->boards.rank, want);
}

/* Rank r's call for this operation, wherever its record is. */
static bool call_of(struct obc__check *c, int r, uint64_t seq, struct obc__board_call *out)
{
    return obc__board_read(&c->boards, r, seq, out);
}

static obc_result_t find_mismatch(struct obc__check *c, const struct obc__coll_args *args,
                                  struct obc__err *err)
{
    struct obc__board_call mine, theirs;
    call_of_args(args, &mine);
    for (int r = 0; r < c->boards.nranks; r++) {
        if (r != c->boards.rank && call_of(c, r, args->seq, &theirs) &&
            !same_call(&mine, &theirs)) {
            return mismatch_error(c, &mine, &theirs, r, err);
        }
    }
    return OBC_SUCCESS;
}

/* Has every other rank reached `what` for this operation? If not, *w
 * waits for one that has not. */
static bool all_reached(struct obc__check *c, int what, uint64_t seq, struct obc__wait *w)
{
    for (int r = 0; r < c->boards.nranks; r++) {
        if (r != c->boards.rank && !obc__board_reached(&c->boards, r, what, seq, w)) {
            return false;
        }
    }
    return true;
}

obc_result_t obc__check_before(struct obc__check *c, const struct obc__coll_args *args,
                               struct obc__err *err, struct obc__wait *w)
{
    if (c->level < 1 || c->boards.arena == NULL) {
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
    return c->level >= 2 && args->coll == OBC_COLL_BROADCAST && c->boards.arena != NULL;
}

obc_result_t obc__check_after(struct obc__check *c, const struct obc__coll_args *args,
                              struct obc__err *err)
{
    if (args->coll == OBC_COLL_BROADCAST && args->root == c->boards.rank) {
        /* A root reads nothing from its peers, so no stamp checked its call:
         * with two ranks that both believe they are the root, both would
         * "succeed". A look at the peers' calls catches it here (a peer that
         * has not entered yet catches it when it leaves). */
        obc_result_t res = find_mismatch(c, args, err);
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    if (hashes_payload(c, args)) {
        obc__board_post_hash(&c->boards, args, payload_hash(args));
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
    if (!obc__board_hash(&c->boards, args->root, args->seq, &want)) {
        return OBC_SUCCESS; /* the root moved on: it compared this one itself */
    }
    for (int r = 0; r < c->boards.nranks; r++) {
        /* A rank past this operation posted a newer hash; it compared this one itself. */
        if (obc__board_hash(&c->boards, r, args->seq, &got) && got != want) {
            tell_mismatch(c);
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
    return c->boards.arena == NULL ? OBC_SUCCESS : find_mismatch(c, args, err);
}

obc_result_t obc__check_explain(struct obc__check *c, const struct obc__coll_args *args,
                                obc_result_t res, struct obc__err *err)
{
    if ((res == OBC_ERR_MISMATCH || res == OBC_ERR_ABORTED) && c->boards.arena != NULL &&
        find_mismatch(c, args, err) != OBC_SUCCESS) {
        /* Told by the rank that saw it, or by an abort: the culprit named
         * from here too, when the boards show one. */
        return OBC_ERR_MISMATCH;
    }
    return res;
}
