/* SPDX-License-Identifier: MIT */
/* setup_impl.h - what the setup/ files share (private to the folder). */
#ifndef OBC_SETUP_IMPL_H
#define OBC_SETUP_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap/bootstrap.h"
#include "core/comm.h"

#define OBC_SETUP_HOST_ID_BYTES 96

/* Bootstrap round 1, from every rank: its host identity and pid. */
struct obc__setup_hello {
    char host_id[OBC_SETUP_HOST_ID_BYTES];
    int32_t pid;
};

/* This rank's host identity: OBC_HOST_ID's (testing), or the machine's. */
obc_result_t obc__host_layout_identity(const struct obc__config *cfg, int rank, char *out,
                                       struct obc__err *err);
/* Work out l from round 1 (hello[nranks]) and OBC_HOST_SPLIT (host_split,
 * 0 = off). On failure l holds nothing to free. */
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
