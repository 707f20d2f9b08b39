/* SPDX-License-Identifier: MIT */
/*
 * bootstrap.h - setup-time rendezvous over TCP: ranks find each other and
 * exchange small blobs (host identity, pid, segment names, later TCP
 * addresses) through a server hosted by one process. Used only while a
 * communicator is created; transports never see it.
 *
 * Every message read is validated (magic, version, type, rank range, rank
 * count, round, lengths) before use; clients authenticate with a shared
 * secret compared in constant time.
 */
#ifndef OBC_BOOTSTRAP_H
#define OBC_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "obc.h"
#include "core/status.h"

#define OBC_BOOT_HOST_BYTES 64
#define OBC_BOOT_SECRET_BYTES 65 /* text, NUL-terminated; "" = no authentication */
#define OBC_BOOT_MAX_BLOB 4096 /* largest per-rank blob of one allgather round */

struct obc__boot_endpoint {
    char host[OBC_BOOT_HOST_BYTES];
    int port;
    char secret[OBC_BOOT_SECRET_BYTES];
};

struct obc__boot; /* a rank's connection to the rendezvous */

/* Start the rendezvous server for nranks ranks (0: learn the count from the
 * first authenticated rank, as for a unique id) on ep->host:ep->port (port
 * 0: any), in a detached thread that ends when every rank has left, on an
 * error, or when a round waits longer than timeout_ns (< 0: never). The
 * bound port is written back into ep->port. Does not block. */
obc_result_t obc__boot_serve(struct obc__boot_endpoint *ep, int nranks, int64_t timeout_ns,
                             struct obc__err *err);

/* Connect to the rendezvous as `rank`, retrying while it is not up yet,
 * until timeout_ns (< 0: forever). */
obc_result_t obc__boot_join(const struct obc__boot_endpoint *ep, int rank, int nranks,
                            int64_t timeout_ns, struct obc__boot **out, struct obc__err *err);

/* A rendezvous whose rounds another channel carries (a child of
 * obc_comm_split runs its rounds as allgathers over its parent): allgather
 * runs one round exactly as obc__boot_allgather's contract says; finish,
 * if set, is called once by obc__boot_close; local_ip ("" = none) is what
 * obc__boot_local_ip answers. The carrier outlives the obc__boot. */
struct obc__boot_carrier {
    obc_result_t (*allgather)(void *ctx, const void *mine, size_t nbytes, void *all,
                              struct obc__err *err);
    void (*finish)(void *ctx);
    void *ctx;
    const char *local_ip;
};
obc_result_t obc__boot_join_carried(const struct obc__boot_carrier *carrier, int rank, int nranks,
                                    struct obc__boot **out, struct obc__err *err);

/* Collective over all ranks: every rank gives nbytes (same on all ranks,
 * <= OBC_BOOT_MAX_BLOB) and receives nranks * nbytes, ordered by rank. */
obc_result_t obc__boot_allgather(struct obc__boot *b, const void *mine, size_t nbytes, void *all,
                                 struct obc__err *err);

/* Leave the rendezvous (tells the server this rank is done) and free b. */
void obc__boot_close(struct obc__boot *b);
/* The IP address this rank reaches the rendezvous from: by default the
 * interface other ranks can reach it on. */
int obc__boot_local_ip(const struct obc__boot *b, char *out, size_t nbytes);

/* The unique-id bytes <-> endpoint. decode returns OBC_ERR_INVALID_ARG for
 * bytes that are not an obc id. */
void obc__boot_encode_id(const struct obc__boot_endpoint *ep, obc_unique_id_t *id);
obc_result_t obc__boot_decode_id(const obc_unique_id_t *id, struct obc__boot_endpoint *ep);

#endif
