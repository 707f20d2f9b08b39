/* SPDX-License-Identifier: MIT */
/*
 * health.c - verdicts on a wait and the engine's failure messages (see
 * health.h). A verdict travels both ways: what this host's arena says (a
 * local rank died, or one aborted) goes to the other hosts in a failure
 * notice, and what a link says (a remote rank was lost, or broke its
 * communicator) goes to this host's ranks through the arena's abort word,
 * so that every rank names the same culprit.
 */
#include "engine/health.h"

#include <stdio.h>
#include <string.h>

#include "engine/wait.h"

/* A wait sleeps in slices of at most this between health checks of the
 * host (its abort word, its ranks' pidfds): a dead peer is found in about
 * this time. */
#define SLEEP_SLICE_NS 100000000ll

/* A remote peer that sent nothing, not even its heartbeats (every 0.5 s),
 * for this long is named as unreachable in a timeout's message. */
#define SILENT_NS 1500000000ll

static obc_result_t arena_health(void *arena)
{
    return obc__arena_health(arena);
}

obc_result_t obc__health_wait(const struct obc__algo_ctx *ctx, const struct obc__wait *w,
                              int64_t timeout_ns)
{
    struct obc__wait_policy pol = obc__arena_wait_policy(ctx->arena);
    struct obc__wait_rules r = {pol.spin_ns, pol.yield_ns, SLEEP_SLICE_NS,
                                true,        arena_health, ctx->arena};
    return obc__wait_word(w, &r, timeout_ns);
}

obc_result_t obc__health_verdict(const struct obc__algo_ctx *ctx, obc_result_t waited)
{
    if (waited != OBC_SUCCESS && waited != OBC_ERR_TIMEOUT) {
        /* This host's verdict (a rank died, or one aborted) comes first,
         * and goes to the other hosts too. */
        uint64_t verdict = obc__arena_verdict(ctx->arena);
        obc__p2p_tell_verdict(ctx->p2p, verdict != 0 ? obc__verdict_recode(verdict, waited) : 0);
        return waited;
    }
    uint64_t verdict = 0;
    obc_result_t links = obc__p2p_health(ctx->p2p, &verdict);
    if (links != OBC_SUCCESS) {
        /* A connection failed, whatever this wait was for. The ranks of
         * this host may be waiting on this one: they name the same rank,
         * unless it is a timeout's, which names only whom a rank waited
         * for (they time out on their own, naming what they see). */
        if (links != OBC_ERR_TIMEOUT) {
            obc__arena_abort_verdict(ctx->arena, verdict);
        }
        return links;
    }
    return waited == OBC_ERR_TIMEOUT ? OBC_IN_PROGRESS : OBC_SUCCESS;
}

obc_result_t obc__health_timeout(const struct obc__algo_ctx *ctx, struct obc__boards *boards,
                                 const struct obc__coll_args *args, const struct obc__wait *w,
                                 int64_t timeout_ns)
{
    char who[OBC_ERR_MSG_BYTES] = "";
    if (w->peer >= 0) {
        snprintf(who, sizeof(who), "; waiting for rank %d", w->peer);
    }
    size_t used = strlen(who);
    obc__p2p_describe_silent(ctx->p2p, SILENT_NS, who + used, sizeof(who) - used);
    obc__board_describe_laggards(boards, args, who, sizeof(who));
    obc__board_dump(boards, args);
    char root[24] = ""; /* only the rooted collectives have one */
    if (obc__coll_rooted(args->coll)) {
        snprintf(root, sizeof(root), "root %d, ", args->root);
    }
    obc_result_t res =
        obc__err_set(ctx->err, OBC_ERR_TIMEOUT,
                     "%s #%llu (%s%zu bytes) on rank %d: timeout after %.1f s without progress%s",
                     obc__coll_name(args->coll), (unsigned long long)args->seq, root, args->nbytes,
                     ctx->rank, (double)timeout_ns / 1e9, who);
    /* Tell the other hosts before this rank leaves: to them a goodbye in
     * mid-operation would look like a lost peer. */
    obc__p2p_tell_failure(ctx->p2p, res, w->peer >= 0 ? w->peer : ctx->rank);
    return res;
}

obc_result_t obc__health_broken(struct obc__err *err, const struct obc__coll_args *args,
                                obc_result_t broken, const char *why)
{
    return obc__err_set(
        err, OBC_ERR_ABORTED, "%s #%llu not run: the communicator is broken (%s: %s)",
        obc__coll_name(args->coll), (unsigned long long)args->seq, obc_strerror(broken), why);
}
