/* SPDX-License-Identifier: MIT */
/*
 * transport.h - what the layers above may know about moving bytes to a
 * peer, whatever carries them.
 *
 * Two transports sit below the algorithms, each behind one table of
 * per-peer operations (struct obc__xport_ops below):
 *  - the shm channels of the host arena (shm/shm_chan.c), for a peer on
 *    this host; the arena's other services (rings, windows, counters,
 *    mailboxes, boards, CMA, the wait) have their own header, arena.h;
 *  - TCP links (tcp/), for a peer on another host.
 * The p2p interface (obc__p2p_* below, p2p.c) picks each peer's table
 * once, at creation; algorithms call obc__p2p_* and never know which
 * transport a peer is behind.
 * Transports know nothing of collectives: no dtypes, no ops, no
 * communicator; ranks are communicator ranks. They never block: an
 * operation that cannot proceed fills a struct obc__wait, and the caller
 * sleeps (engine/wait.c, the one wait) until that word changes.
 */
#ifndef OBC_TRANSPORT_H
#define OBC_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obc.h"
#include "core/status.h"

struct obc__arena;

/* "Come back when *word no longer equals seen." `peer` is the local rank
 * whose action is awaited (-1: several), for error messages. */
struct obc__wait {
    _Atomic uint32_t *word;
    _Atomic uint32_t *sleepers; /* incremented while someone sleeps on word */
    uint32_t seen;
    int peer;
    bool sleep_now; /* the word moves when a socket delivers: spinning would
                     * only take the CPU from the thread that reads it */
    uint32_t *slept; /* if set, counts the futex sleeps of this wait */
    /* > 0: come back after this long even if the word has not moved. An
     * algorithm with several transfers in flight sleeps on one of them and
     * must look at the others now and then (px.c); the no-progress timeout
     * still counts across such turns. */
    int64_t turn_ns;
};

/* Why a communicator broke, as one word, 0 for none: the code (bits 56-63),
 * the rank it names (bits 0-31) and, when a rank found another's call
 * unlike its own, that other rank (bits 32-55, plus one; 0: none). The
 * finder alone cannot tell which of the two is the odd one (with two ranks
 * neither is), so both are named. One word so that the first reason and
 * its ranks are set (and read) together: the host segment's abort word and
 * a TCP failure notice carry it. */
static inline uint64_t obc__verdict_pair(obc_result_t code, int rank, int other)
{
    uint64_t other_field = other >= 0 && other < 0xffffff ? (uint64_t)other + 1 : 0;
    return (uint64_t)(uint8_t)code << 56 | other_field << 32 | (uint32_t)rank;
}

static inline uint64_t obc__verdict_word(obc_result_t code, int rank)
{
    return obc__verdict_pair(code, rank, -1);
}

static inline obc_result_t obc__verdict_code(uint64_t word)
{
    return (obc_result_t)(word >> 56);
}

static inline int obc__verdict_rank(uint64_t word)
{
    return (int)(int32_t)(uint32_t)word;
}

/* The other rank of a disagreeing pair, or -1. */
static inline int obc__verdict_other(uint64_t word)
{
    return (int)((word >> 32) & 0xffffff) - 1;
}

/* The same verdict under another code (a relay reports what its wait got). */
static inline uint64_t obc__verdict_recode(uint64_t word, obc_result_t code)
{
    return obc__verdict_pair(code, obc__verdict_rank(word), obc__verdict_other(word));
}

/* ---------------------------------------------------------- xport_ops */

/*
 * One transport's side of the p2p interface: how this rank moves slots to
 * and from one peer. A transport defines one const table (shm/shm_chan.c:
 * obc__shm_chan_ops; tcp/tcp_link.c: obc__tcp_ops); p2p.c keeps for each
 * peer the table of the transport that reaches it, that transport's state
 * (`ctx`: the arena, the struct obc__tcp) and its own index of the peer
 * (`peer`: the communicator rank for shm, the link index for tcp).
 *
 * Contract of every member:
 *  - never blocks, takes no lock a peer could hold, allocates nothing;
 *  - called by the thread that runs the operation (a user thread in a
 *    blocking call, the communicator's progress thread for async ops),
 *    one thread at a time per peer and direction; a transport's own
 *    threads (tcp's progress thread) are not callers;
 *  - slot memory belongs to the transport: the caller may use a slot from
 *    acquire until publish (sender) or from peek until release (receiver,
 *    who may also write into it, to finish a reduction in place), then not
 *    at all;
 *  - no data member returns an error: acquire and peek return NULL with
 *    *w set when they cannot proceed, also on a failed path (a lost
 *    connection, a malformed frame, a peer's failure notice), whose
 *    failure wakes every waiter; peer_error then says why (callers look
 *    between waits, through obc__p2p_health). Life cycle (create,
 *    connect, drain, close, abort) is per transport, not per peer, and
 *    stays out of the table.
 */
struct obc__xport_ops {
    const char *name; /* "shm", "tcp": for messages */
    /* A free slot of the p2p slot size to fill for peer, else NULL and *w. */
    void *(*send_acquire)(void *ctx, int peer, struct obc__wait *w);
    /* Hand the first nbytes of the acquired slot to peer, with a stamp the
     * receiver sees beside it (the op's identity, checked on arrival). */
    void (*send_publish)(void *ctx, int peer, size_t nbytes, uint64_t stamp);
    /* Optional (NULL: the p2p layer copies, then send_publish). Publish the
     * acquired slot, whose payload is its first `at` bytes and then
     * src_bytes read from src when the transport sends them: the copy into
     * the slot is saved, and src must stay unchanged until send_drained. */
    void (*send_publish_ref)(void *ctx, int peer, size_t at, const void *src, size_t src_bytes,
                             uint64_t stamp);
    /* Optional (NULL: always true). Has every slot published to peer by
     * reference left (none references a caller's buffer any more)? Else
     * false and *w. True on a failed path too (nothing more leaves). */
    bool (*send_drained)(void *ctx, int peer, struct obc__wait *w);
    /* Optional (NULL: nothing is posted, nothing lands). Post a receive:
     * of the frames from peer that carry `stamp`, counted as one run of
     * payload bytes from the first, the bytes at run offsets [from, from +
     * nbytes) are written to dst + (offset - from) as they arrive, not
     * into the slot (the bytes before `from`, a header, stay in it).
     * Frames already received stay in their slots. unpost withdraws the
     * post: once it returns nothing more is written to dst. landed: the
     * slot recv_peek returns now had its posted bytes written to the post
     * (the caller does not copy them). */
    void (*recv_post)(void *ctx, int peer, uint64_t stamp, size_t from, void *dst, size_t nbytes);
    void (*recv_unpost)(void *ctx, int peer);
    bool (*recv_landed)(void *ctx, int peer);
    /* The next slot from peer in order, its size and stamp, else NULL and *w. */
    void *(*recv_peek)(void *ctx, int peer, size_t *nbytes, uint64_t *stamp, struct obc__wait *w);
    /* The peeked slot is consumed: the sender may reuse its memory. */
    void (*recv_release)(void *ctx, int peer);
    /* As send_publish, and the receiver's release of this slot will be
     * seen by send_seen: returns the slot's ticket for it. For senders that
     * must not finish before the receiver has looked at their first slot
     * (point-to-point: a mismatch is then reported on both sides). */
    uint64_t (*send_publish_tracked)(void *ctx, int peer, size_t nbytes, uint64_t stamp);
    /* Has the peer released the slot of `ticket`? Else false and *w (the
     * word moves when it does, or when the path fails). Out of band of the
     * slots: a notice never waits behind data that nobody reads. */
    bool (*send_seen)(void *ctx, int peer, uint64_t ticket, struct obc__wait *w);
    /* OBC_SUCCESS, or why the path to peer failed (OBC_ERR_PEER_LOST,
     * OBC_ERR_PROTOCOL, or the code of a peer's failure notice). Cheap;
     * any thread. shm's is always OBC_SUCCESS: a channel cannot fail on
     * its own, and a dead local rank shows in obc__arena_health. */
    obc_result_t (*peer_error)(const void *ctx, int peer);
};

/* -------------------------------------------------------------------- p2p */

/*
 * p2p: ordered, reliable streams of slots between two ranks of a
 * communicator, whatever separates them. The interface is slot-based so a
 * sender can produce data straight into the transport's memory (a
 * reduction writes its result into the slot; no extra copy) and a receiver
 * can consume it in place:
 *   send_acquire  a free slot of slot_bytes() to fill, else NULL and *w;
 *   send_publish  hand the first nbytes of it over, with a stamp;
 *   recv_peek     the next slot from a peer, its size and stamp, else NULL;
 *   recv_release  the slot is consumed; its memory may be reused.
 * Each call goes to the peer's struct obc__xport_ops (above), whose
 * contract it keeps; a wait it fills names the peer by communicator rank.
 * Within a host a slot is memory of the host arena (its channels); to
 * another host it is a staging slot of the TCP transport (transport/tcp),
 * whose progress thread moves it through a socket, driven by epoll. A
 * failed connection wakes its waiters, and obc__p2p_health then says why.
 */
struct obc__p2p;

/* What a rank publishes (through the bootstrap) so that ranks on other
 * hosts can connect to it. Sent as bytes: fixed layout, no padding. */
struct obc__tcp_contact {
    char addr[48]; /* numeric IP address */
    int32_t port;
    uint32_t reserved;
    uint64_t cookie; /* random: a connection must present it (no stray or stale peers) */
};

/* Listen on ip (any free port) for peers of other hosts; fills *me and
 * *lfd. The listener is handed to obc__p2p_create, which closes it. */
obc_result_t obc__tcp_listen(const char *ip, int nranks, struct obc__tcp_contact *me, int *lfd,
                             struct obc__err *err);

struct obc__p2p_setup {
    struct obc__arena *arena; /* the ranks of this host */
    int rank, nranks;
    const bool *remote; /* [nranks]: true for ranks on other hosts (TCP) */
    size_t slot_bytes; /* usable bytes per slot, the same on every rank and peer */
    uint32_t tcp_nslots; /* slots per direction of a TCP link */
    int listen_fd; /* -1 when no rank is remote */
    const struct obc__tcp_contact *contacts; /* [nranks], when some are remote */
    int64_t timeout_ns; /* to connect every pair */
};

/* Connect every pair of ranks on different hosts (lower rank connects),
 * start the TCP progress thread. */
obc_result_t obc__p2p_create(const struct obc__p2p_setup *setup, struct obc__err *err,
                             struct obc__p2p **out);
/* Flush what was sent and say goodbye to remote peers (at most drain_ns). */
void obc__p2p_destroy(struct obc__p2p *p, int64_t drain_ns);
/* Tell every remote peer (once) that this communicator broke because of
 * `culprit` (e.g. a local rank died), so that they name it too. */
void obc__p2p_tell_failure(struct obc__p2p *p, obc_result_t code, int culprit);
/* The same with a whole verdict word (obc__verdict_pair: both ranks of a
 * disagreeing pair); nothing when it names no rank. */
void obc__p2p_tell_verdict(struct obc__p2p *p, uint64_t verdict);
/* Break every connection now (obc_comm_abort): remote peers see it at once. */
void obc__p2p_abort(struct obc__p2p *p);
/* OBC_SUCCESS, or the error of a failed connection, with a message naming
 * the rank (peer lost, malformed data) and the verdict in *verdict (its
 * code that error's, the ranks the failure notice named, else the peer).
 * Cheap: called between waits. */
obc_result_t obc__p2p_health(struct obc__p2p *p, uint64_t *verdict);
/* Remote peers that sent nothing (not even a heartbeat) for at least
 * min_ns, as "; nothing heard from rank 4 (10.77.0.3) for 6.1 s, ...", or
 * "" when none: for error messages. */
void obc__p2p_describe_silent(const struct obc__p2p *p, int64_t min_ns, char *out, size_t nbytes);
/* Notes: a record of OBC_P2P_NOTE_BYTES (its meaning is the layer
 * above's: check mode keeps there the call this rank is in) that a rank
 * posts to every remote peer, out of band of the slots, latest wins (one
 * replaced before it went out is never sent). A note posted before a
 * failure notice reaches the peer before it. read_note: remote peer's
 * latest note (false: none came yet, or the peer shares this host); *w,
 * if not NULL, set to wait for the next. */
#define OBC_P2P_NOTE_BYTES 96
void obc__p2p_post_note(struct obc__p2p *p, const void *note);
bool obc__p2p_read_note(struct obc__p2p *p, int peer, void *note, struct obc__wait *w);
size_t obc__p2p_slot_bytes(const struct obc__p2p *p, int peer);
void *obc__p2p_send_acquire(struct obc__p2p *p, int peer, struct obc__wait *w);
void obc__p2p_send_publish(struct obc__p2p *p, int peer, size_t nbytes, uint64_t stamp);
/* send_publish_tracked and send_seen of the peer's xport_ops (above). */
uint64_t obc__p2p_send_publish_tracked(struct obc__p2p *p, int peer, size_t nbytes, uint64_t stamp);
bool obc__p2p_send_seen(struct obc__p2p *p, int peer, uint64_t ticket, struct obc__wait *w);
void *obc__p2p_recv_peek(struct obc__p2p *p, int peer, size_t *nbytes, uint64_t *stamp,
                         struct obc__wait *w);
void obc__p2p_recv_release(struct obc__p2p *p, int peer);
/* Send without staging the payload where the transport can (TCP): the
 * acquired slot's first `at` bytes (a header the caller wrote there), then
 * src_bytes from src, at + src_bytes <= the slot size. Within a host (or
 * when src_bytes is small) the bytes are copied into the slot at once.
 * Otherwise (the call returns true) src must stay unchanged until
 * obc__p2p_send_drained says the slots published to the peer by reference
 * have left, or until obc__p2p_detach (an operation that fails returns
 * without waiting); false: nothing references src. */
bool obc__p2p_send_publish_ref(struct obc__p2p *p, int peer, void *slot, size_t at, const void *src,
                               size_t src_bytes, uint64_t stamp);
bool obc__p2p_send_drained(struct obc__p2p *p, int peer, struct obc__wait *w);
/* Receive without staging where the transport can (TCP): the bytes of
 * the message from peer stamped `stamp`, after its first `from` bytes (a
 * header), land at dst..dst+nbytes as they arrive (xport_ops recv_post);
 * recv_landed says, for the slot peeked now, whether its bytes did (else
 * the caller copies them from the slot as usual). The caller withdraws
 * the post (unpost) before it returns; obc__p2p_detach withdraws every
 * post too. Within a host these do nothing and nothing lands. */
void obc__p2p_recv_post(struct obc__p2p *p, int peer, uint64_t stamp, size_t from, void *dst,
                        size_t nbytes);
void obc__p2p_recv_unpost(struct obc__p2p *p, int peer);
bool obc__p2p_recv_landed(struct obc__p2p *p, int peer);
void obc__p2p_detach(struct obc__p2p *p);

#endif
