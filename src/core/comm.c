/* SPDX-License-Identifier: MIT */
/*
 * comm.c - the ground floor of a communicator: its rank, configuration
 * snapshot and error buffer. The assembly on top (bootstrap, host layout,
 * transports, engine) is setup/comm_setup.c's; core calls up into nothing.
 */
#include "core/comm.h"

#include <stdlib.h>

#include "core/log.h"

obc_result_t obc__comm_alloc(const struct obc__config *cfg, int rank, int nranks,
                             struct obc_comm **out)
{
    struct obc_comm *c = calloc(1, sizeof(*c));
    *out = NULL;
    if (c == NULL) {
        return obc__err_set(NULL, OBC_ERR_NO_MEMORY, "communicator");
    }
    c->rank = rank;
    c->nranks = nranks;
    c->config = *cfg;
    obc__err_init(&c->err);
    obc__mem_list_init(&c->mem);
    obc__log_set_rank(rank);
    *out = c;
    return OBC_SUCCESS;
}

void obc__comm_release(struct obc_comm *comm)
{
    if (comm == NULL) {
        return;
    }
    obc__mem_list_fini(&comm->mem);
    for (int i = 0; i < OBC_COMM_CAST_MAX_DEPTH; i++) {
        free(comm->cast_stage[i]);
    }
    obc__err_fini(&comm->err);
    free(comm);
}
