/* SPDX-License-Identifier: MIT */
/*
 * mpi_personal.c - MPI_Alltoall, MPI_Gather and MPI_Scatter through obc's
 * personalised collectives (obc_alltoall, obc_gather, obc_scatter). Bytes,
 * as in mpi_coll.c: any datatype, so every rank of an intra-communicator
 * serves. Each MPI_IN_PLACE maps onto obc's in-place form, sendbuf ==
 * recvbuf (obc.h): gather's root has its block already in recvbuf,
 * scatter's root keeps its block in sendbuf and writes no recvbuf, alltoall
 * replaces block j of the one buffer with rank j's block.
 */
#include "mpi_layer.h"

OBC_MPI_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    obc_comm_t *oc =
        obc__mpi_comm_sized(comm, OBC__MPI_ALLTOALL, obc__mpi_bytes(recvcount, recvtype));
    struct obc__mpi_view s;
    struct obc__mpi_view v;
    bool in_place = sendbuf == MPI_IN_PLACE;
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    obc__mpi_count_served();
    int nranks = obc_comm_size(oc);
    int rc =
        obc__mpi_view_open(&v, recvbuf, (long long)recvcount * nranks, recvtype, in_place, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    size_t block = v.nbytes / (size_t)nranks;
    if (in_place) {
        obc_result_t r = obc_alltoall(v.bytes, v.bytes, block, OBC_UINT8, oc);
        return obc__mpi_finish(comm, "MPI_Alltoall", oc, r, NULL, &v,
                               (long long)recvcount * nranks);
    }
    rc = obc__mpi_view_open(&s, sendbuf, (long long)sendcount * nranks, sendtype, true, comm);
    if (rc != MPI_SUCCESS) {
        obc__mpi_view_close(&v, false, 0, comm);
        return rc;
    }
    obc_result_t r = obc_alltoall(s.bytes, v.bytes, block, OBC_UINT8, oc);
    return obc__mpi_finish(comm, "MPI_Alltoall", oc, r, &s, &v, (long long)recvcount * nranks);
}

/* A gather's or scatter's block size from the arguments that mean
 * something on this rank: its own side (count, type), except on a root
 * whose own side is MPI_IN_PLACE, where the block is its other side's. */
static long long block_bytes(MPI_Comm comm, int root, bool root_in_place, int count,
                             MPI_Datatype type, int other_count, MPI_Datatype other_type)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank == root && root_in_place ? obc__mpi_bytes(other_count, other_type)
                                         : obc__mpi_bytes(count, type);
}

/* The root's MPI_IN_PLACE: its own block already lies in recvbuf, which is
 * obc's sendbuf == recvbuf on the root. */
OBC_MPI_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm)
{
    long long nbytes =
        block_bytes(comm, root, sendbuf == MPI_IN_PLACE, sendcount, sendtype, recvcount, recvtype);
    obc_comm_t *oc = obc__mpi_comm_sized(comm, OBC__MPI_GATHER, nbytes);
    struct obc__mpi_view s;
    struct obc__mpi_view v;
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    obc__mpi_count_served();
    int nranks = obc_comm_size(oc);
    bool is_root = obc_comm_rank(oc) == root;
    if (!is_root) {
        int rc = obc__mpi_view_open(&s, sendbuf, sendcount, sendtype, true, comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        obc_result_t r = obc_gather(s.bytes, NULL, s.nbytes, OBC_UINT8, root, oc);
        return obc__mpi_finish(comm, "MPI_Gather", oc, r, &s, NULL, 0);
    }
    bool in_place = sendbuf == MPI_IN_PLACE;
    int rc =
        obc__mpi_view_open(&v, recvbuf, (long long)recvcount * nranks, recvtype, in_place, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    size_t block = v.nbytes / (size_t)nranks;
    if (in_place) {
        obc_result_t r = obc_gather(v.bytes, v.bytes, block, OBC_UINT8, root, oc);
        return obc__mpi_finish(comm, "MPI_Gather", oc, r, NULL, &v, (long long)recvcount * nranks);
    }
    rc = obc__mpi_view_open(&s, sendbuf, sendcount, sendtype, true, comm);
    if (rc != MPI_SUCCESS) {
        obc__mpi_view_close(&v, false, 0, comm);
        return rc;
    }
    obc_result_t r = obc_gather(s.bytes, v.bytes, block, OBC_UINT8, root, oc);
    return obc__mpi_finish(comm, "MPI_Gather", oc, r, &s, &v, (long long)recvcount * nranks);
}

/* The root's MPI_IN_PLACE (as recvbuf): its own block stays in sendbuf,
 * obc's sendbuf == recvbuf on the root. */
OBC_MPI_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm)
{
    long long nbytes =
        block_bytes(comm, root, recvbuf == MPI_IN_PLACE, recvcount, recvtype, sendcount, sendtype);
    obc_comm_t *oc = obc__mpi_comm_sized(comm, OBC__MPI_SCATTER, nbytes);
    struct obc__mpi_view s;
    struct obc__mpi_view v;
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    }
    obc__mpi_count_served();
    int nranks = obc_comm_size(oc);
    bool is_root = obc_comm_rank(oc) == root;
    if (!is_root) {
        int rc = obc__mpi_view_open(&v, recvbuf, recvcount, recvtype, false, comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        obc_result_t r = obc_scatter(NULL, v.bytes, v.nbytes, OBC_UINT8, root, oc);
        return obc__mpi_finish(comm, "MPI_Scatter", oc, r, NULL, &v, recvcount);
    }
    int rc = obc__mpi_view_open(&s, sendbuf, (long long)sendcount * nranks, sendtype, true, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    size_t block = s.nbytes / (size_t)nranks;
    if (recvbuf == MPI_IN_PLACE) {
        obc_result_t r = obc_scatter(s.bytes, s.bytes, block, OBC_UINT8, root, oc);
        return obc__mpi_finish(comm, "MPI_Scatter", oc, r, &s, NULL, 0);
    }
    rc = obc__mpi_view_open(&v, recvbuf, recvcount, recvtype, false, comm);
    if (rc != MPI_SUCCESS) {
        obc__mpi_view_close(&s, false, 0, comm);
        return rc;
    }
    obc_result_t r = obc_scatter(s.bytes, v.bytes, block, OBC_UINT8, root, oc);
    return obc__mpi_finish(comm, "MPI_Scatter", oc, r, &s, &v, recvcount);
}
