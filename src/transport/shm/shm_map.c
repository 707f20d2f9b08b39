/* SPDX-License-Identifier: MIT */
/*
 * shm_map.c - local peers' shared buffers (obc_mem_alloc blocks) mapped
 * into this process, so that a reader copies a broadcast straight out of
 * the root's memory: one copy, no system call per transfer, and nothing
 * for the root to do while the reader runs.
 *
 * A block is opened through /proc/<pid>/fd/<fd> while its owner is inside
 * the operation (so the fd is certainly the block's) and kept mapped for
 * later operations: mapping costs about as much as copying a few MiB. The
 * owner's serial number, never reused, tells a new block from an old one
 * that had the same fd number. At most SHM_PEER_MAPS blocks stay mapped,
 * the least recently used going first; a kept mapping holds its block's
 * pages after the owner frees it, until it is evicted or the arena goes.
 */
#include <string.h>

#include "core/log.h"
#include "platform/platform.h"
#include "transport/shm/shm_arena.h"

static void unmap(struct shm_peer_map *m)
{
    obc__shm_detach(m->addr, m->nbytes);
    memset(m, 0, sizeof(*m));
}

void obc__shm_peer_maps_fini(struct obc__arena *a)
{
    for (int i = 0; i < SHM_PEER_MAPS; i++) {
        if (a->maps[i].addr != NULL) {
            unmap(&a->maps[i]);
        }
    }
}

/* Where a new mapping goes: over a block the owner has certainly freed
 * (its fd number now names another), or over a smaller view of the same
 * block with the same access; else into a free entry; else over the least
 * recently used. */
static struct shm_peer_map *slot_for(struct obc__arena *a, int local, int fd, uint64_t serial,
                                     bool writable)
{
    struct shm_peer_map *victim = &a->maps[0];
    for (int i = 0; i < SHM_PEER_MAPS; i++) {
        struct shm_peer_map *m = &a->maps[i];
        bool replaced = m->addr != NULL && m->local == local &&
            ((m->fd == fd && m->serial != serial) ||
             (m->serial == serial && m->writable == writable));
        if (replaced) {
            return m;
        }
        if (victim->addr != NULL && (m->addr == NULL || m->used < victim->used)) {
            victim = m;
        }
    }
    return victim;
}

void *obc__arena_peer_map(struct obc__arena *a, int rank, int fd, uint64_t serial, bool writable,
                          size_t *nbytes)
{
    int local = shm_local(a, rank);
    a->map_clock++;
    for (int i = 0; i < SHM_PEER_MAPS; i++) {
        struct shm_peer_map *m = &a->maps[i];
        if (m->addr != NULL && m->local == local && m->serial == serial &&
            m->writable == writable && m->nbytes >= *nbytes) {
            m->used = a->map_clock;
            *nbytes = m->nbytes;
            return m->addr;
        }
    }
    if (a->map_refused) {
        return NULL;
    }
    void *addr = NULL;
    int rc = obc__peer_fd_map(a->peers[local].pid, fd, writable, nbytes, &addr);
    if (rc != 0) {
        a->map_refused = true;
        OBC_INFO(OBC_LOG_SHM,
                 "cannot map rank %d's shared buffers (pid %d, fd %d): %s; broadcasts from "
                 "them are read with single-copy reads",
                 rank, (int)a->peers[local].pid, fd, strerror(-rc));
        return NULL;
    }
    struct shm_peer_map *m = slot_for(a, local, fd, serial, writable);
    if (m->addr != NULL) {
        unmap(m);
    }
    *m = (struct shm_peer_map){local, fd, serial, addr, writable, *nbytes, a->map_clock};
    return addr;
}
