/* SPDX-License-Identifier: MIT */
/*
 * shm_window.c - windows (and boards): one region of the host segment per local rank,
 * readable and writable by every local rank, with a few counters that only
 * the owner advances. Algorithms that need every rank to work on every
 * other rank's data at once (each rank reduces one slice of everybody's
 * input) lay their chunks out in windows and order their steps with the
 * flags: "my input for chunk k is in place", "my slice of chunk k is
 * reduced", "I am done with chunk k".
 */
#include "transport/shm/shm_arena.h"

unsigned char *obc__arena_window(struct obc__arena *a, int owner)
{
    return a->windows + (size_t)shm_local(a, owner) * a->hdr->window_bytes;
}

size_t obc__arena_window_bytes(const struct obc__arena *a)
{
    return (size_t)a->hdr->window_bytes;
}

static struct shm_flag *flag_of(struct obc__arena *a, int owner, int idx)
{
    return &a->win_flags[shm_local(a, owner) * OBC_WIN_FLAGS + idx].value;
}

void obc__arena_flag_store(struct obc__arena *a, int idx, uint32_t value)
{
    obc__shm_flag_store(&a->win_flags[a->rank * OBC_WIN_FLAGS + idx].value, value);
}

/* Has owner's flag f reached target (mod 2^32)? If not, *w waits on it. */
bool obc__arena_flag_reached(struct obc__arena *a, int owner, int idx, uint32_t target,
                             struct obc__wait *w)
{
    return shm_flag_reached(flag_of(a, owner, idx), target, owner, w);
}

/* Boards: the same shape as windows (owner-written bytes, owner-advanced
 * flags), small, and outside every algorithm's data path. */
unsigned char *obc__arena_board(struct obc__arena *a, int owner)
{
    return a->boards + (size_t)shm_local(a, owner) * OBC_BOARD_BYTES;
}

pid_t obc__arena_peer_pid(const struct obc__arena *a, int rank)
{
    return a->peers[shm_local(a, rank)].pid;
}

static struct shm_flag *board_flag_of(struct obc__arena *a, int owner, int idx)
{
    return &a->board_flags[shm_local(a, owner) * OBC_BOARD_FLAGS + idx].value;
}

void obc__arena_board_flag_store(struct obc__arena *a, int idx, uint32_t value)
{
    obc__shm_flag_store(&a->board_flags[a->rank * OBC_BOARD_FLAGS + idx].value, value);
}

bool obc__arena_board_flag_reached(struct obc__arena *a, int owner, int idx, uint32_t target,
                                   struct obc__wait *w)
{
    return shm_flag_reached(board_flag_of(a, owner, idx), target, owner, w);
}
