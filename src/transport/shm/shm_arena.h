/* SPDX-License-Identifier: MIT */
/*
 * shm_arena.h - layout of the host segment, private to transport/shm.
 *
 *   header (geometry, abort word)                   1 line group
 *   mailbox[nranks]                                 128 B each
 *   counter[OBC_CTR_COUNT]                          128 B each
 *   ring r: slot headers [nslots[r]]                128 B each (2 lines)
 *   ring r: payload [nslots[r] * slot_bytes[r]]     page aligned
 *   window flags [nranks][OBC_WIN_FLAGS]            128 B each
 *   board flags [nranks][OBC_BOARD_FLAGS]            128 B each
 *   channel slot headers [nranks * nranks][chan_nslots]
 *   boards [nranks * OBC_BOARD_BYTES]                page aligned
 *   windows [nranks * window_bytes]                 page aligned
 *   channel payload [nranks * nranks * chan_nslots * chan_slot_bytes]
 *
 * Pages are touched only when used: channels between ranks that never talk
 * cost address space, not memory.
 *
 * Every word that someone may sleep on is a struct shm_flag: the value and
 * a count of sleepers beside it, so a writer calls futex_wake only when
 * somebody actually sleeps. Lines written by different parties are kept
 * apart (the writer's "filled" line, the readers' "released" line).
 */
#ifndef OBC_SHM_ARENA_H
#define OBC_SHM_ARENA_H

#include <stdatomic.h>
#include <stdint.h>

#include "transport/arena.h"

#define SHM_MAGIC 0x4f42434du /* "OBCM" */
#define SHM_VERSION 5
#define SHM_LINE 64

struct shm_flag {
    _Atomic uint32_t value;
    _Atomic uint32_t sleepers;
};

struct shm_header {
    uint32_t magic;
    uint32_t version;
    uint32_t nranks;
    uint32_t pad0;
    uint64_t total_bytes;
    uint32_t nslots[OBC_RING_COUNT];
    uint64_t slot_bytes[OBC_RING_COUNT];
    uint64_t slot_hdr_off[OBC_RING_COUNT];
    uint64_t payload_off[OBC_RING_COUNT];
    uint64_t mailbox_off;
    uint64_t counter_off;
    uint64_t window_bytes;
    uint64_t win_flag_off;
    uint64_t window_off;
    uint64_t board_flag_off;
    uint64_t board_off;
    uint32_t chan_nslots;
    uint32_t pad1;
    uint64_t chan_slot_bytes;
    uint64_t chan_hdr_off;
    uint64_t chan_payload_off;
    /* 0, or (the obc_result_t that broke it << 32 | the rank it names):
     * one word, so the first reason and its rank win together. */
    _Alignas(SHM_LINE) _Atomic uint64_t abort_word;
};

struct shm_mailbox {
    struct shm_flag seq;
    _Atomic uint32_t departed; /* set at a clean obc_comm_destroy */
    uint32_t pad;
    unsigned char msg[OBC_MAILBOX_BYTES];
    /* Pieces of this rank's receive buffer in a single-copy broadcast:
     * claimed by whoever copies them (this rank or the root), and counted
     * once copied. Both only grow, so no operation resets them. */
    _Alignas(64) _Atomic uint32_t pieces_claimed;
    uint32_t pad3;
    struct shm_flag pieces_done;
    /* A receive of this rank from any source sleeps on the doorbell: while
     * `listeners` is not 0, every sender to this rank rings it after
     * publishing (shm_chan.c), and so does this rank's TCP thread after a
     * frame arrives, so one word wakes it whichever stream delivers. */
    struct shm_flag doorbell;
    _Atomic uint32_t listeners;
    uint32_t pad4;
    unsigned char pad2[128 - 64 - 32];
};
_Static_assert(sizeof(struct shm_mailbox) == 128, "a mailbox is two cache lines");

struct shm_counter {
    struct shm_flag value;
    unsigned char pad[128 - sizeof(struct shm_flag)];
};

/* A ring's payload of at most this many bytes rides in the slot's header
 * line, after the flag, so that a reader takes one line from the writer,
 * not two (an 8-byte broadcast: one cache-line transfer instead of two). */
#define SHM_SLOT_INLINE_BYTES 40

struct shm_slot {
    _Alignas(SHM_LINE) struct shm_flag filled; /* (pos + 1) once published; writer's line */
    uint64_t nbytes;
    uint64_t stamp;
    unsigned char small[SHM_SLOT_INLINE_BYTES]; /* rings: a payload that fits */
    _Alignas(SHM_LINE) struct shm_flag released; /* readers done, counted over all uses */
};
_Static_assert(sizeof(struct shm_slot) == 2 * SHM_LINE, "a slot header is two lines");

/* A local peer's obc_mem_alloc block, mapped read-only here (shm_map.c). */
struct shm_peer_map {
    int local;
    int fd; /* the owner's */
    uint64_t serial; /* the block's, in its owner's numbering */
    void *addr; /* NULL: an unused entry */
    bool writable;
    size_t nbytes;
    uint64_t used; /* the arena's map clock at the last use: least recent goes first */
};
#define SHM_PEER_MAPS 64

struct obc__arena {
    struct shm_header *hdr;
    size_t nbytes;
    int rank;
    int nranks;
    bool has_cma;
    struct obc__wait_policy policy;
    struct obc__err *err;
    uint64_t next_pos[OBC_RING_COUNT];
    uint64_t free_below[OBC_RING_COUNT]; /* the writer knows positions below are free */
    struct shm_slot *slots[OBC_RING_COUNT];
    unsigned char *payload[OBC_RING_COUNT];
    struct shm_mailbox *mailboxes;
    struct shm_counter *counters;
    struct shm_counter *win_flags; /* [rank * OBC_WIN_FLAGS + idx] */
    unsigned char *windows;
    struct shm_counter *board_flags; /* [rank * OBC_BOARD_FLAGS + idx] */
    unsigned char *boards;
    struct shm_slot *chan_slots; /* [(from * nranks + to) * chan_nslots + k] */
    unsigned char *chan_payload;
    uint64_t *chan_send_pos; /* next position to send to each peer */
    uint64_t *chan_recv_pos; /* next position to receive from each peer */
    struct obc__arena_peer *peers;
    int *local_of; /* [local_of_n]: communicator rank -> local index, -1 elsewhere */
    int local_of_n;
    int *pidfds;
    int64_t next_health_ns; /* when the pidfds are polled next */
    struct shm_peer_map maps[SHM_PEER_MAPS];
    uint64_t map_clock;
    bool map_refused; /* a mapping failed once: logged, not tried again */
    bool pieces_owed; /* readers of a finished operation still count pieces_done ... */
    uint32_t pieces_owed_target; /* ... up to this (obc__arena_pieces_owe) */
};

/* Unmap every peer block (arena destroy). */
void obc__shm_peer_maps_fini(struct obc__arena *a);

/* Set *flag's value and wake sleepers, if any (shm_wait.c). */
void obc__shm_flag_store(struct shm_flag *f, uint32_t value);
/* The same, returning the value it replaced (one atomic exchange, as the store). */
uint32_t obc__shm_flag_swap(struct shm_flag *f, uint32_t value);
uint32_t obc__shm_flag_add(struct shm_flag *f, uint32_t delta);

/* Callers name ranks by their communicator rank; the segment is laid out
 * by local index. */
static inline int shm_local(const struct obc__arena *a, int rank)
{
    return a->local_of[rank];
}

static inline void shm_wait_on(struct obc__wait *w, struct shm_flag *f, uint32_t seen, int peer)
{
    w->word = &f->value;
    w->sleepers = &f->sleepers;
    w->seen = seen;
    w->peer = peer;
    w->sleep_now = false;
}

/* Whether a counting flag has reached target (counts wrap: compared as a
 * difference); if not, w says where to wait and for whom (-1: anybody). */
static inline bool shm_flag_reached(struct shm_flag *f, uint32_t target, int peer,
                                    struct obc__wait *w)
{
    uint32_t now = atomic_load_explicit(&f->value, memory_order_acquire);
    if ((int32_t)(now - target) >= 0) {
        return true;
    }
    shm_wait_on(w, f, now, peer);
    return false;
}

#endif
