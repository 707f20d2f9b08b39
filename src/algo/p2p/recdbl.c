/* SPDX-License-Identifier: MIT */
/*
 * recdbl.c - recursive doubling (recdbl.h). With p2 the largest power of two
 * <= n, per segment of the vector:
 *
 *   pre     members p2..n-1 hand their vector to member (m - p2), which
 *           adds it (its own first);
 *   levels  for mask = 1, 2, 4, .. < p2: members m and m ^ mask swap their
 *           partial vectors and both compute lower op higher, the same
 *           expression on both sides, so both hold the same bits;
 *   finish  round into out (divide for AVG);
 *   post    members m < n - p2 send the result to member m + p2.
 *
 * Every member of the lower p2 computes the same value the same way, and
 * the others receive a copy: results are bitwise identical everywhere. The
 * working vector is out itself when it can hold the accumulator type;
 * otherwise (16-bit floats) the vector goes through in pieces the size of
 * the communicator's scratch, so memory does not grow with count.
 */
#include <string.h>

#include "algo/p2p/p2p_msg.h"
#include "algo/p2p/recdbl.h"
#include "core/reduce.h"
#include "core/copy.h"

enum { ST_LOAD, ST_PRE, ST_LEVELS, ST_POST = 64, ST_NEXT };

void recdbl_start(struct recdbl_run *r, const struct obc__algo_ctx *ctx,
                  const struct recdbl_job *job)
{
    memset(r, 0, sizeof(*r));
    r->job = *job;
    r->ctx = ctx;
    r->esize = obc_dtype_size(job->dtype);
    r->accsize = obc__acc_size(job->dtype);
    r->p2 = 1;
    while (r->p2 * 2 <= job->team->n) {
        r->p2 *= 2;
    }
    r->chunk_elems = obc__p2p_slot_bytes(ctx->p2p, job->team->ranks[0]) / r->accsize;
    if (job->in_acc) {
        r->acc = (unsigned char *)(uintptr_t)job->in;
        r->seg_elems = job->count;
    } else if (r->accsize == r->esize) {
        r->acc = job->out;
        r->seg_elems = job->count;
    } else {
        r->acc = ctx->scratch;
        r->acc_is_scratch = true;
        r->seg_elems = ctx->scratch_bytes / r->accsize;
    }
}

static size_t seg_len(const struct recdbl_run *r)
{
    size_t left = r->job.count - r->seg;
    return left < r->seg_elems ? left : r->seg_elems;
}

/* The working vector at the segment's element i. */
static unsigned char *acc_at(const struct recdbl_run *r, size_t i)
{
    return r->acc + (r->acc_is_scratch ? i : r->seg + i) * r->accsize;
}

static int rank_of(const struct recdbl_run *r, int m)
{
    return r->job.team->ranks[m];
}

/* Send chunk r->chunk of the segment (working vector, or out when
 * `final`) to member m, then receive the same chunk from it into *in. One
 * call may do the send and return IN_PROGRESS for the receive. */
static obc_result_t send_chunk(struct recdbl_run *r, int m, bool final, struct obc__wait *w)
{
    size_t i = r->chunk * r->chunk_elems, len = seg_len(r) - i;
    len = len < r->chunk_elems ? len : r->chunk_elems;
    size_t size = final ? r->esize : r->accsize;
    void *slot = obc__p2p_send_acquire(r->ctx->p2p, rank_of(r, m), w);
    if (slot == NULL) {
        w->peer = rank_of(r, m);
        return OBC_IN_PROGRESS;
    }
    const unsigned char *src =
        final ? (const unsigned char *)r->job.out + (r->seg + i) * r->esize : acc_at(r, i);
    obc__copy(slot, src, len * size, 0);
    obc__p2p_send_publish(r->ctx->p2p, rank_of(r, m), len * size, r->job.stamp);
    return OBC_SUCCESS;
}

/* Receive chunk r->chunk from member m and combine it into the working
 * vector (lower member's operand first), or copy it into out when final. */
static obc_result_t recv_chunk(struct recdbl_run *r, int m, bool final, struct obc__wait *w)
{
    const struct recdbl_job *j = &r->job;
    size_t i = r->chunk * r->chunk_elems, len = seg_len(r) - i;
    len = len < r->chunk_elems ? len : r->chunk_elems;
    size_t size = final ? r->esize : r->accsize;
    obc_result_t res;
    void *in = p2p_expect(r->ctx, j->args, rank_of(r, m), len * size, j->stamp, &res, w);
    if (in == NULL) {
        return res;
    }
    if (final) {
        obc__copy((unsigned char *)j->out + (r->seg + i) * r->esize, in, len * size, 0);
    } else {
        obc_redop_t op = j->op == OBC_AVG ? OBC_SUM : j->op;
        unsigned char *mine = acc_at(r, i);
        if (j->team->me < m) {
            obc__red_combine_acc(mine, mine, in, len, j->dtype, op);
        } else {
            obc__red_combine_acc(mine, in, mine, len, j->dtype, op);
        }
    }
    obc__p2p_recv_release(r->ctx->p2p, rank_of(r, m));
    return OBC_SUCCESS;
}

static size_t nchunks(const struct recdbl_run *r)
{
    return (seg_len(r) + r->chunk_elems - 1) / r->chunk_elems;
}

/* Move every chunk of the segment: send to `to` (or -1), receive from
 * `from` (or -1); chunk by chunk, each send before its receive. */
static obc_result_t exchange(struct recdbl_run *r, int to, int from, bool final,
                             struct obc__wait *w)
{
    for (; r->chunk < nchunks(r); r->chunk++, r->sent = false) {
        if (to >= 0 && !r->sent) {
            obc_result_t res = send_chunk(r, to, final, w);
            if (res != OBC_SUCCESS) {
                return res;
            }
        }
        r->sent = true;
        if (from >= 0) {
            obc_result_t res = recv_chunk(r, from, final, w);
            if (res != OBC_SUCCESS) {
                return res;
            }
        }
    }
    r->chunk = 0;
    r->sent = false;
    return OBC_SUCCESS;
}

static void load(struct recdbl_run *r)
{
    const struct recdbl_job *j = &r->job;
    size_t len = seg_len(r);
    if (j->in_acc) {
        return;
    }
    const unsigned char *in = (const unsigned char *)j->in + r->seg * r->esize;
    if (r->acc_is_scratch) {
        obc__red_widen(r->acc, in, len, j->dtype);
    } else if (acc_at(r, 0) != in) {
        obc__copy(acc_at(r, 0), in, len * r->esize, 0);
    }
}

/* Run the segment's stages in order; a stage that must wait returns
 * IN_PROGRESS and is resumed (exchange keeps its chunk position). */
static obc_result_t segment_step(struct recdbl_run *r, struct obc__wait *w)
{
    const struct recdbl_job *j = &r->job;
    int n = j->team->n, me = j->team->me, extra = n - r->p2;
    while (r->stage != ST_NEXT) {
        obc_result_t res = OBC_SUCCESS;
        int next = r->stage + 1;
        if (r->stage == ST_LOAD) {
            load(r);
        } else if (r->stage == ST_PRE) {
            res = me >= r->p2 ? exchange(r, me - r->p2, -1, false, w)
                : me < extra  ? exchange(r, -1, me + r->p2, false, w)
                              : OBC_SUCCESS;
        } else if (r->stage < ST_POST) {
            int mask = 1 << (r->stage - ST_LEVELS);
            if (me < r->p2 && mask < r->p2) {
                res = exchange(r, me ^ mask, me ^ mask, false, w);
            } else {
                if (me < r->p2) {
                    obc__red_finish((unsigned char *)j->out + r->seg * r->esize, acc_at(r, 0),
                                    seg_len(r), j->dtype, j->op, j->avg_divisor);
                }
                next = ST_POST;
            }
        } else {
            res = me >= r->p2 ? exchange(r, -1, me - r->p2, true, w)
                : me < extra  ? exchange(r, me + r->p2, -1, true, w)
                              : OBC_SUCCESS;
        }
        if (res != OBC_SUCCESS) {
            return res;
        }
        r->stage = next;
    }
    return OBC_SUCCESS;
}

obc_result_t recdbl_step(void *state, struct obc__wait *w)
{
    struct recdbl_run *r = state;
    while (r->seg < r->job.count) {
        obc_result_t res = segment_step(r, w);
        if (res != OBC_SUCCESS) {
            return res;
        }
        r->seg += seg_len(r);
        r->stage = ST_LOAD;
    }
    return OBC_SUCCESS;
}
