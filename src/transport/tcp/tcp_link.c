/* SPDX-License-Identifier: MIT */
/*
 * tcp_link.c - one link: a socket and two rings of slots, the framing of
 * what crosses it, and the rank's calls on it (tcp_link.h). The progress
 * thread that pumps links, beats and says goodbye is tcp_progress.c;
 * tcp_impl.h holds what both see.
 *
 * A frame is a header (struct obc__tcp_frame) and nbytes of payload. The
 * receiver validates a header before it reads anything into a slot.
 */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "transport/arena.h"
#include "transport/tcp/tcp_impl.h"

/* Sleep until ix reaches `until` (it is `seen` now); the wait returns at
 * any move it sees, and its caller looks again. A target set by an
 * earlier wait on the same index and not yet reached stays when it is
 * nearer: a rank that holds two waits on one link (p2p_batch) and sleeps
 * on either is never woken later than that one asks. Only the rank
 * writes wake_at. */
static void wait_until(struct obc__wait *w, struct obc__tcp_index *ix, uint32_t seen,
                       uint32_t until, int peer)
{
    uint32_t cur = atomic_load_explicit(&ix->wake_at, memory_order_relaxed);
    if (!((int32_t)(cur - seen) > 0 && (int32_t)(cur - until) < 0)) {
        /* before the sleep's sleepers count (both seq_cst): an advance
         * that sees the sleeper sees its target */
        atomic_store_explicit(&ix->wake_at, until, memory_order_seq_cst);
    }
    w->word = &ix->value;
    w->sleepers = &ix->sleepers;
    w->seen = seen;
    w->peer = peer;
    w->sleep_now = true;
}

/* Sleep until ix moves from `seen`. */
static void wait_on(struct obc__wait *w, struct obc__tcp_index *ix, uint32_t seen, int peer)
{
    wait_until(w, ix, seen, seen + 1, peer);
}

static int ring_alloc(struct obc__tcp_ring *r, uint32_t nslots, size_t slot_bytes)
{
    r->mem = malloc((size_t)nslots * slot_bytes);
    r->hdrs = calloc(nslots, sizeof(*r->hdrs));
    return r->mem != NULL && r->hdrs != NULL ? 0 : -1;
}

int obc__tcp_link_init(struct obc__tcp_link *l, uint32_t nslots, size_t slot_bytes)
{
    l->fd = -1;
    atomic_init(&l->remote_verdict, 0);
    pthread_mutex_init(&l->ref_lock, NULL);
    pthread_mutex_init(&l->post_lock, NULL);
    l->send.refs = calloc(nslots, sizeof(*l->send.refs));
    l->recv.landed = calloc(nslots, sizeof(*l->recv.landed));
    return l->send.refs != NULL && l->recv.landed != NULL &&
            ring_alloc(&l->send, nslots, slot_bytes) == 0 &&
            ring_alloc(&l->recv, nslots, slot_bytes) == 0
        ? 0
        : -1;
}

void obc__tcp_link_fini(struct obc__tcp_link *l)
{
    pthread_mutex_destroy(&l->ref_lock);
    pthread_mutex_destroy(&l->post_lock);
    free(l->send.refs);
    free(l->recv.landed);
    free(l->send.mem);
    free(l->send.hdrs);
    free(l->recv.mem);
    free(l->recv.hdrs);
}

/* The wake moves the indexes waiters sleep on (a futex needs the word to
 * change), so nothing may pump a failed link again: its send tail no
 * longer says which frames were published. */
void obc__tcp_link_fail(struct obc__tcp_link *l, obc_result_t code)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&l->error, &none, (int)code)) {
        obc__tcp_index_wake(&l->send.tail);
        obc__tcp_index_wake(&l->recv.head);
        obc__tcp_index_wake(&l->note_rx);
        obc__tcp_index_wake(&l->seen_rx);
    }
}

/* Why a socket call failed: our own abort shut it, or the peer is gone. */
static obc_result_t connection_lost(const struct obc__tcp_link *l)
{
    return l->shut ? OBC_ERR_ABORTED : OBC_ERR_PEER_LOST;
}

void obc__tcp_link_queue_control(struct obc__tcp_link *l, uint32_t magic)
{
    l->ctl = (struct obc__tcp_frame){magic, 0, 0};
    l->ctl_off = 0;
    l->ctl_pending = true;
}

static bool send_ring_empty(const struct obc__tcp_link *l)
{
    return l->send_off == 0 && atomic_load(&l->send.tail.value) == atomic_load(&l->send.head.value);
}

/* How long a link whose peer refused a send, with our data still queued
 * for it, waits before calling that a loss: what the peer sent before it
 * closed (its failure notice, naming the culprit) may wait unread behind a
 * full receive ring, and this rank may meanwhile find the culprit itself
 * (a dead local rank is found within a wait's slice, 100 ms). Well under
 * the 2 s bound on noticing a lost peer. */
#define REFUSED_GRACE_NS 500000000ll

/* The peer reads no more: it said goodbye, or its socket refused a send.
 * Notes, heartbeats and failure notices for it are advice and are
 * dropped; data for it can never arrive, and that is a loss ("left ...
 * while this rank still had data"), at once after a goodbye, or after
 * REFUSED_GRACE_NS unless the frames it left settle it first. A rank
 * still in its last call must not fail because a peer that is done with
 * it left (a note sent every op under OBC_CHECK=2 used to). */
static void stop_sending(struct obc__tcp_link *l)
{
    l->ctl_pending = false;
    l->want_out = false;
    if (!send_ring_empty(l) &&
        (atomic_load(&l->departed) || obc__now_ns() - l->refused_ns >= REFUSED_GRACE_NS)) {
        obc__tcp_link_fail(l, OBC_ERR_PEER_LOST);
    }
}

/* A send met a closed socket. The peer may have said goodbye, or sent
 * its failure notice, and closed before we read it: read what it left
 * before judging. Otherwise a bystander whose send to a rank that broke
 * (and then left) fails first reports that rank "closed without a
 * goodbye" instead of the verdict it sent, which names the culprit.
 * When the receive ring is full, the rest waits for the rank to release
 * slots: a root that finished its last broadcast, said goodbye and closed
 * resets the connection at our next heartbeat or release notice, while
 * the tail of its data and its goodbye are still queued here. Then stop
 * sending and read on: the goodbye, a notice, or a close without either
 * (a loss) settles it. */
static void judge_closed(struct obc__tcp *t, int peer, struct obc__tcp_link *l)
{
    if (!atomic_load(&l->departed)) {
        obc__tcp_link_pump_recv(t, peer);
    }
    if (atomic_load(&l->error) != 0) {
        return; /* its failure notice, just read */
    }
    if (atomic_load(&l->departed)) {
        stop_sending(l);
        return;
    }
    if (atomic_load(&l->recv_paused) && !l->shut) { /* shut: our own abort closed it */
        if (!atomic_load(&l->refused)) {
            l->refused_ns = obc__now_ns();
            atomic_store(&l->refused, true);
        }
        stop_sending(l);
        return;
    }
    obc__tcp_link_fail(l, connection_lost(l));
}

/* The pending control frame (a header, a note's payload), between data
 * frames: true when it is out. */
static bool send_control(struct obc__tcp *t, int peer, struct obc__tcp_link *l)
{
    size_t hdr = sizeof(l->ctl), total = hdr + l->ctl.nbytes;
    size_t in_hdr = l->ctl_off < hdr ? hdr - l->ctl_off : 0;
    size_t done = l->ctl_off - (hdr - in_hdr); /* payload bytes sent */
    ssize_t n = obc__sock_send_two(l->fd, (const unsigned char *)&l->ctl + l->ctl_off - done,
                                   in_hdr, l->ctl_body + done, l->ctl.nbytes - done);
    if (n < 0) {
        judge_closed(t, peer, l);
        return false;
    }
    l->ctl_off += (size_t)n;
    if (l->ctl_off < total) {
        l->want_out = true;
        return false;
    }
    l->ctl_pending = false;
    if (l->ctl.magic == FRAME_FAIL) {
        atomic_store(&l->told, true);
    }
    l->last_tx_ns = obc__now_ns();
    return true;
}

/* Held for a copy of a few bytes, and rarely wanted by two at once; the
 * holder may have been descheduled (ranks outnumber cores), so yield. */
static void note_lock(struct obc__tcp *t)
{
    while (atomic_exchange_explicit(&t->note_lock, true, memory_order_acquire)) {
        obc__yield();
    }
}

static void note_unlock(struct obc__tcp *t)
{
    atomic_store_explicit(&t->note_lock, false, memory_order_release);
}

/* This rank's newest note, when the link has not sent it yet: latest
 * wins, a note replaced before it went out is never sent. */
static void queue_note(struct obc__tcp *t, struct obc__tcp_link *l)
{
    note_lock(t);
    l->note_sent = atomic_load(&t->note_gen);
    memcpy(l->ctl_body, t->note_out, sizeof(l->ctl_body));
    note_unlock(t);
    obc__tcp_link_queue_control(l, FRAME_NOTE);
    l->ctl.nbytes = OBC_P2P_NOTE_BYTES;
}

/* Payload goes to the socket in sends of at most this, each its own TSO
 * burst: a 64 KiB burst can exceed a traffic shaper's bucket (a 500 Mbit/s
 * token bucket of 1 ms holds 62.5 KB), and a shaper that must cut every
 * burst into packets in software costs more CPU than all else here
 * (measured on netlab: 8 hosts at 500 Mbit/s, 41% of the link with 64 KiB
 * bursts, 98% with the bucket raised above them). Larger pieces pay only
 * where the bucket is larger: at 1 Gbit/s (125 KB) an alltoall of 4 MiB
 * per peer gained 1.5 points of the link with 64 KiB-1 MiB pieces, while
 * at 500 Mbit/s they made a broadcast 2.6x slower (92% -> 35%;
 * bench/results/2026-12-04-netlab-send-piece). */
#define SEND_PIECE (32 * 1024)

/* The rest of a frame's header and the next piece of its payload, the
 * payload from `at` on read from the caller's buffer (publish_ref): under
 * the link's ref_lock, so that a rank that detaches the slot (it copies
 * those bytes into the slot and returns to its caller) never races a send
 * that still reads them. Bytes already sent are the same either way. */
static ssize_t send_by_ref(struct obc__tcp_link *l, struct obc__tcp_ref *ref,
                           const unsigned char *hdr, size_t hdr_len, const unsigned char *slot,
                           size_t done, size_t piece)
{
    pthread_mutex_lock(&l->ref_lock);
    const unsigned char *src = atomic_load_explicit(&ref->src, memory_order_relaxed);
    ssize_t n;
    if (src == NULL) { /* detached */
        n = obc__sock_send_two(l->fd, hdr, hdr_len, slot + done, piece);
    } else {
        size_t in_slot = done < ref->at ? ref->at - done : 0;
        in_slot = in_slot < piece ? in_slot : piece;
        n = obc__sock_send_three(l->fd, hdr, hdr_len, slot + done, in_slot,
                                 src + (done + in_slot - ref->at), piece - in_slot);
    }
    pthread_mutex_unlock(&l->ref_lock);
    return n;
}

void obc__tcp_link_pump_send(struct obc__tcp *t, int peer)
{
    struct obc__tcp_link *l = &t->links[peer];
    for (;;) {
        uint64_t failure = atomic_load(&t->failure);
        /* A refused socket takes no more of a frame begun before. */
        if ((l->send_off == 0 || atomic_load(&l->refused)) && obc__tcp_link_reads_no_more(l)) {
            stop_sending(l);
            return;
        }
        /* A note before a failure notice: the peer names the calls from it. */
        if (l->send_off == 0 && !l->ctl_pending && l->note_sent != atomic_load(&t->note_gen)) {
            queue_note(t, l);
        }
        uint64_t released = atomic_load(&l->tracked_released);
        if (l->send_off == 0 && !l->ctl_pending && released != l->seen_told) {
            obc__tcp_link_queue_control(l, FRAME_SEEN); /* between data frames, never behind */
            l->ctl.stamp = released;
            l->seen_told = released;
        }
        if (l->send_off == 0 && !l->ctl_pending && failure != 0 && !l->fail_sent) {
            obc__tcp_link_queue_control(l, FRAME_FAIL);
            l->ctl.stamp = failure;
            l->fail_sent = true;
        }
        if (l->send_off == 0 && l->ctl_pending && !send_control(t, peer, l)) {
            return;
        }
        uint32_t tail = atomic_load_explicit(&l->send.tail.value, memory_order_relaxed);
        if (tail == atomic_load_explicit(&l->send.head.value, memory_order_acquire)) {
            break;
        }
        uint32_t k = tail % t->nslots;
        const struct obc__tcp_frame *h = &l->send.hdrs[k];
        size_t total = sizeof(*h) + h->nbytes;
        /* The rest of the header and the next piece of payload in one call:
         * a small frame leaves as one packet. */
        size_t in_hdr = l->send_off < sizeof(*h) ? sizeof(*h) - l->send_off : 0;
        size_t done = l->send_off - (sizeof(*h) - in_hdr); /* payload bytes sent */
        size_t piece = h->nbytes - done < SEND_PIECE ? h->nbytes - done : SEND_PIECE;
        const unsigned char *rest = (const unsigned char *)h + l->send_off - done;
        const unsigned char *slot = l->send.mem + (size_t)k * t->slot_bytes;
        struct obc__tcp_ref *ref = &l->send.refs[k];
        /* Acquire: a slot that a detach filled (its release store of NULL)
         * is read here without the lock, after the copy. */
        ssize_t n = atomic_load_explicit(&ref->src, memory_order_acquire) == NULL
            ? obc__sock_send_two(l->fd, rest, in_hdr, slot + done, piece)
            : send_by_ref(l, ref, rest, in_hdr, slot, done, piece);
        if (n < 0) {
            judge_closed(t, peer, l);
            return;
        }
        if (n == 0) {
            l->want_out = true; /* the socket is full: resume when it drains */
            return;
        }
        l->send_off += (size_t)n;
        l->last_tx_ns = obc__now_ns();
        if (l->send_off == total) {
            l->send_off = 0;
            if (atomic_load_explicit(&ref->src, memory_order_relaxed) != NULL) {
                pthread_mutex_lock(&l->ref_lock); /* its sender may return once it sees the tail */
                atomic_store_explicit(&ref->src, NULL, memory_order_relaxed);
                pthread_mutex_unlock(&l->ref_lock);
            }
            obc__tcp_index_advance(&l->send.tail);
        }
    }
    l->want_out = false;
}

/* Be woken when the rest of the current frame (up to LOWAT_MAX) has
 * arrived, not for every packet. Meant to save the thread wake-ups per
 * MTU-sized packet on a shaped link; measured on netlab (8 hosts at
 * 500 Mbit/s, 64 MiB) it changed nothing visible (2.79 s before, 2.77 s
 * after): the cost there was the shaper's (see SEND_PIECE). */
#define LOWAT_MAX (128 * 1024)

static void want_bytes(struct obc__tcp_link *l, size_t len)
{
    int lowat = len < LOWAT_MAX ? (int)len : LOWAT_MAX;
    if (lowat != l->lowat && obc__sock_set_rcvlowat(l->fd, lowat) == 0) {
        l->lowat = lowat;
    }
}

enum header_next {
    HEADER_DATA, /* a valid data header (or a note's): read its payload */
    HEADER_NEXT, /* a control frame, handled: read the next frame */
    HEADER_STOP /* stop reading this link (failed, or the peer left) */
};

/* A whole header has arrived in l->incoming: act on a control frame, or
 * check a data frame's header before anything is read into a slot (a
 * wrong magic or a payload larger than a slot fails the link). */
static enum header_next on_header(struct obc__tcp *t, int peer, struct obc__tcp_link *l)
{
    const struct obc__tcp_frame *h = &l->incoming;
    if (h->nbytes == 0 && h->magic == FRAME_FAIL) {
        atomic_store(&l->remote_verdict, h->stamp);
        obc_result_t code = obc__verdict_code(h->stamp);
        obc__tcp_link_fail(l, code != OBC_SUCCESS ? code : OBC_ERR_ABORTED);
        return HEADER_STOP;
    }
    if (h->nbytes == 0 && (h->magic == FRAME_BEAT || h->magic == FRAME_BYE)) {
        l->recv_off = 0;
        if (h->magic == FRAME_BYE) {
            atomic_store(&l->departed, true); /* its close that follows is no loss */
            return HEADER_STOP;
        }
        return HEADER_NEXT;
    }
    if (h->nbytes == 0 && h->magic == FRAME_SEEN) {
        l->recv_off = 0;
        atomic_store(&l->peer_seen, h->stamp);
        obc__tcp_index_advance(&l->seen_rx);
        return HEADER_NEXT;
    }
    if (h->magic == FRAME_NOTE && h->nbytes == OBC_P2P_NOTE_BYTES) {
        return HEADER_DATA; /* into note_in, not a slot */
    }
    if ((h->magic != FRAME_DATA && h->magic != FRAME_TRACK) || h->nbytes > t->slot_bytes) {
        OBC_WARN("tcp: peer %d sent a malformed frame header (magic %08x, %u bytes); closing", peer,
                 h->magic, h->nbytes);
        obc__tcp_link_fail(l, OBC_ERR_PROTOCOL);
        return HEADER_STOP;
    }
    return HEADER_DATA;
}

/* Room in the receive ring? When full, say so, then look again: a release
 * either happened before our second look, or it sees the flag and wakes
 * us (both sides use seq_cst, so one of them sees the other). */
static bool recv_room(struct obc__tcp *t, struct obc__tcp_link *l, uint32_t head)
{
    if (head - atomic_load(&l->recv.tail.value) >= t->nslots) {
        atomic_store(&l->recv_paused, true);
        if (head - atomic_load(&l->recv.tail.value) >= t->nslots) {
            return false;
        }
    }
    atomic_store(&l->recv_paused, false);
    return true;
}

/* A data frame's header has arrived: where its run stands, and whether
 * its posted bytes go to the post (decided once per frame, so a frame is
 * either all in its slot or has all its posted bytes at the post). A
 * frame that reaches past the post stays in its slot: its receiver finds
 * the sizes do not match. */
static void route_frame(struct obc__tcp_link *l)
{
    const struct obc__tcp_frame *h = &l->incoming;
    if (h->stamp != l->run_stamp) {
        l->run_stamp = h->stamp;
        l->run_bytes = 0;
    }
    l->frame_at = l->run_bytes;
    l->run_bytes += h->nbytes;
    pthread_mutex_lock(&l->post_lock);
    const struct obc__tcp_post *p = &l->post;
    l->frame_posted = p->dst != NULL && p->stamp == h->stamp && l->run_bytes > p->from &&
        l->run_bytes <= p->from + p->nbytes;
    pthread_mutex_unlock(&l->post_lock);
}

/* Read more of the current data frame's payload into slot k, or its
 * posted bytes to the post (under post_lock: a rank that withdraws its
 * post waits for this read, and the rest of the frame then goes to the
 * slot). *len: the bytes this read asked for. */
static ssize_t recv_payload(struct obc__tcp *t, struct obc__tcp_link *l, uint32_t k, size_t *len)
{
    size_t j = l->recv_off - sizeof(l->incoming), left = l->incoming.nbytes - j;
    unsigned char *slot = l->recv.mem + (size_t)k * t->slot_bytes;
    if (l->frame_posted) {
        pthread_mutex_lock(&l->post_lock);
        const struct obc__tcp_post *p = &l->post;
        size_t at = l->frame_at + j; /* run offset of the next byte */
        if (p->dst != NULL && p->stamp == l->incoming.stamp) {
            bool lead = at < p->from; /* bytes before the posted ones stay in the slot */
            *len = lead && p->from - at < left ? p->from - at : left;
            ssize_t n = obc__sock_recv_some(l->fd, lead ? slot + j : p->dst + (at - p->from), *len);
            pthread_mutex_unlock(&l->post_lock);
            return n;
        }
        l->frame_posted = false; /* withdrawn mid-frame: its call has returned */
        pthread_mutex_unlock(&l->post_lock);
    }
    *len = left;
    return obc__sock_recv_some(l->fd, slot + j, left);
}

void obc__tcp_link_pump_recv(struct obc__tcp *t, int peer)
{
    struct obc__tcp_link *l = &t->links[peer];
    for (;;) {
        uint32_t head = atomic_load_explicit(&l->recv.head.value, memory_order_relaxed);
        bool note = l->recv_off >= sizeof(l->incoming) && l->incoming.magic == FRAME_NOTE;
        if (!note && !recv_room(t, l, head)) {
            return;
        }
        uint32_t k = head % t->nslots;
        void *to;
        size_t len;
        if (l->recv_off < sizeof(l->incoming)) {
            to = (unsigned char *)&l->incoming + l->recv_off;
            len = sizeof(l->incoming) - l->recv_off;
        } else if (note) {
            to = l->note_in + (l->recv_off - sizeof(l->incoming));
            len = sizeof(l->incoming) + l->incoming.nbytes - l->recv_off;
        } else {
            to = NULL; /* recv_payload: the slot, or the post */
            len = sizeof(l->incoming) + l->incoming.nbytes - l->recv_off;
        }
        ssize_t n = len == 0 ? 0
            : to != NULL     ? obc__sock_recv_some(l->fd, to, len)
                             : recv_payload(t, l, k, &len);
        if (n < 0) {
            obc__tcp_link_fail(l, connection_lost(l));
            return;
        }
        if (n == 0 && len > 0) {
            want_bytes(l, len);
            return;
        }
        if (n > 0) {
            atomic_store_explicit(&l->last_rx_ns, obc__now_ns(), memory_order_relaxed);
        }
        l->recv_off += (size_t)n;
        if (l->recv_off == sizeof(l->incoming)) {
            enum header_next next = on_header(t, peer, l);
            if (next == HEADER_STOP) {
                return;
            }
            if (next == HEADER_NEXT) {
                continue;
            }
            if (l->incoming.magic != FRAME_NOTE) {
                route_frame(l);
            }
        }
        if (l->recv_off >= sizeof(l->incoming) &&
            l->recv_off == sizeof(l->incoming) + l->incoming.nbytes &&
            l->incoming.magic == FRAME_NOTE) {
            note_lock(t);
            memcpy(l->note, l->note_in, sizeof(l->note));
            l->has_note = true;
            note_unlock(t);
            l->recv_off = 0;
            obc__tcp_index_advance(&l->note_rx);
            continue;
        }
        if (l->recv_off >= sizeof(l->incoming) &&
            l->recv_off == sizeof(l->incoming) + l->incoming.nbytes) {
            l->recv.hdrs[k] = l->incoming;
            l->recv.landed[k] = l->frame_posted;
            l->frame_posted = false;
            l->recv_off = 0;
            obc__tcp_index_advance(&l->recv.head);
            if (t->bell != NULL) {
                obc__arena_doorbell_ring(t->bell, t->bell_rank);
            }
        }
    }
}

bool obc__tcp_link_sent_all(const struct obc__tcp_link *l)
{
    return send_ring_empty(l) && !l->ctl_pending;
}

bool obc__tcp_link_idle(const struct obc__tcp *t, const struct obc__tcp_link *l)
{
    /* A note not yet sent counts: a goodbye queued before it would leave
     * the peer waiting for this rank's last note (check mode's hashes).
     * So does a release not yet told (FRAME_SEEN): a rank that received a
     * point-to-point message and destroyed its communicator at once left
     * the goodbye to go out first, and the sender waited for its notice
     * forever (tests/coll/p2p_any_late.c, across hosts). */
    bool told = atomic_load(&l->tracked_released) == l->seen_told;
    return obc__tcp_link_sent_all(l) &&
        (obc__tcp_link_reads_no_more(l) || (l->note_sent == atomic_load(&t->note_gen) && told));
}

/* ---- the rank's side (tcp_link.h) ---- */

uint64_t obc__tcp_link_verdict(const struct obc__tcp *t, int peer)
{
    return atomic_load(&t->links[peer].remote_verdict);
}

bool obc__tcp_link_departed(const struct obc__tcp *t, int peer)
{
    return atomic_load(&t->links[peer].departed);
}

void obc__tcp_post_note(struct obc__tcp *t, const void *note)
{
    note_lock(t);
    memcpy(t->note_out, note, sizeof(t->note_out));
    atomic_fetch_add(&t->note_gen, 1);
    note_unlock(t);
    obc__wakeup_signal(t->wakeup);
}

bool obc__tcp_read_note(struct obc__tcp *t, int peer, void *note, struct obc__wait *w)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t seen = atomic_load_explicit(&l->note_rx.value, memory_order_acquire);
    note_lock(t);
    bool has = l->has_note;
    memcpy(note, l->note, sizeof(l->note));
    note_unlock(t);
    if (w != NULL) {
        wait_on(w, &l->note_rx, seen, peer);
    }
    return has;
}

void *obc__tcp_send_acquire(struct obc__tcp *t, int peer, struct obc__wait *w)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t head = atomic_load_explicit(&l->send.head.value, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&l->send.tail.value, memory_order_acquire);
    if (atomic_load(&l->error) == 0 && head - tail < t->nslots) {
        return l->send.mem + (size_t)(head % t->nslots) * t->slot_bytes;
    }
    /* Full: sleep until half the ring is free, not for each slot (the
     * thread still has the other half to send meanwhile). */
    wait_until(w, &l->send.tail, tail, tail + (t->nslots + 1) / 2, peer);
    return NULL;
}

/* A rank writes a frame it publishes itself (obc__tcp_send_now) only when
 * the frame is small and alone on its link: the case bound by latency,
 * where waking the thread was most of the cost. A frame queued behind
 * others joins them: the thread has been woken for those already, and a
 * rank that took the links then would write the whole queue, large frames
 * too, in its own thread. 4 ranks on 2 CPUs over loopback TCP, broadcasts
 * of 128-256 KiB, medians of eight rounds by span: 1.18-1.27x the time of
 * waking the thread for every frame when every small frame was written at
 * once, 1.03-1.05x with this rule (which frames were queued there, I did
 * not trace). Large frames stay with the thread: a relaying rank that
 * wrote its 256 KiB chunks itself kept its thread from reading the next
 * one (1-4 MiB: 1.05-1.16x). bench/results/2026-12-07-tcp-send-inline. */
#define INLINE_MAX SEND_PIECE

static void publish(struct obc__tcp *t, int peer, uint32_t magic, size_t nbytes, uint64_t stamp)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t head = atomic_load_explicit(&l->send.head.value, memory_order_relaxed);
    /* before the advance: after it, the thread may send the frame */
    bool inline_ok = nbytes <= INLINE_MAX &&
        head == atomic_load_explicit(&l->send.tail.value, memory_order_acquire);
    l->send.hdrs[head % t->nslots] = (struct obc__tcp_frame){magic, (uint32_t)nbytes, stamp};
    obc__tcp_index_advance(&l->send.head);
    if (!inline_ok || !obc__tcp_send_now(t, peer)) {
        obc__wakeup_signal(t->wakeup);
    }
}

void obc__tcp_send_publish(struct obc__tcp *t, int peer, size_t nbytes, uint64_t stamp)
{
    publish(t, peer, FRAME_DATA, nbytes, stamp);
}

void obc__tcp_send_publish_ref(struct obc__tcp *t, int peer, size_t at, const void *src,
                               size_t src_bytes, uint64_t stamp)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t head = atomic_load_explicit(&l->send.head.value, memory_order_relaxed);
    struct obc__tcp_ref *ref = &l->send.refs[head % t->nslots];
    ref->at = at;
    atomic_store_explicit(&ref->src, (const unsigned char *)src, memory_order_relaxed);
    publish(t, peer, FRAME_DATA, at + src_bytes, stamp); /* its head advance releases both */
    l->ref_until = head + 1;
}

/* Copy every referenced payload still in the ring into its slot. */
static void detach(struct obc__tcp *t, struct obc__tcp_link *l)
{
    pthread_mutex_lock(&l->ref_lock);
    for (uint32_t k = 0; k < t->nslots; k++) {
        struct obc__tcp_ref *ref = &l->send.refs[k];
        const unsigned char *src = atomic_load_explicit(&ref->src, memory_order_relaxed);
        if (src != NULL) {
            memcpy(l->send.mem + (size_t)k * t->slot_bytes + ref->at, src,
                   l->send.hdrs[k].nbytes - ref->at);
            /* release: the thread may next send the slot without the lock */
            atomic_store_explicit(&ref->src, NULL, memory_order_release);
        }
    }
    pthread_mutex_unlock(&l->ref_lock);
}

/* Frames copied into their slots need not leave: only the last one
 * published by reference (and so every one before it) must. */
bool obc__tcp_send_drained(struct obc__tcp *t, int peer, struct obc__wait *w)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t tail = atomic_load_explicit(&l->send.tail.value, memory_order_acquire);
    if ((int32_t)(tail - l->ref_until) >= 0) {
        return true;
    }
    if (atomic_load(&l->error) != 0) { /* nothing more goes out: keep no reference */
        detach(t, l);
        return true;
    }
    wait_until(w, &l->send.tail, tail, l->ref_until, peer);
    return false;
}

void obc__tcp_detach_all(struct obc__tcp *t)
{
    for (int p = 0; p < t->nlinks; p++) {
        detach(t, &t->links[p]);
        obc__tcp_recv_unpost(t, p);
    }
}

void obc__tcp_recv_post(struct obc__tcp *t, int peer, uint64_t stamp, size_t from, void *dst,
                        size_t nbytes)
{
    struct obc__tcp_link *l = &t->links[peer];
    pthread_mutex_lock(&l->post_lock);
    l->post = (struct obc__tcp_post){dst, stamp, from, nbytes};
    pthread_mutex_unlock(&l->post_lock);
}

void obc__tcp_recv_unpost(struct obc__tcp *t, int peer)
{
    struct obc__tcp_link *l = &t->links[peer];
    pthread_mutex_lock(&l->post_lock);
    l->post.dst = NULL;
    pthread_mutex_unlock(&l->post_lock);
}

bool obc__tcp_recv_landed(struct obc__tcp *t, int peer)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t tail = atomic_load_explicit(&l->recv.tail.value, memory_order_relaxed);
    return l->recv.landed[tail % t->nslots];
}

uint64_t obc__tcp_send_publish_tracked(struct obc__tcp *t, int peer, size_t nbytes, uint64_t stamp)
{
    publish(t, peer, FRAME_TRACK, nbytes, stamp);
    return ++t->links[peer].tracked_sent;
}

bool obc__tcp_send_seen(struct obc__tcp *t, int peer, uint64_t ticket, struct obc__wait *w)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t gen = atomic_load_explicit(&l->seen_rx.value, memory_order_acquire);
    if (atomic_load(&l->error) == 0 && atomic_load(&l->peer_seen) >= ticket) {
        return true;
    }
    wait_on(w, &l->seen_rx, gen, peer);
    return false;
}

void *obc__tcp_recv_peek(struct obc__tcp *t, int peer, size_t *nbytes, uint64_t *stamp,
                         struct obc__wait *w)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t tail = atomic_load_explicit(&l->recv.tail.value, memory_order_relaxed);
    uint32_t head = atomic_load_explicit(&l->recv.head.value, memory_order_acquire);
    if (atomic_load(&l->error) == 0 && head != tail) {
        uint32_t k = tail % t->nslots;
        *nbytes = l->recv.hdrs[k].nbytes;
        *stamp = l->recv.hdrs[k].stamp;
        return l->recv.mem + (size_t)k * t->slot_bytes;
    }
    wait_on(w, &l->recv.head, head, peer);
    return NULL;
}

void obc__tcp_recv_release(struct obc__tcp *t, int peer)
{
    struct obc__tcp_link *l = &t->links[peer];
    uint32_t tail = atomic_load_explicit(&l->recv.tail.value, memory_order_relaxed);
    bool tracked = l->recv.hdrs[tail % t->nslots].magic == FRAME_TRACK;
    obc__tcp_index_advance(&l->recv.tail);
    if (tracked) {
        atomic_fetch_add(&l->tracked_released, 1);
        obc__wakeup_signal(t->wakeup); /* the thread tells the sender (FRAME_SEEN) */
    } else if (atomic_load(&l->recv_paused)) {
        obc__wakeup_signal(t->wakeup); /* the thread stopped reading: the ring was full */
    }
}

obc_result_t obc__tcp_link_error(const struct obc__tcp *t, int peer)
{
    return (obc_result_t)atomic_load(&t->links[peer].error);
}

int64_t obc__tcp_silent_ns(const struct obc__tcp *t, int peer, int64_t now)
{
    const struct obc__tcp_link *l = &t->links[peer];
    if (l->fd < 0 || atomic_load(&l->error) != 0 || atomic_load(&l->departed) ||
        atomic_load(&l->recv_paused)) {
        return 0; /* not silent: dead, gone, or we are the ones not reading */
    }
    return now - atomic_load_explicit(&l->last_rx_ns, memory_order_relaxed);
}

/* ---- the p2p interface's table (transport.h) ---- */

static void *ops_send_acquire(void *ctx, int peer, struct obc__wait *w)
{
    return obc__tcp_send_acquire(ctx, peer, w);
}

static void ops_send_publish(void *ctx, int peer, size_t nbytes, uint64_t stamp)
{
    obc__tcp_send_publish(ctx, peer, nbytes, stamp);
}

static void ops_send_publish_ref(void *ctx, int peer, size_t at, const void *src, size_t src_bytes,
                                 uint64_t stamp)
{
    obc__tcp_send_publish_ref(ctx, peer, at, src, src_bytes, stamp);
}

static bool ops_send_drained(void *ctx, int peer, struct obc__wait *w)
{
    return obc__tcp_send_drained(ctx, peer, w);
}

static void ops_recv_post(void *ctx, int peer, uint64_t stamp, size_t from, void *dst,
                          size_t nbytes)
{
    obc__tcp_recv_post(ctx, peer, stamp, from, dst, nbytes);
}

static void ops_recv_unpost(void *ctx, int peer)
{
    obc__tcp_recv_unpost(ctx, peer);
}

static bool ops_recv_landed(void *ctx, int peer)
{
    return obc__tcp_recv_landed(ctx, peer);
}

static void *ops_recv_peek(void *ctx, int peer, size_t *nbytes, uint64_t *stamp,
                           struct obc__wait *w)
{
    return obc__tcp_recv_peek(ctx, peer, nbytes, stamp, w);
}

static uint64_t ops_send_publish_tracked(void *ctx, int peer, size_t nbytes, uint64_t stamp)
{
    return obc__tcp_send_publish_tracked(ctx, peer, nbytes, stamp);
}

static bool ops_send_seen(void *ctx, int peer, uint64_t ticket, struct obc__wait *w)
{
    return obc__tcp_send_seen(ctx, peer, ticket, w);
}

static void ops_recv_release(void *ctx, int peer)
{
    obc__tcp_recv_release(ctx, peer);
}

static obc_result_t ops_peer_error(const void *ctx, int peer)
{
    return obc__tcp_link_error(ctx, peer);
}

const struct obc__xport_ops obc__tcp_ops = {
    .name = "tcp",
    .send_acquire = ops_send_acquire,
    .send_publish = ops_send_publish,
    .send_publish_ref = ops_send_publish_ref,
    .send_drained = ops_send_drained,
    .send_publish_tracked = ops_send_publish_tracked,
    .send_seen = ops_send_seen,
    .recv_peek = ops_recv_peek,
    .recv_release = ops_recv_release,
    .recv_post = ops_recv_post,
    .recv_unpost = ops_recv_unpost,
    .recv_landed = ops_recv_landed,
    .peer_error = ops_peer_error,
};
