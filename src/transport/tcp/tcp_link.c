/* SPDX-License-Identifier: MIT */
/*
 * tcp_link.c - links (a socket and two rings of slots) and the progress
 * thread that moves frames between them. See tcp_link.h.
 *
 * Ring indexes are free-running uint32 counters: `head` is advanced by the
 * producer, `tail` by the consumer; slot i % nslots. For the send ring the
 * rank produces and the thread consumes; for the receive ring the reverse.
 * Each index sits beside a sleepers count, so an advance calls futex_wake
 * only when somebody sleeps on it.
 *
 * Besides data frames the thread sends two control frames of a header
 * only: a heartbeat on a link that sent nothing for BEAT_NS (so a peer can
 * tell a silent host from a busy one), and a goodbye when the communicator
 * is destroyed (so the connection's close that follows is a departure,
 * not a lost peer), and a failure notice when this rank's communicator
 * broke (which rank caused it), so that every rank names the culprit
 * rather than the rank that closed its connection first.
 */
#include "transport/tcp/tcp_link.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "platform/platform.h"

#define FRAME_DATA 0x4f424354u /* "OBCT" */
#define FRAME_BEAT 0x4f424342u /* "OBCB": heartbeat, no payload */
#define FRAME_BYE 0x4f424358u /* "OBCX": the sender is leaving, no payload */
/* "OBCF": the sender's communicator broke, stamp = obc__verdict_word (why, whom) */
#define FRAME_FAIL 0x4f424346u
#define WAKE_TAG UINT64_MAX
#define BEAT_NS 500000000ll /* a link idle this long sends a heartbeat */

struct frame_hdr {
    uint32_t magic;
    uint32_t nbytes;
    uint64_t stamp;
};

struct index {
    _Atomic uint32_t value;
    _Atomic uint32_t sleepers;
};

struct ring {
    unsigned char *mem; /* nslots * slot_bytes */
    struct frame_hdr *hdrs; /* per slot: its frame's header */
    struct index head, tail;
};

struct link {
    int fd;
    struct ring send, recv;
    size_t send_off; /* bytes of the current outgoing frame written */
    size_t recv_off; /* bytes of the current incoming frame read */
    struct frame_hdr incoming;
    struct frame_hdr ctl; /* a control frame to send between data frames */
    size_t ctl_off;
    bool ctl_pending;
    bool bye_queued;
    bool fail_sent;
    bool shut; /* aborting: the socket is shut down */
    _Atomic bool told; /* our failure notice is out */
    _Atomic int remote_culprit; /* from the peer's failure notice; -1: none */
    bool want_out; /* the socket is full: wait for it to drain */
    _Atomic bool recv_paused; /* the receive ring is full: no reading until a release */
    unsigned armed; /* the events the poller watches now (0: not watched) */
    int lowat; /* the socket's SO_RCVLOWAT now */
    int64_t last_tx_ns;
    _Atomic int64_t last_rx_ns; /* when the peer was last heard (any bytes) */
    _Atomic bool departed; /* the peer said goodbye */
    _Atomic bool done; /* closing: the goodbye is out, or the link is dead */
    _Atomic int error; /* obc_result_t, 0 while healthy */
};

struct obc__tcp {
    int nlinks;
    uint32_t nslots;
    size_t slot_bytes;
    struct link *links;
    struct obc__err *err;
    int poller;
    int wakeup;
    _Atomic bool stop;
    _Atomic bool closing;
    _Atomic bool aborting; /* shut each socket once its failure notice is out */
    _Atomic int64_t abort_deadline_ns; /* ... or at this time at the latest */
    _Atomic uint64_t failure; /* obc__verdict_word to tell every peer; 0: none */
    bool thread_started;
    pthread_t thread;
};

/* Waiters sleep on these words through obc__arena_wait, which uses shared
 * futexes (its other words live in a shared segment); the wake must use
 * the same kind to reach them. */
static void advance(struct index *ix)
{
    atomic_fetch_add_explicit(&ix->value, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&ix->sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&ix->value, true);
    }
}

static void wait_on(struct obc__wait *w, struct index *ix, uint32_t seen, int peer)
{
    w->word = &ix->value;
    w->sleepers = &ix->sleepers;
    w->seen = seen;
    w->peer = peer;
    w->sleep_now = true;
}

static int ring_alloc(struct ring *r, uint32_t nslots, size_t slot_bytes)
{
    r->mem = malloc((size_t)nslots * slot_bytes);
    r->hdrs = calloc(nslots, sizeof(*r->hdrs));
    return r->mem != NULL && r->hdrs != NULL ? 0 : -1;
}

obc_result_t obc__tcp_create(int nlinks, uint32_t nslots, size_t slot_bytes, struct obc__err *err,
                             struct obc__tcp **out)
{
    struct obc__tcp *t = calloc(1, sizeof(*t));
    *out = NULL;
    if (t == NULL || nslots < 2 || slot_bytes == 0 || slot_bytes > UINT32_MAX) {
        free(t);
        return obc__err_set(err, t ? OBC_ERR_INVALID_ARG : OBC_ERR_NO_MEMORY, "tcp links");
    }
    t->nlinks = nlinks;
    t->nslots = nslots;
    t->slot_bytes = slot_bytes;
    t->err = err;
    t->poller = -1;
    t->wakeup = -1;
    t->links = calloc((size_t)nlinks, sizeof(*t->links));
    bool ok = t->links != NULL;
    for (int i = 0; ok && i < nlinks; i++) {
        t->links[i].fd = -1;
        atomic_init(&t->links[i].remote_culprit, -1);
        ok = ring_alloc(&t->links[i].send, nslots, slot_bytes) == 0 &&
            ring_alloc(&t->links[i].recv, nslots, slot_bytes) == 0;
    }
    if (ok) {
        t->poller = obc__poller_create();
        t->wakeup = obc__wakeup_create();
        ok = t->poller >= 0 && t->wakeup >= 0 &&
            obc__poller_watch(t->poller, t->wakeup, OBC_POLL_IN, WAKE_TAG, false) == 0;
    }
    if (!ok) {
        obc__tcp_destroy(t, 0);
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "tcp links: %d x 2 rings of %u x %zu bytes",
                            nlinks, nslots, slot_bytes);
    }
    *out = t;
    return OBC_SUCCESS;
}

obc_result_t obc__tcp_attach(struct obc__tcp *t, int peer, int fd)
{
    int rc = obc__sock_make_streaming(fd);
    if (rc == 0) {
        rc = obc__poller_watch(t->poller, fd, OBC_POLL_IN, (uint64_t)peer, false);
    }
    if (rc != 0) {
        return obc__err_set(t->err, OBC_ERR_SYSTEM, "tcp link to peer %d: %s", peer, strerror(-rc));
    }
    t->links[peer].fd = fd;
    t->links[peer].armed = OBC_POLL_IN;
    t->links[peer].lowat = 1;
    t->links[peer].last_tx_ns = obc__now_ns();
    atomic_store(&t->links[peer].last_rx_ns, t->links[peer].last_tx_ns);
    return OBC_SUCCESS;
}

/* The link is dead: remember why, and wake everyone who waits on it.
 * The wake moves the indexes waiters sleep on (a futex needs the word to
 * change), so nothing may pump a failed link again: its send tail no
 * longer says which frames were published. */
static void fail_link(struct link *l, obc_result_t code)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&l->error, &none, (int)code)) {
        advance(&l->send.tail);
        advance(&l->recv.head);
    }
}

/* Why a socket call failed: our own abort shut it, or the peer is gone. */
static obc_result_t connection_lost(const struct link *l)
{
    return l->shut ? OBC_ERR_ABORTED : OBC_ERR_PEER_LOST;
}

/* Watch exactly what the link can act on: reading only while the receive
 * ring has room and the peer has not said goodbye (else readiness, or a
 * hang-up, would spin the thread), writing only while the socket is full. */
static void arm(struct obc__tcp *t, int peer)
{
    struct link *l = &t->links[peer];
    bool can_read = !atomic_load(&l->recv_paused) && !atomic_load(&l->departed);
    unsigned want =
        (can_read ? (unsigned)OBC_POLL_IN : 0u) | (l->want_out ? (unsigned)OBC_POLL_OUT : 0u);
    if (want == l->armed) {
        return;
    }
    if (want == 0) {
        obc__poller_forget(t->poller, l->fd);
    } else {
        obc__poller_watch(t->poller, l->fd, want, (uint64_t)peer, l->armed != 0);
    }
    l->armed = want;
}

static void queue_control(struct link *l, uint32_t magic)
{
    l->ctl = (struct frame_hdr){magic, 0, 0};
    l->ctl_off = 0;
    l->ctl_pending = true;
}

/* The pending control frame, between data frames: true when it is out. */
static bool send_control(struct link *l)
{
    ssize_t n = obc__sock_send_some(l->fd, (unsigned char *)&l->ctl + l->ctl_off,
                                    sizeof(l->ctl) - l->ctl_off);
    if (n < 0) {
        fail_link(l, connection_lost(l));
        return false;
    }
    l->ctl_off += (size_t)n;
    if (l->ctl_off < sizeof(l->ctl)) {
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

/* Payload goes to the socket in sends of at most this, each its own TSO
 * burst: a 64 KiB burst can exceed a traffic shaper's bucket (a 500 Mbit/s
 * token bucket of 1 ms holds 62.5 KB), and a shaper that must cut every
 * burst into packets in software costs more CPU than all else here
 * (measured on netlab: 8 hosts at 500 Mbit/s, 41% of the link with 64 KiB
 * bursts, 98% with the bucket raised above them). */
#define SEND_PIECE (32 * 1024)

/* Write published send slots to the socket until it would block. */
static void pump_send(struct obc__tcp *t, int peer)
{
    struct link *l = &t->links[peer];
    for (;;) {
        uint64_t failure = atomic_load(&t->failure);
        if (l->send_off == 0 && !l->ctl_pending && failure != 0 && !l->fail_sent) {
            queue_control(l, FRAME_FAIL);
            l->ctl.stamp = failure;
            l->fail_sent = true;
        }
        if (l->send_off == 0 && l->ctl_pending && !send_control(l)) {
            return;
        }
        uint32_t tail = atomic_load_explicit(&l->send.tail.value, memory_order_relaxed);
        if (tail == atomic_load_explicit(&l->send.head.value, memory_order_acquire)) {
            break;
        }
        uint32_t k = tail % t->nslots;
        const struct frame_hdr *h = &l->send.hdrs[k];
        size_t total = sizeof(*h) + h->nbytes;
        /* The rest of the header and the next piece of payload in one call:
         * a small frame leaves as one packet. */
        size_t in_hdr = l->send_off < sizeof(*h) ? sizeof(*h) - l->send_off : 0;
        size_t done = l->send_off - (sizeof(*h) - in_hdr); /* payload bytes sent */
        size_t piece = h->nbytes - done < SEND_PIECE ? h->nbytes - done : SEND_PIECE;
        ssize_t n = obc__sock_send_two(l->fd, (const unsigned char *)h + l->send_off - done, in_hdr,
                                       l->send.mem + (size_t)k * t->slot_bytes + done, piece);
        if (n < 0) {
            fail_link(l, connection_lost(l));
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
            advance(&l->send.tail);
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

static void want_bytes(struct link *l, size_t len)
{
    int lowat = len < LOWAT_MAX ? (int)len : LOWAT_MAX;
    if (lowat != l->lowat && obc__sock_set_rcvlowat(l->fd, lowat) == 0) {
        l->lowat = lowat;
    }
}

/* Read frames into free receive slots until the socket or the ring runs dry. */
static void pump_recv(struct obc__tcp *t, int peer)
{
    struct link *l = &t->links[peer];
    for (;;) {
        uint32_t head = atomic_load_explicit(&l->recv.head.value, memory_order_relaxed);
        if (head - atomic_load(&l->recv.tail.value) >= t->nslots) {
            /* Full. Say so, then look again: a release either happened
             * before our second look, or it sees the flag and wakes us
             * (both sides use seq_cst, so one of them sees the other). */
            atomic_store(&l->recv_paused, true);
            if (head - atomic_load(&l->recv.tail.value) >= t->nslots) {
                return;
            }
        }
        atomic_store(&l->recv_paused, false);
        uint32_t k = head % t->nslots;
        void *to;
        size_t len;
        if (l->recv_off < sizeof(l->incoming)) {
            to = (unsigned char *)&l->incoming + l->recv_off;
            len = sizeof(l->incoming) - l->recv_off;
        } else {
            to = l->recv.mem + (size_t)k * t->slot_bytes + (l->recv_off - sizeof(l->incoming));
            len = sizeof(l->incoming) + l->incoming.nbytes - l->recv_off;
        }
        ssize_t n = len > 0 ? obc__sock_recv_some(l->fd, to, len) : 0;
        if (n < 0) {
            fail_link(l, connection_lost(l));
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
        if (l->recv_off == sizeof(l->incoming) && l->incoming.nbytes == 0 &&
            l->incoming.magic == FRAME_FAIL) {
            atomic_store(&l->remote_culprit, obc__verdict_rank(l->incoming.stamp));
            obc_result_t code = obc__verdict_code(l->incoming.stamp);
            fail_link(l, code != OBC_SUCCESS ? code : OBC_ERR_ABORTED);
            return;
        }
        if (l->recv_off == sizeof(l->incoming) && l->incoming.nbytes == 0 &&
            (l->incoming.magic == FRAME_BEAT || l->incoming.magic == FRAME_BYE)) {
            l->recv_off = 0;
            if (l->incoming.magic == FRAME_BYE) {
                atomic_store(&l->departed, true); /* its close that follows is no loss */
                return;
            }
            continue;
        }
        if (l->recv_off == sizeof(l->incoming) &&
            (l->incoming.magic != FRAME_DATA || l->incoming.nbytes > t->slot_bytes)) {
            OBC_WARN("tcp: peer %d sent a malformed frame header (magic %08x, %u bytes); closing",
                     peer, l->incoming.magic, l->incoming.nbytes);
            fail_link(l, OBC_ERR_PROTOCOL);
            return;
        }
        if (l->recv_off >= sizeof(l->incoming) &&
            l->recv_off == sizeof(l->incoming) + l->incoming.nbytes) {
            l->recv.hdrs[k] = l->incoming;
            l->recv_off = 0;
            advance(&l->recv.head);
        }
    }
}

static bool send_ring_empty(struct link *l)
{
    return l->send_off == 0 && atomic_load(&l->send.tail.value) == atomic_load(&l->send.head.value);
}

/* Housekeeping on a link whatever its socket says: a heartbeat when it was
 * idle too long; when closing, the goodbye once its data is out. */
static void tend(struct obc__tcp *t, int peer, int64_t now)
{
    struct link *l = &t->links[peer];
    if (l->fd < 0 || atomic_load(&l->error) != 0) {
        atomic_store(&l->done, true);
        return;
    }
    bool idle = send_ring_empty(l) && !l->ctl_pending;
    bool broken = atomic_load(&t->failure) != 0; /* its notice is the farewell, not a goodbye */
    if (idle && atomic_load(&t->closing) && !l->bye_queued && !broken) {
        queue_control(l, FRAME_BYE);
        l->bye_queued = true;
    } else if (idle && !l->bye_queued && now - l->last_tx_ns >= BEAT_NS) {
        queue_control(l, FRAME_BEAT);
    }
}

/* Aborting: shut the socket down once the peer has our failure notice
 * (or the notice could not go out in time), so that the peer names the
 * reason rather than a lost connection. */
static void shut_when_told(struct obc__tcp *t, struct link *l)
{
    if (l->fd >= 0 && !l->shut &&
        (atomic_load(&l->told) || atomic_load(&l->error) != 0 ||
         obc__now_ns() >= atomic_load(&t->abort_deadline_ns))) {
        obc__sock_shutdown(l->fd);
        l->shut = true;
    }
}

static void pump_link(struct obc__tcp *t, int peer)
{
    struct link *l = &t->links[peer];
    if (l->fd < 0 || atomic_load(&l->error) != 0) {
        return;
    }
    if (!atomic_load(&l->departed)) {
        pump_recv(t, peer);
    }
    if (atomic_load(&l->error) == 0) {
        pump_send(t, peer);
    }
    if (atomic_load(&l->error) == 0) {
        arm(t, peer);
    }
    if (atomic_load(&t->aborting)) {
        shut_when_told(t, l);
    }
    if (l->bye_queued && !l->ctl_pending) {
        atomic_store(&l->done, true);
    }
}

static void *progress_main(void *arg)
{
    struct obc__tcp *t = arg;
    struct obc__poll_event ev[64];
    int64_t next_tend = 0;
    while (!atomic_load(&t->stop)) {
        int n = obc__poller_wait(t->poller, ev, 64, atomic_load(&t->closing) ? 1 : 100);
        int64_t now = obc__now_ns();
        if (now >= next_tend || atomic_load(&t->closing)) {
            next_tend = now + BEAT_NS / 5;
            for (int p = 0; p < t->nlinks; p++) {
                tend(t, p, now);
                pump_link(t, p);
            }
        }
        for (int i = 0; i < n; i++) {
            if (ev[i].tag == WAKE_TAG) {
                /* A rank published or released: any link may move now. */
                obc__wakeup_drain(t->wakeup);
                for (int p = 0; p < t->nlinks; p++) {
                    pump_link(t, p);
                }
            } else {
                pump_link(t, (int)ev[i].tag);
            }
        }
    }
    return NULL;
}

obc_result_t obc__tcp_start(struct obc__tcp *t)
{
    int rc = pthread_create(&t->thread, NULL, progress_main, t);
    if (rc != 0) {
        return obc__err_set(t->err, OBC_ERR_SYSTEM, "tcp progress thread: %s", strerror(rc));
    }
    t->thread_started = true;
    return OBC_SUCCESS;
}

/* Let the thread send what the rank published and a goodbye on every
 * link, for at most drain_ns: the last collective's data may still be in
 * the send rings when its call returned. */
/* A broken communicator still gets its failure notices out, briefly. */
#define TELL_MAX_NS 200000000ll

static bool link_settled(struct obc__tcp *t, struct link *l)
{
    if (atomic_load(&l->error) != 0 || l->fd < 0) {
        return true;
    }
    return atomic_load(&t->failure) != 0 ? atomic_load(&l->told) : atomic_load(&l->done);
}

static void drain(struct obc__tcp *t, int64_t drain_ns)
{
    if (atomic_load(&t->failure) != 0 && drain_ns < TELL_MAX_NS) {
        drain_ns = TELL_MAX_NS;
    }
    int64_t deadline = obc__now_ns() + drain_ns;
    atomic_store(&t->closing, true);
    obc__wakeup_signal(t->wakeup);
    for (int p = 0; p < t->nlinks; p++) {
        while (!link_settled(t, &t->links[p]) && obc__now_ns() < deadline) {
            obc__sleep_ns(1000000);
        }
    }
}

void obc__tcp_destroy(struct obc__tcp *t, int64_t drain_ns)
{
    if (t == NULL) {
        return;
    }
    if (t->thread_started) {
        drain(t, drain_ns);
        atomic_store(&t->stop, true);
        obc__wakeup_signal(t->wakeup);
        pthread_join(t->thread, NULL);
    }
    for (int i = 0; t->links != NULL && i < t->nlinks; i++) {
        struct link *l = &t->links[i];
        if (l->fd >= 0) {
            obc__sock_close_draining(l->fd, 0);
        }
        free(l->send.mem);
        free(l->send.hdrs);
        free(l->recv.mem);
        free(l->recv.hdrs);
    }
    if (t->poller >= 0) {
        obc__fd_close(t->poller);
    }
    if (t->wakeup >= 0) {
        obc__fd_close(t->wakeup);
    }
    free(t->links);
    free(t);
}

void obc__tcp_tell_failure(struct obc__tcp *t, obc_result_t code, int culprit)
{
    uint64_t none = 0, word = obc__verdict_word(code, culprit);
    if (atomic_compare_exchange_strong(&t->failure, &none, word)) {
        obc__wakeup_signal(t->wakeup);
    }
}

int obc__tcp_link_culprit(const struct obc__tcp *t, int peer)
{
    return atomic_load(&t->links[peer].remote_culprit);
}

bool obc__tcp_link_departed(const struct obc__tcp *t, int peer)
{
    return atomic_load(&t->links[peer].departed);
}

void obc__tcp_abort(struct obc__tcp *t, int self)
{
    obc__tcp_tell_failure(t, OBC_ERR_ABORTED, self);
    atomic_store(&t->abort_deadline_ns, obc__now_ns() + TELL_MAX_NS);
    atomic_store(&t->aborting, true);
    obc__wakeup_signal(t->wakeup);
}

size_t obc__tcp_slot_bytes(const struct obc__tcp *t)
{
    return t->slot_bytes;
}

void *obc__tcp_send_acquire(struct obc__tcp *t, int peer, struct obc__wait *w)
{
    struct link *l = &t->links[peer];
    uint32_t head = atomic_load_explicit(&l->send.head.value, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&l->send.tail.value, memory_order_acquire);
    if (atomic_load(&l->error) == 0 && head - tail < t->nslots) {
        return l->send.mem + (size_t)(head % t->nslots) * t->slot_bytes;
    }
    wait_on(w, &l->send.tail, tail, peer);
    return NULL;
}

void obc__tcp_send_publish(struct obc__tcp *t, int peer, size_t nbytes, uint64_t stamp)
{
    struct link *l = &t->links[peer];
    uint32_t head = atomic_load_explicit(&l->send.head.value, memory_order_relaxed);
    l->send.hdrs[head % t->nslots] = (struct frame_hdr){FRAME_DATA, (uint32_t)nbytes, stamp};
    advance(&l->send.head);
    obc__wakeup_signal(t->wakeup);
}

void *obc__tcp_recv_peek(struct obc__tcp *t, int peer, size_t *nbytes, uint64_t *stamp,
                         struct obc__wait *w)
{
    struct link *l = &t->links[peer];
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
    struct link *l = &t->links[peer];
    advance(&l->recv.tail);
    if (atomic_load(&l->recv_paused)) {
        obc__wakeup_signal(t->wakeup); /* the thread stopped reading: the ring was full */
    }
}

obc_result_t obc__tcp_link_error(const struct obc__tcp *t, int peer)
{
    return (obc_result_t)atomic_load(&t->links[peer].error);
}

int64_t obc__tcp_silent_ns(const struct obc__tcp *t, int peer, int64_t now)
{
    const struct link *l = &t->links[peer];
    if (l->fd < 0 || atomic_load(&l->error) != 0 || atomic_load(&l->departed) ||
        atomic_load(&l->recv_paused)) {
        return 0; /* not silent: dead, gone, or we are the ones not reading */
    }
    return now - atomic_load_explicit(&l->last_rx_ns, memory_order_relaxed);
}
