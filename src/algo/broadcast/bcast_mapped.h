/* SPDX-License-Identifier: MIT */
/*
 * bcast_mapped.h - the arena broadcast's one-copy mode (bcast_mapped.c):
 * when the root's buffers lie in obc_mem_alloc blocks, its first slot
 * describes where, and every reader copies the message straight out of the
 * root's memory.
 */
#ifndef OBC_BCAST_MAPPED_H
#define OBC_BCAST_MAPPED_H

#include "algo/algo.h"

/* A description's slot carries the op's stamp with this bit flipped, so a
 * reader tells it from the op's first chunk of data. */
#define OBC_MAPPED_STAMP_BIT (1ull << 63)

/* The root: write into dst (dst_bytes of room) where every segment's send
 * buffer lies. Returns the description's size, or 0 when a segment lies
 * outside the communicator's blocks or the description does not fit. */
size_t obc__mapped_describe(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args,
                            void *dst, size_t dst_bytes);
/* A reader: copy every segment into its receive buffer as desc says (from
 * the root's blocks mapped here, else by single-copy reads).
 * OBC_ERR_MISMATCH when the description is not of this rank's call. */
obc_result_t obc__mapped_copy(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args,
                              const void *desc, size_t desc_bytes, bool streaming);

#endif
