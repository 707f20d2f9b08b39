/* SPDX-License-Identifier: MIT */
/*
 * api_reduce.c - the public reductions and gathers: obc_allreduce,
 * obc_reduce, obc_allgather, obc_reduce_scatter and their obc_i* forms.
 * One function checks the arguments of all four (before any communication,
 * so a bad call fails on the calling rank alone and leaves the
 * communicator usable) and describes the call as an op; the blocking and
 * non-blocking entry points only differ in how they launch it.
 */
#include <stdint.h>
#include <string.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "core/reduce.h"
#include "engine/engine.h"

struct call {
    const char *fn;
    obc_coll_t coll;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    obc_dtype_t dtype;
    obc_redop_t redop;
    int root;
};

/* The in-place layouts the API accepts (NCCL's): the same buffer, or for
 * allgather / reduce_scatter the rank's own block of the big buffer. */
static bool in_place(const struct call *c, int rank, size_t block)
{
    const unsigned char *s = c->sendbuf, *r = c->recvbuf;
    switch (c->coll) {
    case OBC_COLL_ALLGATHER:
        return r != NULL && s == r + (size_t)rank * block;
    case OBC_COLL_REDUCE_SCATTER:
        return s != NULL && r == s + (size_t)rank * block;
    default:
        return s == r;
    }
}

static obc_result_t check(const struct call *c, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm(c->fn, comm));
    struct obc__err *err = &comm->err;
    size_t esize = obc_dtype_size(c->dtype);
    bool gathers = c->coll == OBC_COLL_ALLGATHER || c->coll == OBC_COLL_REDUCE_SCATTER;
    size_t n = (size_t)comm->nranks;
    if (esize == 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: invalid dtype %d", c->fn, (int)c->dtype);
    }
    if (c->coll != OBC_COLL_ALLGATHER && !obc__redop_valid(c->redop)) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: invalid op %d", c->fn, (int)c->redop);
    }
    if (c->coll == OBC_COLL_REDUCE && (c->root < 0 || c->root >= comm->nranks)) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: root %d is not a rank (0..%d)", c->fn,
                            c->root, comm->nranks - 1);
    }
    if (c->count > SIZE_MAX / esize / (gathers ? n : 1)) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: count %zu overflows the byte size",
                            c->fn, c->count);
    }
    size_t block = c->count * esize;
    size_t send_bytes = c->coll == OBC_COLL_REDUCE_SCATTER ? block * n : block;
    size_t recv_bytes = c->coll == OBC_COLL_ALLGATHER ? block * n : block;
    bool wants_recv = c->coll != OBC_COLL_REDUCE || comm->rank == c->root;
    if (c->count > 0 && c->sendbuf == NULL) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "%s: sendbuf is NULL with count %zu on rank %d", c->fn, c->count,
                            comm->rank);
    }
    if (c->count > 0 && wants_recv && c->recvbuf == NULL) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "%s: recvbuf is NULL with count %zu on rank %d", c->fn, c->count,
                            comm->rank);
    }
    if (wants_recv && !in_place(c, comm->rank, block) &&
        obc__api_overlap(c->sendbuf, send_bytes, c->recvbuf, recv_bytes)) {
        return obc__err_set(
            err, OBC_ERR_INVALID_ARG, "%s: sendbuf and recvbuf overlap without being in place%s",
            c->fn, gathers ? " (in place is this rank's own block of the large buffer)" : "");
    }
    return OBC_SUCCESS;
}

static void describe(const struct call *c, obc_comm_t *comm, struct obc__op *op)
{
    void *recv = c->coll == OBC_COLL_REDUCE && comm->rank != c->root ? NULL : c->recvbuf;
    obc__op_set_coll(op, c->coll, c->sendbuf, recv, c->count, c->dtype, c->redop, c->root);
}

static obc_result_t blocking(const struct call *c, obc_comm_t *comm)
{
    struct obc__op op;
    OBC_CHECK(check(c, comm));
    obc__op_clear(&op);
    describe(c, comm, &op);
    return obc__api_run_blocking(comm, &op);
}

static obc_result_t nonblocking(const struct call *c, obc_comm_t *comm, obc_request_t **req)
{
    OBC_CHECK(check(c, comm));
    OBC_CHECK(obc__api_check_req_out(c->fn, comm, req));
    struct obc__op *op = obc__op_new();
    if (op == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "operation");
    }
    describe(c, comm, op);
    return obc__api_start_async(comm, op, req);
}

OBC_API obc_result_t obc_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                   obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm)
{
    struct call c = {"obc_allreduce", OBC_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0};
    return blocking(&c, comm);
}

OBC_API obc_result_t obc_reduce(const void *sendbuf, void *recvbuf, size_t count, obc_dtype_t dtype,
                                obc_redop_t op, int root, obc_comm_t *comm)
{
    struct call c = {"obc_reduce", OBC_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root};
    return blocking(&c, comm);
}

OBC_API obc_result_t obc_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                   obc_dtype_t dtype, obc_comm_t *comm)
{
    struct call c = {
        "obc_allgather", OBC_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, OBC_SUM, 0};
    return blocking(&c, comm);
}

OBC_API obc_result_t obc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                        obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm)
{
    struct call c = {
        "obc_reduce_scatter", OBC_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, op, 0};
    return blocking(&c, comm);
}

OBC_API obc_result_t obc_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                    obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm,
                                    obc_request_t **req)
{
    struct call c = {"obc_iallreduce", OBC_COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0};
    return nonblocking(&c, comm, req);
}

OBC_API obc_result_t obc_ireduce(const void *sendbuf, void *recvbuf, size_t count,
                                 obc_dtype_t dtype, obc_redop_t op, int root, obc_comm_t *comm,
                                 obc_request_t **req)
{
    struct call c = {"obc_ireduce", OBC_COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root};
    return nonblocking(&c, comm, req);
}

OBC_API obc_result_t obc_iallgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                    obc_dtype_t dtype, obc_comm_t *comm, obc_request_t **req)
{
    struct call c = {
        "obc_iallgather", OBC_COLL_ALLGATHER, sendbuf, recvbuf, sendcount, dtype, OBC_SUM, 0};
    return nonblocking(&c, comm, req);
}

OBC_API obc_result_t obc_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                         obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm,
                                         obc_request_t **req)
{
    struct call c = {
        "obc_ireduce_scatter", OBC_COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, dtype, op, 0};
    return nonblocking(&c, comm, req);
}
