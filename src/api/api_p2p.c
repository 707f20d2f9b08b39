/* SPDX-License-Identifier: MIT */
/*
 * api_p2p.c - obc_send, obc_recv, obc_isend, obc_irecv, and the receives
 * from any source (obc_recv_any, obc_irecv_any), and their tagged forms
 * (obc_send_tag, obc_recv_tag, obc_isend_tag, obc_irecv_tag): check every
 * argument (a bad call fails on the calling rank alone and leaves the
 * communicator usable), describe the call as a point-to-point op, and hand
 * it to the engine as the collectives do. The engine's batch step
 * (engine/p2p_batch.c) moves it; docs/p2p.md is the contract.
 */
#include <stdint.h>
#include <string.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "engine/engine.h"

/* The untagged calls' tag: an untagged send meets a receive of tag 0. */
#define UNTAGGED 0

static obc_result_t check_p2p(enum obc__p2p_kind kind, const char *fn, const void *buf,
                              size_t count, obc_dtype_t dtype, int peer, int tag, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm(fn, comm));
    size_t esize = obc_dtype_size(dtype);
    struct obc__err *err = &comm->err;
    if (esize == 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: invalid dtype %d", fn, (int)dtype);
    }
    if ((peer < 0 || peer >= comm->nranks) && !(kind == OBC__P2P_RECV && peer == OBC_ANY_SOURCE)) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: peer %d is not a rank (0..%d)", fn, peer,
                            comm->nranks - 1);
    }
    if (tag < 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: tag %d is negative", fn, tag);
    }
    if (count > SIZE_MAX / esize) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: count %zu overflows the byte size", fn,
                            count);
    }
    if (count > 0 && buf == NULL) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: buf is NULL with count %zu on rank %d",
                            fn, count, comm->rank);
    }
    return OBC_SUCCESS;
}

/* coll is never read for a p2p op; BARRIER keeps group.c from fusing it. */
static obc_result_t check_source_out(const char *fn, const int *source, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm(fn, comm));
    if (source == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG,
                            "%s: source is NULL (it receives the sender's rank)", fn);
    }
    return OBC_SUCCESS;
}

/* coll is never read for a p2p op; BARRIER keeps group.c from fusing it. */
static void set_p2p(struct obc__op *op, enum obc__p2p_kind kind, const void *buf, size_t count,
                    obc_dtype_t dtype, int peer, int tag, int *source)
{
    obc__op_set_coll(op, OBC_COLL_BARRIER, buf, (void *)(uintptr_t)buf, count, dtype, OBC_SUM,
                     peer);
    op->args.p2p = (uint8_t)kind;
    op->args.source = source;
    op->args.tag = tag;
    if (source != NULL && peer != OBC_ANY_SOURCE) {
        *source = peer; /* a named receive's sender is known now */
    }
}

static obc_result_t run(enum obc__p2p_kind kind, const char *fn, const void *buf, size_t count,
                        obc_dtype_t dtype, int peer, int tag, int *source, obc_comm_t *comm)
{
    struct obc__op op;
    OBC_CHECK(check_p2p(kind, fn, buf, count, dtype, peer, tag, comm));
    obc__op_clear(&op);
    set_p2p(&op, kind, buf, count, dtype, peer, tag, source);
    return obc__api_run_blocking(comm, &op);
}

static obc_result_t start(enum obc__p2p_kind kind, const char *fn, const void *buf, size_t count,
                          obc_dtype_t dtype, int peer, int tag, int *source, obc_comm_t *comm,
                          obc_request_t **req)
{
    OBC_CHECK(check_p2p(kind, fn, buf, count, dtype, peer, tag, comm));
    OBC_CHECK(obc__api_check_req_out(fn, comm, req));
    struct obc__op *op = obc__op_new();
    if (op == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "operation");
    }
    set_p2p(op, kind, buf, count, dtype, peer, tag, source);
    return obc__api_start_async(comm, op, req);
}

OBC_API obc_result_t obc_send(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                              obc_comm_t *comm)
{
    return run(OBC__P2P_SEND, "obc_send", buf, count, dtype, peer, UNTAGGED, NULL, comm);
}

OBC_API obc_result_t obc_recv(void *buf, size_t count, obc_dtype_t dtype, int peer,
                              obc_comm_t *comm)
{
    return run(OBC__P2P_RECV, "obc_recv", buf, count, dtype, peer, UNTAGGED, NULL, comm);
}

OBC_API obc_result_t obc_isend(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                               obc_comm_t *comm, obc_request_t **req)
{
    return start(OBC__P2P_SEND, "obc_isend", buf, count, dtype, peer, UNTAGGED, NULL, comm, req);
}

OBC_API obc_result_t obc_irecv(void *buf, size_t count, obc_dtype_t dtype, int peer,
                               obc_comm_t *comm, obc_request_t **req)
{
    return start(OBC__P2P_RECV, "obc_irecv", buf, count, dtype, peer, UNTAGGED, NULL, comm, req);
}

OBC_API obc_result_t obc_recv_any(void *buf, size_t count, obc_dtype_t dtype, int *source,
                                  obc_comm_t *comm)
{
    OBC_CHECK(check_source_out("obc_recv_any", source, comm));
    return run(OBC__P2P_RECV, "obc_recv_any", buf, count, dtype, OBC_ANY_SOURCE, UNTAGGED, source,
               comm);
}

OBC_API obc_result_t obc_irecv_any(void *buf, size_t count, obc_dtype_t dtype, int *source,
                                   obc_comm_t *comm, obc_request_t **req)
{
    OBC_CHECK(check_source_out("obc_irecv_any", source, comm));
    return start(OBC__P2P_RECV, "obc_irecv_any", buf, count, dtype, OBC_ANY_SOURCE, UNTAGGED,
                 source, comm, req);
}

OBC_API obc_result_t obc_send_tag(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                                  int tag, obc_comm_t *comm)
{
    return run(OBC__P2P_SEND, "obc_send_tag", buf, count, dtype, peer, tag, NULL, comm);
}

OBC_API obc_result_t obc_recv_tag(void *buf, size_t count, obc_dtype_t dtype, int peer, int tag,
                                  int *source, obc_comm_t *comm)
{
    return run(OBC__P2P_RECV, "obc_recv_tag", buf, count, dtype, peer, tag, source, comm);
}

OBC_API obc_result_t obc_isend_tag(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                                   int tag, obc_comm_t *comm, obc_request_t **req)
{
    return start(OBC__P2P_SEND, "obc_isend_tag", buf, count, dtype, peer, tag, NULL, comm, req);
}

OBC_API obc_result_t obc_irecv_tag(void *buf, size_t count, obc_dtype_t dtype, int peer, int tag,
                                   int *source, obc_comm_t *comm, obc_request_t **req)
{
    return start(OBC__P2P_RECV, "obc_irecv_tag", buf, count, dtype, peer, tag, source, comm, req);
}
