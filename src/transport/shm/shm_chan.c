/* SPDX-License-Identifier: MIT */
/*
 * shm_chan.c - channels: a FIFO of slots from one local rank to another,
 * the shared-memory side of the p2p interface. The same lock-free protocol
 * as the arena's rings with exactly one reader: a slot is published by
 * storing (pos + 1) into its "filled" word after the payload, and free
 * again when its "released" count reaches the number of its past uses.
 * Each side keeps its own position, so nothing is ever reset.
 * obc__shm_chan_ops at the end is how p2p.c reaches them.
 */
#include "transport/shm/shm_chan.h"

#include "transport/shm/shm_arena.h"

#define PAGE 4096

static size_t pair_payload_bytes(const struct obc__arena *a)
{
    size_t n = a->hdr->chan_nslots * a->hdr->chan_slot_bytes;
    return (n + PAGE - 1) / PAGE * PAGE;
}

static struct shm_slot *chan_slot(struct obc__arena *a, int from, int to, uint64_t pos)
{
    size_t pair = (size_t)from * (size_t)a->nranks + (size_t)to;
    return &a->chan_slots[pair * a->hdr->chan_nslots + pos % a->hdr->chan_nslots];
}

static unsigned char *chan_payload(struct obc__arena *a, int from, int to, uint64_t pos)
{
    size_t pair = (size_t)from * (size_t)a->nranks + (size_t)to;
    return a->chan_payload + pair * pair_payload_bytes(a) +
        (pos % a->hdr->chan_nslots) * a->hdr->chan_slot_bytes;
}

void *obc__arena_chan_acquire(struct obc__arena *a, int to_rank, struct obc__wait *w)
{
    int to = shm_local(a, to_rank);
    uint64_t pos = a->chan_send_pos[to];
    struct shm_slot *s = chan_slot(a, a->rank, to, pos);
    uint32_t need = (uint32_t)(pos / a->hdr->chan_nslots);
    uint32_t now = atomic_load_explicit(&s->released.value, memory_order_acquire);
    if (now != need) {
        shm_wait_on(w, &s->released, now, to_rank);
        return NULL;
    }
    return chan_payload(a, a->rank, to, pos);
}

void obc__arena_chan_publish(struct obc__arena *a, int to_rank, size_t nbytes, uint64_t stamp)
{
    int to = shm_local(a, to_rank);
    uint64_t pos = a->chan_send_pos[to]++;
    struct shm_slot *s = chan_slot(a, a->rank, to, pos);
    s->nbytes = nbytes;
    s->stamp = stamp;
    obc__shm_flag_store(&s->filled, (uint32_t)(pos + 1));
    obc__arena_doorbell_ring(a, to_rank);
}

void *obc__arena_chan_peek(struct obc__arena *a, int from_rank, size_t *nbytes, uint64_t *stamp,
                           struct obc__wait *w)
{
    int from = shm_local(a, from_rank);
    uint64_t pos = a->chan_recv_pos[from];
    struct shm_slot *s = chan_slot(a, from, a->rank, pos);
    uint32_t now = atomic_load_explicit(&s->filled.value, memory_order_acquire);
    if (now != (uint32_t)(pos + 1)) {
        shm_wait_on(w, &s->filled, now, from_rank);
        return NULL;
    }
    *nbytes = (size_t)s->nbytes;
    *stamp = s->stamp;
    return chan_payload(a, from, a->rank, pos);
}

void obc__arena_chan_release(struct obc__arena *a, int from_rank)
{
    int from = shm_local(a, from_rank);
    uint64_t pos = a->chan_recv_pos[from]++;
    obc__shm_flag_add(&chan_slot(a, from, a->rank, pos)->released, 1);
}

/* A slot's released count is the number of its uses read so far, so the
 * use at position pos has been read once it exceeds pos / nslots: the
 * ticket of a tracked slot is simply its position. */
static uint64_t chan_publish_tracked(void *ctx, int peer, size_t nbytes, uint64_t stamp)
{
    struct obc__arena *a = ctx;
    uint64_t pos = a->chan_send_pos[shm_local(a, peer)];
    obc__arena_chan_publish(a, peer, nbytes, stamp);
    return pos;
}

static bool chan_send_seen(void *ctx, int peer, uint64_t ticket, struct obc__wait *w)
{
    struct obc__arena *a = ctx;
    struct shm_slot *s = chan_slot(a, a->rank, shm_local(a, peer), ticket);
    return shm_flag_reached(&s->released, (uint32_t)(ticket / a->hdr->chan_nslots) + 1, peer, w);
}

/* The p2p interface's table for a peer on this host (transport.h). */

static void *chan_send_acquire(void *ctx, int peer, struct obc__wait *w)
{
    return obc__arena_chan_acquire(ctx, peer, w);
}

static void chan_send_publish(void *ctx, int peer, size_t nbytes, uint64_t stamp)
{
    obc__arena_chan_publish(ctx, peer, nbytes, stamp);
}

static void *chan_recv_peek(void *ctx, int peer, size_t *nbytes, uint64_t *stamp,
                            struct obc__wait *w)
{
    return obc__arena_chan_peek(ctx, peer, nbytes, stamp, w);
}

static void chan_recv_release(void *ctx, int peer)
{
    obc__arena_chan_release(ctx, peer);
}

/* A channel is memory: it cannot fail on its own. A local rank that dies
 * breaks the arena, which every wait on it reports. */
static obc_result_t chan_peer_error(const void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
    return OBC_SUCCESS;
}

const struct obc__xport_ops obc__shm_chan_ops = {
    .name = "shm",
    .send_acquire = chan_send_acquire,
    .send_publish = chan_send_publish,
    .send_publish_tracked = chan_publish_tracked,
    .send_seen = chan_send_seen,
    .recv_peek = chan_recv_peek,
    .recv_release = chan_recv_release,
    .peer_error = chan_peer_error,
};
