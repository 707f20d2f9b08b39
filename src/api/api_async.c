/* SPDX-License-Identifier: MIT */
/*
 * api_async.c - non-blocking calls and their requests, synchronize, and
 * groups. A request owns one reference to its op; obc_wait and a finished
 * obc_test free the request and drop the reference.
 */
#include <stdlib.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "engine/engine.h"

obc_result_t obc__api_start_async(obc_comm_t *comm, struct obc__op *op, obc_request_t **req)
{
    obc_result_t res;
    struct obc_request *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        obc__op_unref(op);
        return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "request");
    }
    r->engine = comm->engine;
    if (obc__group_active()) {
        /* The op's first reference goes to the group; the request gets one
         * to the (possibly fused) op when the group launches. */
        res = obc__group_add(comm->engine, op, &r->op, comm->config.group_bucket_bytes);
    } else {
        res = obc__engine_submit(comm->engine, op);
        r->op = op; /* the op's first reference is the request's */
    }
    if (res != OBC_SUCCESS) {
        obc__op_unref(op); /* ours: neither the group nor the request keeps it */
        free(r);
        return res;
    }
    *req = r;
    return OBC_SUCCESS;
}

obc_result_t obc__api_check_req_out(const char *fn, obc_comm_t *comm, obc_request_t **req)
{
    if (req == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG, "%s: req is NULL", fn);
    }
    *req = NULL;
    return OBC_SUCCESS;
}

OBC_API obc_result_t obc_ibroadcast(const void *sendbuf, void *recvbuf, size_t count,
                                    obc_dtype_t dtype, int root, obc_comm_t *comm,
                                    obc_request_t **req)
{
    OBC_CHECK(obc__api_check_bcast("obc_ibroadcast", sendbuf, recvbuf, count, dtype, root, comm));
    OBC_CHECK(obc__api_check_req_out("obc_ibroadcast", comm, req));
    struct obc__op *op = obc__op_new();
    if (op == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "operation");
    }
    obc__op_set_bcast(op, comm->rank == root ? sendbuf : recvbuf, recvbuf, count, dtype, root);
    return obc__api_start_async(comm, op, req);
}

OBC_API obc_result_t obc_ibarrier(obc_comm_t *comm, obc_request_t **req)
{
    OBC_CHECK(obc__api_check_comm("obc_ibarrier", comm));
    OBC_CHECK(obc__api_check_req_out("obc_ibarrier", comm, req));
    struct obc__op *op = obc__op_new();
    if (op == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "operation");
    }
    obc__op_set_barrier(op);
    return obc__api_start_async(comm, op, req);
}

OBC_API obc_result_t obc_wait(obc_request_t *req)
{
    if (req == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "obc_wait: req is NULL");
    }
    if (req->op == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG,
                            "obc_wait: the request's group has not ended (call obc_group_end)");
    }
    obc_result_t res = obc__engine_wait_op(req->engine, req->op);
    obc__op_unref(req->op);
    free(req);
    return res;
}

OBC_API obc_result_t obc_test(obc_request_t *req, int *done)
{
    if (req == NULL || done == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "obc_test: %s is NULL",
                            req == NULL ? "req" : "done");
    }
    if (req->op == NULL || !obc__op_is_done(req->op)) {
        *done = 0;
        return OBC_IN_PROGRESS;
    }
    *done = 1;
    return obc_wait(req);
}

OBC_API obc_result_t obc_comm_synchronize(obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm("obc_comm_synchronize", comm));
    return obc__engine_synchronize(comm->engine);
}

OBC_API obc_result_t obc_group_start(void)
{
    return obc__group_start();
}

OBC_API obc_result_t obc_group_end(void)
{
    obc_result_t res = obc__group_end();
    if (res == OBC_ERR_INVALID_ARG && !obc__group_active()) {
        return obc__err_set(NULL, res, "obc_group_end without obc_group_start");
    }
    return res;
}
