/* SPDX-License-Identifier: MIT */
/*
 * barrier_dissem.c - dissemination barrier over p2p channels, the barrier
 * that works across hosts: in round k every rank signals rank + 2^k and
 * waits for rank - 2^k; after ceil(log2 n) rounds every rank has heard,
 * directly or not, from every other. Messages are empty items that carry
 * the operation's stamp, so a rank that calls something else is caught.
 */
#include <string.h>

#include "algo/p2p/p2p_msg.h"

struct dissem_state {
    const struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    uint64_t stamp;
    int dist;
    bool sent;
};
_Static_assert(sizeof(struct dissem_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

static void dissem_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    struct dissem_state *s = state;
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->stamp = obc__algo_stamp(args);
    s->dist = 1;
}

static obc_result_t dissem_step(void *state, struct obc__wait *w)
{
    struct dissem_state *s = state;
    int n = s->ctx->nranks, me = s->ctx->rank;
    for (; s->dist < n; s->dist *= 2, s->sent = false) {
        if (!s->sent) {
            int to = (me + s->dist) % n;
            if (obc__p2p_send_acquire(s->ctx->p2p, to, w) == NULL) {
                w->peer = to;
                return OBC_IN_PROGRESS;
            }
            obc__p2p_send_publish(s->ctx->p2p, to, 0, s->stamp);
            s->sent = true;
        }
        int from = (me - s->dist % n + n) % n;
        obc_result_t res;
        if (p2p_expect(s->ctx, s->args, from, 0, s->stamp, &res, w) == NULL) {
            return res;
        }
        obc__p2p_recv_release(s->ctx->p2p, from);
    }
    return OBC_SUCCESS;
}

const struct obc__algo obc__barrier_dissem = {OBC_COLL_BARRIER, "dissemination",
                                              obc__algo_more_than_one, dissem_init, dissem_step};
