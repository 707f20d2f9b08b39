/* SPDX-License-Identifier: MIT */
/*
 * p2p_batch.h - point-to-point sends and receives, private to src/engine:
 * progress.c runs a batch of p2p ops (a group's, or a run of queued ones)
 * through the step below, and waits on what it reports between steps.
 */
#ifndef OBC_ENGINE_P2P_BATCH_H
#define OBC_ENGINE_P2P_BATCH_H

#include "engine/engine.h"

struct obc__p2p_engine;

obc_result_t obc__p2p_engine_create(int nranks, struct obc__p2p_engine **out);
/* Frees the buffered sends to self nobody received. */
void obc__p2p_engine_destroy(struct obc__p2p_engine *pe);

/* A new batch whose first op is `op`; add more (false: no room, the op
 * stays out and runs in a later batch). Ops keep their issue order. */
void obc__p2p_batch_begin(struct obc__p2p_engine *pe, struct obc__op *op);
bool obc__p2p_batch_add(struct obc__p2p_engine *pe, struct obc__op *op);
size_t obc__p2p_batch_len(const struct obc__p2p_engine *pe);
/* The i-th op, NULL once forgotten. */
struct obc__op *obc__p2p_batch_op(const struct obc__p2p_engine *pe, size_t i);
/* The batch is over (done or failed): stop listening at the doorbell, if a
 * receive from any source started to. */
void obc__p2p_batch_end(struct obc__p2p_engine *pe);
/* The batch's i-th op was completed (and may be freed): never look at it again. */
void obc__p2p_batch_forget(struct obc__p2p_engine *pe, size_t i);
/* Has op (of the running batch) finished? Then *res is its result. */
bool obc__p2p_op_finished(const struct obc__op *op, obc_result_t *res);

/* Advance every op of the batch as far as it goes without blocking:
 * OBC_SUCCESS when all are done, OBC_IN_PROGRESS (with *moved saying
 * whether anything moved), or the error that fails the batch (a mismatch,
 * message set, peers told). */
obc_result_t obc__p2p_batch_step(struct obc__p2p_engine *pe, struct obc__algo_ctx *ctx,
                                 bool *moved);
/* After a step that moved nothing: the waits of the blocked ops (up to
 * max), and the number of them; 0 when only receives from self are left,
 * which no word announces. */
size_t obc__p2p_batch_waits(const struct obc__p2p_engine *pe, struct obc__wait *out, size_t max);
/* One line on what the batch waits for ("send to rank 3 (#2, 4096 bytes)"),
 * for timeout messages. */
void obc__p2p_batch_describe(const struct obc__p2p_engine *pe, char *out, size_t nbytes);

#endif
