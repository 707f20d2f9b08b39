/* SPDX-License-Identifier: MIT */
/*
 * shm_seg.c - creating, attaching and releasing the host segment. The
 * leader computes the layout from the geometry and writes it into the
 * header; the others take the layout from the header (never from their own
 * environment), after validating it against the segment's real size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "platform/platform.h"
#include "transport/shm/shm_arena.h"

#define PAGE 4096

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static size_t layout(struct shm_header *h, int nranks, const struct obc__arena_geometry *geo)
{
    size_t off = round_up(sizeof(struct shm_header), 128);
    h->mailbox_off = off;
    off += sizeof(struct shm_mailbox) * (size_t)nranks;
    h->counter_off = off;
    off += sizeof(struct shm_counter) * OBC_CTR_COUNT;
    for (int r = 0; r < OBC_RING_COUNT; r++) {
        h->nslots[r] = geo->nslots[r];
        h->slot_bytes[r] = geo->slot_bytes[r];
        h->slot_hdr_off[r] = off;
        off += sizeof(struct shm_slot) * geo->nslots[r];
    }
    h->win_flag_off = off;
    off += sizeof(struct shm_counter) * OBC_WIN_FLAGS * (size_t)nranks;
    h->board_flag_off = off;
    off += sizeof(struct shm_counter) * OBC_BOARD_FLAGS * (size_t)nranks;
    h->chan_nslots = geo->chan_nslots;
    h->chan_slot_bytes = geo->chan_slot_bytes;
    h->chan_hdr_off = off;
    off += sizeof(struct shm_slot) * geo->chan_nslots * (size_t)nranks * (size_t)nranks;
    for (int r = 0; r < OBC_RING_COUNT; r++) {
        off = round_up(off, PAGE);
        h->payload_off[r] = off;
        off += geo->nslots[r] * geo->slot_bytes[r];
    }
    off = round_up(off, PAGE);
    h->board_off = off;
    off += (size_t)OBC_BOARD_BYTES * (size_t)nranks;
    h->window_bytes = round_up(geo->window_bytes, PAGE);
    h->window_off = off;
    off += h->window_bytes * (size_t)nranks;
    h->chan_payload_off = off;
    off +=
        round_up(geo->chan_nslots * geo->chan_slot_bytes, PAGE) * (size_t)nranks * (size_t)nranks;
    return round_up(off, PAGE);
}

static bool header_valid(const struct shm_header *h, int nranks, size_t mapped)
{
    if (h->magic != SHM_MAGIC || h->version != SHM_VERSION || h->nranks != (uint32_t)nranks ||
        h->total_bytes != mapped) {
        return false;
    }
    for (int r = 0; r < OBC_RING_COUNT; r++) {
        uint64_t end = h->payload_off[r] + (uint64_t)h->nslots[r] * h->slot_bytes[r];
        if (h->nslots[r] == 0 || h->slot_bytes[r] == 0 || end > mapped ||
            h->slot_hdr_off[r] + sizeof(struct shm_slot) * h->nslots[r] > mapped) {
            return false;
        }
    }
    uint64_t chan_pair = round_up(h->chan_nslots * h->chan_slot_bytes, PAGE);
    return h->counter_off + sizeof(struct shm_counter) * OBC_CTR_COUNT <= mapped &&
        h->win_flag_off + sizeof(struct shm_counter) * OBC_WIN_FLAGS * (uint64_t)nranks <= mapped &&
        h->board_flag_off + sizeof(struct shm_counter) * OBC_BOARD_FLAGS * (uint64_t)nranks <=
        mapped &&
        h->board_off + (uint64_t)OBC_BOARD_BYTES * nranks <= mapped &&
        h->chan_hdr_off + sizeof(struct shm_slot) * h->chan_nslots * (uint64_t)nranks * nranks <=
        mapped &&
        h->window_off + h->window_bytes * (uint64_t)nranks <= mapped && h->chan_nslots > 0 &&
        h->chan_slot_bytes > 0 &&
        h->chan_payload_off + chan_pair * (uint64_t)nranks * nranks <= mapped;
}

static obc_result_t wire_up(struct obc__arena *a, const struct obc__arena_peer *peers)
{
    unsigned char *base = (unsigned char *)a->hdr;
    a->mailboxes = (struct shm_mailbox *)(base + a->hdr->mailbox_off);
    a->counters = (struct shm_counter *)(base + a->hdr->counter_off);
    for (int r = 0; r < OBC_RING_COUNT; r++) {
        a->slots[r] = (struct shm_slot *)(base + a->hdr->slot_hdr_off[r]);
        a->payload[r] = base + a->hdr->payload_off[r];
    }
    a->win_flags = (struct shm_counter *)(base + a->hdr->win_flag_off);
    a->windows = base + a->hdr->window_off;
    a->board_flags = (struct shm_counter *)(base + a->hdr->board_flag_off);
    a->boards = base + a->hdr->board_off;
    a->chan_slots = (struct shm_slot *)(base + a->hdr->chan_hdr_off);
    a->chan_payload = base + a->hdr->chan_payload_off;
    a->chan_send_pos = calloc((size_t)a->nranks, sizeof(uint64_t));
    a->chan_recv_pos = calloc((size_t)a->nranks, sizeof(uint64_t));
    a->peers = malloc(sizeof(*a->peers) * (size_t)a->nranks);
    a->pidfds = malloc(sizeof(int) * (size_t)a->nranks);
    if (a->peers == NULL || a->pidfds == NULL || a->chan_send_pos == NULL ||
        a->chan_recv_pos == NULL) {
        return obc__err_set(a->err, OBC_ERR_NO_MEMORY, "arena peer table");
    }
    a->local_of_n = 0;
    for (int r = 0; r < a->nranks; r++) {
        a->local_of_n = peers[r].rank >= a->local_of_n ? peers[r].rank + 1 : a->local_of_n;
    }
    a->local_of = malloc(sizeof(int) * (size_t)a->local_of_n);
    if (a->local_of == NULL) {
        return obc__err_set(a->err, OBC_ERR_NO_MEMORY, "arena rank table");
    }
    memset(a->local_of, 0xff, sizeof(int) * (size_t)a->local_of_n);
    for (int r = 0; r < a->nranks; r++) {
        a->local_of[peers[r].rank] = r;
        a->peers[r] = peers[r];
        /* Without pidfds (old kernels) peers' death is found by timeouts. */
        a->pidfds[r] = r == a->rank ? -1 : obc__pidfd_open(peers[r].pid);
    }
    return OBC_SUCCESS;
}

static struct obc__arena *arena_new(int local_rank, int local_nranks,
                                    const struct obc__wait_policy *policy, struct obc__err *err)
{
    struct obc__arena *a = calloc(1, sizeof(*a));
    if (a != NULL) {
        a->rank = local_rank;
        a->nranks = local_nranks;
        a->policy = *policy;
        a->err = err;
    }
    return a;
}

size_t obc__arena_segment_bytes(int local_nranks, const struct obc__arena_geometry *geo)
{
    struct shm_header probe;
    memset(&probe, 0, sizeof(probe));
    return layout(&probe, local_nranks, geo);
}

obc_result_t obc__arena_create(const char *name, int local_rank, int local_nranks,
                               const struct obc__arena_geometry *geo,
                               const struct obc__arena_peer *peers,
                               const struct obc__wait_policy *policy, struct obc__err *err,
                               struct obc__arena **out)
{
    struct shm_header probe;
    void *addr = NULL;
    struct obc__arena *a = arena_new(local_rank, local_nranks, policy, err);
    if (a == NULL) {
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "arena");
    }
    memset(&probe, 0, sizeof(probe));
    a->nbytes = layout(&probe, local_nranks, geo);
    int rc = obc__shm_create(name, a->nbytes, &addr);
    if (rc != 0) {
        size_t nbytes = a->nbytes;
        free(a);
        return obc__err_set(err, OBC_ERR_SYSTEM, "cannot create shared memory %s (%zu bytes): %s",
                            name, nbytes, strerror(-rc));
    }
    a->hdr = addr;
    memcpy(a->hdr, &probe, sizeof(probe)); /* fresh pages are zero: every flag starts at 0 */
    a->hdr->magic = SHM_MAGIC;
    a->hdr->version = SHM_VERSION;
    a->hdr->nranks = (uint32_t)local_nranks;
    a->hdr->total_bytes = a->nbytes;
    OBC_INFO(OBC_LOG_SHM, "created host segment %s: %zu bytes for %d ranks", name, a->nbytes,
             local_nranks);
    *out = a;
    obc_result_t res = wire_up(a, peers);
    if (res != OBC_SUCCESS) {
        obc__arena_destroy(a);
        obc__shm_unlink(name);
    }
    return res;
}

obc_result_t obc__arena_attach(const char *name, int local_rank, int local_nranks,
                               const struct obc__arena_peer *peers,
                               const struct obc__wait_policy *policy, struct obc__err *err,
                               struct obc__arena **out)
{
    void *addr = NULL;
    struct obc__arena *a = arena_new(local_rank, local_nranks, policy, err);
    if (a == NULL) {
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "arena");
    }
    int rc = obc__shm_attach(name, sizeof(struct shm_header), &addr);
    if (rc == 0) {
        size_t total = (size_t)((struct shm_header *)addr)->total_bytes;
        obc__shm_detach(addr, sizeof(struct shm_header));
        rc = total < sizeof(struct shm_header) ? -EPROTO : obc__shm_attach(name, total, &addr);
        a->nbytes = total;
    }
    if (rc != 0 || !header_valid(addr, local_nranks, a->nbytes)) {
        if (rc == 0) {
            obc__shm_detach(addr, a->nbytes);
        }
        free(a);
        return obc__err_set(err, rc != 0 ? OBC_ERR_SYSTEM : OBC_ERR_PROTOCOL,
                            "cannot attach shared memory %s: %s", name,
                            rc != 0 ? strerror(-rc) : "invalid segment header");
    }
    a->hdr = addr;
    *out = a;
    obc_result_t res = wire_up(a, peers);
    if (res != OBC_SUCCESS) {
        obc__arena_destroy(a);
    }
    return res;
}

void obc__arena_unlink(const char *name)
{
    obc__shm_unlink(name);
}

void obc__arena_destroy(struct obc__arena *a)
{
    if (a == NULL) {
        return;
    }
    if (a->mailboxes != NULL) {
        atomic_store_explicit(&a->mailboxes[a->rank].departed, 1, memory_order_release);
    }
    for (int r = 0; a->pidfds != NULL && r < a->nranks; r++) {
        obc__fd_close(a->pidfds[r]);
    }
    obc__shm_peer_maps_fini(a);
    obc__shm_detach(a->hdr, a->nbytes);
    free(a->peers);
    free(a->local_of);
    free(a->pidfds);
    free(a->chan_send_pos);
    free(a->chan_recv_pos);
    free(a);
}

size_t obc__arena_bytes(const struct obc__arena *a)
{
    return a->nbytes;
}
