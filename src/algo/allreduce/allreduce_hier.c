/* SPDX-License-Identifier: MIT */
/*
 * allreduce_hier.c - the hierarchical allreduce: hosts first reduce within
 * themselves, their leaders (lowest rank of each host) allreduce across
 * hosts, and each leader broadcasts the result within its host:
 *
 *   1. host    shm slice reduction to the leader, kept in the accumulator
 *              type (no rounding yet), into the communicator's scratch;
 *   2. leaders ring (large) or recursive doubling (small) over p2p, from
 *              the scratch partials into the leader's recvbuf, rounding
 *              once at the end;
 *   3. host    shm broadcast of the leader's recvbuf.
 *
 * Only the leaders' traffic crosses hosts: n_hosts - 1 shares of the data
 * per link instead of n_ranks - 1. The vector goes through in segments the
 * size of the scratch, so memory does not grow with count; within a
 * segment the stages run one after the other. The order of every element
 * is fixed by the host layout (hosts in leader order, ranks in rank order
 * within a host): bitwise identical results everywhere.
 */
#include <string.h>

#include "algo/p2p/recdbl.h"
#include "algo/p2p/ring.h"
#include "algo/window/win_reduce.h"
#include "core/reduce.h"

enum { ST_HOST_REDUCE, ST_LEADERS, ST_HOST_BCAST, ST_SEG_DONE };

struct hier_state {
    struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    size_t esize, accsize, seg_elems, seg;
    bool use_recdbl;
    int stage;
    union {
        struct win_reduce_run host;
        struct ring_run ring;
        struct recdbl_run recdbl;
        struct win_gather_run bcast;
    } run;
};
_Static_assert(sizeof(struct hier_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static void start_stage(struct hier_state *s);

static bool hier_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    return ctx->nranks > 1 && obc__algo_host_on_arena(ctx, args) && ctx->scratch_bytes >= 4096;
}

static void hier_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct hier_state *s = state;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->esize = obc_dtype_size(args->dtype);
    s->accsize = obc__acc_size(args->dtype);
    s->seg_elems = ctx->scratch_bytes / s->accsize;
    /* The leaders' algorithm is in the plan, chosen once from the whole
     * size (select.c): every leader must run the same. */
    s->use_recdbl = args->plan.recdbl;
    if (args->count > 0) {
        start_stage(s);
    }
}

static size_t seg_len(const struct hier_state *s)
{
    size_t left = s->args->count - s->seg;
    return left < s->seg_elems ? left : s->seg_elems;
}

static void start_stage(struct hier_state *s)
{
    struct obc__algo_ctx *ctx = s->ctx;
    const struct obc__coll_args *a = s->args;
    unsigned char *out = (unsigned char *)a->segs[0].recv + s->seg * s->esize;
    size_t len = seg_len(s);
    if (s->stage == ST_LEADERS && ctx->leaders.me < 0) {
        return; /* not a leader: nothing to do in this stage */
    }
    if (s->stage == ST_HOST_REDUCE) {
        struct win_reduce_job job = {
            .args = a,
            .team = &ctx->host,
            .in = (const unsigned char *)a->segs[0].send + s->seg * s->esize,
            .out = ctx->scratch,
            .count = len,
            .dtype = a->dtype,
            .op = a->redop,
            .avg_divisor = ctx->nranks,
            .out_acc = true,
            .consumers = WIN_CONSUME_ROOT,
            .root = 0,
        };
        win_reduce_start(&s->run.host, ctx, &job);
    } else if (s->stage == ST_LEADERS && s->use_recdbl) {
        struct recdbl_job job = {
            .args = a,
            .team = &ctx->leaders,
            .in = ctx->scratch,
            .out = out,
            .count = len,
            .dtype = a->dtype,
            .op = a->redop,
            .avg_divisor = ctx->nranks,
            .in_acc = true,
            .stamp = obc__algo_stamp(a),
        };
        recdbl_start(&s->run.recdbl, ctx, &job);
    } else if (s->stage == ST_LEADERS) {
        struct ring_job job = {
            .args = a,
            .team = &ctx->leaders,
            .in = ctx->scratch,
            .out = out,
            .count = len,
            .dtype = a->dtype,
            .op = a->redop,
            .avg_divisor = ctx->nranks,
            .in_acc = true,
            .rs = true,
            .ag = true,
            .stamp = obc__algo_stamp(a),
        };
        ring_start(&s->run.ring, ctx, &job);
    } else {
        struct win_gather_job job = {
            .args = a,
            .team = &ctx->host,
            .in = out,
            .out = out,
            .nbytes = len * s->esize,
            .bcast = true,
            .root = 0,
        };
        win_gather_start(&s->run.bcast, ctx, &job);
    }
}

static obc_result_t run_stage(struct hier_state *s, struct obc__wait *w)
{
    switch (s->stage) {
    case ST_HOST_REDUCE:
        return win_reduce_step(&s->run.host, w);
    case ST_LEADERS:
        if (s->ctx->leaders.me < 0) {
            return OBC_SUCCESS;
        }
        return s->use_recdbl ? recdbl_step(&s->run.recdbl, w) : ring_step(&s->run.ring, w);
    default:
        return win_gather_step(&s->run.bcast, w);
    }
}

static obc_result_t hier_step(void *state, struct obc__wait *w)
{
    struct hier_state *s = state;
    while (s->seg < s->args->count) {
        obc_result_t res = run_stage(s, w);
        if (res != OBC_SUCCESS) {
            return res;
        }
        if (++s->stage == ST_SEG_DONE) {
            s->seg += seg_len(s);
            s->stage = ST_HOST_REDUCE;
            if (s->seg >= s->args->count) {
                break;
            }
        }
        start_stage(s);
    }
    return OBC_SUCCESS;
}

const struct obc__algo obc__allreduce_hier = {OBC_COLL_ALLREDUCE, "hier", hier_supports, hier_init,
                                              hier_step};
