/* SPDX-License-Identifier: MIT */
/*
 * px.c - the personal exchange (px.h): which units a rank has in each
 * personal collective, and moving their messages item by item.
 *
 * Units, for n ranks, this rank r:
 *  - alltoall, alltoallv, allgatherv (pairwise exchange): n units; in unit
 *    k rank r exchanges with p = (k - r) mod n, both ways. The pairing is
 *    symmetric (p's partner in unit k is r), so both ends of a pair move
 *    their two messages in the same unit, and over the n units every rank
 *    meets every other once and itself once (its local copy). Bytes per
 *    rank: (n - 1) blocks out and in, n - 1 steps of latency, pipelined
 *    over peers_in_flight units. In place (alltoall), the message to p
 *    leaves the very region the one from p lands in, so a unit receives
 *    only the bytes it has already sent.
 *       4 ranks, unit k:  k=0: 0-0 1-3 2-2 3-1   k=1: 0-1 2-3
 *                         k=2: 0-2 1-1 3-3       k=3: 0-3 1-2
 *  - gather (direct): the root has n units, unit k receives from root + k
 *    (k = 0: its own block), peers_in_flight of them at once; every other
 *    rank has one unit, its send. scatter: the same, reversed.
 * A unit whose message is empty still moves one item (the header), so a
 * count that differs between two ranks is always seen by the receiver.
 */
#include "algo/personal/px.h"
#include "core/copy.h"

#include <string.h>

#define PX_HEADER 8u
/* A pulled message's one item: its length with this bit, and its address (px.h). */
#define PX_PULL_BIT (1ull << 63)
#define PX_PULL_HEADER 16u
/* The item that tells a sender its pulled message was read. */
#define PX_ACK 0x4b43414c4c55504full /* "OPULLACK" */

/* base + elems elements; base itself for an offset of 0 (base may then be
 * NULL, for a message of no bytes). */
static unsigned char *at(const void *base, size_t elems, size_t esize)
{
    size_t off = elems * esize;
    return off == 0 ? (unsigned char *)base : (unsigned char *)base + off;
}

static void msg(struct px_xfer *x, int peer, const void *buf, size_t nbytes)
{
    x->peer = peer;
    x->buf = (unsigned char *)buf;
    x->nbytes = nbytes;
    x->finished = false;
}

/* Is a message of nbytes between this rank and peer pulled (px.h)? Both
 * ends ask with the same size and hosts, so both answer alike. */
static bool pulls(const struct px_run *r, int peer, size_t nbytes)
{
    const struct obc__algo_ctx *c = r->ctx;
    return r->pull_min > 0 && nbytes >= r->pull_min && c->host_of[peer] == c->host_of[r->me];
}

static void copy(void *dst, const void *src, size_t nbytes)
{
    if (nbytes > 0 && dst != src) {
        obc__copy(dst, src, nbytes, 0);
    }
}

static void mark_pulls(const struct px_run *r, struct px_unit *x)
{
    x->send.pulled = pulls(r, x->send.peer, x->send.nbytes);
    x->recv.pulled = pulls(r, x->recv.peer, x->recv.nbytes);
    x->ack_due = x->send.pulled;
}

/* Unit u of this rank: its messages, or its local copy done here. */
static void describe(const struct px_run *r, int u, struct px_unit *x)
{
    const struct obc__coll_args *a = r->args;
    const void *send = a->segs[0].send;
    void *recv = a->segs[0].recv;
    const size_t *v = a->vec;
    size_t es = r->esize, blk = a->nbytes, n = (size_t)r->n;
    int me = r->me;
    memset(x, 0, sizeof(*x));
    x->send = (struct px_xfer){.peer = -1, .finished = true};
    x->recv = x->send;
    int p = a->coll == OBC_COLL_GATHER || a->coll == OBC_COLL_SCATTER
        ? (a->root + u) % r->n
        : ((u - me) % r->n + r->n) % r->n;
    switch (a->coll) {
    case OBC_COLL_GATHER:
        if (me != a->root) {
            msg(&x->send, a->root, send, blk);
        } else if (p != me) {
            msg(&x->recv, p, at(recv, (size_t)p, blk), blk);
        } else if (send != recv) { /* recv == send: the root's block is in place */
            copy(at(recv, (size_t)me, blk), send, blk);
        }
        break;
    case OBC_COLL_SCATTER:
        if (me != a->root) {
            msg(&x->recv, a->root, recv, blk);
        } else if (p != me) {
            msg(&x->send, p, at(send, (size_t)p, blk), blk);
        } else if (send != recv) {
            copy(recv, at(send, (size_t)me, blk), blk);
        }
        break;
    case OBC_COLL_ALLTOALL:
        if (p != me) {
            msg(&x->send, p, at(send, (size_t)p, blk), blk);
            msg(&x->recv, p, at(recv, (size_t)p, blk), blk);
            x->trails = send == recv;
        } else {
            copy(at(recv, (size_t)me, blk), at(send, (size_t)me, blk), blk);
        }
        break;
    case OBC_COLL_ALLTOALLV: /* v: sendcounts, sdispls, recvcounts, rdispls */
        if (p != me) {
            msg(&x->send, p, at(send, v[n + (size_t)p], es), v[p] * es);
            msg(&x->recv, p, at(recv, v[3 * n + (size_t)p], es), v[2 * n + (size_t)p] * es);
            mark_pulls(r, x);
        } else {
            copy(at(recv, v[3 * n + (size_t)me], es), at(send, v[n + (size_t)me], es), v[me] * es);
        }
        break;
    default: { /* allgatherv; v: recvcounts, displs; in place: own block at displs[me] */
        const void *own = send == recv ? at(recv, v[n + (size_t)me], es) : send;
        if (p != me) {
            msg(&x->send, p, own, v[me] * es);
            msg(&x->recv, p, at(recv, v[n + (size_t)p], es), v[p] * es);
            mark_pulls(r, x);
        } else {
            copy(at(recv, v[n + (size_t)me], es), own, v[me] * es);
        }
        break;
    }
    }
}

void px_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct px_run *r = state;
    memset(r, 0, sizeof(*r));
    r->ctx = ctx;
    r->args = args;
    r->stamp = obc__algo_stamp(args);
    r->esize = obc_dtype_size(args->dtype);
    r->slot = ctx->p2p_slot_bytes;
    r->me = ctx->rank;
    r->n = ctx->nranks;
    bool rooted = args->coll == OBC_COLL_GATHER || args->coll == OBC_COLL_SCATTER;
    r->nunits = rooted && r->me != args->root ? 1 : r->n;
    /* select.c: a root's peers served at once, or a pairwise exchange's
     * partners (see px_step for how a rank with several waits). */
    int w = args->plan.peers_in_flight;
    r->inflight = w < 1 ? 1 : w > PX_MAX_INFLIGHT ? PX_MAX_INFLIGHT : w;
    r->pairwise = !rooted;
    r->turn_ns = PX_TURN_MIN_NS;
    r->pull_min = args->plan.pull_min_bytes;
    /* In place, an alltoall receives where it sends from: a byte must be
     * in a slot before the region is overwritten (trails). */
    r->by_ref = !(args->coll == OBC_COLL_ALLTOALL && args->segs[0].send == args->segs[0].recv);
}

static size_t next_len(const struct px_run *r, const struct px_xfer *x, size_t *hdr)
{
    size_t room = r->slot - (*hdr = x->started ? 0 : PX_HEADER), left = x->nbytes - x->done;
    return left < room ? left : room;
}

static obc_result_t send_item(struct px_run *r, struct px_xfer *x, struct obc__wait *w)
{
    if (x->referenced && x->done == x->nbytes) { /* every item out: wait until none is referenced */
        if (!obc__p2p_send_drained(r->ctx->p2p, x->peer, w)) {
            return OBC_IN_PROGRESS;
        }
        x->finished = true;
        return OBC_SUCCESS;
    }
    unsigned char *slot = obc__p2p_send_acquire(r->ctx->p2p, x->peer, w);
    if (slot == NULL) {
        w->peer = x->peer;
        return OBC_IN_PROGRESS;
    }
    if (x->pulled) { /* the header says where the bytes are; the receiver reads them */
        uint64_t hdr[2] = {(uint64_t)x->nbytes | PX_PULL_BIT, (uint64_t)(uintptr_t)x->buf};
        memcpy(slot, hdr, sizeof(hdr));
        obc__p2p_send_publish(r->ctx->p2p, x->peer, PX_PULL_HEADER, r->stamp);
        x->started = x->finished = true;
        x->done = x->nbytes;
        return OBC_SUCCESS;
    }
    size_t hdr, len = next_len(r, x, &hdr);
    if (hdr != 0) {
        uint64_t total = x->nbytes;
        memcpy(slot, &total, sizeof(total));
    }
    if (r->by_ref) {
        x->referenced |= obc__p2p_send_publish_ref(r->ctx->p2p, x->peer, slot, hdr,
                                                   at(x->buf, x->done, 1), len, r->stamp);
    } else {
        copy(slot + hdr, at(x->buf, x->done, 1), len);
        obc__p2p_send_publish(r->ctx->p2p, x->peer, hdr + len, r->stamp);
    }
    x->started = true;
    x->done += len;
    x->finished = x->done == x->nbytes && !x->referenced;
    return OBC_SUCCESS;
}

/* The item from peer is not what this operation expects: break the
 * communicator (every local rank's wait returns) and say why. */
static obc_result_t mismatch(struct px_run *r, int peer, size_t got, uint64_t stamp,
                             const uint64_t *total, size_t want)
{
    const struct obc__coll_args *a = r->args;
    obc__arena_abort_mismatch(r->ctx->arena, r->ctx->rank, peer);
    if (total != NULL) {
        return obc__err_set(r->ctx->err, OBC_ERR_MISMATCH,
                            "%s #%llu: rank %d sends %llu elements to rank %d, but rank %d "
                            "expects %zu from rank %d (their counts differ)",
                            obc__coll_name(a->coll), (unsigned long long)a->seq, peer,
                            (unsigned long long)(*total / r->esize), r->me, r->me, want / r->esize,
                            peer);
    }
    return obc__err_set(r->ctx->err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d expected its data from rank %d, but rank %d sent %zu "
                        "bytes of %s (stamp %016llx, expected %016llx)",
                        obc__coll_name(a->coll), (unsigned long long)a->seq, r->me, peer, peer, got,
                        stamp == r->stamp ? "it, cut differently" : "a different operation",
                        (unsigned long long)stamp, (unsigned long long)r->stamp);
}

/* *transport: the wait in *w is the transport's (else the unit waits on
 * its own send, in place). */
static obc_result_t recv_item(struct px_run *r, struct px_unit *u, struct obc__wait *w,
                              bool *transport)
{
    struct px_xfer *x = &u->recv;
    size_t hdr, len = next_len(r, x, &hdr), got = 0;
    uint64_t stamp = 0;
    *transport = false;
    if (u->trails && !u->send.finished && x->done + len > u->send.done) {
        return OBC_IN_PROGRESS;
    }
    unsigned char *slot = obc__p2p_recv_peek(r->ctx->p2p, x->peer, &got, &stamp, w);
    if (slot == NULL) {
        w->peer = x->peer;
        *transport = true;
        return OBC_IN_PROGRESS;
    }
    if (stamp != r->stamp || got < hdr) {
        return mismatch(r, x->peer, got, stamp, NULL, x->nbytes);
    }
    if (hdr != 0) {
        uint64_t total;
        memcpy(&total, slot, sizeof(total));
        if (total != x->nbytes) { /* a pulled message's length too: it is larger */
            total &= ~PX_PULL_BIT;
            return mismatch(r, x->peer, got, stamp, &total, x->nbytes);
        }
    }
    if (got != hdr + len) {
        return mismatch(r, x->peer, got, stamp, NULL, x->nbytes);
    }
    if (!u->posted || !obc__p2p_recv_landed(r->ctx->p2p, x->peer)) {
        copy(at(x->buf, x->done, 1), slot + hdr, len);
    }
    obc__p2p_recv_release(r->ctx->p2p, x->peer);
    x->started = true;
    x->done += len;
    x->finished = x->done == x->nbytes;
    if (x->finished && u->posted) {
        obc__p2p_recv_unpost(r->ctx->p2p, x->peer);
        u->posted = false;
    }
    return OBC_SUCCESS;
}

/* The one item of a pulled message: check it, release it, read the bytes
 * from the sender's buffer, and owe the sender an ack. */
static obc_result_t pull_item(struct px_run *r, struct px_unit *u, struct obc__wait *w,
                              bool *transport)
{
    struct px_xfer *x = &u->recv;
    size_t got = 0;
    uint64_t stamp = 0, hdr[2] = {0, 0};
    const unsigned char *slot = obc__p2p_recv_peek(r->ctx->p2p, x->peer, &got, &stamp, w);
    *transport = slot == NULL;
    if (slot == NULL) {
        w->peer = x->peer;
        return OBC_IN_PROGRESS;
    }
    if (stamp != r->stamp || got < PX_HEADER) {
        return mismatch(r, x->peer, got, stamp, NULL, x->nbytes);
    }
    memcpy(hdr, slot, got < sizeof(hdr) ? got : sizeof(hdr));
    if (hdr[0] != ((uint64_t)x->nbytes | PX_PULL_BIT)) {
        uint64_t total = hdr[0] & ~PX_PULL_BIT;
        return mismatch(r, x->peer, got, stamp, &total, x->nbytes);
    }
    if (got != PX_PULL_HEADER) {
        return mismatch(r, x->peer, got, stamp, NULL, x->nbytes);
    }
    obc__p2p_recv_release(r->ctx->p2p, x->peer);
    obc_result_t res = obc__arena_peer_read(r->ctx->arena, x->peer, x->buf,
                                            (const void *)(uintptr_t)hdr[1], x->nbytes);
    if (res != OBC_SUCCESS) {
        return res;
    }
    x->started = x->finished = true;
    x->done = x->nbytes;
    u->ack_owed = true;
    return OBC_SUCCESS;
}

/* This rank read the message of recv's sender: tell it, after this rank's
 * own message to it (send_item moved its items first). */
static obc_result_t send_ack(struct px_run *r, struct px_unit *u, struct obc__wait *w)
{
    unsigned char *slot = obc__p2p_send_acquire(r->ctx->p2p, u->recv.peer, w);
    if (slot == NULL) {
        w->peer = u->recv.peer;
        return OBC_IN_PROGRESS;
    }
    uint64_t ack = PX_ACK;
    memcpy(slot, &ack, sizeof(ack));
    obc__p2p_send_publish(r->ctx->p2p, u->recv.peer, sizeof(ack), r->stamp);
    u->ack_owed = false;
    return OBC_SUCCESS;
}

/* send's receiver read it: its ack follows the receiver's own message. */
static obc_result_t recv_ack(struct px_run *r, struct px_unit *u, struct obc__wait *w)
{
    size_t got = 0;
    uint64_t stamp = 0, ack = 0;
    int peer = u->send.peer;
    const unsigned char *slot = obc__p2p_recv_peek(r->ctx->p2p, peer, &got, &stamp, w);
    if (slot == NULL) {
        w->peer = peer;
        return OBC_IN_PROGRESS;
    }
    if (got == sizeof(ack)) {
        memcpy(&ack, slot, sizeof(ack));
    }
    if (stamp != r->stamp || ack != PX_ACK) {
        return mismatch(r, peer, got, stamp, NULL, u->send.nbytes);
    }
    obc__p2p_recv_release(r->ctx->p2p, peer);
    u->ack_due = false;
    return OBC_SUCCESS;
}

static bool unit_busy(const struct px_unit *x)
{
    return !(x->send.finished && x->recv.finished) || x->ack_owed || x->ack_due;
}

/* Admit units while the window has room; a local copy finishes at once.
 * A receive of more than one item, unless it lands where this rank sends
 * from (in place), is posted: across hosts its bytes then arrive where
 * they belong, not in slots (obc__p2p_recv_post; a receive within the
 * host is not affected). */
static void admit(struct px_run *r)
{
    while (r->next < r->nunits && r->next < r->first + r->inflight) {
        int i = r->next % r->inflight;
        struct px_unit *x = &r->active[i];
        describe(r, r->next, x);
        if (r->by_ref && !x->recv.finished && !x->recv.pulled &&
            x->recv.nbytes + PX_HEADER > r->slot) {
            obc__p2p_recv_post(r->ctx->p2p, x->recv.peer, r->stamp, PX_HEADER, x->recv.buf,
                               x->recv.nbytes);
            x->posted = true;
        }
        r->busy[i] = unit_busy(x);
        r->next++;
    }
}

/*
 * One pass moves at most one item of every unfinished message in the
 * window; passes repeat while anything moves. When nothing can, the rank
 * sleeps on one word: the oldest blocked receive (its sender's publish
 * wakes it), else the oldest blocked send (its receiver's release).
 *
 * With one pairwise unit in flight that word is one the peer will move
 * without needing this rank: both messages go to and come from the same
 * partner, who is in the same unit (or behind, and gets there, since the
 * rank in the lowest unit always can move). A root's peers each have only
 * their one message to it, so a root may sleep on any of them. But with
 * several pairwise units, a rank asleep on partner A would not drain
 * partner B, B then sleeps on it, ... (a hang at 3 ranks): so then the
 * sleep is a turn (w->turn_ns), over the blocked words in rotation, from
 * PX_TURN_MIN_NS doubling to PX_TURN_MAX_NS while nothing moves. A word
 * that moves ends the turn at once, so while data flows no turn runs out.
 */
obc_result_t px_step(void *state, struct obc__wait *w)
{
    struct px_run *r = state;
    bool moved_any = false;
    for (;;) {
        struct obc__wait blocked[2 * PX_MAX_INFLIGHT], tmp;
        int nrecv = 0, nsend = 0;
        bool moved = false;
        blocked[PX_MAX_INFLIGHT] = (struct obc__wait){.peer = -1};
        admit(r);
        for (int u = r->first; u < r->next; u++) {
            int i = u % r->inflight;
            struct px_unit *x = &r->active[i];
            if (!r->busy[i]) {
                continue;
            }
            if (!x->send.finished || x->ack_owed) {
                tmp = (struct obc__wait){.peer = -1};
                obc_result_t res =
                    !x->send.finished ? send_item(r, &x->send, &tmp) : send_ack(r, x, &tmp);
                moved |= res == OBC_SUCCESS;
                if (res == OBC_IN_PROGRESS) { /* sends after receives */
                    blocked[PX_MAX_INFLIGHT + nsend++] = tmp;
                }
            }
            if (!x->recv.finished || (x->ack_due && x->send.finished)) {
                bool transport = true;
                tmp = (struct obc__wait){.peer = -1};
                obc_result_t res = x->recv.finished ? recv_ack(r, x, &tmp)
                    : x->recv.pulled                ? pull_item(r, x, &tmp, &transport)
                                                    : recv_item(r, x, &tmp, &transport);
                if (res != OBC_SUCCESS && res != OBC_IN_PROGRESS) {
                    return res;
                }
                moved |= res == OBC_SUCCESS;
                if (res == OBC_IN_PROGRESS && transport) {
                    blocked[nrecv++] = tmp;
                }
            }
            r->busy[i] = unit_busy(x);
        }
        int was = r->first;
        while (r->first < r->next && !r->busy[r->first % r->inflight]) {
            r->first++;
        }
        if (r->first == r->nunits) {
            return OBC_SUCCESS;
        }
        moved_any |= moved || r->first != was;
        if (moved || r->first != was) {
            continue;
        }
        int nblocked = nrecv + nsend;
        if (!r->pairwise || r->inflight == 1 || nblocked == 1) {
            *w = nrecv > 0 ? blocked[0] : blocked[PX_MAX_INFLIGHT];
            return OBC_IN_PROGRESS;
        }
        r->turn_ns = moved_any
            ? PX_TURN_MIN_NS
            : (r->turn_ns * 2 < PX_TURN_MAX_NS ? r->turn_ns * 2 : PX_TURN_MAX_NS);
        int k = (int)(r->turn++ % (unsigned)nblocked);
        *w = k < nrecv ? blocked[k] : blocked[PX_MAX_INFLIGHT + k - nrecv];
        w->turn_ns = r->turn_ns;
        return OBC_IN_PROGRESS;
    }
}
