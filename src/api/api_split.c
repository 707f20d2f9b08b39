/* SPDX-License-Identifier: MIT */
/*
 * api_split.c - obc_comm_split and obc_comm_dup: check the arguments on the
 * calling rank (a bad call fails here, before any communication), then
 * setup/comm_split.c makes the child.
 */
#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "engine/engine.h"
#include "setup/setup.h"

static obc_result_t split(const char *fn, obc_comm_t *comm, int color, int key,
                          obc_comm_t **newcomm)
{
    OBC_CHECK(obc__api_check_comm(fn, comm));
    if (newcomm == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG, "%s: newcomm is NULL", fn);
    }
    *newcomm = NULL;
    if (color < 0 && color != OBC_UNDEFINED) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG,
                            "%s: color %d is negative (and not OBC_UNDEFINED)", fn, color);
    }
    /* Its answer (the new communicator) is needed at once, so it cannot be
     * deferred to the group's end. */
    if (obc__group_active()) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG,
                            "%s: not allowed between obc_group_start and obc_group_end", fn);
    }
    return obc__setup_comm_split(comm, color, key, newcomm);
}

OBC_API obc_result_t obc_comm_split(obc_comm_t *comm, int color, int key, obc_comm_t **newcomm)
{
    return split("obc_comm_split", comm, color, key, newcomm);
}

OBC_API obc_result_t obc_comm_dup(obc_comm_t *comm, obc_comm_t **newcomm)
{
    return split("obc_comm_dup", comm, 0, comm != NULL ? comm->rank : 0, newcomm);
}
