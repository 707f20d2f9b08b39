/* SPDX-License-Identifier: MIT */
/*
 * p2p_batch.c - point-to-point messages over the p2p streams that the
 * collectives use (transport.h), and the batch step that moves many of them
 * at once (a group's sends and receives, or a run of queued isend/irecv).
 *
 * Ordering: each (sender, receiver) pair numbers its messages (pair
 * sequence, per peer and direction, kept here); the collective sequence is
 * not touched, so ranks not involved see nothing. A message is its first
 * slot, which carries a header (pair sequence, count, dtype, tag) and as much
 * data as fits, then slots of data; every slot carries a stamp made from
 * the pair sequence and the two ranks, never equal to a collective's. A
 * receiver that finds another stamp at the head of the stream (the pair
 * issued their p2p calls and collectives in a different relative order),
 * or a count, dtype or tag unlike its own, fails with OBC_ERR_MISMATCH naming
 * the sender before it copies a byte, and breaks the communicator, telling
 * the other hosts too.
 *
 * Mismatch on both sides: a send is done only when all its data is in the
 * stream AND the receiver has released the first slot (send_seen, out of
 * band of the slots), which it does only after checking the header, AND
 * (across hosts, where slots after the first are sent by reference from
 * the caller's buffer) those slots have left (send_drained). So a
 * sender whose message does not match is still waiting when the receiver
 * breaks the communicator, and its wait returns the receiver's verdict
 * (OBC_ERR_MISMATCH, naming the receiver).
 *
 * The batch step advances every op that can move: per peer and direction
 * the oldest unfinished one (streams are FIFOs), different peers
 * independently, so a ring shift or an all-to-all written as sends cannot
 * deadlock. It never blocks; progress.c waits on the blocked ops' words.
 *
 * Self: a send to this rank meets the oldest unmatched receive from self
 * in the batch (one copy), or is buffered (copied to the heap, freed when
 * received), so a send to self completes at once, as MPI's buffered mode;
 * a receive from self takes the oldest buffered send first.
 *
 * Any source: a receive whose peer is OBC_ANY_SOURCE first finds its
 * sender (bind_any_source), then is a receive from that rank like any
 * other. Until then it holds the receiving side of every stream that no
 * older receive holds, so a later receive never overtakes it, and it waits
 * on those streams in turn (one futex word at a time, for a turn that
 * grows while nothing comes). It takes only a message of its own tag: a
 * stream whose next message has another tag is left to later receives.
 *
 * Tags are compared, never used to reorder: a pair's messages are taken in
 * the order they were sent, so receiving a later tag first would mean
 * holding the earlier messages' data somewhere, memory that grows with the
 * messages. A named receive whose tag is not its sender's next message's
 * is a mismatch, as a count would be.
 */
#include "engine/p2p_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/copy.h"

#define HDR_MAGIC 0x4f424350u /* "OBCP" */

/* The first slot of a message starts with this. Fixed layout, no padding. */
struct p2p_header {
    uint64_t pseq;
    uint64_t count;
    uint64_t nbytes;
    uint32_t dtype;
    uint32_t magic;
    int32_t tag;
    uint32_t spare; /* 0 */
};

/* One op's progress (in its op->state). */
struct p2p_item {
    uint64_t pseq; /* the pair sequence number, once started */
    uint64_t ticket; /* send: the first slot's, for send_seen */
    size_t moved; /* bytes of the message through the stream */
    bool started, header, streamed, seen, drained, done;
    bool posted; /* recv: the rest of the message lands in place (recv_step) */
    bool blocked; /* the last step could not move it: w says on what */
    obc_result_t result;
    struct obc__wait w;
    int any_next; /* a receive from any source: the stream it looks at first */
};

_Static_assert(sizeof(struct p2p_item) <= OBC_ALGO_STATE_BYTES, "p2p item fits an op's state");

struct self_msg {
    struct self_msg *next;
    size_t count, nbytes;
    obc_dtype_t dtype;
    int tag;
    unsigned char data[];
};

struct obc__p2p_engine {
    int nranks;
    uint64_t *send_seq, *recv_seq; /* [nranks]: next pair sequence per peer */
    unsigned char *claimed; /* [nranks]: per step, which streams an op holds */
    struct obc__op **ops; /* the running batch */
    size_t n, cap;
    struct self_msg *self_head, *self_tail; /* buffered sends to self, oldest first */
    struct obc__arena *bell; /* this rank listens at its doorbell (a receive from any source) */
};

enum { CLAIM_SEND = 1, CLAIM_RECV = 2 };

static struct p2p_item *item_of(const struct obc__op *op)
{
    return (struct p2p_item *)(uintptr_t)op->state;
}

obc_result_t obc__p2p_engine_create(int nranks, struct obc__p2p_engine **out)
{
    struct obc__p2p_engine *pe = calloc(1, sizeof(*pe));
    size_t n = (size_t)nranks;
    if (pe != NULL) {
        pe->nranks = nranks;
        pe->send_seq = calloc(n, sizeof(uint64_t));
        pe->recv_seq = calloc(n, sizeof(uint64_t));
        pe->claimed = calloc(n, 1);
        pe->cap = 16;
        pe->ops = malloc(pe->cap * sizeof(*pe->ops));
    }
    if (pe == NULL || !pe->send_seq || !pe->recv_seq || !pe->claimed || !pe->ops) {
        obc__p2p_engine_destroy(pe);
        return OBC_ERR_NO_MEMORY;
    }
    *out = pe;
    return OBC_SUCCESS;
}

void obc__p2p_engine_destroy(struct obc__p2p_engine *pe)
{
    if (pe == NULL) {
        return;
    }
    while (pe->self_head != NULL) {
        struct self_msg *m = pe->self_head;
        pe->self_head = m->next;
        free(m);
    }
    free(pe->send_seq);
    free(pe->recv_seq);
    free(pe->claimed);
    free(pe->ops);
    free(pe);
}

static void item_reset(struct obc__op *op)
{
    memset(item_of(op), 0, sizeof(struct p2p_item));
}

void obc__p2p_batch_begin(struct obc__p2p_engine *pe, struct obc__op *op)
{
    pe->n = 0;
    pe->ops[pe->n++] = op;
    item_reset(op);
}

bool obc__p2p_batch_add(struct obc__p2p_engine *pe, struct obc__op *op)
{
    if (pe->n == pe->cap) {
        struct obc__op **grown = realloc(pe->ops, 2 * pe->cap * sizeof(*grown));
        if (grown == NULL) {
            return false;
        }
        pe->ops = grown;
        pe->cap *= 2;
    }
    pe->ops[pe->n++] = op;
    item_reset(op);
    return true;
}

size_t obc__p2p_batch_len(const struct obc__p2p_engine *pe)
{
    return pe->n;
}

struct obc__op *obc__p2p_batch_op(const struct obc__p2p_engine *pe, size_t i)
{
    return pe->ops[i];
}

void obc__p2p_batch_end(struct obc__p2p_engine *pe)
{
    if (pe->bell != NULL) {
        obc__arena_doorbell_listen(pe->bell, -1);
        pe->bell = NULL;
    }
}

void obc__p2p_batch_forget(struct obc__p2p_engine *pe, size_t i)
{
    pe->ops[i] = NULL;
}

bool obc__p2p_op_finished(const struct obc__op *op, obc_result_t *res)
{
    const struct p2p_item *it = item_of(op);
    *res = it->result;
    return it->done;
}

/* The stamp of every slot of message pseq from `from` to `to`: a full
 * 64-bit mix, with a tag no collective stamp (seq << 32 ^ hash) has by
 * design, so either reader sees the other's slot as a mismatch. */
static uint64_t p2p_stamp(uint64_t pseq, int from, int to)
{
    uint64_t h = 0x70327020b0c5eed1ull ^ pseq;
    h ^= ((uint64_t)(uint32_t)from << 32) | (uint32_t)to;
    h *= 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

static const char *kind_name(const struct obc__op *op)
{
    return op->args.p2p == OBC__P2P_SEND ? "send to" : "recv from";
}

/* A mismatch found by this rank as receiver: the message names the sender,
 * the communicator breaks here, on this host and on the other hosts. */
static obc_result_t mismatch(struct obc__algo_ctx *ctx, const struct obc__op *op, const char *what)
{
    const struct obc__coll_args *a = &op->args;
    obc_result_t res = obc__err_set(ctx->err, OBC_ERR_MISMATCH,
                                    "obc_recv on rank %d from rank %d (message #%llu, %zu "
                                    "elements of %s): %s",
                                    ctx->rank, a->root, (unsigned long long)item_of(op)->pseq,
                                    a->count, obc__dtype_name(a->dtype), what);
    if (ctx->arena != NULL) {
        obc__arena_abort_mismatch(ctx->arena, ctx->rank, a->root);
    }
    obc__p2p_tell_verdict(ctx->p2p, obc__verdict_pair(OBC_ERR_MISMATCH, ctx->rank, a->root));
    return res;
}

static void block(struct p2p_item *it)
{
    it->blocked = true;
}

/* Put as much of the message into the stream as the stream takes. */
static void send_step(struct obc__algo_ctx *ctx, struct obc__op *op, bool *moved)
{
    struct p2p_item *it = item_of(op);
    const struct obc__coll_args *a = &op->args;
    int peer = a->root;
    size_t slot_bytes = ctx->p2p_slot_bytes, total = a->nbytes;
    uint64_t stamp = p2p_stamp(it->pseq, ctx->rank, peer);
    const unsigned char *src = op->seg.send;
    while (!it->streamed) {
        unsigned char *slot = obc__p2p_send_acquire(ctx->p2p, peer, &it->w);
        if (slot == NULL) {
            block(it);
            return;
        }
        size_t room = it->header ? slot_bytes : slot_bytes - sizeof(struct p2p_header);
        size_t n = total - it->moved < room ? total - it->moved : room;
        if (!it->header) {
            struct p2p_header h = {it->pseq,  a->count, total, (uint32_t)a->dtype,
                                   HDR_MAGIC, a->tag,   0};
            memcpy(slot, &h, sizeof(h));
            if (n > 0) {
                memcpy(slot + sizeof(h), src, n);
            }
            it->ticket = obc__p2p_send_publish_tracked(ctx->p2p, peer, sizeof(h) + n, stamp);
            it->header = true;
        } else { /* by reference: to another host the link sends it from src (drained below) */
            obc__p2p_send_publish_ref(ctx->p2p, peer, slot, 0, src + it->moved, n, stamp);
        }
        it->moved += n;
        it->streamed = it->moved == total;
        *moved = true;
    }
}

/* Check a message's first slot against this receive. */
static obc_result_t check_header(struct obc__algo_ctx *ctx, const struct obc__op *op,
                                 const unsigned char *slot, size_t got)
{
    const struct obc__coll_args *a = &op->args;
    struct p2p_header h;
    char what[200];
    if (got < sizeof(h)) {
        return mismatch(ctx, op, "the sender's first slot holds no message header");
    }
    memcpy(&h, slot, sizeof(h));
    if (h.magic != HDR_MAGIC || h.pseq != item_of(op)->pseq) {
        return mismatch(ctx, op, "the sender's stream is out of order (bad message header)");
    }
    if (h.count != a->count || h.dtype != (uint32_t)a->dtype || h.nbytes != a->nbytes) {
        snprintf(what, sizeof(what), "rank %d sent %llu elements of %s (%llu bytes)", a->root,
                 (unsigned long long)h.count, obc__dtype_name((obc_dtype_t)h.dtype),
                 (unsigned long long)h.nbytes);
        return mismatch(ctx, op, what);
    }
    if (h.tag != a->tag) {
        snprintf(what, sizeof(what),
                 "rank %d's next message has tag %d where this receive has tag %d (tags are "
                 "compared, not reordered: a pair's messages are received in send order)",
                 a->root, (int)h.tag, a->tag);
        return mismatch(ctx, op, what);
    }
    size_t room = ctx->p2p_slot_bytes - sizeof(h);
    if (got - sizeof(h) != (a->nbytes < room ? a->nbytes : room)) {
        return mismatch(ctx, op, "the first slot's size does not fit the message");
    }
    return OBC_SUCCESS;
}

/* Take as much of the message out of the stream as has arrived. */
static obc_result_t recv_step(struct obc__algo_ctx *ctx, struct obc__op *op, bool *moved)
{
    struct p2p_item *it = item_of(op);
    const struct obc__coll_args *a = &op->args;
    int peer = a->root;
    uint64_t want = p2p_stamp(it->pseq, peer, ctx->rank);
    unsigned char *dst = op->seg.recv;
    while (!it->done) {
        size_t got = 0;
        uint64_t stamp = 0;
        unsigned char *slot = obc__p2p_recv_peek(ctx->p2p, peer, &got, &stamp, &it->w);
        if (slot == NULL) {
            block(it);
            return OBC_IN_PROGRESS;
        }
        if (stamp != want) {
            return mismatch(ctx, op,
                            "the sender's next item is not this message (a collective, or "
                            "point-to-point calls issued in another order than the "
                            "receiver's)");
        }
        size_t n = got;
        bool landed = false; /* its bytes are in buf already */
        if (!it->header) {
            obc_result_t res = check_header(ctx, op, slot, got);
            if (res != OBC_SUCCESS) {
                return res;
            }
            slot += sizeof(struct p2p_header);
            n -= sizeof(struct p2p_header);
            it->header = true;
            /* Checked: from another host the slots after this one then land
             * in buf as they arrive (posted only now, so that a message that
             * does not match writes no byte of buf). */
            if (a->nbytes > n) {
                obc__p2p_recv_post(ctx->p2p, peer, want, got, dst + n, a->nbytes - n);
                it->posted = true;
            }
        } else if (n !=
                   (a->nbytes - it->moved < ctx->p2p_slot_bytes ? a->nbytes - it->moved
                                                                : ctx->p2p_slot_bytes)) {
            return mismatch(ctx, op, "a slot's size does not fit the message");
        } else {
            landed = it->posted && obc__p2p_recv_landed(ctx->p2p, peer);
        }
        if (n > 0 && !landed) {
            obc__copy(dst + it->moved, slot, n, 0);
        }
        obc__p2p_recv_release(ctx->p2p, peer);
        it->moved += n;
        it->done = it->moved == a->nbytes;
        if (it->done && it->posted) {
            obc__p2p_recv_unpost(ctx->p2p, peer);
            it->posted = false;
        }
        *moved = true;
    }
    return OBC_SUCCESS;
}

static void start(struct obc__p2p_engine *pe, struct obc__op *op)
{
    struct p2p_item *it = item_of(op);
    if (!it->started) {
        int peer = op->args.root;
        it->pseq = op->args.p2p == OBC__P2P_SEND ? pe->send_seq[peer]++ : pe->recv_seq[peer]++;
        it->started = true;
    }
}

/* A receive from any source sleeps on its rank's doorbell in the host
 * arena, which every message to the rank rings (arena.h), so whichever
 * stream delivers wakes it; it looks again at least this often anyway.
 * It used to sleep on one stream at a time, in turns up to 2 ms, so a
 * message on another stream waited for the turn's end (3 and 4 ranks on 2
 * cores: median 0.6-0.9 ms; with the doorbell 6-7 us on one host,
 * bench/results/2026-12-03-any-source). */
#define ANY_LOOK_AGAIN_NS 20000000

/* A receive from any source becomes a receive from peer (a no-op for a
 * receive from a named rank). */
static void bind_source(struct obc__p2p_engine *pe, const struct obc__algo_ctx *ctx,
                        struct obc__op *op, int peer)
{
    if (op->args.root != OBC_ANY_SOURCE) {
        return;
    }
    op->args.root = peer;
    if (op->args.source != NULL) {
        *op->args.source = peer;
    }
    if (peer != ctx->rank) {
        start(pe, op); /* takes the pair's next sequence number */
    }
}

static obc_result_t self_match(struct obc__algo_ctx *ctx, struct obc__op *recv, size_t count,
                               obc_dtype_t dtype, int tag, size_t nbytes, const void *data)
{
    const struct obc__coll_args *a = &recv->args;
    if (count != a->count || dtype != a->dtype || tag != a->tag) {
        return obc__err_set(ctx->err, OBC_ERR_MISMATCH,
                            "obc_recv on rank %d from itself: expected %zu elements of %s with "
                            "tag %d, its send to itself has %zu elements of %s with tag %d",
                            ctx->rank, a->count, obc__dtype_name(a->dtype), a->tag, count,
                            obc__dtype_name(dtype), tag);
    }
    if (nbytes > 0) {
        obc__copy(recv->seg.recv, data, nbytes, 0);
    }
    item_of(recv)->done = true;
    return OBC_SUCCESS;
}

/* The oldest send to self in the batch that is not buffered yet, from *next
 * on (NULL: none). */
static struct obc__op *next_self_send(const struct obc__p2p_engine *pe, int self, size_t *next)
{
    for (; *next < pe->n; ++*next) {
        struct obc__op *s = pe->ops[*next];
        if (s != NULL && s->args.root == self && s->args.p2p == OBC__P2P_SEND &&
            !item_of(s)->done) {
            return s;
        }
    }
    return NULL;
}

/* Sends to self and receives from self, in issue order (see the top). A
 * receive from any source takes a send to self only of its own tag. */
static obc_result_t self_step(struct obc__p2p_engine *pe, struct obc__algo_ctx *ctx, bool *moved)
{
    size_t next_send = 0;
    for (size_t i = 0; i < pe->n; i++) {
        struct obc__op *r = pe->ops[i];
        if (r == NULL || r->args.p2p != OBC__P2P_RECV || item_of(r)->done ||
            (r->args.root != ctx->rank && r->args.root != OBC_ANY_SOURCE)) {
            continue;
        }
        bool any = r->args.root == OBC_ANY_SOURCE;
        obc_result_t res = OBC_SUCCESS;
        if (pe->self_head != NULL) {
            struct self_msg *m = pe->self_head;
            if (any && m->tag != r->args.tag) {
                continue;
            }
            bind_source(pe, ctx, r, ctx->rank);
            pe->self_head = m->next;
            res = self_match(ctx, r, m->count, m->dtype, m->tag, m->nbytes, m->data);
            free(m);
        } else {
            struct obc__op *s = next_self_send(pe, ctx->rank, &next_send);
            if (s == NULL) {
                break; /* nothing to receive yet: later receives wait too */
            }
            if (any && s->args.tag != r->args.tag) {
                continue;
            }
            bind_source(pe, ctx, r, ctx->rank);
            res = self_match(ctx, r, s->args.count, s->args.dtype, s->args.tag, s->args.nbytes,
                             s->seg.send);
            item_of(s)->done = true;
        }
        if (res != OBC_SUCCESS) {
            return res;
        }
        *moved = true;
    }
    for (size_t i = 0; i < pe->n; i++) {
        struct obc__op *s = pe->ops[i];
        if (s == NULL || s->args.root != ctx->rank || s->args.p2p != OBC__P2P_SEND ||
            item_of(s)->done) {
            continue;
        }
        struct self_msg *m = malloc(sizeof(*m) + s->args.nbytes);
        if (m == NULL) {
            return obc__err_set(ctx->err, OBC_ERR_NO_MEMORY, "obc_send to self: %zu bytes",
                                s->args.nbytes);
        }
        *m = (struct self_msg){NULL, s->args.count, s->args.nbytes, s->args.dtype, s->args.tag};
        if (s->args.nbytes > 0) {
            obc__copy(m->data, s->seg.send, s->args.nbytes, 0);
        }
        if (pe->self_head == NULL) {
            pe->self_head = m;
        } else {
            pe->self_tail->next = m;
        }
        pe->self_tail = m;
        item_of(s)->done = true;
        *moved = true;
    }
    return OBC_SUCCESS;
}

/* The tag of the message whose first slot is head (got bytes); a slot too
 * short for a header reads as `mine`, so that check_header reports it. */
static int head_tag(const unsigned char *head, size_t got, int mine)
{
    struct p2p_header h;
    if (got < sizeof(h)) {
        return mine;
    }
    memcpy(&h, head, sizeof(h));
    return h.tag;
}

/* Find the sender of a receive from any source (self_step has already
 * given it a send to self if there was one): the first stream, from a
 * rotating start, whose head is the pair's next message and has this
 * receive's tag. A head that is something else (a collective of a rank that
 * is ahead of this one) is that rank not having sent yet, not a mismatch; a
 * message of another tag is left, unclaimed, to the receives after this one.
 * Returns whether it bound; if not, it->w is the doorbell (every
 * communicator has a host arena, so every rank has one). */
static bool bind_any_source(struct obc__p2p_engine *pe, struct obc__algo_ctx *ctx,
                            struct obc__op *op)
{
    struct p2p_item *it = item_of(op);
    int n = pe->nranks, waits_on = -1;
    if (n == 1) {
        return false; /* only a send to self can match: without one it never comes */
    }
    if (pe->bell == NULL) { /* listen before looking: a message after the look rings */
        obc__arena_doorbell_listen(ctx->arena, 1);
        pe->bell = ctx->arena;
    }
    struct obc__wait bell = {.peer = -1};
    obc__arena_doorbell_wait(ctx->arena, &bell);
    for (int k = 0; k < n; k++) {
        int peer = (it->any_next + k) % n;
        if (peer == ctx->rank || (pe->claimed[peer] & CLAIM_RECV)) {
            continue;
        }
        pe->claimed[peer] |= CLAIM_RECV;
        size_t got = 0;
        uint64_t stamp = 0;
        struct obc__wait unused = {0};
        const unsigned char *head = obc__p2p_recv_peek(ctx->p2p, peer, &got, &stamp, &unused);
        if (head != NULL) {
            if (stamp != p2p_stamp(pe->recv_seq[peer], peer, ctx->rank)) {
                continue; /* that rank has not sent yet */
            }
            if (head_tag(head, got, op->args.tag) != op->args.tag) {
                pe->claimed[peer] &= (unsigned char)~CLAIM_RECV; /* a later receive's message */
                continue;
            }
            bind_source(pe, ctx, op, peer);
            return true;
        }
        waits_on = waits_on < 0 ? peer : waits_on;
    }
    it->any_next = ((waits_on >= 0 ? waits_on : it->any_next) + 1) % n;
    it->w = bell; /* peer -1: a timeout names no sender, any of them could have sent */
    it->w.turn_ns = ANY_LOOK_AGAIN_NS;
    block(it);
    return false;
}

/* One op to another rank: the oldest unfinished op per stream moves. */
static obc_result_t peer_step(struct obc__p2p_engine *pe, struct obc__algo_ctx *ctx,
                              struct obc__op *op, bool *moved)
{
    struct p2p_item *it = item_of(op);
    if (op->args.root == OBC_ANY_SOURCE) {
        if (!bind_any_source(pe, ctx, op)) {
            return OBC_SUCCESS;
        }
        *moved = true;
        obc_result_t res = recv_step(ctx, op, moved); /* bind claimed its stream */
        return res == OBC_IN_PROGRESS ? OBC_SUCCESS : res;
    }
    int peer = op->args.root;
    if (op->args.p2p == OBC__P2P_RECV) {
        if (pe->claimed[peer] & CLAIM_RECV) {
            return OBC_SUCCESS;
        }
        pe->claimed[peer] |= CLAIM_RECV;
        start(pe, op);
        obc_result_t res = recv_step(ctx, op, moved);
        return res == OBC_IN_PROGRESS ? OBC_SUCCESS : res;
    }
    if (!it->streamed) {
        if (pe->claimed[peer] & CLAIM_SEND) {
            return OBC_SUCCESS;
        }
        pe->claimed[peer] |= CLAIM_SEND;
        start(pe, op);
        send_step(ctx, op, moved);
    }
    if (it->streamed && !it->seen) {
        it->seen = obc__p2p_send_seen(ctx->p2p, peer, it->ticket, &it->w);
        if (!it->seen) {
            block(it);
        }
    }
    if (it->seen && !it->drained) { /* the caller may reuse its buffer once the send is done */
        it->drained = obc__p2p_send_drained(ctx->p2p, peer, &it->w);
        if (!it->drained) {
            block(it);
        }
    }
    it->done = it->streamed && it->seen && it->drained;
    *moved |= it->done;
    return OBC_SUCCESS;
}

obc_result_t obc__p2p_batch_step(struct obc__p2p_engine *pe, struct obc__algo_ctx *ctx, bool *moved)
{
    bool all_done = true;
    *moved = false;
    memset(pe->claimed, 0, (size_t)pe->nranks);
    obc_result_t res = self_step(pe, ctx, moved);
    for (size_t i = 0; res == OBC_SUCCESS && i < pe->n; i++) {
        struct obc__op *op = pe->ops[i];
        if (op == NULL) {
            continue; /* finished and completed: its memory may be gone */
        }
        struct p2p_item *it = item_of(op);
        it->blocked = false;
        if (!it->done && op->args.root != ctx->rank) {
            res = peer_step(pe, ctx, op, moved);
        }
        all_done &= it->done;
    }
    if (res != OBC_SUCCESS) {
        return res;
    }
    return all_done ? OBC_SUCCESS : OBC_IN_PROGRESS;
}

size_t obc__p2p_batch_waits(const struct obc__p2p_engine *pe, struct obc__wait *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < pe->n && k < max; i++) {
        if (pe->ops[i] == NULL) {
            continue;
        }
        const struct p2p_item *it = item_of(pe->ops[i]);
        if (!it->done && it->blocked) {
            out[k++] = it->w;
        }
    }
    return k;
}

void obc__p2p_batch_describe(const struct obc__p2p_engine *pe, char *out, size_t nbytes)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < pe->n && used + 1 < nbytes; i++) {
        const struct obc__op *op = pe->ops[i];
        if (op == NULL || item_of(op)->done) {
            continue;
        }
        const struct p2p_item *it = item_of(op);
        int n = op->args.root == OBC_ANY_SOURCE
            ? snprintf(out + used, nbytes - used, "%srecv from any rank (%zu bytes)",
                       used ? ", " : "", op->args.nbytes)
            : snprintf(out + used, nbytes - used, "%s%s rank %d (#%llu, %zu bytes%s)",
                       used ? ", " : "", kind_name(op), op->args.root, (unsigned long long)it->pseq,
                       op->args.nbytes,
                       it->streamed && !it->seen ? ", waiting for the receiver" : "");
        used = n < 0 ? nbytes : used + (size_t)n;
    }
}
