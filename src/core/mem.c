/* SPDX-License-Identifier: MIT */
/*
 * mem.c - the list of a communicator's shared buffers (mem.h). One memfd
 * per block: no name in /dev/shm (nothing to clean up after a crash), and
 * the kernel frees the pages when the last mapping and fd go.
 */
#include "core/mem.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

static _Atomic uint64_t next_serial = 1;

void obc__mem_list_init(struct obc__mem_list *l)
{
    pthread_mutex_init(&l->lock, NULL);
    l->head = NULL;
    l->nblocks = 0;
}

static void block_free(struct obc__mem_block *b)
{
    obc__shm_detach(b->addr, b->nbytes);
    obc__fd_close(b->fd);
    free(b);
}

void obc__mem_list_fini(struct obc__mem_list *l)
{
    struct obc__mem_block *b = l->head;
    while (b != NULL) {
        struct obc__mem_block *next = b->next;
        block_free(b);
        b = next;
    }
    l->head = NULL;
    l->nblocks = 0;
    pthread_mutex_destroy(&l->lock);
}

obc_result_t obc__mem_list_alloc(struct obc__mem_list *l, size_t bytes, void **ptr,
                                 struct obc__err *err)
{
    size_t page = obc__page_bytes();
    if (bytes > SIZE_MAX - page) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "obc_mem_alloc: %zu bytes is too large",
                            bytes);
    }
    struct obc__mem_block *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "obc_mem_alloc: block record");
    }
    b->nbytes = (bytes + page - 1) / page * page;
    b->fd = obc__memfd_create(b->nbytes, &b->addr);
    if (b->fd < 0) {
        int e = -b->fd;
        free(b);
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "obc_mem_alloc: %zu bytes of shared memory: %s",
                            bytes, strerror(e));
    }
    b->serial = atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed);
    pthread_mutex_lock(&l->lock);
    b->next = l->head;
    l->head = b;
    l->nblocks++;
    pthread_mutex_unlock(&l->lock);
    *ptr = b->addr;
    return OBC_SUCCESS;
}

obc_result_t obc__mem_list_free(struct obc__mem_list *l, void *ptr, struct obc__err *err)
{
    pthread_mutex_lock(&l->lock);
    struct obc__mem_block **at = &l->head;
    while (*at != NULL && (*at)->addr != ptr) {
        at = &(*at)->next;
    }
    struct obc__mem_block *b = *at;
    if (b != NULL) {
        *at = b->next;
        l->nblocks--;
    }
    pthread_mutex_unlock(&l->lock);
    if (b == NULL) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "obc_mem_free: %p was not returned by obc_mem_alloc on this "
                            "communicator (or was freed already)",
                            ptr);
    }
    block_free(b);
    return OBC_SUCCESS;
}

bool obc__mem_list_find(struct obc__mem_list *l, const void *p, size_t nbytes,
                        struct obc__mem_where *at)
{
    uintptr_t x = (uintptr_t)p;
    bool found = false;
    pthread_mutex_lock(&l->lock);
    for (struct obc__mem_block *b = l->head; b != NULL && !found; b = b->next) {
        uintptr_t a = (uintptr_t)b->addr;
        if (x >= a && x - a <= b->nbytes && nbytes <= b->nbytes - (x - a)) {
            *at = (struct obc__mem_where){b->fd, b->serial, b->nbytes, x - a};
            found = true;
        }
    }
    pthread_mutex_unlock(&l->lock);
    return found;
}
