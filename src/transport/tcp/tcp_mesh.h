/* SPDX-License-Identifier: MIT */
/* tcp_mesh.h - one connection between every pair of ranks on different hosts (tcp_mesh.c). */
#ifndef OBC_TRANSPORT_TCP_MESH_H
#define OBC_TRANSPORT_TCP_MESH_H

#include "transport/transport.h"

struct obc__tcp_mesh {
    int rank, nranks;
    const bool *remote; /* [nranks] */
    const struct obc__tcp_contact *contacts; /* [nranks] */
    int listen_fd;
    int64_t timeout_ns; /* < 0: none */
    struct obc__err *err;
};

/* fds[q] receives the connected socket to every remote rank q (-1 for the
 * others). On failure the sockets made so far are in fds for the caller to
 * close. */
obc_result_t obc__tcp_connect_mesh(const struct obc__tcp_mesh *m, int *fds);

#endif
