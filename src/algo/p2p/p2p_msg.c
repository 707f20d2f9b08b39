/* SPDX-License-Identifier: MIT */
/*
 * p2p_msg.c - checked receives (p2p_msg.h).
 */
#include "algo/p2p/p2p_msg.h"

void *p2p_expect(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args, int peer,
                 size_t nbytes, uint64_t stamp, obc_result_t *res, struct obc__wait *w)
{
    size_t got = 0;
    uint64_t got_stamp = 0;
    void *slot = obc__p2p_recv_peek(ctx->p2p, peer, &got, &got_stamp, w);
    if (slot == NULL) {
        w->peer = peer;
        *res = OBC_IN_PROGRESS;
        return NULL;
    }
    if (got == nbytes && got_stamp == stamp) {
        *res = OBC_SUCCESS;
        return slot;
    }
    obc__arena_abort_mismatch(ctx->arena, ctx->rank, peer);
    *res =
        obc__err_set(ctx->err, OBC_ERR_MISMATCH,
                     "%s #%llu: rank %d expected %zu bytes of this operation from rank %d, "
                     "but rank %d sent %zu bytes of %s (stamp %016llx, expected %016llx)",
                     obc__coll_name(args->coll), (unsigned long long)args->seq, ctx->rank, nbytes,
                     peer, peer, got, got_stamp == stamp ? "it" : "a different operation",
                     (unsigned long long)got_stamp, (unsigned long long)stamp);
    return NULL;
}
