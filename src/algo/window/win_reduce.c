/* SPDX-License-Identifier: MIT */
/*
 * win_reduce.c - the shared-memory reduction in which every rank reduces a
 * slice, and the shared-memory gather/broadcast, over the arena's windows.
 *
 * Reduction, per chunk g (a few hundred KiB of the vector):
 *
 *   post     every member copies its chunk into its input slot   (POSTED)
 *   reduce   member s reads piece s of every member's input slot,
 *            combines them left to right in team order, and writes
 *            the result into its result slot (or, reduce_scatter,
 *            straight into its own output)                        (REDUCED)
 *   consume  consumers copy every member's result piece out       (DONE)
 *
 * Each byte is copied in once, read once by its reducer, written once as a
 * result and copied out once per consumer, and the n members reduce in
 * parallel. Members post up to WIN_DEPTH chunks ahead, so copying in
 * overlaps the others' reductions. The reduction order of an element
 * depends only on the team, never on timing: bitwise identical results.
 */
#include <string.h>

#include "algo/window/win_reduce.h"
#include "core/reduce.h"
#include "core/copy.h"

#define WIN_MAX_TEAM 512

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* Piece s of chunk k of a vector job: its first element (from the vector's
 * start) and length. Pieces are cache-line multiples so that no two
 * reducers write one line. */
static void vec_piece(const struct win_reduce_run *r, uint32_t k, int s, size_t *off, size_t *len)
{
    size_t start = (size_t)k * r->chunk_elems;
    size_t chunk = r->job.count - start < r->chunk_elems ? r->job.count - start : r->chunk_elems;
    size_t line = 64 / r->esize > 0 ? 64 / r->esize : 1;
    size_t per = round_up((chunk + (size_t)r->job.team->n - 1) / (size_t)r->job.team->n, line);
    size_t first = (size_t)s * per < chunk ? (size_t)s * per : chunk;
    *off = start + first;
    *len = chunk - first < per ? chunk - first : per;
}

/* Block s's piece of chunk k of a blocks job (reduce_scatter). */
static size_t blk_len(const struct win_reduce_run *r, uint32_t k)
{
    size_t start = (size_t)k * r->chunk_elems;
    return r->job.count - start < r->chunk_elems ? r->job.count - start : r->chunk_elems;
}

void win_reduce_start(struct win_reduce_run *r, const struct obc__algo_ctx *ctx,
                      const struct win_reduce_job *job)
{
    memset(r, 0, sizeof(*r));
    r->job = *job;
    r->ctx = ctx;
    r->stamp = obc__algo_stamp(job->args);
    r->esize = obc_dtype_size(job->dtype);
    r->outsize = job->out_acc ? obc__acc_size(job->dtype) : r->esize;
    size_t c = win_chunk_bytes(ctx);
    if (job->blocks) {
        r->chunk_elems = c / (r->esize * (size_t)job->team->n);
    } else {
        r->chunk_elems = c / (r->outsize > r->esize ? r->outsize : r->esize);
    }
    r->nchunks = (uint32_t)((job->count + r->chunk_elems - 1) / r->chunk_elems);
    r->base = win_reserve(ctx, r->nchunks);
    /* Up to the plan's whole_max_bytes (OBC_WIN_WHOLE_MAX_BYTES) a vector
     * reduction skips the slicing: every consumer reduces the whole chunk
     * itself, in the same order, from everybody's input, which saves the
     * second synchronisation (waiting for everyone's slice) at the price of
     * n-fold arithmetic on a few KiB. The result is the same bits either way. */
    r->whole = !job->blocks && job->count * r->esize <= job->args->plan.whole_max_bytes;
}

/* Bytes every member posts for chunk k (what the slot header must say). */
static size_t posted_bytes(const struct win_reduce_run *r, uint32_t k)
{
    if (r->job.blocks) {
        return blk_len(r, k) * r->esize * (size_t)r->job.team->n;
    }
    size_t start = (size_t)k * r->chunk_elems;
    return (r->job.count - start < r->chunk_elems ? r->job.count - start : r->chunk_elems) *
        r->esize;
}

static void post(struct win_reduce_run *r, uint32_t k)
{
    const struct win_reduce_job *j = &r->job;
    unsigned char *slot = win_input(r->ctx, r->ctx->rank, r->base + k);
    const unsigned char *in = j->in;
    if (!j->blocks) {
        size_t start = (size_t)k * r->chunk_elems;
        obc__copy(slot, in + start * r->esize, posted_bytes(r, k), 0);
    } else {
        size_t len = blk_len(r, k);
        for (int s = 0; s < j->team->n; s++) {
            size_t src = (size_t)s * j->count + (size_t)k * r->chunk_elems;
            obc__copy(slot + (size_t)s * r->chunk_elems * r->esize, in + src * r->esize,
                      len * r->esize, 0);
        }
    }
    win_stamp(r->ctx, r->base + k, r->stamp, posted_bytes(r, k));
}

/* dst = in[0] op ... op in[n-1] for one piece, in the accumulator type
 * (a partial for a later stage) or finished in the dtype. */
static void reduce_piece(const struct win_reduce_run *r, void *dst, const void *const *in,
                         size_t len)
{
    const struct win_reduce_job *j = &r->job;
    obc_redop_t combine_op = j->op == OBC_AVG ? OBC_SUM : j->op;
    if (!j->out_acc) {
        obc__red_many(dst, in, j->team->n, len, j->dtype, j->op, j->avg_divisor);
    } else if (r->outsize == r->esize) {
        obc__red_many(dst, in, j->team->n, len, j->dtype, combine_op, 1);
    } else {
        obc__red_widen(dst, in[0], len, j->dtype);
        for (int q = 1; q < j->team->n; q++) {
            obc__red_combine(dst, dst, in[q], len, j->dtype, combine_op);
        }
    }
}

static bool consumes(const struct win_reduce_run *r);

static obc_result_t reduce_mine(struct win_reduce_run *r, uint32_t k)
{
    const struct win_reduce_job *j = &r->job;
    const void *in[WIN_MAX_TEAM];
    uint32_t g = r->base + k;
    int me = j->team->me;
    size_t slot_off, len;
    void *dst;
    if (r->whole) {
        slot_off = 0;
        len = posted_bytes(r, k) / r->esize;
        dst = (unsigned char *)j->out + (size_t)k * r->chunk_elems * r->outsize;
    } else if (j->blocks) {
        len = blk_len(r, k);
        slot_off = (size_t)me * r->chunk_elems * r->esize;
        dst = (unsigned char *)j->out + (size_t)k * r->chunk_elems * r->esize;
    } else {
        size_t off;
        vec_piece(r, k, me, &off, &len);
        slot_off = (off - (size_t)k * r->chunk_elems) * r->esize;
        dst = win_result(r->ctx, r->ctx->rank, g);
    }
    for (int q = 0; q < j->team->n; q++) {
        obc_result_t res =
            win_check(r->ctx, j->args, j->team->ranks[q], g, r->stamp, posted_bytes(r, k));
        if (res != OBC_SUCCESS) {
            return res;
        }
        in[q] = win_input(r->ctx, j->team->ranks[q], g) + slot_off;
    }
    if (len > 0) {
        reduce_piece(r, dst, in, len);
    }
    return OBC_SUCCESS;
}

static void consume(struct win_reduce_run *r, uint32_t k)
{
    const struct win_reduce_job *j = &r->job;
    for (int s = 0; s < j->team->n; s++) {
        size_t off, len;
        vec_piece(r, k, s, &off, &len);
        obc__copy((unsigned char *)j->out + off * r->outsize,
                  win_result(r->ctx, j->team->ranks[s], r->base + k), len * r->outsize, 0);
    }
}

static bool consumes(const struct win_reduce_run *r)
{
    return r->job.consumers == WIN_CONSUME_ALL ||
        (r->job.consumers == WIN_CONSUME_ROOT && r->job.team->me == r->job.root);
}

void win_reduce_start_world(struct win_reduce_run *r, const struct obc__algo_ctx *ctx,
                            const struct obc__coll_args *args, bool blocks,
                            enum win_consumers consumers)
{
    struct win_reduce_job job = {
        .args = args,
        .team = &ctx->world,
        .in = args->segs[0].send,
        .out = args->segs[0].recv,
        .count = args->count,
        .dtype = args->dtype,
        .op = args->redop,
        .avg_divisor = ctx->nranks,
        .blocks = blocks,
        .consumers = consumers,
        .root = args->root,
    };
    win_reduce_start(r, ctx, &job);
}

obc_result_t win_reduce_step(void *state, struct obc__wait *w)
{
    struct win_reduce_run *r = state;
    const struct obc__algo_ctx *ctx = r->ctx;
    const struct obc__team *team = r->job.team;
    while (r->done < r->nchunks) {
        /* Post ahead while slots are free; wait only for the chunk needed now. */
        while (r->posted < r->nchunks && r->posted < r->done + WIN_DEPTH) {
            if (!win_slot_free(ctx, r->base + r->posted, w)) {
                if (r->posted == r->reduced) {
                    return OBC_IN_PROGRESS;
                }
                break;
            }
            post(r, r->posted);
            win_set(ctx, WIN_POSTED, r->base + r->posted);
            r->posted++;
        }
        uint32_t g = r->base + r->done;
        if (r->reduced == r->done && r->whole && !consumes(r)) {
            r->reduced++; /* nothing to compute here; just keep the input posted */
        } else if (r->reduced == r->done) {
            if (!win_team_reached(ctx, team, &r->scan, WIN_POSTED, g + 1, w)) {
                return OBC_IN_PROGRESS;
            }
            obc_result_t res = reduce_mine(r, r->done);
            if (res != OBC_SUCCESS) {
                return res;
            }
            win_set(ctx, WIN_REDUCED, g);
            r->reduced++;
            r->scan = 0;
        }
        if (!r->job.blocks && !r->whole && consumes(r)) {
            if (!win_team_reached(ctx, team, &r->scan, WIN_REDUCED, g + 1, w)) {
                return OBC_IN_PROGRESS;
            }
            consume(r, r->done);
        }
        win_set(ctx, WIN_DONE, g);
        r->done++;
        r->scan = 0;
    }
    return OBC_SUCCESS;
}

/* ------------------------------------------------------------ gather */

void win_gather_start(struct win_gather_run *r, const struct obc__algo_ctx *ctx,
                      const struct win_gather_job *job)
{
    memset(r, 0, sizeof(*r));
    r->job = *job;
    r->ctx = ctx;
    r->stamp = obc__algo_stamp(job->args);
    r->chunk_bytes = win_chunk_bytes(ctx);
    r->nchunks = (uint32_t)((job->nbytes + r->chunk_bytes - 1) / r->chunk_bytes);
    r->base = win_reserve(ctx, r->nchunks);
}

static size_t gather_len(const struct win_gather_run *r, uint32_t k)
{
    size_t start = (size_t)k * r->chunk_bytes;
    return r->job.nbytes - start < r->chunk_bytes ? r->job.nbytes - start : r->chunk_bytes;
}

static bool posts(const struct win_gather_run *r)
{
    return !r->job.bcast || r->job.team->me == r->job.root;
}

/* Copy chunk k of member s's data into place (out, at s's block), after
 * checking the header of s's slot. */
static obc_result_t gather_copy(struct win_gather_run *r, uint32_t k, int s)
{
    const struct win_gather_job *j = &r->job;
    if (s != j->team->me) {
        obc_result_t res =
            win_check(r->ctx, j->args, j->team->ranks[s], r->base + k, r->stamp, gather_len(r, k));
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    size_t start = (size_t)k * r->chunk_bytes;
    size_t block = j->bcast ? 0 : (size_t)s * j->nbytes;
    unsigned char *dst = (unsigned char *)j->out + block + start;
    const unsigned char *src = s == j->team->me ? (const unsigned char *)j->in + start
                                                : win_input(r->ctx, j->team->ranks[s], r->base + k);
    if (dst != src) {
        obc__copy(dst, src, gather_len(r, k), 0);
    }
    return OBC_SUCCESS;
}

obc_result_t win_gather_step(void *state, struct obc__wait *w)
{
    struct win_gather_run *r = state;
    const struct obc__algo_ctx *ctx = r->ctx;
    const struct win_gather_job *j = &r->job;
    while (r->done < r->nchunks) {
        while (posts(r) && r->posted < r->nchunks && r->posted < r->done + WIN_DEPTH) {
            if (!win_slot_free(ctx, r->base + r->posted, w)) {
                if (r->posted == r->done) {
                    return OBC_IN_PROGRESS;
                }
                break;
            }
            obc__copy(win_input(ctx, ctx->rank, r->base + r->posted),
                      (const unsigned char *)j->in + (size_t)r->posted * r->chunk_bytes,
                      gather_len(r, r->posted), 0);
            win_stamp(ctx, r->base + r->posted, r->stamp, gather_len(r, r->posted));
            win_set(ctx, WIN_POSTED, r->base + r->posted);
            r->posted++;
        }
        uint32_t g = r->base + r->done;
        /* Broadcast: the root's chunk (the root copies its own unless in
         * place); allgather: every member's, in turn. */
        int first = j->bcast ? j->root : 0, last = j->bcast ? j->root + 1 : j->team->n;
        for (r->scan = r->scan < first ? first : r->scan; r->scan < last; r->scan++) {
            int s = r->scan, from = 0;
            struct obc__team one = {1, 0, &j->team->ranks[s]};
            if (s != j->team->me && !win_team_reached(ctx, &one, &from, WIN_POSTED, g + 1, w)) {
                return OBC_IN_PROGRESS;
            }
            obc_result_t res = gather_copy(r, r->done, s);
            if (res != OBC_SUCCESS) {
                return res;
            }
        }
        win_set(ctx, WIN_DONE, g);
        r->done++;
        r->scan = 0;
    }
    return OBC_SUCCESS;
}
