/* SPDX-License-Identifier: MIT */
/*
 * api_mem.c - obc_mem_alloc / obc_mem_free: shared buffers that the ranks
 * of a host can map (core/mem.c keeps the communicator's list). Local
 * calls: no communication, safe from any thread.
 */
#include <stddef.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "core/mem.h"

OBC_API obc_result_t obc_mem_alloc(void **ptr, size_t bytes, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm("obc_mem_alloc", comm));
    if (ptr == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG, "obc_mem_alloc: ptr is NULL");
    }
    *ptr = NULL;
    if (bytes == 0) {
        return OBC_SUCCESS; /* documented: NULL, which obc_mem_free accepts */
    }
    return obc__mem_list_alloc(&comm->mem, bytes, ptr, &comm->err);
}

OBC_API obc_result_t obc_mem_free(void *ptr, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm("obc_mem_free", comm));
    if (ptr == NULL) {
        return OBC_SUCCESS;
    }
    return obc__mem_list_free(&comm->mem, ptr, &comm->err);
}
