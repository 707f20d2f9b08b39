/* SPDX-License-Identifier: MIT */
/*
 * comm.h - struct obc_comm, built from module-owned parts: the config
 * snapshot, the error buffer, the host topology, the transport (host
 * arena) and the engine (owned by the api layer, opaque here).
 */
#ifndef OBC_CORE_COMM_H
#define OBC_CORE_COMM_H

#include "obc.h"
#include "bootstrap/bootstrap.h"
#include "core/config.h"
#include "core/status.h"
#include "transport/arena.h"
#include "transport/transport.h"

struct obc__engine;

struct obc__topo {
    int local_rank; /* index among the ranks of this host */
    int local_nranks;
    int nhosts; /* as algorithms see them (OBC_HOST_SPLIT may split a host) */
    int machines; /* hosts as identified: how many shared-memory domains */
    int *host_of; /* [nranks]: host index of every rank, hosts numbered by lowest rank */
    bool *remote; /* [nranks]: on another machine, reached over TCP */
};

struct obc_comm {
    int rank;
    int nranks;
    struct obc__config config;
    struct obc__err err;
    char last_error[OBC_ERR_MSG_BYTES]; /* snapshot returned by obc_comm_last_error */
    struct obc__topo topo;
    struct obc__arena *arena;
    struct obc__p2p *p2p;
    struct obc__engine *engine;
    bool closing_broken; /* destroyed after a failure: do not linger for peers */
};

/* Join the rendezvous at ep as rank/nranks, find the peers on this host,
 * set up the host arena. cfg is the snapshot the communicator keeps. On
 * failure *out is NULL, and the message is in the thread's error buffer. */
obc_result_t obc__comm_create(const struct obc__config *cfg, const struct obc__boot_endpoint *ep,
                              int rank, int nranks, struct obc_comm **out);
void obc__comm_free(struct obc_comm *comm);
/* Give up on a communicator being created: keep its error message as the
 * thread's (obc_comm_last_error(NULL)), free it, return res. */
obc_result_t obc__comm_fail(struct obc_comm *comm, obc_result_t res);

#endif
