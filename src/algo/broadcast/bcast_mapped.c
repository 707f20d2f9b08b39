/* SPDX-License-Identifier: MIT */
/*
 * bcast_mapped.c - one copy for broadcasts from shared buffers. A root
 * whose send buffers lie in obc_mem_alloc blocks (memfds) does not stage
 * them: the arena ring's first slot of the op carries a description, each
 * block once (owner's fd, serial, size) and each segment (block, offset,
 * size, address), and every reader maps the root's blocks (kept mapped for
 * later calls, transport/shm/shm_map.c) and copies its segments out. The
 * root copies nothing for the readers and sleeps until they are done.
 *
 *   root:    describe -> slot 0 ........................ wait: all released
 *   reader:  slot 0 -> map root's block -> memcpy all -> release the op's slots
 *
 * So a reader's data moves at memcpy speed whether or not the root still
 * has a core, and one hand-off per reader serves the whole message
 * (arena: one per chunk). A reader that may not open the root's fds reads
 * the same bytes with process_vm_readv (the addresses are in the
 * description too); select.c plans this mode only where that is permitted.
 */
#include "algo/broadcast/bcast_mapped.h"

#include <string.h>

#include "core/copy.h"
#include "core/mem.h"

/* Blocks per description: a fused group whose segments lie in more blocks
 * than this is staged. */
#define MAPPED_MAX_BLOCKS 64
/* A reader copies at most this much between two health checks. */
#define MAPPED_PIECE_BYTES ((size_t)8 << 20)

struct mapped_head {
    uint32_t nblocks;
    uint32_t nsegs;
};

struct mapped_block {
    uint64_t serial;
    uint64_t nbytes;
    int32_t fd;
    uint32_t pad;
};

struct mapped_seg {
    uint64_t addr; /* in the root's address space: for single-copy reads */
    uint64_t offset; /* in its block */
    uint64_t nbytes;
    uint32_t block;
    uint32_t pad;
};

static size_t desc_bytes(size_t nblocks, size_t nsegs)
{
    return sizeof(struct mapped_head) + nblocks * sizeof(struct mapped_block) +
        nsegs * sizeof(struct mapped_seg);
}

/* The index of the block in blocks[0..*n), added when new; -1 when full. */
static int block_index(struct mapped_block *blocks, uint32_t *n, const struct obc__mem_where *at)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (blocks[i].serial == at->serial) {
            return (int)i;
        }
    }
    if (*n == MAPPED_MAX_BLOCKS) {
        return -1;
    }
    blocks[*n] = (struct mapped_block){at->serial, at->block_bytes, at->fd, 0};
    return (int)(*n)++;
}

size_t obc__mapped_describe(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args,
                            void *dst, size_t dst_bytes)
{
    struct mapped_block blocks[MAPPED_MAX_BLOCKS];
    struct mapped_head head = {0, (uint32_t)args->nsegs};
    if (ctx->mem == NULL || args->nsegs > UINT32_MAX || desc_bytes(1, args->nsegs) > dst_bytes) {
        return 0;
    }
    /* Segments first, right after the head's room for the largest block
     * table; the blocks then move down to meet them. */
    struct mapped_seg *segs = (struct mapped_seg *)((unsigned char *)dst + sizeof(head));
    for (size_t i = 0; i < args->nsegs; i++) {
        const struct obc__seg *g = &args->segs[i];
        struct obc__mem_where at;
        if (!obc__mem_list_find(ctx->mem, g->send, g->nbytes, &at)) {
            return 0;
        }
        int b = block_index(blocks, &head.nblocks, &at);
        if (b < 0 || desc_bytes(head.nblocks, args->nsegs) > dst_bytes) {
            return 0;
        }
        segs[i] =
            (struct mapped_seg){(uint64_t)(uintptr_t)g->send, at.offset, g->nbytes, (uint32_t)b, 0};
    }
    unsigned char *p = dst;
    size_t seg_table = args->nsegs * sizeof(struct mapped_seg);
    memmove(p + sizeof(head) + head.nblocks * sizeof(struct mapped_block), segs, seg_table);
    memcpy(p, &head, sizeof(head));
    memcpy(p + sizeof(head), blocks, head.nblocks * sizeof(struct mapped_block));
    return desc_bytes(head.nblocks, args->nsegs);
}

static obc_result_t mismatch(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args,
                             const char *what)
{
    obc__arena_abort_mismatch(ctx->arena, ctx->rank, args->root);
    return obc__err_set(ctx->err, OBC_ERR_MISMATCH,
                        "broadcast #%llu: rank %d and root %d disagree on the operation (%s)",
                        (unsigned long long)args->seq, ctx->rank, args->root, what);
}

/* One segment, piece by piece, with a health check before each piece. */
static obc_result_t copy_seg(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args,
                             const struct mapped_seg *seg, const unsigned char *from,
                             unsigned char *to, bool streaming)
{
    for (size_t off = 0; off < seg->nbytes; off += MAPPED_PIECE_BYTES) {
        size_t k = seg->nbytes - off < MAPPED_PIECE_BYTES ? seg->nbytes - off : MAPPED_PIECE_BYTES;
        obc_result_t res = obc__arena_health(ctx->arena);
        if (res == OBC_SUCCESS && from == NULL) {
            res = obc__arena_peer_read(ctx->arena, args->root, to + off,
                                       (const void *)(uintptr_t)(seg->addr + off), k);
        } else if (res == OBC_SUCCESS) {
            obc__copy(to + off, from + off, k, streaming);
        }
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    return OBC_SUCCESS;
}

obc_result_t obc__mapped_copy(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args,
                              const void *desc, size_t nbytes, bool streaming)
{
    const unsigned char *p = desc;
    struct mapped_head head;
    memcpy(&head, p, sizeof(head));
    if (head.nsegs != args->nsegs || head.nblocks == 0 || head.nblocks > MAPPED_MAX_BLOCKS ||
        nbytes != desc_bytes(head.nblocks, head.nsegs)) {
        return mismatch(ctx, args, "a different number of tensors");
    }
    const struct mapped_block *blocks = (const void *)(p + sizeof(head));
    const struct mapped_seg *segs = (const void *)(blocks + head.nblocks);
    for (size_t i = 0; i < args->nsegs; i++) {
        const struct mapped_seg *seg = &segs[i];
        const struct mapped_block *b = &blocks[seg->block < head.nblocks ? seg->block : 0];
        if (seg->nbytes != args->segs[i].nbytes || seg->offset > b->nbytes ||
            seg->nbytes > b->nbytes - seg->offset) {
            return mismatch(ctx, args, "a tensor of another size");
        }
        size_t mapped = b->nbytes;
        const unsigned char *map =
            obc__arena_peer_map(ctx->arena, args->root, b->fd, b->serial, false, &mapped);
        obc_result_t res = copy_seg(ctx, args, seg, map != NULL ? map + seg->offset : NULL,
                                    args->segs[i].recv, streaming);
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    return OBC_SUCCESS;
}
