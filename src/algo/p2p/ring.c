/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the pipelined ring (ring.h). With n members, data cut into n
 * blocks and each block into chunks of one channel slot:
 *
 *   reduce-scatter, n - 1 steps: at step t member m sends its partial sum
 *     of block m-t-1 to m+1 and receives block m-t-2 from m-1, adds its own
 *     contribution and sends that on at step t+1, writing the sum straight
 *     into the outgoing slot (no extra pass). After n-1 steps member m
 *     holds block m reduced by every member, in the order m+1, m+2, ..., m.
 *   allgather, n - 1 steps: blocks travel on around the ring, each member
 *     keeping a copy.
 *
 * Chunks are the outer loop (as in NCCL): chunk c of every block goes
 * through all the steps before chunk c+1 starts, so every channel carries
 * items in the order its receiver consumes them, every link is busy, and
 * only a few slots per channel are ever in flight. Partial sums travel in
 * the accumulator type (float32 for 16-bit floats) and are rounded once by
 * the block's owner; the owner's result is then copied, never recomputed,
 * so every member ends with the same bits.
 */
#include <string.h>

#include "algo/p2p/p2p_msg.h"
#include "algo/p2p/ring.h"
#include "core/reduce.h"
#include "core/copy.h"

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static size_t blk_off(const struct ring_run *r, int x)
{
    size_t n = (size_t)r->job.team->n, q = r->job.count / n, rem = r->job.count % n;
    if (r->job.blocks) {
        return (size_t)x * r->job.count;
    }
    return (size_t)x * q + ((size_t)x < rem ? (size_t)x : rem);
}

static size_t blk_len(const struct ring_run *r, int x)
{
    size_t n = (size_t)r->job.team->n;
    if (r->job.blocks) {
        return r->job.count;
    }
    return r->job.count / n + ((size_t)x < r->job.count % n);
}

/* Elements of chunk c of block x (0 past the block's end). */
static size_t piece_len(const struct ring_run *r, int x)
{
    size_t len = blk_len(r, x), start = r->chunk * r->chunk_elems;
    return start >= len ? 0 : (len - start < r->chunk_elems ? len - start : r->chunk_elems);
}

static const unsigned char *mine(const struct ring_run *r, int x)
{
    return (const unsigned char *)r->job.in +
        (blk_off(r, x) + r->chunk * r->chunk_elems) * r->insize;
}

static unsigned char *out_at(const struct ring_run *r, int x)
{
    size_t at = r->job.blocks && !r->job.ag ? 0 : blk_off(r, x);
    return (unsigned char *)r->job.out + (at + r->chunk * r->chunk_elems) * r->esize;
}

void ring_start(struct ring_run *r, const struct obc__algo_ctx *ctx, const struct ring_job *job)
{
    int n = job->team->n, me = job->team->me;
    memset(r, 0, sizeof(*r));
    r->job = *job;
    r->ctx = ctx;
    r->esize = obc_dtype_size(job->dtype);
    r->accsize = obc__acc_size(job->dtype);
    r->insize = job->in_acc ? r->accsize : r->esize;
    r->next = job->team->ranks[mod(me + 1, n)];
    r->prev = job->team->ranks[mod(me - 1, n)];
    r->chunk_elems = obc__p2p_slot_bytes(ctx->p2p, r->next) / r->accsize;
    size_t longest = job->blocks ? job->count : (job->count + (size_t)n - 1) / (size_t)n;
    r->nchunks = (longest + r->chunk_elems - 1) / r->chunk_elems;
}

/* One member alone: its contribution is the result (divided for AVG, in
 * scratch-sized pieces when the accumulator is wider than the dtype). */
static void ring_alone(struct ring_run *r)
{
    const struct ring_job *j = &r->job;
    if (!j->rs) {
        if (j->out != j->in) {
            obc__copy(j->out, j->in, j->count * r->esize, 0);
        }
        return;
    }
    size_t step = r->ctx->scratch_bytes / r->accsize;
    for (size_t i = 0; i < j->count; i += step) {
        size_t len = j->count - i < step ? j->count - i : step;
        const unsigned char *in = (const unsigned char *)j->in + i * r->insize;
        unsigned char *out = (unsigned char *)j->out + i * r->esize;
        if (j->in_acc || r->accsize == r->esize) {
            obc__red_finish(out, in, len, j->dtype, j->op, j->avg_divisor);
        } else {
            obc__red_widen(r->ctx->scratch, in, len, j->dtype);
            obc__red_finish(out, r->ctx->scratch, len, j->dtype, j->op, j->avg_divisor);
        }
    }
}

/* A free slot to the next member, or NULL (then *res is IN_PROGRESS). */
static void *send_slot(struct ring_run *r, obc_result_t *res, struct obc__wait *w)
{
    void *slot = obc__p2p_send_acquire(r->ctx->p2p, r->next, w);
    if (slot == NULL) {
        w->peer = r->next;
        *res = OBC_IN_PROGRESS;
    }
    return slot;
}

/* Reduce-scatter action a (0: send the first partial; 1..n-2: receive,
 * add, send on; n-1: receive, add, finish into out). */
static obc_result_t rs_action(struct ring_run *r, int a, struct obc__wait *w)
{
    const struct ring_job *j = &r->job;
    int n = j->team->n, me = j->team->me;
    int x = a == 0 ? mod(me - 1, n) : mod(me - a - 1, n);
    size_t len = piece_len(r, x);
    obc_result_t res = OBC_SUCCESS;
    obc_redop_t op = j->op == OBC_AVG ? OBC_SUM : j->op;
    if (len == 0) {
        return OBC_SUCCESS;
    }
    if (a == 0) {
        unsigned char *out = send_slot(r, &res, w);
        if (out == NULL) {
            return res;
        }
        if (r->insize == r->accsize) {
            obc__copy(out, mine(r, x), len * r->accsize, 0);
        } else {
            obc__red_widen(out, mine(r, x), len, j->dtype);
        }
        obc__p2p_send_publish(r->ctx->p2p, r->next, len * r->accsize, j->stamp);
        return OBC_SUCCESS;
    }
    unsigned char *in = p2p_expect(r->ctx, j->args, r->prev, len * r->accsize, j->stamp, &res, w);
    if (in == NULL) {
        return res;
    }
    unsigned char *dst;
    bool last = a == n - 1;
    if (!last) {
        dst = send_slot(r, &res, w);
        if (dst == NULL) {
            return res;
        }
    } else {
        /* Straight into out when it can hold the accumulator; else finish
         * in the received slot, then round into out. */
        dst = r->accsize == r->esize && !j->in_acc ? out_at(r, x) : in;
    }
    if (j->in_acc) {
        obc__red_combine_acc(dst, in, mine(r, x), len, j->dtype, op);
    } else {
        obc__red_combine(dst, in, mine(r, x), len, j->dtype, op);
    }
    if (!last) {
        obc__p2p_send_publish(r->ctx->p2p, r->next, len * r->accsize, j->stamp);
    } else {
        obc__red_finish(out_at(r, x), dst, len, j->dtype, j->op, j->avg_divisor);
    }
    obc__p2p_recv_release(r->ctx->p2p, r->prev);
    return OBC_SUCCESS;
}

/* Allgather action a (0: send my block; 1..n-2: receive, keep, send on;
 * n-1: receive and keep). */
static obc_result_t ag_action(struct ring_run *r, int a, struct obc__wait *w)
{
    const struct ring_job *j = &r->job;
    int n = j->team->n, me = j->team->me;
    int x = mod(me - a, n);
    size_t len = piece_len(r, x), nbytes = len * r->esize;
    obc_result_t res = OBC_SUCCESS;
    if (len == 0) {
        return OBC_SUCCESS;
    }
    if (a == 0) {
        unsigned char *dst = send_slot(r, &res, w);
        if (dst == NULL) {
            return res;
        }
        const unsigned char *src = j->rs ? out_at(r, x) : mine(r, 0);
        obc__copy(dst, src, nbytes, 0);
        if (!j->rs && src != out_at(r, x)) {
            obc__copy(out_at(r, x), src, nbytes, 0); /* allgather out of place: my own block */
        }
        obc__p2p_send_publish(r->ctx->p2p, r->next, nbytes, j->stamp);
        return OBC_SUCCESS;
    }
    const unsigned char *in = p2p_expect(r->ctx, j->args, r->prev, nbytes, j->stamp, &res, w);
    if (in == NULL) {
        return res;
    }
    if (a < n - 1) {
        unsigned char *dst = send_slot(r, &res, w);
        if (dst == NULL) {
            return res;
        }
        obc__copy(dst, in, nbytes, 0);
        obc__p2p_send_publish(r->ctx->p2p, r->next, nbytes, j->stamp);
    }
    obc__copy(out_at(r, x), in, nbytes, 0);
    obc__p2p_recv_release(r->ctx->p2p, r->prev);
    return OBC_SUCCESS;
}

void ring_start_world(struct ring_run *r, const struct obc__algo_ctx *ctx,
                      const struct obc__coll_args *args, bool blocks, bool rs, bool ag)
{
    struct ring_job job = {
        .args = args,
        .team = &ctx->world,
        .in = args->segs[0].send,
        .out = args->segs[0].recv,
        .count = args->count,
        .dtype = args->dtype,
        .op = args->redop,
        .avg_divisor = ctx->nranks,
        .blocks = blocks,
        .rs = rs,
        .ag = ag,
        .stamp = obc__algo_stamp(args),
    };
    ring_start(r, ctx, &job);
}

obc_result_t ring_step(void *state, struct obc__wait *w)
{
    struct ring_run *r = state;
    const struct ring_job *j = &r->job;
    int n = j->team->n;
    int nactions = (j->rs ? n : 0) + (j->ag ? n : 0);
    if (n == 1) {
        ring_alone(r);
        return OBC_SUCCESS;
    }
    for (; r->chunk < r->nchunks; r->chunk++, r->action = 0) {
        for (; r->action < nactions; r->action++) {
            int a = r->action;
            obc_result_t res =
                j->rs && a < n ? rs_action(r, a, w) : ag_action(r, a - (j->rs ? n : 0), w);
            if (res != OBC_SUCCESS) {
                return res;
            }
        }
    }
    return OBC_SUCCESS;
}
