/* SPDX-License-Identifier: MIT */
/* setup_impl.h - what the setup/ files share (private to the folder). */
#ifndef OBC_SETUP_IMPL_H
#define OBC_SETUP_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"

#define OBC_SETUP_HOST_ID_BYTES OBC_COMM_HOST_ID_BYTES

/* Bootstrap round 1, from every rank: its host identity, pid and, for a
 * child of obc_comm_split, the host its parent puts it on. */
struct obc__setup_hello {
    char host_id[OBC_SETUP_HOST_ID_BYTES];
    int32_t pid;
    int32_t parent_host; /* 1 + the host's index in the parent; 0: no parent */
    int32_t ncpus; /* CPUs in this rank's affinity mask */
    int32_t bound_cpu; /* the one CPU when ncpus is 1, else -1 */
};

/* Where a rank of a child communicator runs, as its parent knows it: the
 * child does not work out its hosts again from its own ranks (OBC_HOST_ID
 * and OBC_HOST_SPLIT speak of the parent's ranks). */
struct obc__setup_origin {
    const char *host_id; /* the parent's round-1 identity of this rank */
    int host_hint; /* this rank's host index in the parent */
};

/* obc__setup_comm_create, with the rounds carried by carrier instead of the
 * rendezvous at ep when carrier is not NULL, and for a rank whose place is
 * origin's (NULL: work it out from cfg, as for a communicator made from the
 * environment). */
obc_result_t obc__setup_comm_create_at(const struct obc__config *cfg,
                                       const struct obc__boot_endpoint *ep,
                                       const struct obc__boot_carrier *carrier, int rank,
                                       int nranks, const struct obc__setup_origin *origin,
                                       struct obc_comm **out);

/* This rank's host identity: OBC_HOST_ID's (testing), or the machine's. */
obc_result_t obc__host_layout_identity(const struct obc__config *cfg, int rank, char *out,
                                       struct obc__err *err);
/* Work out l from round 1 (hello[nranks]) and OBC_HOST_SPLIT (host_split,
 * 0 = off); when every rank has a parent_host (a child), the hints are the
 * hosts and host_split is not used. On failure l holds nothing to free. */
obc_result_t obc__host_layout_build(struct obc__host_layout *l,
                                    const struct obc__setup_hello *hello, int rank, int nranks,
                                    int host_split, struct obc__err *err);
void obc__host_layout_fini(struct obc__host_layout *l);

/* Rounds 2-4: the host arena (create or attach, then unlink) and whether
 * its ranks may read each other's memory. Sets c->arena. */
obc_result_t obc__setup_arena(struct obc_comm *c, struct obc__boot *boot,
                              const struct obc__setup_hello *hello);
/* A channel's usable slot bytes on a machine of local_nranks ranks. */
size_t obc__setup_chan_slot_bytes(const struct obc__config *cfg, int local_nranks);

/* Round 5 (several machines: every rank's TCP address), then connect every
 * pair of ranks. Sets c->p2p. */
obc_result_t obc__setup_p2p(struct obc_comm *c, struct obc__boot *boot);

#endif
