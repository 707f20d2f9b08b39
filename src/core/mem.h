/* SPDX-License-Identifier: MIT */
/*
 * mem.h - the shared buffers of one communicator (obc_mem_alloc): every
 * block obc_mem_alloc returned and obc_mem_free has not taken back, so that
 * a free of anything else is refused and the communicator's end frees what
 * is left. Thread-safe.
 */
#ifndef OBC_CORE_MEM_H
#define OBC_CORE_MEM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obc.h"
#include "core/status.h"

struct obc__mem_block {
    void *addr; /* page-aligned, MAP_SHARED */
    size_t nbytes; /* mapped: the request rounded up to pages */
    int fd; /* the memfd behind it (open until the block is freed) */
    uint64_t serial; /* unique in this process, never reused (an fd number is) */
    struct obc__mem_block *next;
};

/* Where a buffer lies in a block: what a local peer needs to map it
 * (through /proc/<pid>/fd/<fd>) and to know a mapping it made before is of
 * this very block. */
struct obc__mem_where {
    int fd;
    uint64_t serial;
    size_t block_bytes;
    size_t offset;
};

struct obc__mem_list {
    pthread_mutex_t lock; /* guards head; a leaf lock: nothing is called while held
                           * but mmap/munmap/close */
    struct obc__mem_block *head;
    size_t nblocks;
};

void obc__mem_list_init(struct obc__mem_list *l);
/* Unmap and close every block still listed. */
void obc__mem_list_fini(struct obc__mem_list *l);
/* A new block of at least bytes (> 0); OBC_ERR_NO_MEMORY (message in err). */
obc_result_t obc__mem_list_alloc(struct obc__mem_list *l, size_t bytes, void **ptr,
                                 struct obc__err *err);
/* Free the block that starts at ptr; OBC_ERR_INVALID_ARG when none does. */
obc_result_t obc__mem_list_free(struct obc__mem_list *l, void *ptr, struct obc__err *err);
/* Does [p, p + nbytes) lie inside one block? Then *at says where. */
bool obc__mem_list_find(struct obc__mem_list *l, const void *p, size_t nbytes,
                        struct obc__mem_where *at);

#endif
