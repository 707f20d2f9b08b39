/* SPDX-License-Identifier: MIT */
/*
 * mpi_size_check.c - the layer's size rule from outside (docs/mpi.md, "Small
 * calls stay MPI's"): every interposed call at sizes on both sides of a
 * threshold, results compared with PMPI_* on the same inputs, small and
 * large calls interleaved on one communicator (so the MPI and obc halves of
 * one program must keep step), and one rank describing its buffer with a
 * different datatype of the same size (the choice must not depend on it).
 *
 * With OBC_MPI_MIN_BYTES set, rank 0 prints how many calls the layer should
 * have served and passed, which mpi_layer.sh compares with the layer's line
 * (mode "sized"); without it (the measured table, mode "table") it prints
 * the total, which served + passed must equal.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
static int nranks;
static int nfail;
static long long min_bytes = -1; /* OBC_MPI_MIN_BYTES, -1 when unset */
static long expect_served;
static long expect_passed;

#define FAIL(...) \
    do { \
        if (nfail++ < 20) { \
            fprintf(stderr, "mpi_size_check: rank %d: ", rank); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
        } \
    } while (0)

/* One interposed call that names nbytes bytes. */
static void expect(long long nbytes)
{
    if (min_bytes >= 0 && nbytes < min_bytes) {
        expect_passed++;
    } else {
        expect_served++;
    }
}

static int value(int r, int i, int salt)
{
    return (r + 1) * 100003 + i * 7 + salt;
}

static void check(const char *what, int n, const int *got, const int *want)
{
    if (memcmp(got, want, (size_t)n * sizeof(int)) != 0) {
        FAIL("%s of %d ints differs from PMPI's", what, n);
    }
}

/* The datatype this rank describes n ints with: rank 1 uses one contiguous
 * type of n ints, the others n MPI_INTs (the same type signature). */
static MPI_Datatype describe(int n, int *count, MPI_Datatype *made)
{
    *made = MPI_DATATYPE_NULL;
    if (rank != 1) {
        *count = n;
        return MPI_INT;
    }
    MPI_Type_contiguous(n, MPI_INT, made);
    MPI_Type_commit(made);
    *count = 1;
    return *made;
}

/* Every call once with n ints per block (per rank, per peer, or the vector). */
static void round_of(MPI_Comm comm, int n, int salt)
{
    size_t all = (size_t)n * (size_t)nranks;
    int *in = malloc(all * sizeof(int));
    int *got = malloc(all * sizeof(int));
    int *want = malloc(all * sizeof(int));
    long long nbytes = (long long)n * (long long)sizeof(int);
    int root = salt % nranks;
    int cnt = 0;
    MPI_Datatype made;
    MPI_Datatype t = describe(n, &cnt, &made);
    for (size_t i = 0; i < all; i++) {
        in[i] = value(rank, (int)i, salt);
    }

    memcpy(got, in, (size_t)n * sizeof(int));
    memcpy(want, in, (size_t)n * sizeof(int));
    MPI_Bcast(got, cnt, t, root, comm);
    PMPI_Bcast(want, n, MPI_INT, root, comm);
    check("MPI_Bcast", n, got, want);
    expect(nbytes);

    MPI_Allreduce(in, got, n, MPI_INT, MPI_SUM, comm);
    PMPI_Allreduce(in, want, n, MPI_INT, MPI_SUM, comm);
    check("MPI_Allreduce", n, got, want);
    expect(nbytes);

    memset(got, 0, (size_t)n * sizeof(int));
    memset(want, 0, (size_t)n * sizeof(int));
    MPI_Reduce(in, got, n, MPI_INT, MPI_MAX, root, comm);
    PMPI_Reduce(in, want, n, MPI_INT, MPI_MAX, root, comm);
    if (rank == root) {
        check("MPI_Reduce", n, got, want);
    }
    expect(nbytes);

    MPI_Allgather(in, cnt, t, got, n, MPI_INT, comm);
    PMPI_Allgather(in, n, MPI_INT, want, n, MPI_INT, comm);
    check("MPI_Allgather", (int)all, got, want);
    expect(nbytes);

    MPI_Reduce_scatter_block(in, got, n, MPI_INT, MPI_SUM, comm);
    PMPI_Reduce_scatter_block(in, want, n, MPI_INT, MPI_SUM, comm);
    check("MPI_Reduce_scatter_block", n, got, want);
    expect(nbytes);

    MPI_Alltoall(in, n, MPI_INT, got, cnt, t, comm);
    PMPI_Alltoall(in, n, MPI_INT, want, n, MPI_INT, comm);
    check("MPI_Alltoall", (int)all, got, want);
    expect(nbytes);

    /* gather's root in place: its block already in recvbuf */
    if (rank == root) {
        memcpy(got + (size_t)root * n, in, (size_t)n * sizeof(int));
        MPI_Gather(MPI_IN_PLACE, 0, MPI_INT, got, n, MPI_INT, root, comm);
    } else {
        MPI_Gather(in, cnt, t, NULL, 0, MPI_INT, root, comm);
    }
    PMPI_Gather(in, n, MPI_INT, want, n, MPI_INT, root, comm);
    if (rank == root) {
        check("MPI_Gather", (int)all, got, want);
    }
    expect(nbytes);

    MPI_Scatter(in, n, MPI_INT, got, cnt, t, root, comm);
    PMPI_Scatter(in, n, MPI_INT, want, n, MPI_INT, root, comm);
    check("MPI_Scatter", n, got, want);
    expect(nbytes);

    /* allgatherv: rank i's block n + i ints, judged by the average block
     * (the same on every rank) */
    int *vc = malloc(4 * (size_t)nranks * sizeof(int));
    int *vd = vc + nranks, *sc = vc + 2 * nranks, *sd = vc + 3 * nranks;
    long long vtotal = 0;
    for (int i = 0; i < nranks; i++) {
        vc[i] = n + i;
        vd[i] = i == 0 ? 0 : vd[i - 1] + vc[i - 1];
        vtotal += vc[i];
    }
    int *vin = malloc((size_t)(n + nranks) * sizeof(int));
    int *vgot = malloc((size_t)vtotal * sizeof(int));
    int *vwant = malloc((size_t)vtotal * sizeof(int));
    for (int i = 0; i < n + rank; i++) {
        vin[i] = value(rank, i, salt);
    }
    MPI_Allgatherv(vin, n + rank, MPI_INT, vgot, vc, vd, MPI_INT, comm);
    PMPI_Allgatherv(vin, n + rank, MPI_INT, vwant, vc, vd, MPI_INT, comm);
    check("MPI_Allgatherv", (int)vtotal, vgot, vwant);
    expect(vtotal * (long long)sizeof(int) / nranks);

    /* alltoallv: block n ints to every peer, in rank 1's block type; two
     * ranks judge it by their pair's block, more name 0 bytes (no size is
     * common to all) */
    for (int i = 0; i < nranks; i++) {
        sc[i] = n;
        sd[i] = i * n;
        vc[i] = cnt;
        vd[i] = i * cnt;
    }
    MPI_Alltoallv(in, sc, sd, MPI_INT, got, vc, vd, t, comm);
    PMPI_Alltoallv(in, sc, sd, MPI_INT, want, sc, sd, MPI_INT, comm);
    check("MPI_Alltoallv", (int)all, got, want);
    expect(nranks == 2 ? nbytes : 0);
    free(vc);
    free(vin);
    free(vgot);
    free(vwant);

    if (made != MPI_DATATYPE_NULL) {
        MPI_Type_free(&made);
    }
    free(in);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    const char *env = getenv("OBC_MPI_MIN_BYTES");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (env != NULL && env[0] != '\0') {
        min_bytes = atoll(env);
    }
    /* 4 KiB and its neighbours, then the table's other edges, small and
     * large alternating so a call MPI serves follows one obc serves */
    static const int ints[] = {1023, 1024, 1, 4096, 1025, 128, 8192, 2, 2048, 4};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
            round_of(MPI_COMM_WORLD, ints[i], (int)i + 10 * k);
            MPI_Barrier(MPI_COMM_WORLD); /* 0 bytes */
            expect(0);
        }
    }

    int total = 0;
    PMPI_Allreduce(&nfail, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (min_bytes >= 0) {
            printf("mpi_size_check: expect served %ld passed %ld\n", expect_served, expect_passed);
        } else {
            printf("mpi_size_check: expect total %ld\n", expect_served + expect_passed);
        }
        printf("mpi_size_check: %s (%d ranks, %d failures)\n", total == 0 ? "ok" : "FAILED", nranks,
               total);
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
