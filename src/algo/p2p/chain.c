/* SPDX-License-Identifier: MIT */
/*
 * chain.c - reduce to a root along the ring of ranks, pipelined: the rank
 * after the root starts, every rank adds its contribution to the partial
 * sum it receives and passes it on, and the root adds its own last and
 * finishes. Chunk by chunk, so every link of the chain is busy at once;
 * partial sums travel in the accumulator type. Order of every element:
 * root+1, root+2, ..., root. Registered as reduce "ring".
 */
#include <string.h>

#include "algo/p2p/p2p_msg.h"
#include "core/reduce.h"

struct chain_state {
    const struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    uint64_t stamp;
    size_t esize, accsize, chunk_elems, nchunks, chunk;
    int pos; /* place in the chain: 0 first .. n-1 the root */
    int next, prev;
};
_Static_assert(sizeof(struct chain_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static void chain_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct chain_state *s = state;
    int n = ctx->nranks;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->stamp = obc__algo_stamp(args);
    s->esize = obc_dtype_size(args->dtype);
    s->accsize = obc__acc_size(args->dtype);
    s->pos = ((ctx->rank - args->root - 1) % n + n) % n;
    s->next = (ctx->rank + 1) % n;
    s->prev = (ctx->rank + n - 1) % n;
    s->chunk_elems = obc__p2p_slot_bytes(ctx->p2p, s->next) / s->accsize;
    s->nchunks = (args->count + s->chunk_elems - 1) / s->chunk_elems;
}

static obc_result_t chain_step(void *state, struct obc__wait *w)
{
    struct chain_state *s = state;
    const struct obc__coll_args *a = s->args;
    int n = s->ctx->nranks;
    obc_redop_t op = a->redop == OBC_AVG ? OBC_SUM : a->redop;
    for (; s->chunk < s->nchunks; s->chunk++) {
        size_t first = s->chunk * s->chunk_elems;
        size_t len = a->count - first < s->chunk_elems ? a->count - first : s->chunk_elems;
        const unsigned char *mine = (const unsigned char *)a->segs[0].send + first * s->esize;
        unsigned char *in = NULL, *dst = NULL;
        obc_result_t res;
        if (s->pos > 0) {
            in = p2p_expect(s->ctx, a, s->prev, len * s->accsize, s->stamp, &res, w);
            if (in == NULL) {
                return res;
            }
        }
        if (s->pos < n - 1) {
            dst = obc__p2p_send_acquire(s->ctx->p2p, s->next, w);
            if (dst == NULL) {
                w->peer = s->next;
                return OBC_IN_PROGRESS;
            }
        } else {
            dst = in; /* the root finishes in the received slot */
        }
        if (in == NULL) {
            obc__red_widen(dst, mine, len, a->dtype);
        } else {
            obc__red_combine(dst, in, mine, len, a->dtype, op);
        }
        if (s->pos < n - 1) {
            obc__p2p_send_publish(s->ctx->p2p, s->next, len * s->accsize, s->stamp);
        } else {
            obc__red_finish((unsigned char *)a->segs[0].recv + first * s->esize, dst, len, a->dtype,
                            a->redop, n);
        }
        if (in != NULL) {
            obc__p2p_recv_release(s->ctx->p2p, s->prev);
        }
    }
    return OBC_SUCCESS;
}

const struct obc__algo obc__reduce_ring = {OBC_COLL_REDUCE, "ring", obc__algo_more_than_one,
                                           chain_init, chain_step};
