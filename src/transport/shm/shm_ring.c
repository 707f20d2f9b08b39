/* SPDX-License-Identifier: MIT */
/*
 * shm_ring.c - the arena's data structures in use: one-to-many rings of
 * slots, shared counters and per-rank mailboxes. All lock-free: a slot is
 * published by storing (pos + 1) into its "filled" word after the payload
 * (release), and freed when its "released" counter reaches the number of
 * readers of all its uses so far, so nothing is ever reset and no rank can
 * confuse one use of a slot with another.
 */
#include <string.h>

#include "transport/shm/shm_arena.h"

static struct shm_slot *slot_of(struct obc__arena *a, int ring, uint64_t pos)
{
    return &a->slots[ring][pos % a->hdr->nslots[ring]];
}

static unsigned char *payload_of(struct obc__arena *a, int ring, uint64_t pos)
{
    return a->payload[ring] + (pos % a->hdr->nslots[ring]) * a->hdr->slot_bytes[ring];
}

uint64_t obc__arena_ring_reserve(struct obc__arena *a, int ring, uint64_t nslots)
{
    uint64_t first = a->next_pos[ring];
    a->next_pos[ring] += nslots;
    return first;
}

size_t obc__arena_slot_bytes(const struct obc__arena *a, int ring)
{
    return (size_t)a->hdr->slot_bytes[ring];
}

uint32_t obc__arena_ring_nslots(const struct obc__arena *a, int ring)
{
    return a->hdr->nslots[ring];
}

/* Whether every reader has released the previous use of position pos's
 * slot (the first use has none). */
static bool slot_free(struct obc__arena *a, int ring, uint64_t pos, uint32_t *now)
{
    uint64_t uses_before = pos / a->hdr->nslots[ring];
    uint32_t need = (uint32_t)(uses_before * (uint64_t)(a->nranks - 1));
    *now = atomic_load_explicit(&slot_of(a, ring, pos)->released.value, memory_order_acquire);
    return *now == need;
}

static void *slot_area(struct obc__arena *a, int ring, uint64_t pos, size_t nbytes)
{
    return nbytes <= SHM_SLOT_INLINE_BYTES ? slot_of(a, ring, pos)->small
                                           : payload_of(a, ring, pos);
}

/*
 * Each look at a released count is a cache line the readers last wrote.
 * But readers release in order of position, and the writer of a position
 * had released every earlier one it reads before it published (both are
 * ordered through the flags), so the previous use of the slot half a ring
 * ahead being free means every slot up to it is: one look covers half a
 * ring of acquires, while the readers keep up.
 */
void *obc__arena_slot_acquire(struct obc__arena *a, int ring, uint64_t pos, size_t nbytes,
                              struct obc__wait *w)
{
    uint32_t now;
    if (pos < a->free_below[ring]) {
        return slot_area(a, ring, pos, nbytes);
    }
    uint64_t ahead = pos + a->hdr->nslots[ring] / 2;
    if (ahead > pos && slot_free(a, ring, ahead, &now)) {
        a->free_below[ring] = ahead + 1;
        return slot_area(a, ring, pos, nbytes);
    }
    if (!slot_free(a, ring, pos, &now)) {
        shm_wait_on(w, &slot_of(a, ring, pos)->released, now, -1);
        return NULL;
    }
    a->free_below[ring] = pos + 1;
    return slot_area(a, ring, pos, nbytes);
}

bool obc__arena_slot_publish(struct obc__arena *a, int ring, uint64_t pos, size_t nbytes,
                             uint64_t stamp)
{
    struct shm_slot *s = slot_of(a, ring, pos);
    s->nbytes = nbytes;
    s->stamp = stamp;
    /* Every rank numbers the ring's positions alike, and one root writes
     * each: a position already published was another root's. */
    return obc__shm_flag_swap(&s->filled, (uint32_t)(pos + 1)) != (uint32_t)(pos + 1);
}

const void *obc__arena_slot_peek(struct obc__arena *a, int ring, uint64_t pos, size_t *nbytes,
                                 uint64_t *stamp, struct obc__wait *w)
{
    struct shm_slot *s = slot_of(a, ring, pos);
    uint32_t now = atomic_load_explicit(&s->filled.value, memory_order_acquire);
    if (now != (uint32_t)(pos + 1)) {
        shm_wait_on(w, &s->filled, now, -1);
        return NULL;
    }
    *nbytes = (size_t)s->nbytes;
    *stamp = s->stamp;
    return slot_area(a, ring, pos, *nbytes);
}

void obc__arena_slot_release(struct obc__arena *a, int ring, uint64_t pos)
{
    obc__shm_flag_add(&slot_of(a, ring, pos)->released, 1);
}

/* One add per slot, in order of each slot's last position in the range,
 * so the last position's count is the last to complete: a writer that
 * finds it drained finds every earlier one drained. */
void obc__arena_slots_release(struct obc__arena *a, int ring, uint64_t first, uint64_t n)
{
    uint64_t ring_slots = a->hdr->nslots[ring], end = first + n;
    for (uint64_t pos = n > ring_slots ? end - ring_slots : first; pos < end; pos++) {
        obc__shm_flag_add(&slot_of(a, ring, pos)->released,
                          (uint32_t)((pos - first) / ring_slots + 1));
    }
}

bool obc__arena_slot_drained(struct obc__arena *a, int ring, uint64_t pos, struct obc__wait *w)
{
    uint32_t need = (uint32_t)((pos / a->hdr->nslots[ring] + 1) * (uint64_t)(a->nranks - 1));
    struct shm_flag *f = &slot_of(a, ring, pos)->released;
    return shm_flag_reached(f, need, -1, w);
}

uint32_t obc__arena_counter_add(struct obc__arena *a, int id, uint32_t delta)
{
    return obc__shm_flag_add(&a->counters[id].value, delta);
}

bool obc__arena_counter_reached(struct obc__arena *a, int id, uint32_t target, struct obc__wait *w)
{
    return shm_flag_reached(&a->counters[id].value, target, -1, w);
}

void obc__arena_mailbox_post(struct obc__arena *a, uint32_t seq, const void *msg, size_t nbytes)
{
    struct shm_mailbox *m = &a->mailboxes[a->rank];
    memcpy(m->msg, msg, nbytes < OBC_MAILBOX_BYTES ? nbytes : OBC_MAILBOX_BYTES);
    obc__shm_flag_store(&m->seq, seq);
}

bool obc__arena_mailbox_read(struct obc__arena *a, int peer, uint32_t seq, void *msg, size_t nbytes,
                             struct obc__wait *w)
{
    struct shm_mailbox *m = &a->mailboxes[shm_local(a, peer)];
    uint32_t now = atomic_load_explicit(&m->seq.value, memory_order_acquire);
    if (now != seq) {
        shm_wait_on(w, &m->seq, now, peer);
        return false;
    }
    memcpy(msg, m->msg, nbytes < OBC_MAILBOX_BYTES ? nbytes : OBC_MAILBOX_BYTES);
    return true;
}

void obc__arena_doorbell_listen(struct obc__arena *a, int delta)
{
    /* seq_cst: a sender's ring and this rank's look at the streams cannot
     * both miss each other (each stores, then loads the other's word) */
    atomic_fetch_add_explicit(&a->mailboxes[a->rank].listeners, (uint32_t)delta,
                              memory_order_seq_cst);
}

void obc__arena_doorbell_wait(struct obc__arena *a, struct obc__wait *w)
{
    struct shm_flag *bell = &a->mailboxes[a->rank].doorbell;
    shm_wait_on(w, bell, atomic_load_explicit(&bell->value, memory_order_seq_cst), -1);
}

void obc__arena_doorbell_ring(struct obc__arena *a, int rank)
{
    struct shm_mailbox *m = &a->mailboxes[shm_local(a, rank)];
    if (atomic_load_explicit(&m->listeners, memory_order_seq_cst) != 0) {
        obc__shm_flag_add(&m->doorbell, 1);
    }
}

bool obc__arena_pieces_base(struct obc__arena *a, uint32_t *base, struct obc__wait *w)
{
    if (a->pieces_owed && !obc__arena_pieces_reached(a, a->pieces_owed_target, w)) {
        return false;
    }
    a->pieces_owed = false;
    *base = atomic_load_explicit(&a->mailboxes[a->rank].pieces_done.value, memory_order_acquire);
    return true;
}

void obc__arena_pieces_owe(struct obc__arena *a, uint32_t target)
{
    a->pieces_owed = true;
    a->pieces_owed_target = target;
}

bool obc__arena_piece_claim(struct obc__arena *a, int owner, uint32_t base, uint32_t npieces,
                            uint32_t *piece)
{
    _Atomic uint32_t *c = &a->mailboxes[shm_local(a, owner)].pieces_claimed;
    uint32_t now = atomic_load_explicit(c, memory_order_relaxed);
    do {
        if (now - base >= npieces) {
            return false; /* every piece is someone's */
        }
    } while (!atomic_compare_exchange_weak_explicit(c, &now, now + 1, memory_order_acq_rel,
                                                    memory_order_relaxed));
    *piece = now - base;
    return true;
}

void obc__arena_piece_done(struct obc__arena *a, int owner)
{
    obc__shm_flag_add(&a->mailboxes[shm_local(a, owner)].pieces_done, 1);
}

bool obc__arena_pieces_reached(struct obc__arena *a, uint32_t target, struct obc__wait *w)
{
    return shm_flag_reached(&a->mailboxes[a->rank].pieces_done, target, -1, w);
}
