/* SPDX-License-Identifier: MIT */
/*
 * shm_chan.h - the host arena's channels, private to transport/: an
 * ordered FIFO of slots from each local rank to each other one, the shm
 * transport of the p2p interface. p2p.c reaches them through
 * obc__shm_chan_ops (ctx: the struct obc__arena, peer: a communicator
 * rank of this host); nothing else calls them.
 */
#ifndef OBC_TRANSPORT_SHM_CHAN_H
#define OBC_TRANSPORT_SHM_CHAN_H

#include "transport/arena.h"
#include "transport/transport.h"

extern const struct obc__xport_ops obc__shm_chan_ops;

void *obc__arena_chan_acquire(struct obc__arena *a, int to, struct obc__wait *w);
void obc__arena_chan_publish(struct obc__arena *a, int to, size_t nbytes, uint64_t stamp);
void *obc__arena_chan_peek(struct obc__arena *a, int from, size_t *nbytes, uint64_t *stamp,
                           struct obc__wait *w);
void obc__arena_chan_release(struct obc__arena *a, int from);

#endif
