/* SPDX-License-Identifier: MIT */
/*
 * mpi_vector.c - MPI_Alltoallv and MPI_Allgatherv through obc_alltoallv and
 * obc_allgatherv. Bytes, as the other calls: each block is moved as the
 * bytes of its type map, so any datatype serves, and the counts and
 * displacements obc gets are in bytes (OBC_UINT8).
 *
 * A block list as obc sees it (struct vview): a named type with no gaps is
 * used where it lies, its displacements times its extent; any other type's
 * blocks are packed one after the other into a temporary, and unpacked
 * after the call. Whether a rank packs is its own business, as with
 * mpi_layer.c's views.
 *
 * Whether to serve must come out alike on every rank. MPI_Allgatherv's
 * recvcounts and type signature are the same everywhere, so its average
 * block decides against MPI_Allgather's minimum (mpi_size.c). An
 * MPI_Alltoallv's counts differ from rank to rank: two ranks still share
 * the sizes of their one pair (alltoallv_comm), but with more no size is
 * common to all, so it is served at every size: obc's is ahead of Open
 * MPI's at 4 and 8 ranks at every size obc-perf measured against
 * mpi_coll_bench (docs/perf/alltoall.md), and under OSU ahead of MPICH's
 * at 2 and 4 ranks from 1 KiB (bench/results/2026-12-05-osu-vforms).
 * MPI_IN_PLACE: an alltoallv's data comes from recvbuf, copied first (obc
 * has no in-place alltoallv); an allgatherv's own block is already in
 * recvbuf, which is obc's in-place form.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_layer.h"

struct vview {
    void *user; /* the caller's buffer */
    MPI_Datatype type;
    int n;
    const int *counts, *displs; /* the caller's, in items of type and in extents */
    size_t *bcounts, *bdispls; /* what obc gets: bytes */
    unsigned char *bytes; /* user itself, or the temporary */
    bool is_packed;
};

static void vview_free(struct vview *v)
{
    if (v->is_packed) {
        free(v->bytes);
    }
    free(v->bcounts);
    v->bcounts = NULL;
    v->bdispls = NULL;
    v->bytes = NULL;
    v->is_packed = false;
}

/* Set v up over n blocks of user (a type with no gaps, with displacements
 * that are not negative, is used where it lies); force_copy: a temporary
 * even then (an in-place alltoallv's send side); load: copy the blocks in. */
static int vview_open(struct vview *v, const void *user, const int *counts, const int *displs,
                      MPI_Datatype type, int n, bool force_copy, bool load, MPI_Comm comm)
{
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    memset(v, 0, sizeof *v);
    v->user = (void *)user;
    v->type = type;
    v->n = n;
    v->counts = counts;
    v->displs = displs;
    v->bcounts = malloc(2 * (size_t)n * sizeof(size_t));
    if (v->bcounts == NULL) {
        return MPI_ERR_NO_MEM;
    }
    v->bdispls = v->bcounts + n;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS) {
        vview_free(v);
        return MPI_ERR_TYPE;
    }
    bool flat = obc__mpi_type_is_direct(type);
    for (int i = 0; i < n; i++) {
        flat = flat && displs[i] >= 0; /* a negative one: packed, in MPI_Aint arithmetic */
    }
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0) {
            vview_free(v);
            return MPI_ERR_COUNT;
        }
        v->bcounts[i] = (size_t)counts[i] * (size_t)size;
        v->bdispls[i] = flat && !force_copy ? (size_t)displs[i] * (size_t)size : total;
        total += v->bcounts[i];
    }
    if (flat && !force_copy) {
        v->bytes = v->user;
        return MPI_SUCCESS;
    }
    if (total > (size_t)INT_MAX) {
        vview_free(v);
        return MPI_ERR_COUNT; /* PMPI_Pack counts bytes in an int */
    }
    v->bytes = malloc(total > 0 ? total : 1);
    if (v->bytes == NULL) {
        vview_free(v);
        return MPI_ERR_NO_MEM;
    }
    v->is_packed = true;
    for (int i = 0; load && i < n; i++) {
        int pos = 0;
        const char *block = (const char *)user + (MPI_Aint)displs[i] * extent;
        int rc = PMPI_Pack(block, counts[i], type, v->bytes + v->bdispls[i], (int)v->bcounts[i],
                           &pos, comm);
        if (rc != MPI_SUCCESS) {
            vview_free(v);
            return rc;
        }
    }
    return MPI_SUCCESS;
}

/* With store, unpack every block into the caller's buffer (a packed view
 * only); free the temporaries either way. */
static int vview_close(struct vview *v, bool store, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    MPI_Aint lb = 0, extent = 0;
    if (v->is_packed && store && PMPI_Type_get_extent(v->type, &lb, &extent) == MPI_SUCCESS) {
        for (int i = 0; i < v->n && rc == MPI_SUCCESS; i++) {
            int pos = 0;
            char *block = (char *)v->user + (MPI_Aint)v->displs[i] * extent;
            rc = PMPI_Unpack(v->bytes + v->bdispls[i], (int)v->bcounts[i], &pos, block,
                             v->counts[i], v->type, comm);
        }
    }
    vview_free(v);
    return rc;
}

static int vfinish(MPI_Comm comm, const char *call, obc_comm_t *oc, obc_result_t r,
                   struct vview *in, struct vview *out)
{
    if (in != NULL) {
        vview_close(in, false, comm);
    }
    int rc = vview_close(out, r == OBC_SUCCESS, comm);
    return r != OBC_SUCCESS ? obc__mpi_fail(comm, call, oc, r) : rc;
}

/* The obc communicator for an alltoallv, or NULL to pass it. Two ranks of
 * an intra-communicator both know the two blocks they exchange (one's
 * sendcount is the other's recvcount), so the larger decides against
 * MPI_Alltoall's minimum: below it Open MPI's exchange of one pair is the
 * faster (OSU, 8 B: 0.77 us plain, 1.67 served). With more ranks no size is
 * common to all, and the call names 0 bytes. */
static obc_comm_t *alltoallv_comm(MPI_Comm comm, bool in_place, const int sendcounts[],
                                  MPI_Datatype sendtype, const int recvcounts[],
                                  MPI_Datatype recvtype)
{
    int n = 0, me = 0, is_inter = 1;
    if (PMPI_Comm_test_inter(comm, &is_inter) != MPI_SUCCESS || is_inter ||
        PMPI_Comm_size(comm, &n) != MPI_SUCCESS || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
        n != 2) {
        return obc__mpi_comm_sized(comm, OBC__MPI_ALLTOALLV, 0);
    }
    long long got = obc__mpi_bytes(recvcounts[1 - me], recvtype);
    long long sent = in_place ? got : obc__mpi_bytes(sendcounts[1 - me], sendtype);
    return obc__mpi_comm_sized(comm, OBC__MPI_ALLTOALL, got > sent ? got : sent);
}

OBC_MPI_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    bool in_place = sendbuf == MPI_IN_PLACE;
    obc_comm_t *oc = alltoallv_comm(comm, in_place, sendcounts, sendtype, recvcounts, recvtype);
    struct vview s, v;
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                              recvtype, comm);
    }
    obc__mpi_count_served();
    int n = obc_comm_size(oc);
    int rc = in_place
        ? vview_open(&s, recvbuf, recvcounts, rdispls, recvtype, n, true, true, comm)
        : vview_open(&s, sendbuf, sendcounts, sdispls, sendtype, n, false, true, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = vview_open(&v, recvbuf, recvcounts, rdispls, recvtype, n, false, false, comm);
    if (rc != MPI_SUCCESS) {
        vview_close(&s, false, comm);
        return rc;
    }
    obc_result_t r =
        obc_alltoallv(s.bytes, s.bcounts, s.bdispls, v.bytes, v.bcounts, v.bdispls, OBC_UINT8, oc);
    return vfinish(comm, "MPI_Alltoallv", oc, r, &s, &v);
}

OBC_MPI_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm)
{
    int n = 0, me = 0, is_inter = 1;
    long long items = 0;
    obc_comm_t *oc = NULL;
    /* recvcounts has an entry per rank of the remote group of an
     * inter-communicator, which obc never serves: look only at an intra one */
    if (PMPI_Comm_test_inter(comm, &is_inter) == MPI_SUCCESS && !is_inter &&
        PMPI_Comm_size(comm, &n) == MPI_SUCCESS && PMPI_Comm_rank(comm, &me) == MPI_SUCCESS) {
        for (int i = 0; i < n; i++) {
            items += recvcounts[i] > 0 ? recvcounts[i] : 0;
        }
        long long total = obc__mpi_bytes(items, recvtype);
        oc = obc__mpi_comm_sized(comm, OBC__MPI_ALLGATHER, total == LLONG_MAX ? total : total / n);
    }
    bool in_place = sendbuf == MPI_IN_PLACE;
    struct vview v;
    if (oc == NULL) {
        obc__mpi_count_passed();
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               comm);
    }
    obc__mpi_count_served();
    /* in place, a packed view loads every block, the own one included */
    int rc = vview_open(&v, recvbuf, recvcounts, displs, recvtype, n, false, in_place, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    obc_result_t r;
    if (in_place) {
        r = obc_allgatherv(v.bytes, v.bcounts[me], v.bytes, v.bcounts, v.bdispls, OBC_UINT8, oc);
    } else {
        struct obc__mpi_view s;
        rc = obc__mpi_view_open(&s, sendbuf, sendcount, sendtype, true, comm);
        if (rc != MPI_SUCCESS) {
            vview_close(&v, false, comm);
            return rc;
        }
        r = obc_allgatherv(s.bytes, s.nbytes, v.bytes, v.bcounts, v.bdispls, OBC_UINT8, oc);
        obc__mpi_view_close(&s, false, 0, comm);
    }
    return vfinish(comm, "MPI_Allgatherv", oc, r, NULL, &v);
}
