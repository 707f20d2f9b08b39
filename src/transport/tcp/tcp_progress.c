/* SPDX-License-Identifier: MIT */
/*
 * tcp_progress.c - the progress thread of a struct obc__tcp and its life
 * cycle: one thread per communicator drives every link's socket with
 * epoll (tcp_link.c moves the bytes), sends heartbeats on idle links, a
 * goodbye on each when the communicator is destroyed, and failure notices
 * when it broke; ranks wake it through an eventfd when they release a
 * slot, or publish one they could not write themselves. No allocation
 * after create.
 *
 * A rank writes a small frame it publishes itself when no other frame
 * waits on the link and the thread is not pumping at that moment
 * (obc__tcp_send_now; tcp_link.c's INLINE_MAX says why only then): woken
 * for every publish, the thread was a trip through the scheduler between a
 * rank's call and its first byte on the wire.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tcp/tcp_impl.h"

#define WAKE_TAG UINT64_MAX
/* A broken communicator still gets its failure notices out, briefly. */
#define TELL_MAX_NS 200000000ll

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
    pthread_mutex_init(&t->pump_lock, NULL);
    t->links = calloc((size_t)nlinks, sizeof(*t->links));
    bool ok = t->links != NULL;
    /* Every link is initialised, even after a failure, so that destroy
     * finds no socket where there is none. */
    for (int i = 0; t->links != NULL && i < nlinks; i++) {
        ok = obc__tcp_link_init(&t->links[i], nslots, slot_bytes) == 0 && ok;
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
    struct obc__tcp_link *l = &t->links[peer];
    l->fd = fd;
    l->armed = OBC_POLL_IN;
    l->lowat = 1;
    l->last_tx_ns = obc__now_ns();
    atomic_store(&l->last_rx_ns, l->last_tx_ns);
    return OBC_SUCCESS;
}

/* Watch exactly what the link can act on: reading only while the receive
 * ring has room and the peer has not said goodbye (else readiness, or a
 * hang-up, would spin the thread), writing only while the socket is full. */
static void arm(struct obc__tcp *t, int peer)
{
    struct obc__tcp_link *l = &t->links[peer];
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

/* Housekeeping on a link whatever its socket says: a heartbeat when it was
 * idle too long; when closing, the goodbye once its data is out. */
static void tend(struct obc__tcp *t, int peer, int64_t now)
{
    struct obc__tcp_link *l = &t->links[peer];
    if (l->fd < 0 || atomic_load(&l->error) != 0) {
        atomic_store(&l->done, true);
        return;
    }
    bool idle = obc__tcp_link_idle(t, l);
    bool broken = atomic_load(&t->failure) != 0; /* its notice is the farewell, not a goodbye */
    bool silent = obc__tcp_link_reads_no_more(l); /* nothing to say to it */
    if (idle && atomic_load(&t->closing) && !l->bye_queued && !broken) {
        if (!silent) {
            obc__tcp_link_queue_control(l, FRAME_BYE);
        }
        l->bye_queued = true;
    } else if (idle && !l->bye_queued && !silent && now - l->last_tx_ns >= BEAT_NS) {
        obc__tcp_link_queue_control(l, FRAME_BEAT);
    }
}

/* Aborting: shut the socket down once the peer has our failure notice
 * (or the notice could not go out in time), so that the peer names the
 * reason rather than a lost connection. */
static void shut_when_told(struct obc__tcp *t, struct obc__tcp_link *l)
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
    struct obc__tcp_link *l = &t->links[peer];
    if (l->fd < 0 || atomic_load(&l->error) != 0) {
        return;
    }
    if (!atomic_load(&l->departed)) {
        obc__tcp_link_pump_recv(t, peer);
    }
    if (atomic_load(&l->error) == 0) {
        obc__tcp_link_pump_send(t, peer);
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
        pthread_mutex_lock(&t->pump_lock);
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
        pthread_mutex_unlock(&t->pump_lock);
    }
    return NULL;
}

bool obc__tcp_send_now(struct obc__tcp *t, int peer)
{
    if (!t->send_inline || pthread_mutex_trylock(&t->pump_lock) != 0) {
        return false;
    }
    struct obc__tcp_link *l = &t->links[peer];
    bool settled = false;
    /* A closing or broken communicator's goodbyes and notices are the
     * thread's to order. */
    if (l->fd >= 0 && atomic_load(&l->error) == 0 && !atomic_load(&t->closing) &&
        atomic_load(&t->failure) == 0) {
        obc__tcp_link_pump_send(t, peer);
        /* Settled: all of it went out, or the rest waits for the socket
         * to drain, which the poller now watches for. */
        settled = atomic_load(&l->error) == 0 && (obc__tcp_link_sent_all(l) || l->want_out);
        if (atomic_load(&l->error) == 0) {
            arm(t, peer);
        }
    }
    pthread_mutex_unlock(&t->pump_lock);
    return settled;
}

void obc__tcp_set_doorbell(struct obc__tcp *t, struct obc__arena *a, int rank)
{
    t->bell = a; /* before the thread starts: it reads these unlocked */
    t->bell_rank = rank;
}

obc_result_t obc__tcp_start(struct obc__tcp *t)
{
    int rc = pthread_create(&t->thread, NULL, progress_main, t);
    if (rc != 0) {
        return obc__err_set(t->err, OBC_ERR_SYSTEM, "tcp progress thread: %s", strerror(rc));
    }
    t->thread_started = true;
    t->send_inline = true;
    return OBC_SUCCESS;
}

static bool link_settled(struct obc__tcp *t, struct obc__tcp_link *l)
{
    if (atomic_load(&l->error) != 0 || l->fd < 0) {
        return true;
    }
    if (atomic_load(&t->failure) != 0 && obc__tcp_link_reads_no_more(l)) {
        return true; /* a peer that reads no more is told nothing */
    }
    return atomic_load(&t->failure) != 0 ? atomic_load(&l->told) : atomic_load(&l->done);
}

/* Let the thread send what the rank published and a goodbye on every
 * link, until the deadline: the last collective's data may still be in
 * the send rings when its call returned. */
static void drain(struct obc__tcp *t, int64_t deadline)
{
    atomic_store(&t->closing, true);
    obc__wakeup_signal(t->wakeup);
    for (int p = 0; p < t->nlinks; p++) {
        while (!link_settled(t, &t->links[p]) && obc__now_ns() < deadline) {
            obc__sleep_ns(1000000);
        }
    }
}

/* Close every socket only once the peer's kernel has acknowledged all we
 * wrote (our goodbye last), discarding what it still sends meanwhile, or
 * at the deadline. Closing earlier, with its heartbeats or acknowledgements
 * unread, or our tail still waiting for a retransmission, resets the
 * connection and destroys that tail: the peer would see a connection
 * "closed without a goodbye" while it still waits for our data. */
static void close_politely(struct obc__tcp *t, int64_t deadline)
{
    for (int p = 0; p < t->nlinks; p++) {
        struct obc__tcp_link *l = &t->links[p];
        if (l->fd >= 0 && !l->shut && atomic_load(&l->error) == 0) {
            obc__sock_stop_sending(l->fd); /* the FIN follows our last byte */
        }
    }
    for (bool waiting = true; waiting;) {
        waiting = false;
        for (int p = 0; p < t->nlinks; p++) {
            struct obc__tcp_link *l = &t->links[p];
            if (l->fd >= 0 && (obc__sock_delivered(l->fd) || obc__now_ns() >= deadline)) {
                obc__fd_close(l->fd);
                l->fd = -1;
            }
            waiting = waiting || l->fd >= 0;
        }
        if (waiting) {
            obc__sleep_ns(1000000);
        }
    }
}

void obc__tcp_destroy(struct obc__tcp *t, int64_t drain_ns)
{
    if (t == NULL) {
        return;
    }
    if (atomic_load(&t->failure) != 0 && drain_ns < TELL_MAX_NS) {
        drain_ns = TELL_MAX_NS;
    }
    int64_t deadline = obc__now_ns() + drain_ns;
    if (t->thread_started) {
        drain(t, deadline);
        atomic_store(&t->stop, true);
        obc__wakeup_signal(t->wakeup);
        pthread_join(t->thread, NULL);
    }
    if (t->links != NULL) {
        close_politely(t, deadline);
    }
    pthread_mutex_destroy(&t->pump_lock);
    for (int i = 0; t->links != NULL && i < t->nlinks; i++) {
        obc__tcp_link_fini(&t->links[i]);
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

void obc__tcp_tell_verdict(struct obc__tcp *t, uint64_t verdict)
{
    uint64_t none = 0;
    if (atomic_compare_exchange_strong(&t->failure, &none, verdict)) {
        obc__wakeup_signal(t->wakeup);
    }
}

void obc__tcp_tell_failure(struct obc__tcp *t, obc_result_t code, int culprit)
{
    obc__tcp_tell_verdict(t, obc__verdict_word(code, culprit));
}

void obc__tcp_abort(struct obc__tcp *t, int self)
{
    obc__tcp_tell_failure(t, OBC_ERR_ABORTED, self);
    atomic_store(&t->abort_deadline_ns, obc__now_ns() + TELL_MAX_NS);
    atomic_store(&t->aborting, true);
    obc__wakeup_signal(t->wakeup);
}
