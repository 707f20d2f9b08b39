/* SPDX-License-Identifier: MIT */
/*
 * arena.h - the host arena: memory shared by the ranks of one host
 * (implemented in shm/), for the shared-memory algorithms and the layers
 * that wire or watch a communicator (core/comm.c, engine/):
 *  - one-to-many rings of slots (the root writes a chunk once, every local
 *    rank copies it out), shared counters, one mailbox per rank;
 *  - windows and boards: per-rank regions with flags their owner advances;
 *  - single-copy access to a peer's memory (CMA);
 *  - what a wait needs of the host: its spin policy and health check (the
 *    wait loop itself, for every word, is the engine's: engine/wait.c).
 * Ranks are communicator ranks; the arena maps those of its host to its
 * own local indexes. Nothing here blocks: an operation that cannot
 * proceed fills a struct obc__wait.
 *
 * The arena's channels (point-to-point FIFOs between two local ranks) are
 * not here: they are the shm transport of the p2p interface
 * (transport.h), reached only through obc__p2p_*.
 */
#ifndef OBC_TRANSPORT_ARENA_H
#define OBC_TRANSPORT_ARENA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "obc.h"
#include "core/status.h"
#include "transport/transport.h"

struct obc__arena;

enum obc__ring_id {
    OBC_RING_EAGER, /* many small slots: small messages never wait for readers */
    OBC_RING_STAGE, /* few large chunks: pipelined staging of large messages */
    OBC_RING_DEEP, /* more of them, for messages larger than STAGE (crowded hosts) */
    OBC_RING_COUNT
};

enum obc__counter_id { OBC_CTR_BARRIER, OBC_CTR_CMA_DONE, OBC_CTR_COUNT };

#define OBC_MAILBOX_BYTES 48

/* Flags of a window: monotonic counters its owner advances (mod 2^32). */
#define OBC_WIN_FLAGS 4

/* A board: a small public record per local rank (bytes, then flags as a
 * window's). The layer above keeps there what its rank is doing and did. */
#define OBC_BOARD_BYTES 4096
#define OBC_BOARD_FLAGS 2

struct obc__arena_geometry {
    uint32_t nslots[OBC_RING_COUNT];
    size_t slot_bytes[OBC_RING_COUNT];
    size_t window_bytes; /* per local rank */
    uint32_t chan_nslots; /* per ordered pair of local ranks */
    size_t chan_slot_bytes;
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
/* The size of the segment obc__arena_create would make. */
size_t obc__arena_segment_bytes(int local_nranks, const struct obc__arena_geometry *geo);

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
/* Writer: room for nbytes (at most the ring's slot bytes) in position
 * pos's slot once every reader released its previous use, else NULL with
 * *w set. Publish the same nbytes. */
void *obc__arena_slot_acquire(struct obc__arena *a, int ring, uint64_t pos, size_t nbytes,
                              struct obc__wait *w);
/* false: another rank had published this position already (two ranks
 * believe they are the root); the ring cannot say which is right. */
bool obc__arena_slot_publish(struct obc__arena *a, int ring, uint64_t pos, size_t nbytes,
                             uint64_t stamp);
/* Reader: the published slot (its size and stamp in *nbytes, *stamp), else
 * NULL with *w set. Release it when its bytes have been copied out. */
const void *obc__arena_slot_peek(struct obc__arena *a, int ring, uint64_t pos, size_t *nbytes,
                                 uint64_t *stamp, struct obc__wait *w);
void obc__arena_slot_release(struct obc__arena *a, int ring, uint64_t pos);
/* Reader: release the n positions from first on at once, unread (the root
 * sent their bytes another way: obc__arena_peer_map). */
void obc__arena_slots_release(struct obc__arena *a, int ring, uint64_t first, uint64_t n);
/* Writer: has every reader released position pos? Else false with *w set. */
bool obc__arena_slot_drained(struct obc__arena *a, int ring, uint64_t pos, struct obc__wait *w);

/* Counters: monotonic (mod 2^32), shared by the local ranks. */
uint32_t obc__arena_counter_add(struct obc__arena *a, int id, uint32_t delta);
bool obc__arena_counter_reached(struct obc__arena *a, int id, uint32_t target, struct obc__wait *w);

/* Mailboxes: each local rank owns one; a message is tagged with a sequence
 * number, and its owner posts the next only after readers are done. */
void obc__arena_mailbox_post(struct obc__arena *a, uint32_t seq, const void *msg, size_t nbytes);
bool obc__arena_mailbox_read(struct obc__arena *a, int peer, uint32_t seq, void *msg, size_t nbytes,
                             struct obc__wait *w);
/* The doorbell of a receive from any source (one word for all its
 * streams): listen(+1) before looking at the streams, and from then on
 * every message that reaches this rank rings it; doorbell_wait fills *w
 * with the bell as it stands (call it after listen, before looking);
 * listen(-1) when the point-to-point batch ends. ring: a message reached
 * `rank` (a communicator rank of this host): wake it if it listens. */
void obc__arena_doorbell_listen(struct obc__arena *a, int delta);
void obc__arena_doorbell_wait(struct obc__arena *a, struct obc__wait *w);
void obc__arena_doorbell_ring(struct obc__arena *a, int rank);

/* Shared pieces of this rank's receive buffer (single-copy broadcast):
 * base is where both counts stand at an operation's start (the owner reads
 * it and posts it); a claim takes the next of npieces pieces of owner's
 * buffer (false: all taken), done counts one copied, and the owner waits
 * until the done count reaches base + npieces.
 * An owner may return before its pieces are all done when nothing of its
 * caller's is read any more (posted.c: every block deposited in its slot),
 * after owe(target): then the next base waits until the done count reaches
 * target, so that a new operation counts from a still count. pieces_base
 * is false (with *w set) while it waits. */
bool obc__arena_pieces_base(struct obc__arena *a, uint32_t *base, struct obc__wait *w);
void obc__arena_pieces_owe(struct obc__arena *a, uint32_t target);
bool obc__arena_piece_claim(struct obc__arena *a, int owner, uint32_t base, uint32_t npieces,
                            uint32_t *piece);
void obc__arena_piece_done(struct obc__arena *a, int owner);
bool obc__arena_pieces_reached(struct obc__arena *a, uint32_t target, struct obc__wait *w);

/* Windows: every local rank owns a region of window_bytes that every local
 * rank may read and write, and OBC_WIN_FLAGS counters that only the owner
 * advances and anyone may wait on. Which bytes mean what is the user's
 * (the algorithm's) business; the flags say how far the owner got. */
unsigned char *obc__arena_window(struct obc__arena *a, int owner);
size_t obc__arena_window_bytes(const struct obc__arena *a);
void obc__arena_flag_store(struct obc__arena *a, int idx, uint32_t value); /* own flag */
/* Has owner's flag idx reached target (wrap-safe)? Else false with *w set. */
bool obc__arena_flag_reached(struct obc__arena *a, int owner, int idx, uint32_t target,
                             struct obc__wait *w);

/* Boards: OBC_BOARD_BYTES per local rank that only the owner writes and
 * every local rank may read at any time (also while the owner is stopped
 * or stuck, which is what they are for), with OBC_BOARD_FLAGS counters the
 * owner advances and anyone may wait on. Zeroed at creation. */
unsigned char *obc__arena_board(struct obc__arena *a, int owner);
/* The process id of a local rank (for diagnosis: is it stopped?). */
pid_t obc__arena_peer_pid(const struct obc__arena *a, int local);
void obc__arena_board_flag_store(struct obc__arena *a, int idx, uint32_t value); /* own flag */
bool obc__arena_board_flag_reached(struct obc__arena *a, int owner, int idx, uint32_t target,
                                   struct obc__wait *w);

/* Single-copy transfers with a peer's memory (requires has_cma), any size:
 * in pieces, with the arena's health checked between them. */
obc_result_t obc__arena_peer_read(struct obc__arena *a, int peer, void *dst, const void *src,
                                  size_t nbytes);
obc_result_t obc__arena_peer_write(struct obc__arena *a, int peer, const void *src, void *dst,
                                   size_t nbytes);

/* A local peer's obc_mem_alloc block (its fd and serial, core/mem.h),
 * mapped here, read-only or writable: the whole block, of *nbytes (0:
 * whatever its size; *nbytes says what is mapped), kept for later calls
 * (transport/shm/shm_map.c). NULL when the peer's fds cannot be opened
 * (logged once at INFO); then the caller copies with obc__arena_peer_read
 * or _write. */
void *obc__arena_peer_map(struct obc__arena *a, int peer, int fd, uint64_t serial, bool writable,
                          size_t *nbytes);

/* How long a wait on this host's words may spin and yield (the caller's
 * wait loop, engine/wait.c, sleeps after; shared futexes). */
struct obc__wait_policy obc__arena_wait_policy(const struct obc__arena *a);
/* Cheap check of the abort word and peers' health, without waiting: a
 * waiter calls it between polls and sleeps (OBC_ERR_ABORTED /
 * OBC_ERR_PEER_LOST / the aborting rank's code). */
obc_result_t obc__arena_health(struct obc__arena *a);
/* The arena's abort as a verdict word (transport.h: why, and the ranks it
 * names, a dead or aborting one or a disagreeing pair), or 0. */
uint64_t obc__arena_verdict(const struct obc__arena *a);
/* Break the arena for every local rank: their waits fail with `code`. */
void obc__arena_abort(struct obc__arena *a, obc_result_t code, int culprit_rank);
/* The same with a whole verdict word; the first one set wins. */
void obc__arena_abort_verdict(struct obc__arena *a, uint64_t verdict);
/* Break it because this rank (`self`) found that `other`'s call is not its
 * own (another collective, size or root): both are named, since either may
 * be the odd one. */
void obc__arena_abort_mismatch(struct obc__arena *a, int self, int other);

#endif
