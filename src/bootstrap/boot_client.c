/* SPDX-License-Identifier: MIT */
/*
 * boot_client.c - a rank's side of the rendezvous: connect (retrying while
 * the host rank is still starting), authenticate, and run allgather rounds.
 * Every reply is validated before its payload is used. A carried rendezvous
 * (obc__boot_join_carried) hands its rounds to the carrier instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/boot_wire.h"
#include "core/log.h"
#include "platform/platform.h"

struct obc__boot {
    int fd;
    int rank;
    int nranks;
    uint32_t round;
    int64_t timeout_ns;
    char where[80];
    const struct obc__boot_carrier *carrier; /* NULL: the TCP rendezvous at fd */
};

static int connect_retrying(const struct obc__sockaddr *addr, int64_t deadline)
{
    int64_t backoff = 1000000; /* 1 ms, doubling to 100 ms */
    for (;;) {
        int fd = obc__sock_connect(addr, deadline);
        if (fd >= 0 ||
            (fd != -ECONNREFUSED && fd != -ETIMEDOUT && fd != -ENETUNREACH &&
             fd != -EHOSTUNREACH)) {
            return fd;
        }
        if (deadline >= 0 && obc__now_ns() + backoff > deadline) {
            return -ETIMEDOUT;
        }
        obc__sleep_ns(backoff);
        backoff = backoff * 2 > 100000000 ? 100000000 : backoff * 2;
    }
}

obc_result_t obc__boot_join(const struct obc__boot_endpoint *ep, int rank, int nranks,
                            int64_t timeout_ns, struct obc__boot **out, struct obc__err *err)
{
    struct obc__sockaddr addr;
    struct boot_hdr h = {
        BOOT_MAGIC, BOOT_VERSION, BOOT_HELLO, rank, nranks, 0, sizeof(struct boot_hello)};
    struct boot_hello hello;
    int64_t deadline = obc__boot_deadline(timeout_ns);
    if (obc__sock_resolve(ep->host, ep->port, &addr) != 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "cannot resolve rendezvous host '%s'",
                            ep->host);
    }
    struct obc__boot *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "rendezvous client");
    }
    obc__sock_format(&addr, b->where, sizeof(b->where));
    b->fd = connect_retrying(&addr, deadline);
    if (b->fd < 0) {
        int rc = b->fd;
        char where[sizeof(b->where)];
        memcpy(where, b->where, sizeof(where));
        free(b);
        return obc__err_set(err, rc == -ETIMEDOUT ? OBC_ERR_TIMEOUT : OBC_ERR_SYSTEM,
                            "rank %d cannot reach the rendezvous at %s: %s", rank, where,
                            strerror(-rc));
    }
    b->rank = rank;
    b->nranks = nranks;
    b->timeout_ns = timeout_ns;
    memset(&hello, 0, sizeof(hello));
    memcpy(hello.secret, ep->secret, sizeof(hello.secret));
    hello.pid = (int32_t)getpid();
    if (obc__sock_send_all(b->fd, &h, sizeof(h), deadline) != 0 ||
        obc__sock_send_all(b->fd, &hello, sizeof(hello), deadline) != 0) {
        close(b->fd);
        free(b);
        return obc__err_set(err, OBC_ERR_PEER_LOST, "rank %d: rendezvous closed the connection",
                            rank);
    }
    *out = b;
    return OBC_SUCCESS;
}

obc_result_t obc__boot_join_carried(const struct obc__boot_carrier *carrier, int rank, int nranks,
                                    struct obc__boot **out, struct obc__err *err)
{
    struct obc__boot *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "rendezvous client");
    }
    b->fd = -1;
    b->rank = rank;
    b->nranks = nranks;
    b->carrier = carrier;
    *out = b;
    return OBC_SUCCESS;
}

static obc_result_t read_error(struct obc__boot *b, const struct boot_hdr *h, int64_t deadline,
                               struct obc__err *err)
{
    char text[BOOT_MAX_ERROR_TEXT] = "";
    obc_result_t code = (obc_result_t)h->round;
    (void)deadline; /* the text follows its header at once, even when our wait ran out */
    if (h->nbytes > 0 && h->nbytes <= sizeof(text) &&
        obc__sock_recv_all(b->fd, text, h->nbytes, obc__boot_deadline(1000000000ll)) != 0) {
        text[0] = '\0';
    }
    text[sizeof(text) - 1] = '\0';
    if (code <= OBC_SUCCESS || code >= OBC_IN_PROGRESS) {
        code = OBC_ERR_PROTOCOL;
    }
    return obc__err_set(err, code, "rank %d: the rendezvous reported %s%s%s", b->rank,
                        obc_strerror(code), text[0] ? ": " : "", text);
}

obc_result_t obc__boot_allgather(struct obc__boot *b, const void *mine, size_t nbytes, void *all,
                                 struct obc__err *err)
{
    struct boot_hdr h = {BOOT_MAGIC, BOOT_VERSION, BOOT_DATA,       b->rank,
                         b->nranks,  b->round,     (uint32_t)nbytes};
    int64_t deadline = obc__boot_deadline(b->timeout_ns);
    const char *problem;
    if (nbytes > OBC_BOOT_MAX_BLOB) {
        return obc__err_set(err, OBC_ERR_INTERNAL, "bootstrap blob of %zu bytes", nbytes);
    }
    if (b->carrier != NULL) {
        obc_result_t res = b->carrier->allgather(b->carrier->ctx, mine, nbytes, all, err);
        b->round += res == OBC_SUCCESS;
        return res;
    }
    if (obc__sock_send_all(b->fd, &h, sizeof(h), deadline) != 0 ||
        obc__sock_send_all(b->fd, mine, nbytes, deadline) != 0) {
        return obc__err_set(err, OBC_ERR_PEER_LOST, "rank %d: lost the rendezvous at %s", b->rank,
                            b->where);
    }
    int rc = obc__sock_recv_all(b->fd, &h, sizeof(h), deadline);
    if (rc != 0) {
        return obc__err_set(err, rc == -ETIMEDOUT ? OBC_ERR_TIMEOUT : OBC_ERR_PEER_LOST,
                            "rank %d: no answer from the rendezvous at %s (round %u): %s", b->rank,
                            b->where, b->round, strerror(-rc));
    }
    if (h.magic == BOOT_MAGIC && h.type == BOOT_ERROR) {
        return read_error(b, &h, deadline, err);
    }
    problem = obc__boot_hdr_problem(&h, b->nranks, (uint64_t)nbytes * (uint64_t)b->nranks);
    if (problem == NULL &&
        (h.type != BOOT_ALL || h.round != b->round || h.rank != b->rank ||
         h.nbytes != nbytes * (size_t)b->nranks)) {
        problem = "unexpected reply";
    }
    if (problem != NULL) {
        return obc__err_set(err, OBC_ERR_PROTOCOL, "rank %d: bad message from the rendezvous: %s",
                            b->rank, problem);
    }
    if (obc__sock_recv_all(b->fd, all, h.nbytes, deadline) != 0) {
        return obc__err_set(err, OBC_ERR_PEER_LOST, "rank %d: truncated reply from the rendezvous",
                            b->rank);
    }
    b->round++;
    return OBC_SUCCESS;
}

int obc__boot_local_ip(const struct obc__boot *b, char *out, size_t nbytes)
{
    if (b->carrier != NULL) {
        const char *ip = b->carrier->local_ip;
        if (ip == NULL || ip[0] == '\0' || strlen(ip) >= nbytes) {
            return -1;
        }
        snprintf(out, nbytes, "%s", ip);
        return 0;
    }
    return obc__sock_local_ip(b->fd, out, nbytes);
}

void obc__boot_close(struct obc__boot *b)
{
    if (b == NULL) {
        return;
    }
    if (b->carrier != NULL) {
        if (b->carrier->finish != NULL) {
            b->carrier->finish(b->carrier->ctx);
        }
        free(b);
        return;
    }
    struct boot_hdr h = {BOOT_MAGIC, BOOT_VERSION, BOOT_BYE, b->rank, b->nranks, b->round, 0};
    obc__sock_send_all(b->fd, &h, sizeof(h), obc__now_ns() + 1000000000ll);
    close(b->fd);
    free(b);
}
