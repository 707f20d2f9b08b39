/* SPDX-License-Identifier: MIT */
/*
 * mpi_coll.c - the interposed collectives that move data obc already has:
 * MPI_Bcast, MPI_Barrier, MPI_Allgather (bytes, any datatype) and
 * MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block (reductions, when the
 * op and the basic element type are obc's). Each either serves the call
 * through obc on every rank or passes it to PMPI on every rank: the choice
 * reads only the communicator, the op and the type signature, which MPI
 * requires to agree (docs/mpi.md, "Which calls obc serves").
 */
#include "mpi_layer.h"

#include <string.h>

OBC_MPI_EXPORT int MPI_Barrier(MPI_Comm comm)
{
    obc_comm_t *oc = obc__mpi_comm_sized(comm, OBC__MPI_BARRIER, 0);
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Barrier(comm);
    }
    obc__mpi_count_served();
    obc_result_t r = obc_barrier(oc);
    return r == OBC_SUCCESS ? MPI_SUCCESS : obc__mpi_fail(comm, "MPI_Barrier", oc, r);
}

/* Bytes: the signature's size is the same on every rank, whatever datatype
 * each rank describes it with. */
OBC_MPI_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    obc_comm_t *oc = obc__mpi_comm_sized(comm, OBC__MPI_BCAST, obc__mpi_bytes(count, type));
    struct obc__mpi_view v;
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Bcast(buf, count, type, root, comm);
    }
    obc__mpi_count_served();
    bool is_root = obc_comm_rank(oc) == root;
    int rc = obc__mpi_view_open(&v, buf, count, type, is_root, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    obc_result_t r = obc_bcast(v.bytes, v.nbytes, OBC_UINT8, root, oc);
    return obc__mpi_finish(comm, "MPI_Bcast", oc, r, NULL, &v, is_root ? 0 : count);
}

OBC_MPI_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    /* recvcount: significant on every rank, in place too */
    obc_comm_t *oc =
        obc__mpi_comm_sized(comm, OBC__MPI_ALLGATHER, obc__mpi_bytes(recvcount, recvtype));
    struct obc__mpi_view s;
    struct obc__mpi_view v;
    bool in_place = sendbuf == MPI_IN_PLACE;
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    obc__mpi_count_served();
    int nranks = obc_comm_size(oc);
    int rank = obc_comm_rank(oc);
    int rc =
        obc__mpi_view_open(&v, recvbuf, (long long)recvcount * nranks, recvtype, in_place, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    size_t block = v.nbytes / (size_t)nranks;
    unsigned char *own = (unsigned char *)v.bytes + (size_t)rank * block;
    if (in_place) {
        obc_result_t r = obc_allgather(own, v.bytes, block, OBC_UINT8, oc);
        return obc__mpi_finish(comm, "MPI_Allgather", oc, r, NULL, &v,
                               (long long)recvcount * nranks);
    }
    rc = obc__mpi_view_open(&s, sendbuf, sendcount, sendtype, true, comm);
    if (rc != MPI_SUCCESS) {
        obc__mpi_view_close(&v, false, 0, comm);
        return rc;
    }
    obc_result_t r = obc_allgather(s.bytes, v.bytes, block, OBC_UINT8, oc);
    return obc__mpi_finish(comm, "MPI_Allgather", oc, r, &s, &v, (long long)recvcount * nranks);
}

/* A reduction is obc's when its op and its basic element type are (MPI
 * requires both to agree on every rank) and its count of type is not below
 * obc's minimum for call. */
static obc_comm_t *reduction_comm(MPI_Comm comm, enum obc__mpi_call call, int count,
                                  MPI_Datatype type, MPI_Op op, obc_dtype_t *dtype,
                                  obc_redop_t *redop, size_t *per_item)
{
    /* the size first: a small call is passed without the table lookups */
    obc_comm_t *oc = obc__mpi_comm_sized(comm, call, obc__mpi_bytes(count, type));
    if (oc == NULL || !obc__mpi_reduce_op(op, redop) ||
        !obc__mpi_reduce_dtype(type, dtype, per_item)) {
        return NULL;
    }
    return oc;
}

OBC_MPI_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm)
{
    obc_dtype_t dt;
    obc_redop_t rop;
    size_t per = 0;
    struct obc__mpi_view s;
    struct obc__mpi_view v;
    bool in_place = sendbuf == MPI_IN_PLACE;
    obc_comm_t *oc = reduction_comm(comm, OBC__MPI_ALLREDUCE, count, type, op, &dt, &rop, &per);
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    }
    obc__mpi_count_served();
    int rc = obc__mpi_view_open(&v, recvbuf, count, type, in_place, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    size_t n = (size_t)count * per;
    if (in_place) {
        obc_result_t r = obc_allreduce(v.bytes, v.bytes, n, dt, rop, oc);
        return obc__mpi_finish(comm, "MPI_Allreduce", oc, r, NULL, &v, count);
    }
    rc = obc__mpi_view_open(&s, sendbuf, count, type, true, comm);
    if (rc != MPI_SUCCESS) {
        obc__mpi_view_close(&v, false, 0, comm);
        return rc;
    }
    obc_result_t r = obc_allreduce(s.bytes, v.bytes, n, dt, rop, oc);
    return obc__mpi_finish(comm, "MPI_Allreduce", oc, r, &s, &v, count);
}

OBC_MPI_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                              MPI_Op op, int root, MPI_Comm comm)
{
    obc_dtype_t dt;
    obc_redop_t rop;
    size_t per = 0;
    struct obc__mpi_view s;
    struct obc__mpi_view v;
    obc_comm_t *oc = reduction_comm(comm, OBC__MPI_REDUCE, count, type, op, &dt, &rop, &per);
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    }
    obc__mpi_count_served();
    size_t n = (size_t)count * per;
    bool is_root = obc_comm_rank(oc) == root;
    /* MPI_IN_PLACE means something only on the root. */
    bool in_place = is_root && sendbuf == MPI_IN_PLACE;
    if (!is_root) {
        int rc = obc__mpi_view_open(&s, sendbuf, count, type, true, comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        obc_result_t r = obc_reduce(s.bytes, NULL, n, dt, rop, root, oc);
        return obc__mpi_finish(comm, "MPI_Reduce", oc, r, &s, NULL, 0);
    }
    int rc = obc__mpi_view_open(&v, recvbuf, count, type, in_place, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (in_place) {
        obc_result_t r = obc_reduce(v.bytes, v.bytes, n, dt, rop, root, oc);
        return obc__mpi_finish(comm, "MPI_Reduce", oc, r, NULL, &v, count);
    }
    rc = obc__mpi_view_open(&s, sendbuf, count, type, true, comm);
    if (rc != MPI_SUCCESS) {
        obc__mpi_view_close(&v, false, 0, comm);
        return rc;
    }
    obc_result_t r = obc_reduce(s.bytes, v.bytes, n, dt, rop, root, oc);
    return obc__mpi_finish(comm, "MPI_Reduce", oc, r, &s, &v, count);
}

/* MPI's block layout: rank r receives block r of the reduction of the
 * ranks' nranks * recvcount items. In place, the input is recvbuf and the
 * result lands at its start; obc's in-place form leaves it at block r, so
 * it is moved down afterwards. */
OBC_MPI_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                            MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    obc_dtype_t dt;
    obc_redop_t rop;
    size_t per = 0;
    struct obc__mpi_view s;
    struct obc__mpi_view v;
    bool in_place = sendbuf == MPI_IN_PLACE;
    obc_comm_t *oc =
        reduction_comm(comm, OBC__MPI_REDUCE_SCATTER_BLOCK, recvcount, type, op, &dt, &rop, &per);
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    }
    obc__mpi_count_served();
    int nranks = obc_comm_size(oc);
    int rank = obc_comm_rank(oc);
    size_t n = (size_t)recvcount * per;
    if (in_place) {
        int rc = obc__mpi_view_open(&v, recvbuf, (long long)recvcount * nranks, type, true, comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        size_t block = v.nbytes / (size_t)nranks;
        unsigned char *mine = (unsigned char *)v.bytes + (size_t)rank * block;
        obc_result_t r = obc_reduce_scatter(v.bytes, mine, n, dt, rop, oc);
        if (r == OBC_SUCCESS && rank != 0) {
            memmove(v.bytes, mine, block);
        }
        return obc__mpi_finish(comm, "MPI_Reduce_scatter_block", oc, r, NULL, &v, recvcount);
    }
    int rc = obc__mpi_view_open(&v, recvbuf, recvcount, type, false, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = obc__mpi_view_open(&s, sendbuf, (long long)recvcount * nranks, type, true, comm);
    if (rc != MPI_SUCCESS) {
        obc__mpi_view_close(&v, false, 0, comm);
        return rc;
    }
    obc_result_t r = obc_reduce_scatter(s.bytes, v.bytes, n, dt, rop, oc);
    return obc__mpi_finish(comm, "MPI_Reduce_scatter_block", oc, r, &s, &v, recvcount);
}
