/* SPDX-License-Identifier: MIT */
/*
 * tcp_impl.h - what the link (tcp_link.c: framing, the rings and socket
 * state of one connection) and its progress thread (tcp_progress.c: the
 * epoll loop, heartbeats, goodbyes, drain and abort) share, private to
 * transport/tcp. Nothing outside that folder includes it.
 *
 * Ring indexes are free-running uint32 counters: `head` is advanced by the
 * producer, `tail` by the consumer; slot i % nslots. For the send ring the
 * rank produces and the thread consumes; for the receive ring the reverse.
 * Each index sits beside a sleepers count, so an advance calls futex_wake
 * only when somebody sleeps on it.
 *
 * Threads: the fields marked (pump) are touched only by whoever drives
 * the links, under the tcp's pump_lock: the progress thread, for each
 * round of its loop, or a rank that writes a frame it has just published
 * (obc__tcp_send_now). The atomics are how ranks and the thread see each
 * other.
 */
#ifndef OBC_TRANSPORT_TCP_IMPL_H
#define OBC_TRANSPORT_TCP_IMPL_H

#include <pthread.h>

#include "platform/platform.h"
#include "transport/tcp/tcp_link.h"

/* Frame kinds (a frame header's magic). Besides data, three control
 * frames of a header only: a heartbeat on a link that sent nothing for
 * BEAT_NS (so a peer can tell a silent host from a busy one), a goodbye
 * when the communicator is destroyed (so the close that follows is a
 * departure, not a lost peer), and a failure notice when this rank's
 * communicator broke (which rank caused it), so that every rank names the
 * culprit rather than the rank that closed its connection first. */
#define FRAME_DATA 0x4f424354u /* "OBCT" */
#define FRAME_BEAT 0x4f424342u /* "OBCB": heartbeat, no payload */
#define FRAME_BYE 0x4f424358u /* "OBCX": the sender is leaving, no payload */
/* "OBCF": the sender's communicator broke, stamp = obc__verdict_word (why, whom) */
#define FRAME_FAIL 0x4f424346u
/* "OBCN": the sender's latest note (OBC_P2P_NOTE_BYTES of payload, opaque
 * here), kept per link and read by the layer above (check mode) */
#define FRAME_NOTE 0x4f42434eu
/* "OBCQ": a data frame whose release the receiver reports back (FRAME_SEEN) */
#define FRAME_TRACK 0x4f424351u
/* "OBCS": header only; stamp = how many FRAME_TRACK frames of ours the
 * sender of this notice has released so far (latest wins) */
#define FRAME_SEEN 0x4f424353u
#define BEAT_NS 500000000ll /* a link idle this long sends a heartbeat */

struct obc__tcp_frame {
    uint32_t magic;
    uint32_t nbytes;
    uint64_t stamp;
};

/* wake_at: the value its sleeper waits for (set by each wait before it
 * sleeps; one sleeper at a time, the rank): an advance short of it wakes
 * nobody. A rank that waits for a message's last frame to leave sleeps
 * once, not once per frame (each wake was a futex call on both sides and
 * two context switches). */
struct obc__tcp_index {
    _Atomic uint32_t value;
    _Atomic uint32_t sleepers;
    _Atomic uint32_t wake_at;
};

/* A send slot published by reference (obc__tcp_send_publish_ref): its
 * payload's first `at` bytes are in the slot, the rest in the caller's
 * buffer at `src`. src is NULL for a slot that holds all its payload:
 * after the frame went out, or once detached (its bytes copied into the
 * slot). The link's ref_lock covers src while the thread sends from it. */
struct obc__tcp_ref {
    _Atomic(const unsigned char *) src;
    size_t at;
};

struct obc__tcp_ring {
    unsigned char *mem; /* nslots * slot_bytes */
    struct obc__tcp_frame *hdrs; /* per slot: its frame's header */
    struct obc__tcp_ref *refs; /* send ring only: per slot */
    bool *landed; /* receive ring only: per slot, its posted bytes went to the post */
    struct obc__tcp_index head, tail;
};

/* A posted receive (obc__tcp_recv_post): of the run of data frames that
 * carry `stamp` (consecutive frames of one stamp: one operation's message
 * on this link), the payload bytes at run offsets [from, from + nbytes)
 * are read straight to dst + (offset - from) instead of into the slot. */
struct obc__tcp_post {
    unsigned char *dst; /* NULL: nothing posted */
    uint64_t stamp;
    size_t from, nbytes;
};

struct obc__tcp_link {
    int fd;
    struct obc__tcp_ring send, recv;
    /* Held while a send reads a caller's buffer, and by the rank that
     * detaches: after a detach no send reads that buffer. */
    pthread_mutex_t ref_lock;
    uint32_t ref_until; /* (rank) the send head after the last frame published by reference */
    size_t send_off; /* (pump) bytes of the current outgoing frame written */
    size_t recv_off; /* (pump) bytes of the current incoming frame read */
    struct obc__tcp_frame incoming; /* (pump) */
    /* Held while a read writes into a posted buffer, and by the rank that
     * posts or withdraws (after a withdrawal nothing more is written to
     * that buffer). */
    pthread_mutex_t post_lock;
    struct obc__tcp_post post; /* under post_lock */
    uint64_t run_stamp; /* (pump) the stamp of the current run of data frames */
    size_t run_bytes; /* (pump) the run's payload bytes so far, the current frame's too */
    size_t frame_at; /* (pump) the run offset of the current frame's first payload byte */
    bool frame_posted; /* (pump) the current frame's posted bytes go to post.dst */
    struct obc__tcp_frame ctl; /* (pump) a control frame to send between data frames */
    unsigned char ctl_body[OBC_P2P_NOTE_BYTES]; /* (pump) its payload (a note's) */
    size_t ctl_off;
    bool ctl_pending;
    bool bye_queued;
    bool fail_sent;
    bool shut; /* aborting: the socket is shut down */
    _Atomic bool told; /* our failure notice is out */
    _Atomic uint64_t remote_verdict; /* the peer's failure notice's word; 0: none */
    bool want_out; /* the socket is full: wait for it to drain */
    _Atomic bool recv_paused; /* the receive ring is full: no reading until a release */
    unsigned armed; /* (pump) the events the poller watches now (0: not watched) */
    int lowat; /* (pump) the socket's SO_RCVLOWAT now */
    int64_t last_tx_ns;
    _Atomic int64_t last_rx_ns; /* when the peer was last heard (any bytes) */
    _Atomic bool departed; /* the peer said goodbye */
    _Atomic bool refused; /* a send met the peer's closed socket while its last
                             frames (a goodbye, perhaps) still wait to be read */
    int64_t refused_ns; /* (pump) when refused was set */
    _Atomic bool done; /* closing: the goodbye is out, or the link is dead */
    _Atomic int error; /* obc_result_t, 0 while healthy */
    uint32_t note_sent; /* (pump) the tcp's note_gen this link sent last */
    unsigned char note_in[OBC_P2P_NOTE_BYTES]; /* (pump) a note being read */
    unsigned char note[OBC_P2P_NOTE_BYTES]; /* the peer's latest note, under note_lock */
    bool has_note; /* under note_lock */
    struct obc__tcp_index note_rx; /* advanced at every note received */
    uint64_t tracked_sent; /* (rank) FRAME_TRACK frames published */
    _Atomic uint64_t tracked_released; /* the peer's FRAME_TRACK frames we released */
    uint64_t seen_told; /* (pump) tracked_released as last told in a FRAME_SEEN */
    _Atomic uint64_t peer_seen; /* from the peer's latest FRAME_SEEN */
    struct obc__tcp_index seen_rx; /* advanced at every FRAME_SEEN received */
};

struct obc__tcp {
    int nlinks;
    uint32_t nslots;
    size_t slot_bytes;
    struct obc__tcp_link *links;
    struct obc__err *err;
    int poller;
    int wakeup; /* ranks signal it when they publish or release */
    _Atomic bool stop;
    _Atomic bool closing;
    _Atomic bool aborting; /* shut each socket once its failure notice is out */
    _Atomic int64_t abort_deadline_ns; /* ... or at this time at the latest */
    _Atomic uint64_t failure; /* obc__verdict_word to tell every peer; 0: none */
    _Atomic bool note_lock; /* guards note_out and every link's note (a few bytes' copy) */
    unsigned char note_out[OBC_P2P_NOTE_BYTES]; /* this rank's latest note, for every peer */
    _Atomic uint32_t note_gen; /* bumped at every note posted */
    bool thread_started;
    pthread_t thread;
    struct obc__arena *bell; /* rung at every frame received (a receive from any source) ... */
    int bell_rank; /* ... for this rank */
    pthread_mutex_t pump_lock; /* held by whoever drives the links (see the top) */
    bool send_inline; /* a thread drives the links: ranks write what they publish when
                       * it does not pump (set by obc__tcp_start; without a thread, the
                       * unit tests drive the links by hand, and only they write) */
};

/* Waiters sleep on these words in the engine's one wait, which uses shared
 * futexes (its other words live in a shared segment); the wake must use
 * the same kind to reach them. */
static inline void obc__tcp_index_advance(struct obc__tcp_index *ix)
{
    uint32_t now = atomic_fetch_add_explicit(&ix->value, 1, memory_order_seq_cst) + 1;
    if (atomic_load_explicit(&ix->sleepers, memory_order_seq_cst) != 0 &&
        (int32_t)(now - atomic_load_explicit(&ix->wake_at, memory_order_seq_cst)) >= 0) {
        obc__futex_wake(&ix->value, true);
    }
}

/* Advance and wake the sleeper whatever it waits for (a failed link). */
static inline void obc__tcp_index_wake(struct obc__tcp_index *ix)
{
    atomic_fetch_add_explicit(&ix->value, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&ix->sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&ix->value, true);
    }
}

/* ---- tcp_link.c: one link, as the progress thread drives it ---- */

/* The peer reads no more: it said goodbye, or its socket refused a send
 * (what it sent may still wait to be read). Nothing more goes to it. */
static inline bool obc__tcp_link_reads_no_more(const struct obc__tcp_link *l)
{
    return atomic_load(&l->departed) || atomic_load(&l->refused);
}

/* Allocate the link's two rings (0, or -1 when out of memory); fini frees
 * them (the socket is closed before, by obc__tcp_destroy's polite close).
 * fini is safe after a failed init. */
int obc__tcp_link_init(struct obc__tcp_link *l, uint32_t nslots, size_t slot_bytes);
void obc__tcp_link_fini(struct obc__tcp_link *l);
/* The link is dead: remember why (the first reason wins) and wake
 * everyone who waits on it. */
void obc__tcp_link_fail(struct obc__tcp_link *l, obc_result_t code);
/* Send a header-only frame of kind `magic` before the next data frame. */
void obc__tcp_link_queue_control(struct obc__tcp_link *l, uint32_t magic);
/* Every frame published and the pending control frame are out. */
bool obc__tcp_link_sent_all(const struct obc__tcp_link *l);
/* Nothing published waits to go out, no control frame or note either. */
bool obc__tcp_link_idle(const struct obc__tcp *t, const struct obc__tcp_link *l);
/* Under pump_lock: read frames into free receive slots until the socket
 * or the ring runs dry; write the pending control frame, a failure notice
 * (once t->failure is set) and published send slots until the socket
 * would block. A socket error fails the link. */
void obc__tcp_link_pump_recv(struct obc__tcp *t, int peer);
void obc__tcp_link_pump_send(struct obc__tcp *t, int peer);

/* ---- tcp_progress.c, for the rank's side ---- */

/* A rank has just published on the link to peer: write it now, in the
 * rank's thread, if nobody drives the links at this moment. Returns false
 * when the progress thread must be woken to do it (or to act on what the
 * write found: an error, a control frame still due). */
bool obc__tcp_send_now(struct obc__tcp *t, int peer);

#endif
