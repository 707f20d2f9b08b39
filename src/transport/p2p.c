/* SPDX-License-Identifier: MIT */
/*
 * p2p.c - the p2p interface's one dispatch point: which transport reaches
 * each peer. A peer on this host is reached through the host arena's
 * channels (obc__shm_chan_ops), a peer on another host through a TCP link
 * (obc__tcp_ops); each peer's route, chosen once at creation, names the
 * table, and every call goes through it, so algorithms above see the same
 * calls either way.
 *
 * Slots hold the same number of usable bytes for every peer and on every
 * rank (setup->slot_bytes, computed once from the whole layout), so the
 * two ends of any pair cut a message into the same chunks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/copy.h"
#include "core/log.h"
#include "platform/platform.h"
#include "transport/shm/shm_chan.h"
#include "transport/tcp/tcp_link.h"
#include "transport/tcp/tcp_mesh.h"

/* How this rank reaches one peer: the table of the transport that carries
 * it, that transport's state, and its own index of the peer (shm: the
 * communicator rank; tcp: the link index). */
struct route {
    const struct obc__xport_ops *ops;
    void *ctx;
    int index;
};

struct obc__p2p {
    struct obc__arena *arena;
    struct obc__tcp *tcp; /* NULL when every peer shares this host */
    int rank, nranks;
    struct route *route; /* [nranks] */
    int *rank_of_link; /* [nlinks] */
    char (*addr_of_link)[48]; /* [nlinks]: for messages */
    int nlinks;
    size_t slot_bytes;
    struct obc__err *err;
};

static obc_result_t connect_links(struct obc__p2p *p, const struct obc__p2p_setup *s)
{
    struct obc__tcp_mesh mesh = {s->rank,      s->nranks,     s->remote, s->contacts,
                                 s->listen_fd, s->timeout_ns, p->err};
    int *fds = malloc(sizeof(int) * (size_t)s->nranks);
    obc_result_t res =
        fds != NULL ? OBC_SUCCESS : obc__err_set(p->err, OBC_ERR_NO_MEMORY, "tcp socket table");
    if (res == OBC_SUCCESS) {
        res = obc__tcp_connect_mesh(&mesh, fds);
    }
    for (int q = 0; fds != NULL && q < s->nranks; q++) {
        if (fds[q] < 0) {
            continue;
        }
        if (res == OBC_SUCCESS) {
            res = obc__tcp_attach(p->tcp, p->route[q].index, fds[q]);
        } else {
            obc__fd_close(fds[q]);
        }
    }
    free(fds);
    return res == OBC_SUCCESS ? obc__tcp_start(p->tcp) : res;
}

static obc_result_t create_links(struct obc__p2p *p, const struct obc__p2p_setup *s)
{
    p->rank_of_link = malloc(sizeof(int) * (size_t)s->nranks);
    p->addr_of_link = malloc(sizeof(*p->addr_of_link) * (size_t)s->nranks);
    if (p->rank_of_link == NULL || p->addr_of_link == NULL) {
        return obc__err_set(p->err, OBC_ERR_NO_MEMORY, "p2p link table");
    }
    for (int q = 0; q < s->nranks; q++) {
        p->route[q] = (struct route){&obc__shm_chan_ops, s->arena, q};
        if (s->remote[q]) {
            p->rank_of_link[p->nlinks] = q;
            memcpy(p->addr_of_link[p->nlinks], s->contacts[q].addr, sizeof(p->addr_of_link[0]));
            p->addr_of_link[p->nlinks][sizeof(p->addr_of_link[0]) - 1] = '\0';
            p->route[q] = (struct route){&obc__tcp_ops, NULL, p->nlinks++};
        }
    }
    if (p->nlinks == 0) {
        return OBC_SUCCESS;
    }
    OBC_INFO(OBC_LOG_INIT, "transport tcp: %d remote peers, %u slots of %zu bytes each way",
             p->nlinks, s->tcp_nslots, s->slot_bytes);
    obc_result_t res = obc__tcp_create(p->nlinks, s->tcp_nslots, s->slot_bytes, p->err, &p->tcp);
    for (int l = 0; res == OBC_SUCCESS && l < p->nlinks; l++) {
        p->route[p->rank_of_link[l]].ctx = p->tcp;
    }
    if (res == OBC_SUCCESS && s->arena != NULL) {
        obc__tcp_set_doorbell(p->tcp, s->arena, s->rank);
    }
    return res == OBC_SUCCESS ? connect_links(p, s) : res;
}

obc_result_t obc__p2p_create(const struct obc__p2p_setup *s, struct obc__err *err,
                             struct obc__p2p **out)
{
    struct obc__p2p *p = calloc(1, sizeof(*p));
    obc_result_t res = OBC_SUCCESS;
    *out = NULL;
    if (p == NULL || (p->route = malloc(sizeof(*p->route) * (size_t)s->nranks)) == NULL) {
        res = obc__err_set(err, OBC_ERR_NO_MEMORY, "p2p table");
    } else {
        p->arena = s->arena;
        p->rank = s->rank;
        p->nranks = s->nranks;
        p->slot_bytes = s->slot_bytes;
        p->err = err;
        res = create_links(p, s);
    }
    if (s->listen_fd >= 0) {
        obc__fd_close(s->listen_fd);
    }
    if (res != OBC_SUCCESS) {
        obc__p2p_destroy(p, 0);
        return res;
    }
    *out = p;
    return OBC_SUCCESS;
}

void obc__p2p_destroy(struct obc__p2p *p, int64_t drain_ns)
{
    if (p == NULL) {
        return;
    }
    obc__tcp_destroy(p->tcp, drain_ns);
    free(p->route);
    free(p->rank_of_link);
    free(p->addr_of_link);
    free(p);
}

void obc__p2p_abort(struct obc__p2p *p)
{
    if (p != NULL && p->tcp != NULL) {
        obc__tcp_abort(p->tcp, p->rank);
    }
}

void obc__p2p_tell_verdict(struct obc__p2p *p, uint64_t verdict)
{
    if (p != NULL && p->tcp != NULL && verdict != 0 && obc__verdict_rank(verdict) >= 0) {
        obc__tcp_tell_verdict(p->tcp, verdict);
    }
}

void obc__p2p_tell_failure(struct obc__p2p *p, obc_result_t code, int culprit)
{
    obc__p2p_tell_verdict(p, obc__verdict_word(code, culprit));
}

void obc__p2p_post_note(struct obc__p2p *p, const void *note)
{
    if (p != NULL && p->tcp != NULL) {
        obc__tcp_post_note(p->tcp, note);
    }
}

bool obc__p2p_read_note(struct obc__p2p *p, int peer, void *note, struct obc__wait *w)
{
    if (p == NULL || p->tcp == NULL || p->route[peer].ctx != p->tcp) {
        return false; /* notes are for the peers of other hosts */
    }
    return obc__tcp_read_note(p->tcp, p->route[peer].index, note, w);
}

obc_result_t obc__p2p_health(struct obc__p2p *p, uint64_t *verdict)
{
    /* Only links fail on their own: a channel's peer_error is always
     * success (a dead local rank breaks the arena, and waits say so). */
    for (int l = 0; p->tcp != NULL && l < p->nlinks; l++) {
        int from = p->rank_of_link[l];
        const struct route *r = &p->route[from];
        obc_result_t code = r->ops->peer_error(r->ctx, r->index);
        if (code == OBC_SUCCESS) {
            continue;
        }
        uint64_t told = obc__tcp_link_verdict(p->tcp, l);
        int culprit = told != 0 ? obc__verdict_rank(told) : -1;
        int other = obc__verdict_other(told);
        char silent[256];
        obc__p2p_describe_silent(p, 1500000000ll, silent, sizeof(silent));
        *verdict = told != 0 ? obc__verdict_recode(told, code) : obc__verdict_word(code, from);
        obc__p2p_tell_verdict(p, *verdict);
        if (culprit >= 0 && code == OBC_ERR_PEER_LOST) {
            return obc__err_set(p->err, code, "rank %d was lost (rank %d (%s) saw it go)%s",
                                culprit, from, p->addr_of_link[l], silent);
        }
        if (culprit >= 0 && code == OBC_ERR_TIMEOUT) {
            char whom[32] = "";
            if (culprit != from) {
                snprintf(whom, sizeof(whom), " waiting for rank %d", culprit);
            }
            return obc__err_set(p->err, code, "rank %d (%s) timed out%s%s", from,
                                p->addr_of_link[l], whom, silent);
        }
        if (culprit == from && code == OBC_ERR_ABORTED) {
            return obc__err_set(p->err, code, "rank %d (%s) aborted the communicator%s", from,
                                p->addr_of_link[l], silent);
        }
        if (culprit >= 0 && other >= 0) {
            return obc__err_set(p->err, code,
                                "rank %d (%s) reports its communicator broken: rank %d found that "
                                "rank %d disagrees with it on a call (%s)%s",
                                from, p->addr_of_link[l], culprit, other, obc_strerror(code),
                                silent);
        }
        if (culprit >= 0) {
            return obc__err_set(p->err, code,
                                "rank %d (%s) reports its communicator broken by rank %d (%s)%s",
                                from, p->addr_of_link[l], culprit, obc_strerror(code), silent);
        }
        if (code == OBC_ERR_PEER_LOST && obc__tcp_link_departed(p->tcp, l)) {
            return obc__err_set(p->err, code,
                                "rank %d (%s) left the communicator (obc_comm_destroy) while this "
                                "rank still had data for it%s",
                                from, p->addr_of_link[l], silent);
        }
        if (code == OBC_ERR_PROTOCOL) {
            return obc__err_set(p->err, code,
                                "rank %d (%s) sent data that is not an obc frame; connection "
                                "closed%s",
                                from, p->addr_of_link[l], silent);
        }
        return obc__err_set(p->err, code,
                            "rank %d (%s) was lost: its connection closed without a goodbye "
                            "(the process exited or aborted, or its host went down)%s",
                            from, p->addr_of_link[l], silent);
    }
    return OBC_SUCCESS;
}

void obc__p2p_describe_silent(const struct obc__p2p *p, int64_t min_ns, char *out, size_t nbytes)
{
    int64_t now = obc__now_ns();
    size_t used = 0;
    out[0] = '\0';
    for (int l = 0; p->tcp != NULL && l < p->nlinks && used + 1 < nbytes; l++) {
        int64_t quiet = obc__tcp_silent_ns(p->tcp, l, now);
        if (quiet >= min_ns) {
            int n = snprintf(out + used, nbytes - used, "%s rank %d (%s) for %.1f s",
                             used == 0 ? "; nothing heard from" : ",", p->rank_of_link[l],
                             p->addr_of_link[l], (double)quiet / 1e9);
            used += n > 0 ? (size_t)n : 0;
        }
    }
    if (used > 0 && used + 1 < nbytes) {
        snprintf(out + used, nbytes - used, " (unreachable?)");
    }
}

size_t obc__p2p_slot_bytes(const struct obc__p2p *p, int peer)
{
    (void)peer;
    return p->slot_bytes;
}

/* A wait names the peer by its communicator rank, not by the transport's
 * index of it (for error messages). */
void *obc__p2p_send_acquire(struct obc__p2p *p, int peer, struct obc__wait *w)
{
    const struct route *r = &p->route[peer];
    void *slot = r->ops->send_acquire(r->ctx, r->index, w);
    if (slot == NULL) {
        w->peer = peer;
    }
    return slot;
}

void obc__p2p_send_publish(struct obc__p2p *p, int peer, size_t nbytes, uint64_t stamp)
{
    const struct route *r = &p->route[peer];
    r->ops->send_publish(r->ctx, r->index, nbytes, stamp);
}

uint64_t obc__p2p_send_publish_tracked(struct obc__p2p *p, int peer, size_t nbytes, uint64_t stamp)
{
    const struct route *r = &p->route[peer];
    return r->ops->send_publish_tracked(r->ctx, r->index, nbytes, stamp);
}

bool obc__p2p_send_seen(struct obc__p2p *p, int peer, uint64_t ticket, struct obc__wait *w)
{
    const struct route *r = &p->route[peer];
    bool seen = r->ops->send_seen(r->ctx, r->index, ticket, w);
    if (!seen) {
        w->peer = peer;
    }
    return seen;
}

void *obc__p2p_recv_peek(struct obc__p2p *p, int peer, size_t *nbytes, uint64_t *stamp,
                         struct obc__wait *w)
{
    const struct route *r = &p->route[peer];
    void *slot = r->ops->recv_peek(r->ctx, r->index, nbytes, stamp, w);
    if (slot == NULL) {
        w->peer = peer;
    }
    return slot;
}

void obc__p2p_recv_release(struct obc__p2p *p, int peer)
{
    const struct route *r = &p->route[peer];
    r->ops->recv_release(r->ctx, r->index);
}

/* Below this a copy into the slot costs less than the drain wait it saves. */
#define REF_MIN_BYTES (16 * 1024)

bool obc__p2p_send_publish_ref(struct obc__p2p *p, int peer, void *slot, size_t at, const void *src,
                               size_t src_bytes, uint64_t stamp)
{
    const struct route *r = &p->route[peer];
    if (r->ops->send_publish_ref != NULL && src_bytes >= REF_MIN_BYTES) {
        r->ops->send_publish_ref(r->ctx, r->index, at, src, src_bytes, stamp);
        return true;
    }
    if (src_bytes > 0) {
        obc__copy((unsigned char *)slot + at, src, src_bytes, 0);
    }
    r->ops->send_publish(r->ctx, r->index, at + src_bytes, stamp);
    return false;
}

bool obc__p2p_send_drained(struct obc__p2p *p, int peer, struct obc__wait *w)
{
    const struct route *r = &p->route[peer];
    if (r->ops->send_drained == NULL || r->ops->send_drained(r->ctx, r->index, w)) {
        return true;
    }
    w->peer = peer;
    return false;
}

void obc__p2p_recv_post(struct obc__p2p *p, int peer, uint64_t stamp, size_t from, void *dst,
                        size_t nbytes)
{
    const struct route *r = &p->route[peer];
    if (r->ops->recv_post != NULL) {
        r->ops->recv_post(r->ctx, r->index, stamp, from, dst, nbytes);
    }
}

void obc__p2p_recv_unpost(struct obc__p2p *p, int peer)
{
    const struct route *r = &p->route[peer];
    if (r->ops->recv_unpost != NULL) {
        r->ops->recv_unpost(r->ctx, r->index);
    }
}

bool obc__p2p_recv_landed(struct obc__p2p *p, int peer)
{
    const struct route *r = &p->route[peer];
    return r->ops->recv_landed != NULL && r->ops->recv_landed(r->ctx, r->index);
}

void obc__p2p_detach(struct obc__p2p *p)
{
    if (p != NULL && p->tcp != NULL) {
        obc__tcp_detach_all(p->tcp);
    }
}
