/* SPDX-License-Identifier: MIT */
/*
 * tcp_link.h - the TCP side of the p2p interface, private to transport/
 * (p2p.c dispatches to it for peers on other hosts; tcp_mesh.c connects).
 *
 * One struct obc__tcp per communicator holds a link per remote peer. Each
 * link is a connected, non-blocking socket with two rings of slots in this
 * process's memory: the send ring (the rank fills a slot, publishes it; the
 * progress thread writes it to the socket as one frame) and the receive
 * ring (the thread reads each frame straight into a free slot; the rank
 * peeks and releases it). So the calls have the same shape as the shared
 * memory channels, and algorithms do not know which one they talk to.
 *
 * A frame is a 16-byte header (magic, payload bytes, the op's stamp) and
 * the payload. A header is validated before anything is read into a slot:
 * a wrong magic or a payload larger than a slot fails the link with
 * OBC_ERR_PROTOCOL; nothing a peer sends can make us allocate or write past
 * a slot. A closed or broken connection fails it with OBC_ERR_PEER_LOST.
 *
 * Waits: a call that cannot proceed fills *w with a ring index word that
 * the progress thread advances (and futex-wakes, private), like the arena's
 * flags; after a failure the thread bumps every word so that no waiter
 * sleeps on, and obc__tcp_link_error says why.
 *
 * One progress thread per struct obc__tcp drives every socket with epoll;
 * ranks wake it through an eventfd when they publish or release a slot. No
 * allocation after create: slots are allocated once.
 *
 * Files: tcp_link.c is the link (framing, the rings and socket state of
 * one connection, the rank's calls below); tcp_progress.c is the thread
 * and the life cycle (create ... destroy, failure notices, abort);
 * tcp_impl.h is what the two share.
 */
#ifndef OBC_TRANSPORT_TCP_LINK_H
#define OBC_TRANSPORT_TCP_LINK_H

#include "transport/transport.h"

struct obc__tcp;

/* The p2p interface's table for a peer on another host (transport.h):
 * ctx is the struct obc__tcp, peer a link index; its members are the
 * rank's calls below. */
extern const struct obc__xport_ops obc__tcp_ops;

/* nlinks links (peer indexes 0..nlinks-1) of nslots slots of slot_bytes. */
obc_result_t obc__tcp_create(int nlinks, uint32_t nslots, size_t slot_bytes, struct obc__err *err,
                             struct obc__tcp **out);
/* Hand link `peer` its connected socket (the tcp object owns it from now). */
obc_result_t obc__tcp_attach(struct obc__tcp *t, int peer, int fd);
/* Ring this rank's doorbell in the host arena at every frame received, so
 * that a receive from any source sleeps on one word (arena.h). */
void obc__tcp_set_doorbell(struct obc__tcp *t, struct obc__arena *a, int rank);
/* Start the progress thread (after every link is attached). */
obc_result_t obc__tcp_start(struct obc__tcp *t);
/* Flush what was published and say goodbye on every link (at most
 * drain_ns), stop the thread, close. */
void obc__tcp_destroy(struct obc__tcp *t, int64_t drain_ns);

/* Tell every peer (once) that this rank's communicator broke, and which
 * rank caused it; their links then fail with `code` naming that rank. */
void obc__tcp_tell_failure(struct obc__tcp *t, obc_result_t code, int culprit);
/* The same with a whole verdict word (transport.h: both ranks of a pair). */
void obc__tcp_tell_verdict(struct obc__tcp *t, uint64_t verdict);
/* A peer's failure notice: its verdict word (why, whom), or 0. */
uint64_t obc__tcp_link_verdict(const struct obc__tcp *t, int peer);
/* Whether the peer said goodbye (destroyed its communicator). */
bool obc__tcp_link_departed(const struct obc__tcp *t, int peer);
/* Abort: tell every peer that rank `self` aborted (unless a failure was
 * told already), then shut each socket down once its notice is out (at
 * most 0.2 s later). Peers name the reason instead of a lost connection;
 * this rank's own progress thread sees its sockets close. */
void obc__tcp_abort(struct obc__tcp *t, int self);

/* Notes (transport.h, obc__p2p_post_note): post this rank's latest note
 * to every peer; read a peer's latest (false: none came yet), *w (if not
 * NULL) set to wait for the next one. */
void obc__tcp_post_note(struct obc__tcp *t, const void *note);
bool obc__tcp_read_note(struct obc__tcp *t, int peer, void *note, struct obc__wait *w);

void *obc__tcp_send_acquire(struct obc__tcp *t, int peer, struct obc__wait *w);
void obc__tcp_send_publish(struct obc__tcp *t, int peer, size_t nbytes, uint64_t stamp);
/* send_publish_ref and send_drained of the p2p table (transport.h): the
 * frame's payload is the acquired slot's first `at` bytes, then src_bytes
 * read from src by the progress thread as it sends them (no copy); the
 * caller keeps src unchanged until the link is drained. */
void obc__tcp_send_publish_ref(struct obc__tcp *t, int peer, size_t at, const void *src,
                               size_t src_bytes, uint64_t stamp);
bool obc__tcp_send_drained(struct obc__tcp *t, int peer, struct obc__wait *w);
/* Copy what every link's ring still references into its slots and
 * withdraw every posted receive: after this no send reads a caller's
 * buffer and no receive writes one (an operation that failed returns). */
void obc__tcp_detach_all(struct obc__tcp *t);
/* recv_post, recv_unpost and recv_landed of the p2p table (transport.h). */
void obc__tcp_recv_post(struct obc__tcp *t, int peer, uint64_t stamp, size_t from, void *dst,
                        size_t nbytes);
void obc__tcp_recv_unpost(struct obc__tcp *t, int peer);
bool obc__tcp_recv_landed(struct obc__tcp *t, int peer);
/* A data frame whose release by the receiver comes back in a FRAME_SEEN
 * notice: returns its ticket (1, 2, ... per link), which send_seen checks. */
uint64_t obc__tcp_send_publish_tracked(struct obc__tcp *t, int peer, size_t nbytes, uint64_t stamp);
bool obc__tcp_send_seen(struct obc__tcp *t, int peer, uint64_t ticket, struct obc__wait *w);
void *obc__tcp_recv_peek(struct obc__tcp *t, int peer, size_t *nbytes, uint64_t *stamp,
                         struct obc__wait *w);
void obc__tcp_recv_release(struct obc__tcp *t, int peer);
/* OBC_SUCCESS, or why the link failed (OBC_ERR_PEER_LOST, OBC_ERR_PROTOCOL). */
obc_result_t obc__tcp_link_error(const struct obc__tcp *t, int peer);
/* How long the peer has sent nothing at all (heartbeats included); 0 when
 * the link is dead, departed, or paused because this rank is not reading. */
int64_t obc__tcp_silent_ns(const struct obc__tcp *t, int peer, int64_t now);

#endif
