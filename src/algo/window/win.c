/* SPDX-License-Identifier: MIT */
/*
 * win.c - slot addresses and flag waits of the window algorithms (win.h).
 */
#include "algo/window/win.h"

size_t win_chunk_bytes(const struct obc__algo_ctx *ctx)
{
    return obc__arena_window_bytes(ctx->arena) / (2 * WIN_DEPTH) / 64 * 64;
}

unsigned char *win_input(const struct obc__algo_ctx *ctx, int rank, uint32_t g)
{
    return obc__arena_window(ctx->arena, rank) + (g % WIN_DEPTH) * win_chunk_bytes(ctx);
}

unsigned char *win_result(const struct obc__algo_ctx *ctx, int rank, uint32_t g)
{
    return obc__arena_window(ctx->arena, rank) + (WIN_DEPTH + g % WIN_DEPTH) * win_chunk_bytes(ctx);
}

bool win_slot_free(const struct obc__algo_ctx *ctx, uint32_t g, struct obc__wait *w)
{
    uint32_t target = g + 1 - WIN_DEPTH; /* wraps below 0: reached from the start */
    for (int q = 0; q < ctx->nranks; q++) {
        if (!obc__arena_flag_reached(ctx->arena, q, WIN_DONE, target, w)) {
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
