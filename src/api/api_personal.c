/* SPDX-License-Identifier: MIT */
/*
 * api_personal.c - the public personalised collectives: obc_gather,
 * obc_scatter, obc_alltoall, obc_alltoallv, obc_allgatherv and their obc_i*
 * forms. Each checks every argument before any communication (a bad call
 * fails on the calling rank alone and leaves the communicator usable) and
 * describes the call as an op. The v-forms' counts and displacements are
 * copied into the op (at most 4 * nranks words), so neither an async call
 * nor a blocking one collected by a group depends on the caller's arrays
 * after it returns.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/api_impl.h"
#include "core/comm.h"
#include "engine/engine.h"

struct call {
    const char *fn;
    obc_coll_t coll;
    const void *sendbuf;
    void *recvbuf;
    size_t count; /* gather/scatter/alltoall: per rank; allgatherv: sendcount */
    obc_dtype_t dtype;
    int root;
    /* v-forms: alltoallv sendcounts, sdispls, recvcounts, rdispls;
     * allgatherv recvcounts, displs */
    const size_t *v[4];
    size_t nv;
};

static obc_result_t bad(obc_comm_t *comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static obc_result_t bad(obc_comm_t *comm, const char *fmt, ...)
{
    char msg[OBC_ERR_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return obc__err_set(&comm->err, OBC_ERR_INVALID_ARG, "%s", msg);
}

/* Elements spanned by blocks counts[i] at displs[i] (the largest end), and
 * their sum; false when either overflows a byte size. */
static bool extent(const size_t *counts, const size_t *displs, size_t n, size_t esize, size_t *span,
                   size_t *sum)
{
    size_t limit = SIZE_MAX / esize;
    *span = 0;
    *sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (counts[i] > limit || displs[i] > limit - counts[i] || *sum > limit - counts[i]) {
            return false;
        }
        *sum += counts[i];
        if (counts[i] > 0 && displs[i] + counts[i] > *span) {
            *span = displs[i] + counts[i];
        }
    }
    return true;
}

static obc_result_t need_buf(obc_comm_t *comm, const char *fn, const char *which, const void *buf,
                             size_t count)
{
    if (count > 0 && buf == NULL) {
        return bad(comm, "%s: %s is NULL with %zu elements on rank %d", fn, which, count,
                   comm->rank);
    }
    return OBC_SUCCESS;
}

static obc_result_t no_overlap(obc_comm_t *comm, const char *fn, const void *s, size_t sn,
                               const void *r, size_t rn, const char *rule)
{
    if (obc__api_overlap(s, sn, r, rn)) {
        return bad(comm, "%s: sendbuf and recvbuf overlap without being in place (%s)", fn, rule);
    }
    return OBC_SUCCESS;
}

/* gather and scatter: the root's big buffer is nranks blocks. */
static obc_result_t check_rooted(const struct call *c, obc_comm_t *comm, size_t esize)
{
    size_t n = (size_t)comm->nranks, blk = c->count * esize;
    bool gather = c->coll == OBC_COLL_GATHER, root = comm->rank == c->root;
    if (c->root < 0 || c->root >= comm->nranks) {
        return bad(comm, "%s: root %d is not a rank (0..%d)", c->fn, c->root, comm->nranks - 1);
    }
    if (c->count > SIZE_MAX / esize / n) {
        return bad(comm, "%s: count %zu overflows the byte size", c->fn, c->count);
    }
    const void *big = gather ? c->recvbuf : c->sendbuf;
    const void *small = gather ? c->sendbuf : c->recvbuf;
    if (!root) {
        return need_buf(comm, c->fn, gather ? "sendbuf" : "recvbuf", small, c->count);
    }
    OBC_CHECK(need_buf(comm, c->fn, gather ? "recvbuf" : "sendbuf", big, c->count));
    /* In place on the root: the same pointer, or the root's own block. */
    if (small == big || (big != NULL && small == (const unsigned char *)big + c->root * blk)) {
        return OBC_SUCCESS;
    }
    OBC_CHECK(need_buf(comm, c->fn, gather ? "sendbuf" : "recvbuf", small, c->count));
    return no_overlap(comm, c->fn, small, blk, big, blk * n,
                      "in place is the same pointer, or the root's block of the large buffer");
}

static obc_result_t check_alltoall(const struct call *c, obc_comm_t *comm, size_t esize)
{
    size_t n = (size_t)comm->nranks;
    if (c->count > SIZE_MAX / esize / n) {
        return bad(comm, "%s: count %zu overflows the byte size", c->fn, c->count);
    }
    OBC_CHECK(need_buf(comm, c->fn, "sendbuf", c->sendbuf, c->count));
    OBC_CHECK(need_buf(comm, c->fn, "recvbuf", c->recvbuf, c->count));
    if (c->sendbuf == c->recvbuf) {
        return OBC_SUCCESS;
    }
    size_t bytes = c->count * esize * n;
    return no_overlap(comm, c->fn, c->sendbuf, bytes, c->recvbuf, bytes,
                      "in place is sendbuf == recvbuf");
}

static obc_result_t check_arrays(const struct call *c, obc_comm_t *comm)
{
    static const char *const names[2][4] = {
        {"sendcounts", "sdispls", "recvcounts", "rdispls"},
        {"recvcounts", "displs", "", ""},
    };
    for (size_t i = 0; i < c->nv; i++) {
        if (c->v[i] == NULL) {
            return bad(comm, "%s: %s is NULL", c->fn, names[c->coll == OBC_COLL_ALLGATHERV][i]);
        }
    }
    return OBC_SUCCESS;
}

static obc_result_t check_alltoallv(const struct call *c, obc_comm_t *comm, size_t esize)
{
    size_t n = (size_t)comm->nranks, me = (size_t)comm->rank, sspan, ssum, rspan, rsum;
    OBC_CHECK(check_arrays(c, comm));
    if (!extent(c->v[0], c->v[1], n, esize, &sspan, &ssum) ||
        !extent(c->v[2], c->v[3], n, esize, &rspan, &rsum)) {
        return bad(comm, "%s: counts and displacements overflow the byte size", c->fn);
    }
    if (c->v[0][me] != c->v[2][me]) {
        return bad(comm, "%s: rank %d sends %zu elements to itself but expects %zu", c->fn,
                   comm->rank, c->v[0][me], c->v[2][me]);
    }
    OBC_CHECK(need_buf(comm, c->fn, "sendbuf", c->sendbuf, sspan));
    OBC_CHECK(need_buf(comm, c->fn, "recvbuf", c->recvbuf, rspan));
    if (c->sendbuf == c->recvbuf && sspan + rspan > 0) {
        return bad(comm, "%s: sendbuf == recvbuf: alltoallv does not work in place", c->fn);
    }
    return no_overlap(comm, c->fn, c->sendbuf, sspan * esize, c->recvbuf, rspan * esize,
                      "alltoallv has no in-place form");
}

static obc_result_t check_allgatherv(const struct call *c, obc_comm_t *comm, size_t esize)
{
    size_t n = (size_t)comm->nranks, me = (size_t)comm->rank, span, sum;
    OBC_CHECK(check_arrays(c, comm));
    if (!extent(c->v[0], c->v[1], n, esize, &span, &sum)) {
        return bad(comm, "%s: recvcounts and displs overflow the byte size", c->fn);
    }
    OBC_CHECK(need_buf(comm, c->fn, "recvbuf", c->recvbuf, span));
    const unsigned char *own = (const unsigned char *)c->recvbuf + c->v[1][me] * esize;
    if (c->sendbuf == c->recvbuf || (c->recvbuf != NULL && c->sendbuf == own)) {
        return OBC_SUCCESS; /* in place: this rank's block is at recvbuf + displs[rank] */
    }
    if (c->count != c->v[0][me]) {
        return bad(comm, "%s: rank %d sends %zu elements but recvcounts[%d] is %zu", c->fn,
                   comm->rank, c->count, comm->rank, c->v[0][me]);
    }
    OBC_CHECK(need_buf(comm, c->fn, "sendbuf", c->sendbuf, c->count));
    return no_overlap(comm, c->fn, c->sendbuf, c->count * esize, c->recvbuf, span * esize,
                      "in place is sendbuf == recvbuf, this rank's block at displs[rank]");
}

static obc_result_t check(const struct call *c, obc_comm_t *comm)
{
    OBC_CHECK(obc__api_check_comm(c->fn, comm));
    size_t esize = obc_dtype_size(c->dtype);
    if (esize == 0) {
        return bad(comm, "%s: invalid dtype %d", c->fn, (int)c->dtype);
    }
    switch (c->coll) {
    case OBC_COLL_GATHER:
    case OBC_COLL_SCATTER:
        return check_rooted(c, comm, esize);
    case OBC_COLL_ALLTOALL:
        return check_alltoall(c, comm, esize);
    case OBC_COLL_ALLTOALLV:
        return check_alltoallv(c, comm, esize);
    default:
        return check_allgatherv(c, comm, esize);
    }
}

/* The op's count: the per-rank block, this rank's total sent (alltoallv),
 * or the whole gathered vector (allgatherv: the same on every rank). */
static size_t op_count(const struct call *c, size_t n)
{
    size_t total = 0;
    if (c->coll == OBC_COLL_ALLTOALLV || c->coll == OBC_COLL_ALLGATHERV) {
        for (size_t i = 0; i < n; i++) {
            total += c->v[0][i];
        }
        return total;
    }
    return c->count;
}

static obc_result_t describe(const struct call *c, obc_comm_t *comm, struct obc__op *op)
{
    bool root = comm->rank == c->root;
    const void *send = c->coll == OBC_COLL_SCATTER && !root ? NULL : c->sendbuf;
    void *recv = c->coll == OBC_COLL_GATHER && !root ? NULL : c->recvbuf;
    obc__op_set_personal(op, c->coll, send, recv, op_count(c, (size_t)comm->nranks), c->dtype,
                         c->coll == OBC_COLL_GATHER || c->coll == OBC_COLL_SCATTER ? c->root : 0);
    if (c->nv > 0 && obc__op_copy_vec(op, c->v, c->nv, (size_t)comm->nranks) != OBC_SUCCESS) {
        return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "%s: counts", c->fn);
    }
    return OBC_SUCCESS;
}

/* req == NULL: blocking. The v-forms always build a heap op (it owns the
 * copied arrays); the others run a stack op as the other collectives do. */
static obc_result_t launch(const struct call *c, obc_comm_t *comm, obc_request_t **req)
{
    OBC_CHECK(check(c, comm));
    if (req != NULL) {
        OBC_CHECK(obc__api_check_req_out(c->fn, comm, req));
    }
    if (req == NULL && c->nv == 0) {
        struct obc__op op;
        obc__op_clear(&op);
        OBC_CHECK(describe(c, comm, &op));
        return obc__api_run_blocking(comm, &op);
    }
    struct obc__op *op = obc__op_new();
    if (op == NULL) {
        return obc__err_set(&comm->err, OBC_ERR_NO_MEMORY, "operation");
    }
    obc_result_t res = describe(c, comm, op);
    if (res != OBC_SUCCESS) {
        obc__op_unref(op);
        return res;
    }
    if (req != NULL) {
        return obc__api_start_async(comm, op, req);
    }
    if (obc__group_active()) { /* the group takes our reference */
        res = obc__group_add(comm->engine, op, NULL, comm->config.group_bucket_bytes);
        if (res != OBC_SUCCESS) {
            obc__op_unref(op);
        }
        return res;
    }
    res = obc__engine_run_blocking(comm->engine, op);
    obc__op_unref(op);
    return res;
}

static obc_result_t gather(const char *fn, const void *sendbuf, void *recvbuf, size_t sendcount,
                           obc_dtype_t dtype, int root, obc_comm_t *comm, obc_request_t **req)
{
    struct call c = {fn, OBC_COLL_GATHER, sendbuf, recvbuf, sendcount, dtype, root, {NULL}, 0};
    return launch(&c, comm, req);
}

static obc_result_t scatter(const char *fn, const void *sendbuf, void *recvbuf, size_t recvcount,
                            obc_dtype_t dtype, int root, obc_comm_t *comm, obc_request_t **req)
{
    struct call c = {fn, OBC_COLL_SCATTER, sendbuf, recvbuf, recvcount, dtype, root, {NULL}, 0};
    return launch(&c, comm, req);
}

static obc_result_t alltoall(const char *fn, const void *sendbuf, void *recvbuf, size_t count,
                             obc_dtype_t dtype, obc_comm_t *comm, obc_request_t **req)
{
    struct call c = {fn, OBC_COLL_ALLTOALL, sendbuf, recvbuf, count, dtype, 0, {NULL}, 0};
    return launch(&c, comm, req);
}

static obc_result_t alltoallv(const char *fn, const void *sendbuf, const size_t *sendcounts,
                              const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                              const size_t *rdispls, obc_dtype_t dtype, obc_comm_t *comm,
                              obc_request_t **req)
{
    struct call c = {fn,      OBC_COLL_ALLTOALLV,
                     sendbuf, recvbuf,
                     0,       dtype,
                     0,       {sendcounts, sdispls, recvcounts, rdispls},
                     4};
    return launch(&c, comm, req);
}

static obc_result_t allgatherv(const char *fn, const void *sendbuf, size_t sendcount, void *recvbuf,
                               const size_t *recvcounts, const size_t *displs, obc_dtype_t dtype,
                               obc_comm_t *comm, obc_request_t **req)
{
    struct call c = {fn, OBC_COLL_ALLGATHERV,  sendbuf, recvbuf, sendcount, dtype,
                     0,  {recvcounts, displs}, 2};
    return launch(&c, comm, req);
}

OBC_API obc_result_t obc_gather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                obc_dtype_t dtype, int root, obc_comm_t *comm)
{
    return gather("obc_gather", sendbuf, recvbuf, sendcount, dtype, root, comm, NULL);
}

OBC_API obc_result_t obc_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                 obc_dtype_t dtype, int root, obc_comm_t *comm)
{
    return scatter("obc_scatter", sendbuf, recvbuf, recvcount, dtype, root, comm, NULL);
}

OBC_API obc_result_t obc_alltoall(const void *sendbuf, void *recvbuf, size_t count,
                                  obc_dtype_t dtype, obc_comm_t *comm)
{
    return alltoall("obc_alltoall", sendbuf, recvbuf, count, dtype, comm, NULL);
}

OBC_API obc_result_t obc_alltoallv(const void *sendbuf, const size_t *sendcounts,
                                   const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                   const size_t *rdispls, obc_dtype_t dtype, obc_comm_t *comm)
{
    return alltoallv("obc_alltoallv", sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls,
                     dtype, comm, NULL);
}

OBC_API obc_result_t obc_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                    const size_t *recvcounts, const size_t *displs,
                                    obc_dtype_t dtype, obc_comm_t *comm)
{
    return allgatherv("obc_allgatherv", sendbuf, sendcount, recvbuf, recvcounts, displs, dtype,
                      comm, NULL);
}

/* The obc_i* forms: a NULL req is an error here, not a blocking call. */
static obc_result_t need_req(const char *fn, obc_comm_t *comm, obc_request_t **req)
{
    if (req == NULL) {
        return obc__err_set(comm != NULL ? &comm->err : NULL, OBC_ERR_INVALID_ARG,
                            "%s: req is NULL", fn);
    }
    return OBC_SUCCESS;
}

OBC_API obc_result_t obc_igather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                 obc_dtype_t dtype, int root, obc_comm_t *comm, obc_request_t **req)
{
    OBC_CHECK(need_req("obc_igather", comm, req));
    return gather("obc_igather", sendbuf, recvbuf, sendcount, dtype, root, comm, req);
}

OBC_API obc_result_t obc_iscatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                  obc_dtype_t dtype, int root, obc_comm_t *comm,
                                  obc_request_t **req)
{
    OBC_CHECK(need_req("obc_iscatter", comm, req));
    return scatter("obc_iscatter", sendbuf, recvbuf, recvcount, dtype, root, comm, req);
}

OBC_API obc_result_t obc_ialltoall(const void *sendbuf, void *recvbuf, size_t count,
                                   obc_dtype_t dtype, obc_comm_t *comm, obc_request_t **req)
{
    OBC_CHECK(need_req("obc_ialltoall", comm, req));
    return alltoall("obc_ialltoall", sendbuf, recvbuf, count, dtype, comm, req);
}

OBC_API obc_result_t obc_ialltoallv(const void *sendbuf, const size_t *sendcounts,
                                    const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                    const size_t *rdispls, obc_dtype_t dtype, obc_comm_t *comm,
                                    obc_request_t **req)
{
    OBC_CHECK(need_req("obc_ialltoallv", comm, req));
    return alltoallv("obc_ialltoallv", sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls,
                     dtype, comm, req);
}

OBC_API obc_result_t obc_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                     const size_t *recvcounts, const size_t *displs,
                                     obc_dtype_t dtype, obc_comm_t *comm, obc_request_t **req)
{
    OBC_CHECK(need_req("obc_iallgatherv", comm, req));
    return allgatherv("obc_iallgatherv", sendbuf, sendcount, recvbuf, recvcounts, displs, dtype,
                      comm, req);
}
