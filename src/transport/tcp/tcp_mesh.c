/* SPDX-License-Identifier: MIT */
/*
 * tcp_mesh.c - connecting every pair of ranks that live on different
 * hosts, once, when the communicator is created.
 *
 * Every such rank listens before the contacts are exchanged, so a connect
 * never waits for the other side's code: the kernel completes it into the
 * listener's backlog. Each rank first connects to every remote rank above
 * it, then accepts one connection from every remote rank below it. A
 * connection opens with a hello (who is calling whom, and the callee's
 * random cookie from the exchange); one that is malformed, stale or from
 * a stranger is closed and the rank keeps listening until its deadline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/log.h"
#include "platform/platform.h"
#include "transport/tcp/tcp_mesh.h"

#define HELLO_MAGIC 0x4f424348u /* "OBCH" */
#define HELLO_WAIT_NS 5000000000ll /* for a connection's hello once accepted */

struct hello {
    uint32_t magic;
    int32_t from;
    int32_t to;
    uint32_t reserved;
    uint64_t cookie;
};

obc_result_t obc__tcp_listen(const char *ip, int nranks, struct obc__tcp_contact *me, int *lfd,
                             struct obc__err *err)
{
    struct obc__sockaddr addr, bound;
    memset(me, 0, sizeof(*me));
    int rc = obc__sock_resolve(ip, 0, &addr);
    int fd = rc == 0 ? obc__sock_listen(&addr, nranks, &bound) : rc;
    if (fd < 0) {
        return obc__err_set(err, OBC_ERR_SYSTEM, "cannot listen for peers on %s: %s", ip,
                            strerror(-fd));
    }
    char where[80];
    obc__sock_format(&bound, where, sizeof(where));
    const char *colon = strrchr(where, ':');
    snprintf(me->addr, sizeof(me->addr), "%s", ip);
    me->port = colon != NULL ? (int32_t)strtol(colon + 1, NULL, 10) : 0;
    obc__random_bytes(&me->cookie, sizeof(me->cookie));
    *lfd = fd;
    return OBC_SUCCESS;
}

static obc_result_t connect_to(const struct obc__tcp_mesh *m, int peer, int64_t deadline, int *out)
{
    const struct obc__tcp_contact *c = &m->contacts[peer];
    struct obc__sockaddr addr;
    int fd = obc__sock_resolve(c->addr, c->port, &addr);
    for (int64_t backoff = 1000000; fd == 0;) {
        fd = obc__sock_connect(&addr, deadline);
        if (fd >= 0 || (fd != -ECONNREFUSED && fd != -ENETUNREACH && fd != -EHOSTUNREACH) ||
            obc__now_ns() + backoff >= deadline) {
            break;
        }
        obc__sleep_ns(backoff); /* a refused connect: a transient hiccup of the network */
        backoff = backoff < 100000000 ? backoff * 2 : backoff;
        fd = 0;
    }
    struct hello h = {HELLO_MAGIC, m->rank, peer, 0, c->cookie};
    int rc = fd < 0 ? fd : obc__sock_send_all(fd, &h, sizeof(h), deadline);
    if (rc < 0) {
        if (fd >= 0) {
            obc__fd_close(fd);
        }
        return obc__err_set(m->err, rc == -ETIMEDOUT ? OBC_ERR_TIMEOUT : OBC_ERR_SYSTEM,
                            "rank %d could not connect to rank %d at %s:%d: %s", m->rank, peer,
                            c->addr, (int)c->port, strerror(-rc));
    }
    *out = fd;
    return OBC_SUCCESS;
}

/* Who is calling: a rank below this one, on another host, not yet
 * connected, presenting this rank's cookie; else -1. */
static int caller_of(const struct obc__tcp_mesh *m, const struct hello *h, const int *fds)
{
    bool ok = h->magic == HELLO_MAGIC && h->to == m->rank && h->from >= 0 && h->from < m->rank &&
        m->remote[h->from] && fds[h->from] < 0 && h->cookie == m->contacts[m->rank].cookie;
    return ok ? h->from : -1;
}

static int first_missing(const struct obc__tcp_mesh *m, const int *fds)
{
    for (int q = 0; q < m->rank; q++) {
        if (m->remote[q] && fds[q] < 0) {
            return q;
        }
    }
    return -1;
}

static obc_result_t accept_callers(const struct obc__tcp_mesh *m, int expected, int64_t deadline,
                                   int *fds)
{
    for (int got = 0; got < expected;) {
        int fd = obc__sock_accept(m->listen_fd, deadline);
        if (fd < 0) {
            int q = first_missing(m, fds);
            return obc__err_set(m->err, fd == -ETIMEDOUT ? OBC_ERR_TIMEOUT : OBC_ERR_SYSTEM,
                                "rank %d: no connection from rank %d (%s) while joining: %s",
                                m->rank, q, q >= 0 ? m->contacts[q].addr : "?", strerror(-fd));
        }
        struct hello h;
        int64_t until = obc__now_ns() + HELLO_WAIT_NS;
        int rc = obc__sock_recv_all(fd, &h, sizeof(h), until < deadline ? until : deadline);
        int from = rc == 0 ? caller_of(m, &h, fds) : -1;
        if (from < 0) {
            OBC_WARN("tcp: rank %d refused a connection that did not introduce itself as a "
                     "peer of this communicator",
                     m->rank);
            obc__sock_close_draining(fd, 0);
            continue;
        }
        fds[from] = fd;
        got++;
    }
    return OBC_SUCCESS;
}

obc_result_t obc__tcp_connect_mesh(const struct obc__tcp_mesh *m, int *fds)
{
    int64_t deadline = m->timeout_ns < 0 ? -1 : obc__now_ns() + m->timeout_ns;
    int expected = 0;
    for (int q = 0; q < m->nranks; q++) {
        fds[q] = -1;
    }
    for (int q = m->rank + 1; q < m->nranks; q++) {
        if (m->remote[q]) {
            OBC_CHECK(connect_to(m, q, deadline, &fds[q]));
        }
    }
    for (int q = 0; q < m->rank; q++) {
        expected += m->remote[q];
    }
    return accept_callers(m, expected, deadline, fds);
}
