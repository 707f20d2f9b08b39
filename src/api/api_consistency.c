/* SPDX-License-Identifier: MIT */
/*
 * api_consistency.c - obc_check_consistency: do all ranks hold the root's
 * bytes? Each rank hashes its buffer (XXH3-64) and the 8-byte hashes are
 * allgathered, so every rank learns the same answer for the cost of one
 * pass over its buffer and one tiny collective. Tests use it to prove that
 * results are bitwise identical across ranks; the safety checks build on
 * it.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "core/hash.h"
#include "engine/engine.h"

OBC_API obc_result_t obc_check_consistency(const void *buf, size_t bytes, int root, int *ndiff,
                                           int *first_diff_rank, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm("obc_check_consistency", comm));
    struct obc__err *err = &comm->err;
    if (root < 0 || root >= comm->nranks) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "obc_check_consistency: root %d is not a rank (0..%d)", root,
                            comm->nranks - 1);
    }
    if (buf == NULL && bytes > 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "obc_check_consistency: buf is NULL with %zu bytes", bytes);
    }
    if (obc__group_active()) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "obc_check_consistency: not allowed between obc_group_start and "
                            "obc_group_end (its answer is needed at once)");
    }
    uint64_t mine = obc__hash64(buf, bytes);
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)comm->nranks);
    if (all == NULL) {
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "obc_check_consistency: hash table");
    }
    struct obc__op op;
    obc__op_clear(&op);
    obc__op_set_coll(&op, OBC_COLL_ALLGATHER, &mine, all, 1, OBC_UINT64, OBC_SUM, 0);
    obc_result_t res = obc__api_run_blocking(comm, &op);
    if (res == OBC_SUCCESS) {
        int count = 0, first = -1;
        for (int r = 0; r < comm->nranks; r++) {
            if (all[r] != all[root]) {
                first = first < 0 ? r : first;
                count++;
            }
        }
        if (ndiff != NULL) {
            *ndiff = count;
        }
        if (first_diff_rank != NULL) {
            *first_diff_rank = first;
        }
    }
    free(all);
    return res;
}

OBC_API uint64_t obc_hash64(const void *buf, size_t bytes)
{
    return obc__hash64(bytes > 0 ? buf : NULL, bytes);
}
