/* SPDX-License-Identifier: MIT */
/*
 * transport.h - what the layers above may know about moving bytes.
 *
 * Two kinds of transport sit below the algorithms:
 *  - the host arena (shm): memory shared by the ranks of one host, offered
 *    as one-to-many rings of slots (the root writes a chunk once, every
 *    local rank copies it out), shared counters, one mailbox per rank, and
 *    single-copy access to a peer's memory (CMA). Implemented in shm/.
 *  - p2p channels (ordered, reliable, non-blocking byte streams between two
 *    ranks), the interface through which TCP joins between hosts; see
 *    struct obc__p2p_ops below and docs/ARCHITECTURE.md.
 * Transports know nothing of collectives: no dtypes, no ops, no
 * communicator; ranks are indexes into their own peer list. They never
 * block: an operation that cannot proceed fills a struct obc__wait, and the
 * caller sleeps in obc__arena_wait until that word changes.
 */
#ifndef OBC_TRANSPORT_H
#define OBC_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "obc.h"
#include "core/status.h"

/* "Come back when *word no longer equals seen." `peer` is the local rank
 * whose action is awaited (-1: several), for error messages. */
struct obc__wait {
    _Atomic uint32_t *word;
    _Atomic uint32_t *sleepers; /* incremented while someone sleeps on word */
    uint32_t seen;
    int peer;
};

/* ------------------------------------------------------------------ arena */

struct obc__arena;

enum obc__ring_id {
    OBC_RING_EAGER, /* many small slots: small messages never wait for readers */
    OBC_RING_STAGE, /* few large chunks: pipelined staging of large messages */
    OBC_RING_COUNT
};

enum obc__counter_id { OBC_CTR_BARRIER, OBC_CTR_CMA_DONE, OBC_CTR_COUNT };

#define OBC_MAILBOX_BYTES 48

struct obc__arena_geometry {
    uint32_t nslots[OBC_RING_COUNT];
    size_t slot_bytes[OBC_RING_COUNT];
};

/* Timing of waits: busy-poll for spin_ns, then yield the CPU until yield_ns
 * have passed, then sleep on a futex (in slices, to watch peers' health). */
struct obc__wait_policy {
    int64_t spin_ns;
    int64_t yield_ns;
};

/* A local rank as the arena knows it: its process, and the communicator
 * rank used in messages. */
struct obc__arena_peer {
    pid_t pid;
    int rank;
};

/* Life cycle (called by core/comm.c only). The leader (local rank 0)
 * creates the segment under `name`; the others attach; the leader unlinks
 * it once everyone has attached. peers[] lists the local ranks. Errors are
 * detailed in *err, which must outlive the arena. */
obc_result_t obc__arena_create(const char *name, int local_rank, int local_nranks,
                               const struct obc__arena_geometry *geo,
                               const struct obc__arena_peer *peers,
                               const struct obc__wait_policy *policy, struct obc__err *err,
                               struct obc__arena **out);
obc_result_t obc__arena_attach(const char *name, int local_rank, int local_nranks,
                               const struct obc__arena_peer *peers,
                               const struct obc__wait_policy *policy, struct obc__err *err,
                               struct obc__arena **out);
void obc__arena_unlink(const char *name);
/* Mark this rank as departed (a clean exit is not a lost peer) and unmap. */
void obc__arena_destroy(struct obc__arena *a);
size_t obc__arena_bytes(const struct obc__arena *a);

/* CMA: probe whether this process may read peer's memory at remote_addr. */
bool obc__arena_probe_cma(struct obc__arena *a, int peer, const void *remote_addr);
void obc__arena_set_cma(struct obc__arena *a, bool usable);
bool obc__arena_has_cma(const struct obc__arena *a);

/* Rings. Positions are per ring and advance identically on every local
 * rank: reserve(n) returns the first of n consecutive positions. The writer
 * of a position is the operation's root; every other local rank reads it. */
uint64_t obc__arena_ring_reserve(struct obc__arena *a, int ring, uint64_t nslots);
size_t obc__arena_slot_bytes(const struct obc__arena *a, int ring);
uint32_t obc__arena_ring_nslots(const struct obc__arena *a, int ring);
/* Writer: the slot's memory once every reader released its previous use,
 * else NULL with *w set. */
void *obc__arena_slot_acquire(struct obc__arena *a, int ring, uint64_t pos, struct obc__wait *w);
void obc__arena_slot_publish(struct obc__arena *a, int ring, uint64_t pos, size_t nbytes,
                             uint64_t stamp);
/* Reader: the published slot (its size and stamp in *nbytes, *stamp), else
 * NULL with *w set. Release it when its bytes have been copied out. */
const void *obc__arena_slot_peek(struct obc__arena *a, int ring, uint64_t pos, size_t *nbytes,
                                 uint64_t *stamp, struct obc__wait *w);
void obc__arena_slot_release(struct obc__arena *a, int ring, uint64_t pos);

/* Counters: monotonic (mod 2^32), shared by the local ranks. */
uint32_t obc__arena_counter_add(struct obc__arena *a, int id, uint32_t delta);
bool obc__arena_counter_reached(struct obc__arena *a, int id, uint32_t target, struct obc__wait *w);

/* Mailboxes: each local rank owns one; a message is tagged with a sequence
 * number, and its owner posts the next only after readers are done. */
void obc__arena_mailbox_post(struct obc__arena *a, uint32_t seq, const void *msg, size_t nbytes);
bool obc__arena_mailbox_read(struct obc__arena *a, int peer, uint32_t seq, void *msg, size_t nbytes,
                             struct obc__wait *w);

/* Single-copy transfers with a peer's memory (requires has_cma). */
obc_result_t obc__arena_peer_read(struct obc__arena *a, int peer, void *dst, const void *src,
                                  size_t nbytes);
obc_result_t obc__arena_peer_write(struct obc__arena *a, int peer, const void *src, void *dst,
                                   size_t nbytes);

/* Block until *w->word changes (OBC_SUCCESS), the arena is aborted or a peer
 * died (OBC_ERR_ABORTED / OBC_ERR_PEER_LOST / the aborting rank's code), or
 * timeout_ns pass without change (OBC_ERR_TIMEOUT; < 0: never). */
obc_result_t obc__arena_wait(struct obc__arena *a, const struct obc__wait *w, int64_t timeout_ns);
/* Cheap check of the abort word and peers' health, without waiting. */
obc_result_t obc__arena_health(struct obc__arena *a);
/* Break the arena for every local rank: their waits fail with `code`. */
void obc__arena_abort(struct obc__arena *a, obc_result_t code, int culprit_rank);

/* ---------------------------------------------------------- p2p (design) */

/*
 * The p2p interface a network transport implements (TCP, issue #4). Not
 * used within a host. Every member is non-blocking and called only by the
 * thread that runs the communicator's operations.
 *   isend/irecv: queue a byte range to/from a peer under a tag; the buffer
 *     stays owned by the caller until test() reports completion. Messages
 *     between one pair with one tag arrive in order.
 *   test: 1 when the request finished, 0 while pending, < 0 on error
 *     (peer lost: -ECONNRESET), with details in the transport's error sink.
 *   progress: move bytes on every connection; fills *w when it would block.
 *   cancel: forget a pending request (used when the communicator breaks).
 */
struct obc__p2p;
struct obc__p2p_req;
struct obc__p2p_ops {
    const char *name;
    int (*isend)(struct obc__p2p *t, int peer, uint64_t tag, const void *buf, size_t nbytes,
                 struct obc__p2p_req **req);
    int (*irecv)(struct obc__p2p *t, int peer, uint64_t tag, void *buf, size_t nbytes,
                 struct obc__p2p_req **req);
    int (*test)(struct obc__p2p *t, struct obc__p2p_req *req);
    int (*progress)(struct obc__p2p *t, struct obc__wait *w);
    void (*cancel)(struct obc__p2p *t, struct obc__p2p_req *req);
    void (*close)(struct obc__p2p *t);
};

#endif
