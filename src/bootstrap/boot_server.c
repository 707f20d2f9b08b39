/* SPDX-License-Identifier: MIT */
/*
 * boot_server.c - the rendezvous server: a detached thread that admits
 * exactly nranks authenticated ranks, then serves allgather rounds (read
 * one DATA from every rank, answer each with ALL) until every rank has said
 * BYE. A rank that breaks its connection ends the session: the others get
 * an ERROR naming it, so nobody waits for a rank that will never come.
 * Connections that fail validation are answered with ERROR and dropped
 * without disturbing the session.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/boot_wire.h"
#include "core/log.h"
#include "platform/platform.h"

#define HELLO_WAIT_NS 5000000000ll /* a real client sends HELLO right after connecting */

struct server {
    int lfd;
    int nranks;
    int64_t timeout_ns;
    char secret[OBC_BOOT_SECRET_BYTES];
    int local_rank; /* the rank in this process (answered last), or -1 */
    int *fds; /* by rank; -1 until admitted */
    unsigned char *blobs;
};

static void send_error(int fd, obc_result_t code, const char *text)
{
    struct boot_hdr h = {BOOT_MAGIC, BOOT_VERSION, BOOT_ERROR, 0, 1, (uint32_t)code, 0};
    size_t n = strnlen(text, BOOT_MAX_ERROR_TEXT - 1) + 1;
    h.nbytes = (uint32_t)n;
    int64_t deadline = obc__now_ns() + 1000000000ll;
    if (obc__sock_send_all(fd, &h, sizeof(h), deadline) == 0) {
        obc__sock_send_all(fd, text, n, deadline);
    }
}

static void fail_all(struct server *s, obc_result_t code, const char *text)
{
    OBC_WARN("bootstrap server: %s", text);
    for (int r = 0; s->fds != NULL && r < s->nranks; r++) {
        if (s->fds[r] >= 0) {
            send_error(s->fds[r], code, text);
            obc__sock_close_draining(s->fds[r], 200000000ll); /* see admit() */
            s->fds[r] = -1;
        }
    }
}

/* Read and check one HELLO on a fresh connection; admit it or drop it. */
/* A server made by obc_get_unique_id learns the rank count from the first
 * authenticated hello; the tables are sized then. */
static int size_tables(struct server *s, int nranks)
{
    s->fds = malloc(sizeof(int) * (size_t)nranks);
    s->blobs = malloc((size_t)nranks * OBC_BOOT_MAX_BLOB);
    if (s->fds == NULL || s->blobs == NULL) {
        return -1;
    }
    for (int r = 0; r < nranks; r++) {
        s->fds[r] = -1;
    }
    s->nranks = nranks;
    return 0;
}

static void admit(struct server *s, int fd, int *nadmitted)
{
    struct boot_hdr h;
    struct boot_hello hello;
    char text[160];
    int64_t deadline = obc__now_ns() + HELLO_WAIT_NS;
    const char *problem = NULL;
    obc_result_t code = OBC_ERR_PROTOCOL;
    if (obc__sock_recv_all(fd, &h, sizeof(h), deadline) != 0) {
        problem = "no hello";
    } else if ((problem = obc__boot_hdr_problem(&h, s->nranks, sizeof(hello))) != NULL) {
    } else if (h.type != BOOT_HELLO || h.nbytes != sizeof(hello)) {
        problem = "expected a hello";
    } else if (obc__sock_recv_all(fd, &hello, sizeof(hello), deadline) != 0) {
        problem = "truncated hello";
    } else if (!obc__boot_secret_equal(hello.secret, s->secret)) {
        problem = "wrong secret";
        code = OBC_ERR_AUTH;
    } else if (s->nranks == 0 && size_tables(s, h.nranks) != 0) {
        problem = "out of memory for the rank table";
        code = OBC_ERR_NO_MEMORY;
    } else if (s->fds[h.rank] >= 0) {
        problem = "duplicate rank";
        code = OBC_ERR_AUTH;
    }
    if (problem != NULL) {
        snprintf(text, sizeof(text), "rendezvous rejected a connection: %s", problem);
        OBC_WARN("bootstrap server: %s", text);
        send_error(fd, code, text);
        /* The client may have sent its first round already: closing with
         * that unread would reset the connection and could lose the error. */
        obc__sock_close_draining(fd, 200000000ll);
        return;
    }
    s->fds[h.rank] = fd;
    if (hello.pid == (int32_t)getpid()) {
        s->local_rank = h.rank;
    }
    (*nadmitted)++;
    OBC_TRACE(OBC_LOG_BOOT, "bootstrap server: rank %d joined (%d/%d)", h.rank, *nadmitted,
              s->nranks);
}

static int admit_all(struct server *s)
{
    int nadmitted = 0;
    int64_t deadline = obc__boot_deadline(s->timeout_ns);
    while (s->nranks == 0 || nadmitted < s->nranks) {
        int fd = obc__sock_accept(s->lfd, deadline);
        if (fd < 0) {
            char text[160];
            snprintf(text, sizeof(text), "only %d of %d ranks joined the rendezvous in time",
                     nadmitted, s->nranks);
            fail_all(s, OBC_ERR_TIMEOUT, text);
            return -1;
        }
        admit(s, fd, &nadmitted);
    }
    return 0;
}

/* Send one rank the blobs of this round, ordered by rank. */
static int send_blobs_to(struct server *s, int r, uint32_t round, uint32_t blob_bytes,
                         int64_t deadline)
{
    struct boot_hdr h = {BOOT_MAGIC, BOOT_VERSION, BOOT_ALL, r, s->nranks, round, 0};
    h.nbytes = blob_bytes * (uint32_t)s->nranks;
    if (obc__sock_send_all(s->fds[r], &h, sizeof(h), deadline) != 0) {
        return -1;
    }
    for (int q = 0; q < s->nranks; q++) {
        if (obc__sock_send_all(s->fds[r], s->blobs + (size_t)q * OBC_BOOT_MAX_BLOB, blob_bytes,
                               deadline) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Answer every rank, the one in this process last (see struct boot_hello). */
static int send_all_blobs(struct server *s, uint32_t round, uint32_t blob_bytes)
{
    int64_t deadline = obc__boot_deadline(s->timeout_ns);
    for (int i = 0; i <= s->nranks; i++) {
        int r = i < s->nranks ? i : s->local_rank;
        if (r < 0 || (i < s->nranks && r == s->local_rank)) {
            continue;
        }
        if (send_blobs_to(s, r, round, blob_bytes, deadline) != 0) {
            close(s->fds[r]);
            s->fds[r] = -1;
            fail_all(s, OBC_ERR_PEER_LOST, "a rank left the rendezvous during a round");
            return -1;
        }
    }
    return 0;
}

/* One round. Returns 1 when every rank said BYE, 0 after a served round,
 * -1 on failure (already reported to the ranks). */
static int serve_round(struct server *s, uint32_t round)
{
    struct boot_hdr h;
    uint32_t blob_bytes = 0;
    int nbye = 0;
    int64_t deadline = obc__boot_deadline(s->timeout_ns);
    char text[200];
    for (int r = 0; r < s->nranks; r++) {
        const char *problem = NULL;
        if (obc__sock_recv_all(s->fds[r], &h, sizeof(h), deadline) != 0) {
            problem = "left the rendezvous (connection lost or timed out)";
        } else if ((problem = obc__boot_hdr_problem(&h, s->nranks, OBC_BOOT_MAX_BLOB)) != NULL) {
        } else if (h.rank != r || (h.type != BOOT_DATA && h.type != BOOT_BYE)) {
            problem = "sent an unexpected message";
        } else if (h.type == BOOT_BYE) {
            nbye++;
            continue;
        } else if (h.round != round || (r > nbye && h.nbytes != blob_bytes)) {
            problem = "is out of step (round or blob size differs)";
        } else if (obc__sock_recv_all(s->fds[r], s->blobs + (size_t)r * OBC_BOOT_MAX_BLOB, h.nbytes,
                                      deadline) != 0) {
            problem = "sent a truncated message";
        }
        if (problem != NULL) {
            snprintf(text, sizeof(text), "rank %d %s", r, problem);
            close(s->fds[r]);
            s->fds[r] = -1;
            fail_all(s, OBC_ERR_PEER_LOST, text);
            return -1;
        }
        blob_bytes = h.nbytes;
    }
    if (nbye == s->nranks) {
        return 1;
    }
    if (nbye != 0) {
        fail_all(s, OBC_ERR_PEER_LOST, "some ranks left the rendezvous while others went on");
        return -1;
    }
    return send_all_blobs(s, round, blob_bytes);
}

static void server_free(struct server *s)
{
    for (int r = 0; s->fds != NULL && r < s->nranks; r++) {
        if (s->fds[r] >= 0) {
            close(s->fds[r]);
        }
    }
    if (s->lfd >= 0) {
        close(s->lfd);
    }
    free(s->fds);
    free(s->blobs);
    free(s);
}

static void *server_main(void *arg)
{
    struct server *s = arg;
    if (admit_all(s) == 0) {
        /* Everyone is in: free the port at once, so that the next communicator
         * of the same job (obc_comm_init_env again) can listen on it. */
        close(s->lfd);
        s->lfd = -1;
        for (uint32_t round = 0; serve_round(s, round) == 0; round++) {
        }
    }
    OBC_TRACE(OBC_LOG_BOOT, "bootstrap server: session over");
    server_free(s);
    return NULL;
}

obc_result_t obc__boot_serve(struct obc__boot_endpoint *ep, int nranks, int64_t timeout_ns,
                             struct obc__err *err)
{
    struct obc__sockaddr addr, bound;
    pthread_t thread;
    pthread_attr_t attr;
    int rc = obc__sock_resolve(ep->host, ep->port, &addr);
    if (rc != 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "cannot resolve rendezvous host '%s'",
                            ep->host);
    }
    struct server *s = calloc(1, sizeof(*s));
    if (s == NULL || (nranks > 0 && size_tables(s, nranks) != 0)) {
        if (s != NULL) {
            free(s->fds);
            free(s->blobs);
        }
        free(s);
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "rendezvous server for %d ranks", nranks);
    }
    s->local_rank = -1;
    s->timeout_ns = timeout_ns;
    memcpy(s->secret, ep->secret, sizeof(s->secret));
    s->lfd = obc__sock_listen(&addr, nranks < 128 ? 128 : nranks, &bound);
    if (s->lfd < 0) {
        char where[80];
        rc = s->lfd;
        obc__sock_format(&addr, where, sizeof(where));
        free(s->fds);
        free(s->blobs);
        free(s);
        return obc__err_set(err, OBC_ERR_SYSTEM, "cannot listen on %s for the rendezvous: %s",
                            where, strerror(-rc));
    }
    {
        char where[80];
        obc__sock_format(&bound, where, sizeof(where));
        ep->port = atoi(strrchr(where, ':') + 1);
        OBC_INFO(OBC_LOG_BOOT, "rendezvous for %d ranks listening on %s", nranks, where);
        if (ep->secret[0] == '\0') { /* obcrun always sets one; other launchers do not */
            OBC_WARN("rendezvous on %s has no secret: any process that reaches the port may "
                     "join as a rank (set OBC_SECRET to the same value on every rank)",
                     where);
        }
    }
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&thread, &attr, server_main, s);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        server_free(s);
        return obc__err_set(err, OBC_ERR_SYSTEM, "cannot start the rendezvous thread: %s",
                            strerror(rc));
    }
    return OBC_SUCCESS;
}
