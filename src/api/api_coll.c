/* SPDX-License-Identifier: MIT */
/*
 * api_coll.c - the public collective calls: check every argument before any
 * communication (a bad call fails identically on the calling rank and
 * leaves the communicator usable), describe the call as an op, and hand it
 * to the engine: inline when blocking, queued when async, collected when
 * inside a group.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "engine/engine.h"

obc_result_t obc__api_check_comm(const char *fn, obc_comm_t *comm)
{
    if (comm == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "%s: comm is NULL", fn);
    }
    return OBC_SUCCESS;
}

bool obc__api_overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return an > 0 && bn > 0 && x < y + bn && y < x + an;
}

obc_result_t obc__api_check_bcast(const char *fn, const void *sendbuf, void *recvbuf, size_t count,
                                  obc_dtype_t dtype, int root, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm(fn, comm));
    size_t esize = obc_dtype_size(dtype);
    struct obc__err *err = &comm->err;
    if (esize == 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: invalid dtype %d", fn, (int)dtype);
    }
    if (root < 0 || root >= comm->nranks) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: root %d is not a rank (0..%d)", fn, root,
                            comm->nranks - 1);
    }
    if (count > SIZE_MAX / esize) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: count %zu overflows the byte size", fn,
                            count);
    }
    if (count > 0 && recvbuf == NULL) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "%s: recvbuf is NULL with count %zu on rank %d", fn, count, comm->rank);
    }
    if (count > 0 && comm->rank == root && sendbuf == NULL) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "%s: sendbuf is NULL on the root (rank %d) with count %zu", fn, root,
                            count);
    }
    if (comm->rank == root && sendbuf != recvbuf &&
        obc__api_overlap(sendbuf, count * esize, recvbuf, count * esize)) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "%s: sendbuf and recvbuf overlap without being equal", fn);
    }
    return OBC_SUCCESS;
}

/* Blocking calls: inline (or behind queued ops), or collected by a group. */
obc_result_t obc__api_run_blocking(obc_comm_t *comm, struct obc__op *op)
{
    if (obc__group_active()) {
        struct obc__op *h = obc__op_new();
        if (h == NULL) {
            return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "group entry");
        }
        h->args = op->args;
        h->seg = op->seg;
        h->args.segs = &h->seg;
        obc_result_t res = obc__group_add(comm->engine, h, NULL, comm->config.group_bucket_bytes);
        if (res != OBC_SUCCESS) {
            obc__op_unref(h);
        }
        return res;
    }
    return obc__engine_run_blocking(comm->engine, op);
}

OBC_API obc_result_t obc_broadcast(const void *sendbuf, void *recvbuf, size_t count,
                                   obc_dtype_t dtype, int root, obc_comm_t *comm)
{
    struct obc__op op;
    OBC_CHECK(obc__api_check_bcast("obc_broadcast", sendbuf, recvbuf, count, dtype, root, comm));
    obc__op_clear(&op);
    obc__op_set_bcast(&op, comm->rank == root ? sendbuf : recvbuf, recvbuf, count, dtype, root);
    return obc__api_run_blocking(comm, &op);
}

OBC_API obc_result_t obc_bcast(void *buf, size_t count, obc_dtype_t dtype, int root,
                               obc_comm_t *comm)
{
    struct obc__op op;
    OBC_CHECK(obc__api_check_bcast("obc_bcast", buf, buf, count, dtype, root, comm));
    obc__op_clear(&op);
    obc__op_set_bcast(&op, buf, buf, count, dtype, root);
    return obc__api_run_blocking(comm, &op);
}

OBC_API obc_result_t obc_barrier(obc_comm_t *comm)
{
    struct obc__op op;
    OBC_CHECK(obc__api_check_comm("obc_barrier", comm));
    obc__op_clear(&op);
    obc__op_set_barrier(&op);
    return obc__api_run_blocking(comm, &op);
}
