/* SPDX-License-Identifier: MIT */
/*
 * p2p.c - the p2p interface's one dispatch point: which transport reaches
 * each peer. Today every peer shares this host, so every call goes to the
 * host arena's channels; the TCP transport (issue #4) adds a per-peer
 * choice here and nothing above changes.
 */
#include <stdlib.h>

#include "transport/transport.h"

struct obc__p2p {
    struct obc__arena *arena;
};

obc_result_t obc__p2p_create(struct obc__arena *arena, struct obc__err *err, struct obc__p2p **out)
{
    struct obc__p2p *p = calloc(1, sizeof(*p));
    *out = NULL;
    if (p == NULL) {
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "p2p table");
    }
    p->arena = arena;
    *out = p;
    return OBC_SUCCESS;
}

void obc__p2p_destroy(struct obc__p2p *p)
{
    free(p);
}

size_t obc__p2p_slot_bytes(const struct obc__p2p *p, int peer)
{
    (void)peer;
    return obc__arena_chan_slot_bytes(p->arena);
}

void *obc__p2p_send_acquire(struct obc__p2p *p, int peer, struct obc__wait *w)
{
    return obc__arena_chan_acquire(p->arena, peer, w);
}

void obc__p2p_send_publish(struct obc__p2p *p, int peer, size_t nbytes, uint64_t stamp)
{
    obc__arena_chan_publish(p->arena, peer, nbytes, stamp);
}

void *obc__p2p_recv_peek(struct obc__p2p *p, int peer, size_t *nbytes, uint64_t *stamp,
                         struct obc__wait *w)
{
    return obc__arena_chan_peek(p->arena, peer, nbytes, stamp, w);
}

void obc__p2p_recv_release(struct obc__p2p *p, int peer)
{
    obc__arena_chan_release(p->arena, peer);
}
