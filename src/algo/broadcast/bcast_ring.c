/* SPDX-License-Identifier: MIT */
/*
 * bcast_ring.c - broadcast staged through a one-to-many ring of the host
 * arena: the root copies each chunk into a slot once, every other local rank
 * copies it out and releases the slot. Two registry entries share this body:
 *
 *  eager  - the ring of many small slots. Latency algorithm: one slot write
 *           and one flag store; the root returns as soon as its data is in
 *           the ring and waits for readers only when the ring is full.
 *           alpha ~ one cache-line transfer (~0.2 us), bytes = 2n per reader.
 *  arena  - the ring of a few large chunks (OBC_CHUNK_BYTES x
 *           OBC_PIPELINE_DEPTH): a pipeline in which the root fills chunk
 *           k+1 while readers drain chunk k. Bandwidth algorithm when
 *           single-copy reads are not permitted. Cost: the root copies n once,
 *           every reader copies n; the slots stay cache-resident. On a host
 *           with more ranks than CPUs, messages larger than that ring go
 *           through a deeper one of the same chunks (plan.deep, select.c).
 *
 *   root:    [c0][c1][c2][c3] -> slot0 slot1 ... (waits when slot k-depth busy)
 *   rank 1:      copy c0  copy c1  copy c2 ...
 *   rank 2:      copy c0  copy c1  copy c2 ...      (all readers in parallel)
 *
 * From OBC_MAPPED_MIN_BYTES, a root whose buffers lie in obc_mem_alloc
 * memory stages nothing: its first slot describes them and every reader
 * copies straight out of the root's memory (bcast_mapped.c).
 *
 * A fused group (several segments) streams through the slots back to back.
 * Every slot carries the operation's stamp and size; a reader that finds a
 * different stamp or a size that does not fit its buffer stops with
 * OBC_ERR_MISMATCH before copying a byte.
 */
#include <string.h>

#include "algo/algo.h"
#include "algo/broadcast/bcast_mapped.h"
#include "core/copy.h"

struct ring_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    int ring;
    bool is_root;
    bool own_copy; /* root: some segment is out of place (recv != send) */
    uint64_t stamp;
    uint64_t first_pos;
    uint64_t nslots;
    uint64_t next; /* slots done so far */
    size_t slot_bytes;
    int streaming; /* write destinations with non-temporal stores */
    enum { MAPPED_UNTRIED, MAPPED_NO, MAPPED_YES } mapped; /* root: bcast_mapped.c's mode */
    struct cursor {
        size_t seg; /* segment index */
        size_t off; /* offset in it */
    } at; /* where the next slot's bytes lie in the segments */
};
_Static_assert(sizeof(struct ring_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

/* Move the next n bytes of the segments from cursor c on, and advance c:
 * gather them from send into the slot (the root), scatter the slot into
 * recv (readers), or copy send to recv (the root's own copy out of place;
 * an in-place segment is skipped). */
enum cursor_way { GATHER, SCATTER, OWN };

static void cursor_copy(const struct ring_state *s, struct cursor *c, unsigned char *slot, size_t n,
                        enum cursor_way way)
{
    while (n > 0) {
        const struct obc__seg *g = &s->args->segs[c->seg];
        size_t k = g->nbytes - c->off;
        if (k > n) {
            k = n;
        }
        if (way == GATHER) {
            /* plain stores: the slot should stay in cache for the readers */
            obc__copy(slot, (const unsigned char *)g->send + c->off, k, 0);
        } else if (way == SCATTER) {
            obc__copy((unsigned char *)g->recv + c->off, slot, k, s->streaming);
        } else if (g->recv != g->send) {
            obc__copy((unsigned char *)g->recv + c->off, (const unsigned char *)g->send + c->off, k,
                      s->streaming);
        }
        if (slot != NULL) {
            slot += k;
        }
        n -= k;
        c->off += k;
        if (c->off == g->nbytes) {
            c->seg++;
            c->off = 0;
        }
    }
}

static size_t chunk_bytes(const struct ring_state *s)
{
    size_t left = s->args->nbytes - (size_t)s->next * s->slot_bytes;
    return left < s->slot_bytes ? left : s->slot_bytes;
}

static void ring_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args,
                      int ring)
{
    struct ring_state *s = state;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->ring = ring;
    s->is_root = ctx->rank == args->root;
    s->stamp = obc__algo_stamp(args);
    s->streaming = args->plan.streaming; /* select.c: OBC_STREAM_MIN_BYTES */
    s->slot_bytes = obc__arena_slot_bytes(ctx->arena, ring);
    s->nslots = (args->nbytes + s->slot_bytes - 1) / s->slot_bytes;
    s->first_pos = obc__arena_ring_reserve(ctx->arena, ring, s->nslots);
    s->mapped = ring != OBC_RING_EAGER && args->plan.mapped ? MAPPED_UNTRIED : MAPPED_NO;
    for (size_t i = 0; s->is_root && i < args->nsegs; i++) {
        s->own_copy |= args->segs[i].recv != args->segs[i].send;
    }
}

/* The position was published already: another rank believes it is the
 * root too. Break the communicator (every local rank's wait returns); the
 * engine then names the other rank from the boards (check_mode.c). */
static obc_result_t second_root(struct ring_state *s)
{
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, -1);
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d is the root (%d), but another rank published this "
                        "broadcast's data as its root first",
                        obc__coll_name(s->args->coll), (unsigned long long)s->args->seq,
                        s->ctx->rank, s->args->root);
}

/* The root's one-copy mode: slot 0 describes its buffers, its own copy
 * overlaps the readers', then it waits until every reader has released
 * the op's last slot (they release all of them at once, in order). */
static obc_result_t root_mapped(struct ring_state *s, struct obc__wait *w)
{
    struct obc__arena *a = s->ctx->arena;
    if (s->mapped == MAPPED_UNTRIED) {
        unsigned char *slot = obc__arena_slot_acquire(a, s->ring, s->first_pos, s->slot_bytes, w);
        if (slot == NULL) {
            return OBC_IN_PROGRESS;
        }
        size_t n = obc__mapped_describe(s->ctx, s->args, slot, s->slot_bytes);
        s->mapped = n > 0 ? MAPPED_YES : MAPPED_NO;
        if (n == 0) {
            return OBC_SUCCESS; /* stage as usual */
        }
        if (!obc__arena_slot_publish(a, s->ring, s->first_pos, n,
                                     s->stamp ^ OBC_MAPPED_STAMP_BIT)) {
            return second_root(s);
        }
        for (size_t i = 0; i < s->args->nsegs; i++) {
            const struct obc__seg *g = &s->args->segs[i];
            if (g->recv != g->send) {
                obc__copy(g->recv, g->send, g->nbytes, s->streaming);
            }
        }
        s->next = s->nslots;
    }
    return obc__arena_slot_drained(a, s->ring, s->first_pos + s->nslots - 1, w) ? OBC_SUCCESS
                                                                                : OBC_IN_PROGRESS;
}

static obc_result_t root_step(struct ring_state *s, struct obc__wait *w)
{
    if (s->mapped != MAPPED_NO) {
        obc_result_t res = root_mapped(s, w);
        if (res != OBC_SUCCESS || s->mapped == MAPPED_YES) {
            return res;
        }
    }
    for (; s->next < s->nslots; s->next++) {
        uint64_t pos = s->first_pos + s->next;
        size_t n = chunk_bytes(s);
        unsigned char *slot = obc__arena_slot_acquire(s->ctx->arena, s->ring, pos, n, w);
        if (slot == NULL) {
            return OBC_IN_PROGRESS;
        }
        struct cursor from = s->at;
        cursor_copy(s, &s->at, slot, n, GATHER);
        if (!obc__arena_slot_publish(s->ctx->arena, s->ring, pos, n, s->stamp)) {
            return second_root(s);
        }
        /* The root's own copy out of place, after the publish: readers
         * need not wait for it. From send, not from the slot: once the
         * readers release it, another root's broadcast may refill it. */
        if (s->own_copy) {
            cursor_copy(s, &from, NULL, n, OWN);
        }
    }
    return OBC_SUCCESS;
}

static obc_result_t mismatch(struct ring_state *s, size_t got_bytes, uint64_t got_stamp)
{
    obc__arena_abort_mismatch(s->ctx->arena, s->ctx->rank, s->args->root);
    return obc__err_set(s->ctx->err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d expected %zu bytes from root %d, but the root sent "
                        "%s (stamp %016llx, expected %016llx)",
                        obc__coll_name(s->args->coll), (unsigned long long)s->args->seq,
                        s->ctx->rank, s->args->nbytes, s->args->root,
                        got_bytes == chunk_bytes(s) ? "a different operation" : "another size",
                        (unsigned long long)got_stamp, (unsigned long long)s->stamp);
}

static obc_result_t reader_step(struct ring_state *s, struct obc__wait *w)
{
    for (; s->next < s->nslots; s->next++) {
        uint64_t pos = s->first_pos + s->next;
        size_t n = 0;
        uint64_t stamp = 0;
        const unsigned char *slot =
            obc__arena_slot_peek(s->ctx->arena, s->ring, pos, &n, &stamp, w);
        if (slot == NULL) {
            w->peer = s->args->root;
            return OBC_IN_PROGRESS;
        }
        if (s->next == 0 && stamp == (s->stamp ^ OBC_MAPPED_STAMP_BIT)) {
            obc_result_t res = obc__mapped_copy(s->ctx, s->args, slot, n, s->streaming);
            if (res == OBC_SUCCESS) {
                obc__arena_slots_release(s->ctx->arena, s->ring, pos, s->nslots);
                s->next = s->nslots;
            }
            return res;
        }
        if (stamp != s->stamp || n != chunk_bytes(s)) {
            return mismatch(s, n, stamp);
        }
        cursor_copy(s, &s->at, (unsigned char *)slot, n, SCATTER);
        obc__arena_slot_release(s->ctx->arena, s->ring, pos);
    }
    return OBC_SUCCESS;
}

static obc_result_t ring_step(void *state, struct obc__wait *w)
{
    struct ring_state *s = state;
    return s->is_root ? root_step(s, w) : reader_step(s, w);
}

/* Every rank reads the root's slots: they must all share its arena. */
static bool one_arena(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->arena_has_all;
}

static void eager_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    ring_init(state, ctx, args, OBC_RING_EAGER);
}

static void arena_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    ring_init(state, ctx, args, args->plan.deep ? OBC_RING_DEEP : OBC_RING_STAGE);
}

const struct obc__algo obc__bcast_eager = {OBC_COLL_BROADCAST, "eager", one_arena, eager_init,
                                           ring_step};
const struct obc__algo obc__bcast_arena = {OBC_COLL_BROADCAST, "arena", one_arena, arena_init,
                                           ring_step};

bool obc__algo_finds_second_root(const struct obc__algo *a)
{
    return a == &obc__bcast_eager || a == &obc__bcast_arena;
}
