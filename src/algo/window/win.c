/* SPDX-License-Identifier: MIT */
/*
 * win.c - slot addresses and flag waits of the window algorithms (win.h).
 */
#include "algo/window/win.h"

#define WIN_HDR 64 /* one line: the header never shares a line with data */

struct win_hdr {
    uint64_t stamp;
    uint64_t nbytes;
};

static size_t slot_span(const struct obc__algo_ctx *ctx)
{
    return obc__arena_window_bytes(ctx->arena) / (2 * WIN_DEPTH) / 64 * 64;
}

size_t win_chunk_bytes(const struct obc__algo_ctx *ctx)
{
    return slot_span(ctx) - WIN_HDR;
}

static unsigned char *slot_at(const struct obc__algo_ctx *ctx, int rank, uint32_t g)
{
    return obc__arena_window(ctx->arena, rank) + (g % WIN_DEPTH) * slot_span(ctx);
}

unsigned char *win_input(const struct obc__algo_ctx *ctx, int rank, uint32_t g)
{
    return slot_at(ctx, rank, g) + WIN_HDR;
}

unsigned char *win_result(const struct obc__algo_ctx *ctx, int rank, uint32_t g)
{
    return obc__arena_window(ctx->arena, rank) + (WIN_DEPTH + g % WIN_DEPTH) * slot_span(ctx);
}

void win_stamp(const struct obc__algo_ctx *ctx, uint32_t g, uint64_t stamp, size_t nbytes)
{
    struct win_hdr *h = (struct win_hdr *)slot_at(ctx, ctx->rank, g);
    h->stamp = stamp;
    h->nbytes = nbytes;
}

obc_result_t win_check(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args, int rank,
                       uint32_t g, uint64_t stamp, size_t nbytes)
{
    const struct win_hdr *h = (const struct win_hdr *)slot_at(ctx, rank, g);
    if (h->stamp == stamp && h->nbytes == nbytes) {
        return OBC_SUCCESS;
    }
    obc__arena_abort_mismatch(ctx->arena, ctx->rank, rank);
    return obc__err_set(ctx->err, OBC_ERR_MISMATCH,
                        "%s #%llu: rank %d expected a %zu-byte chunk of this operation from "
                        "rank %d, but rank %d posted %llu bytes of %s (stamp %016llx, expected "
                        "%016llx)",
                        obc__coll_name(args->coll), (unsigned long long)args->seq, ctx->rank,
                        nbytes, rank, rank, (unsigned long long)h->nbytes,
                        h->stamp == stamp ? "it" : "a different operation",
                        (unsigned long long)h->stamp, (unsigned long long)stamp);
}

bool win_slot_free(const struct obc__algo_ctx *ctx, uint32_t g, struct obc__wait *w)
{
    uint32_t target = g + 1 - WIN_DEPTH; /* wraps below 0: reached from the start */
    /* Whoever shares the arena may read this slot. */
    const struct obc__team *readers = ctx->arena_has_all ? &ctx->world : &ctx->host;
    for (int i = 0; i < readers->n; i++) {
        if (!obc__arena_flag_reached(ctx->arena, readers->ranks[i], WIN_DONE, target, w)) {
            return false;
        }
    }
    return true;
}

bool win_team_reached(const struct obc__algo_ctx *ctx, const struct obc__team *team, int *from,
                      int flag, uint32_t target, struct obc__wait *w)
{
    for (; *from < team->n; (*from)++) {
        if (!obc__arena_flag_reached(ctx->arena, team->ranks[*from], flag, target, w)) {
            return false;
        }
    }
    return true;
}

uint32_t win_reserve(const struct obc__algo_ctx *ctx, uint32_t n)
{
    uint32_t first = ctx->persist->window_chunks;
    ctx->persist->window_chunks += n;
    return first;
}

void win_set(const struct obc__algo_ctx *ctx, int flag, uint32_t g)
{
    obc__arena_flag_store(ctx->arena, flag, g + 1);
}
