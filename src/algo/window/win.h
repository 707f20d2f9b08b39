/* SPDX-License-Identifier: MIT */
/*
 * win.h - the shared-memory machinery behind the "every rank works on
 * everybody's data" algorithms (win_reduce.c, win_gather.c): how a window
 * is cut into chunk slots, and the three flags that order the work.
 *
 * Each local rank's window holds WIN_DEPTH input slots and WIN_DEPTH result
 * slots of win_chunk_bytes() each. Chunk number g (counted over the whole
 * communicator's life, persist->window_chunks, identical on every rank
 * because every rank moves the same number of chunks per operation) uses
 * slot g % WIN_DEPTH everywhere. A rank's flags say:
 *   WIN_POSTED   g + 1 once its input for chunk g is in its input slot;
 *   WIN_REDUCED  g + 1 once its share of chunk g is computed (result slot);
 *   WIN_DONE     g + 1 once it no longer reads anything of chunk g.
 * A slot is rewritten for chunk g only when every local rank is DONE with
 * chunk g - WIN_DEPTH (all local ranks, not just the team: a previous
 * operation may have had other readers).
 *
 * An input slot starts with a small header: the operation's stamp and the
 * chunk's size. Every reader checks it before using the bytes, so ranks
 * that called different collectives, or the same with another count, fail
 * with OBC_ERR_MISMATCH instead of mixing data.
 */
#ifndef OBC_ALGO_WIN_H
#define OBC_ALGO_WIN_H

#include "algo/algo.h"

#define WIN_DEPTH 4

enum { WIN_POSTED, WIN_REDUCED, WIN_DONE };

/* Payload bytes of one slot: half the window split into WIN_DEPTH, less
 * the header, cache-line aligned. */
size_t win_chunk_bytes(const struct obc__algo_ctx *ctx);
unsigned char *win_input(const struct obc__algo_ctx *ctx, int rank, uint32_t g);
unsigned char *win_result(const struct obc__algo_ctx *ctx, int rank, uint32_t g);

/* Input slots: write this rank's header for chunk g; check rank's header
 * for chunk g (OBC_ERR_MISMATCH, which breaks the communicator, when it is
 * another operation or size). */
void win_stamp(const struct obc__algo_ctx *ctx, uint32_t g, uint64_t stamp, size_t nbytes);
obc_result_t win_check(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args, int rank,
                       uint32_t g, uint64_t stamp, size_t nbytes);

/* May this rank overwrite its slots for chunk g? Else false with *w set. */
bool win_slot_free(const struct obc__algo_ctx *ctx, uint32_t g, struct obc__wait *w);
/* Has every member of team (from index *from on, which advances past the
 * members already seen) set flag to at least target? */
bool win_team_reached(const struct obc__algo_ctx *ctx, const struct obc__team *team, int *from,
                      int flag, uint32_t target, struct obc__wait *w);
/* Take n chunk numbers for this operation (the same on every rank). */
uint32_t win_reserve(const struct obc__algo_ctx *ctx, uint32_t n);
/* Set this rank's flag to say chunk g reached that stage. Flags only grow:
 * a rank that has no part in a stage simply never sets its flag, and no
 * one waits on it. */
void win_set(const struct obc__algo_ctx *ctx, int flag, uint32_t g);

#endif
