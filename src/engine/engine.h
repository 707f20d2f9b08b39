/* SPDX-License-Identifier: MIT */
/*
 * engine.h - operations, their order and their progress.
 *
 * Every collective becomes a struct obc__op and runs through one road:
 * - A blocking call with nothing queued runs in the caller's thread
 *   (no hand-off latency): obc__engine_run_blocking.
 * - Otherwise the op is queued (obc__engine_submit; a blocking call queues a
 *   heap copy and waits for it). Queued ops run in issue order, which must be
 *   the same on every rank, one at a time, by whichever thread claims the
 *   head of the queue: the progress thread (started at the first queued op)
 *   or a user thread waiting in obc__engine_wait_op / _synchronize.
 * - A failure that breaks the communicator (timeout, lost peer, abort,
 *   mismatch) fails the op that met it with its own code; every op that had
 *   not started (queued, or submitted later) fails promptly with
 *   OBC_ERR_ABORTED, its message naming the first failure.
 */
#ifndef OBC_ENGINE_H
#define OBC_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "algo/algo.h"

struct obc__engine;
struct obc__host_layout;

struct obc__op {
    struct obc__coll_args args;
    struct obc__seg seg; /* the single segment of an unfused op */
    struct obc__seg *fused; /* segments of a fused group op (owned) */
    size_t *vec; /* the v-forms' counts and displacements (owned; args.vec points here) */
    _Atomic uint32_t done; /* 0 until finished; a private futex word */
    _Atomic uint32_t nwaiters; /* threads sleeping on done */
    obc_result_t result;
    _Atomic int refs; /* heap ops: the engine's + each request's */
    struct obc__op *next; /* queue link, guarded by the engine lock */
    _Alignas(16) unsigned char state[OBC_ALGO_STATE_BYTES];
};

struct obc__engine_params {
    struct obc__arena *arena;
    struct obc__p2p *p2p;
    int rank;
    int nranks;
    const struct obc__host_layout *layout; /* the teams' source; must outlive the engine */
    struct obc__err *err;
    struct obc__algo_tuning tuning;
    double timeout_s;
    bool arena_has_all; /* the arena holds every rank: boards can see everyone */
    struct obc__mem_list *mem; /* obc_mem_alloc's blocks, which broadcasts may map */
    int check; /* OBC_CHECK */
    const char *dump_path; /* OBC_DEBUG_DUMP ("" = the log); must outlive the engine */
};

obc_result_t obc__engine_create(const struct obc__engine_params *p, struct obc__engine **out);
/* Finish the queue (or fail it when broken), stop the thread, free. */
obc_result_t obc__engine_destroy(struct obc__engine *e);

/* Ops: a heap op starts with one reference (the caller's). */
struct obc__op *obc__op_new(void);
/* Zero an op's arguments and bookkeeping; its algorithm state is left to
 * the algorithm's init, which fills it (zeroing the whole 1 KiB cost a
 * third of a 1-rank broadcast). */
void obc__op_clear(struct obc__op *op);
void obc__op_ref(struct obc__op *op);
void obc__op_unref(struct obc__op *op);
/* Fill a broadcast or barrier op. */
void obc__op_set_bcast(struct obc__op *op, const void *sendbuf, void *recvbuf, size_t count,
                       obc_dtype_t dtype, int root);
void obc__op_set_barrier(struct obc__op *op);
/* Fill a reduction or gather (coll: ALLREDUCE, REDUCE, ALLGATHER,
 * REDUCE_SCATTER); count as the user gave it, root only for REDUCE. */
void obc__op_set_coll(struct obc__op *op, obc_coll_t coll, const void *sendbuf, void *recvbuf,
                      size_t count, obc_dtype_t dtype, obc_redop_t redop, int root);

/* Fill a personal collective (GATHER, SCATTER, ALLTOALL, ALLTOALLV,
 * ALLGATHERV). count: the per-rank block (gather, scatter, alltoall), this
 * rank's total sendcount (alltoallv) or the total of recvcounts
 * (allgatherv); vec: the v-forms' arrays (args.vec), NULL for the others,
 * to be copied into the op by obc__op_copy_vec. */
void obc__op_set_personal(struct obc__op *op, obc_coll_t coll, const void *sendbuf, void *recvbuf,
                          size_t count, obc_dtype_t dtype, int root);
/* Copy nvec counts (the caller's arrays, one after the other) into the op,
 * which then owns them: an async op must not depend on the caller's
 * arrays after the call returns. Returns OBC_ERR_NO_MEMORY or success. */
obc_result_t obc__op_copy_vec(struct obc__op *op, const size_t *const *arrays, size_t narrays,
                              size_t n);

/* Run op (on the caller's stack) now in this thread if nothing is queued;
 * otherwise queue a heap copy and wait for it. Returns the op's result. */
obc_result_t obc__engine_run_blocking(struct obc__engine *e, struct obc__op *op);
/* Queue a heap op; the engine takes its own reference. On a broken
 * communicator the op is not queued but finished with OBC_ERR_ABORTED, which
 * is also returned. */
obc_result_t obc__engine_submit(struct obc__engine *e, struct obc__op *op);
/* Wait for an op of e to finish, running queued ops in this thread while no
 * other thread runs them; the op's result. Does not drop references. */
obc_result_t obc__engine_wait_op(struct obc__engine *e, struct obc__op *op);
bool obc__op_is_done(const struct obc__op *op);
/* Wait until everything submitted so far has finished. */
obc_result_t obc__engine_synchronize(struct obc__engine *e);

/* What obc__algo_select chooses for args on e's communicator, with its
 * plan and (why != NULL) the reason; the same choice a run would make.
 * Reads only what is fixed at creation: safe beside running ops. */
const struct obc__algo *obc__engine_plan(const struct obc__engine *e,
                                         const struct obc__coll_args *args, struct obc__plan *plan,
                                         char *why, size_t why_bytes);
/* The algorithm OBC_ALGO forces for coll, or NULL. */
const struct obc__algo *obc__engine_forced(const struct obc__engine *e, obc_coll_t coll);

/* Break the communicator with `code` (ops not yet run then fail with
 * OBC_ERR_ABORTED naming it) and tell the peers: the host's ranks through
 * the arena, the other hosts' through the TCP transport. */
void obc__engine_abort(struct obc__engine *e, obc_result_t code);
/* OBC_SUCCESS while usable; else the code that broke it. */
obc_result_t obc__engine_broken(const struct obc__engine *e);
void obc__engine_set_timeout(struct obc__engine *e, double seconds);

/* Groups (group.c): thread-local; calls made between start and end are
 * collected and launched fused at the outermost end. */
bool obc__group_active(void);
obc_result_t obc__group_start(void);
/* Take op (heap, one reference given to the group). `req_slot`, if not
 * NULL, receives the op (with a reference) when the group launches; a
 * blocking call passes NULL and group_end waits for it. */
obc_result_t obc__group_add(struct obc__engine *e, struct obc__op *op, struct obc__op **req_slot,
                            size_t bucket_bytes);
obc_result_t obc__group_end(void);

#endif
