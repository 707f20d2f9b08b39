/* SPDX-License-Identifier: MIT */
/*
 * mpi_layer_check.c - an ordinary MPI program that checks the drop-in layer
 * from outside (mpi_layer.sh runs it with and without LD_PRELOAD, under Open
 * MPI and MPICH). Every interposed call is made on every predefined type and
 * op the layer serves, in place and not, on MPI_COMM_WORLD, a split, a dup,
 * MPI_COMM_SELF and freed-then-remade communicators, and its result is
 * compared byte for byte with what PMPI_* (plain MPI, never interposed)
 * computes from the same inputs. The fallback kinds (an op obc lacks, a user
 * op on a derived type, a type obc lacks, an inter-communicator) run too.
 * Rank 0 prints how many calls the layer should have served and passed
 * (docs/mpi.md's rule), which mpi_layer.sh compares with OBC_MPI_REPORT's line.
 * MPI_Alltoallv and MPI_Allgatherv, which the layer serves too, run with
 * uneven counts, gaps and reversed displacements on every type.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
static int nfail;
static long expect_served;
static long expect_passed;

#define FAIL(...) \
    do { \
        if (nfail++ < 20) { \
            fprintf(stderr, "mpi_layer_check: rank %d: ", rank); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
        } \
    } while (0)

struct type_case {
    MPI_Datatype type;
    const char *name;
    int kind; /* 0 signed, 1 unsigned, 2 float */
};

static struct type_case served_types[32];
static int nserved_types;

static void add_type(MPI_Datatype t, const char *name, int kind)
{
    served_types[nserved_types].type = t;
    served_types[nserved_types].name = name;
    served_types[nserved_types].kind = kind;
    nserved_types++;
}

static void init_types(void)
{
    add_type(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 0);
    add_type(MPI_INT8_T, "MPI_INT8_T", 0);
    add_type(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1);
    add_type(MPI_UINT8_T, "MPI_UINT8_T", 1);
    add_type(MPI_INT, "MPI_INT", 0);
    add_type(MPI_INT32_T, "MPI_INT32_T", 0);
    add_type(MPI_UNSIGNED, "MPI_UNSIGNED", 1);
    add_type(MPI_UINT32_T, "MPI_UINT32_T", 1);
    add_type(MPI_LONG, "MPI_LONG", 0);
    add_type(MPI_LONG_LONG, "MPI_LONG_LONG", 0);
    add_type(MPI_INT64_T, "MPI_INT64_T", 0);
    add_type(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 1);
    add_type(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 1);
    add_type(MPI_UINT64_T, "MPI_UINT64_T", 1);
    add_type(MPI_FLOAT, "MPI_FLOAT", 2);
    add_type(MPI_DOUBLE, "MPI_DOUBLE", 2);
}

/* Element i of rank r's input: small integers, so every sum and product is
 * exact in float too and no result depends on the order of reduction;
 * negative values for the signed types' MIN and MAX. */
static long value(int r, size_t i, int kind, int is_minmax)
{
    long v = (long)((r * 7 + i * 3) % 5) + 1;
    return (kind != 1 && is_minmax) ? v - 3 : v;
}

static void fill(void *buf, MPI_Datatype t, int kind, size_t n, int r, int is_minmax)
{
    int size = 0;
    MPI_Type_size(t, &size);
    for (size_t i = 0; i < n; i++) {
        long v = value(r, i, kind, is_minmax);
        unsigned char *p = (unsigned char *)buf + i * (size_t)size;
        if (kind == 2 && size == 4) {
            float f = (float)v;
            memcpy(p, &f, 4);
        } else if (kind == 2) {
            double d = (double)v;
            memcpy(p, &d, 8);
        } else if (size == 1) {
            int8_t x = (int8_t)v;
            memcpy(p, &x, 1);
        } else if (size == 4) {
            int32_t x = (int32_t)v;
            memcpy(p, &x, 4);
        } else {
            int64_t x = v;
            memcpy(p, &x, 8);
        }
    }
}

static void same(const void *got, const void *want, size_t nbytes, const char *what, MPI_Comm c)
{
    if (memcmp(got, want, nbytes) != 0) {
        int crank = 0;
        MPI_Comm_rank(c, &crank);
        size_t i = 0;
        while (((const unsigned char *)got)[i] == ((const unsigned char *)want)[i]) {
            i++;
        }
        FAIL("%s: differs from plain MPI at byte %zu (comm rank %d)", what, i, crank);
    }
}

static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
static const char *op_names[] = {"SUM", "PROD", "MIN", "MAX"};

/* Allreduce, Reduce and Reduce_scatter_block, each in place and not, against PMPI. */
static void reductions(MPI_Comm c, const struct type_case *tc, int opi, size_t count, int served)
{
    int n = 0;
    int r = 0;
    int size = 0;
    char what[160];
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    MPI_Type_size(tc->type, &size);
    int is_minmax = opi >= 2;
    size_t total = count * (size_t)n;
    size_t nb = total * (size_t)size;
    unsigned char *in = malloc(nb + 1);
    unsigned char *got = malloc(nb + 1);
    unsigned char *want = malloc(nb + 1);
    int root = n - 1;
    int nfail0 = nfail;
    MPI_Op op = ops[opi];
    fill(in, tc->type, tc->kind, total, r, is_minmax);
    snprintf(what, sizeof what, "%s %s count %zu", tc->name, op_names[opi], count);

    memset(got, 0x5a, nb);
    MPI_Allreduce(in, got, (int)count, tc->type, op, c);
    PMPI_Allreduce(in, want, (int)count, tc->type, op, c);
    same(got, want, count * (size_t)size, "MPI_Allreduce", c);
    memcpy(got, in, nb);
    MPI_Allreduce(MPI_IN_PLACE, got, (int)count, tc->type, op, c);
    same(got, want, count * (size_t)size, "MPI_Allreduce in place", c);

    memset(got, 0x5a, nb);
    MPI_Reduce(in, got, (int)count, tc->type, op, root, c);
    PMPI_Reduce(in, want, (int)count, tc->type, op, root, c);
    if (r == root) {
        same(got, want, count * (size_t)size, "MPI_Reduce", c);
    }
    memcpy(got, in, nb);
#ifdef MPICH_VERSION
    /* Debian's MPICH 4.0.2 itself crashes in an in-place MPI_Reduce of 1000
     * ints to a root other than 0 (plain, without the layer): root 0 there. */
    if (root != 0) {
        root = 0;
        PMPI_Reduce(in, want, (int)count, tc->type, op, root, c);
    }
#endif
    MPI_Reduce(r == root ? MPI_IN_PLACE : got, r == root ? got : NULL, (int)count, tc->type, op,
               root, c);
    if (r == root) {
        same(got, want, count * (size_t)size, "MPI_Reduce in place", c);
    }

    memset(got, 0x5a, nb);
    MPI_Reduce_scatter_block(in, got, (int)count, tc->type, op, c);
    PMPI_Reduce_scatter_block(in, want, (int)count, tc->type, op, c);
    same(got, want, count * (size_t)size, "MPI_Reduce_scatter_block", c);
    memcpy(got, in, nb);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, got, (int)count, tc->type, op, c);
    same(got, want, count * (size_t)size, "MPI_Reduce_scatter_block in place", c);
    if (nfail > nfail0 && nfail0 < 20) {
        fprintf(stderr, "mpi_layer_check: rank %d: (case %s)\n", rank, what);
    }
    if (served) {
        expect_served += 6;
    } else {
        expect_passed += 6;
    }
    free(in);
    free(got);
    free(want);
}

/* Uneven blocks for the v-forms: from rank s to rank d (alltoallv), or
 * rank s's own (allgatherv, d = -1), some of them empty, each at most
 * count + 2 items. */
static int vcount(int count, int s, int d)
{
    int k = (s * 5 + d * 3 + 7) % 4;
    return k == 0 ? 0 : count / 2 + k;
}

/* Alltoallv and Allgatherv of `type`, in place and not, with uneven counts
 * and displacements in reverse rank order with a gap of one item, against
 * PMPI; every byte outside the blocks must keep its poison. */
static void vector_movements(MPI_Comm c, MPI_Datatype type, int count)
{
    int n = 0, r = 0;
    MPI_Aint lb = 0, extent = 0;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    MPI_Type_get_extent(type, &lb, &extent);
    int *sc = malloc(6 * (size_t)n * sizeof(int));
    int *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n, *gc = sc + 4 * n, *gd = sc + 5 * n;
    int slot = count / 2 + 4; /* items per block position: the largest block and a gap */
    for (int p = 0; p < n; p++) {
        sc[p] = vcount(count, r, p);
        rc[p] = vcount(count, p, r);
        gc[p] = vcount(count, p, -1);
        sd[p] = rd[p] = gd[p] = (n - 1 - p) * slot;
    }
    size_t nb = (size_t)n * (size_t)slot * (size_t)extent;
    unsigned char *in = malloc(nb + 1), *got = malloc(nb + 1), *want = malloc(nb + 1);
    for (size_t i = 0; i < nb; i++) {
        in[i] = (unsigned char)(r * 29 + i * 13 + 3);
    }
    memset(got, 0x5a, nb);
    memset(want, 0x5a, nb);
    MPI_Alltoallv(in, sc, sd, type, got, rc, rd, type, c);
    PMPI_Alltoallv(in, sc, sd, type, want, rc, rd, type, c);
    same(got, want, nb, "MPI_Alltoallv", c);
    /* in place: the data comes from recvbuf, recvcounts and rdispls both ways */
    for (int p = 0; p < n; p++) { /* counts symmetric between each pair */
        rc[p] = vcount(count, r < p ? r : p, r < p ? p : r);
    }
    memcpy(got, in, nb);
    memcpy(want, in, nb);
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, type, got, rc, rd, type, c);
    PMPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, type, want, rc, rd, type, c);
    same(got, want, nb, "MPI_Alltoallv in place", c);

    memset(got, 0x5a, nb);
    memset(want, 0x5a, nb);
    MPI_Allgatherv(in, gc[r], type, got, gc, gd, type, c);
    PMPI_Allgatherv(in, gc[r], type, want, gc, gd, type, c);
    same(got, want, nb, "MPI_Allgatherv", c);
    /* in place: the own block already at its displacement (copied with its
     * gaps, so the two runs start alike) */
    memset(got, 0x5a, nb);
    memcpy(got + (size_t)gd[r] * (size_t)extent, in, (size_t)gc[r] * (size_t)extent);
    memcpy(want, got, nb);
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, got, gc, gd, type, c);
    PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want, gc, gd, type, c);
    same(got, want, nb, "MPI_Allgatherv in place", c);
    expect_served += 4;
    free(sc);
    free(in);
    free(got);
    free(want);
}

/* Bcast, Allgather, Alltoall, Gather, Scatter of bytes in `type`, in place
 * and not, and one Barrier, against PMPI. Served on any intra-communicator. */
static void movements(MPI_Comm c, MPI_Datatype type, size_t count, int served)
{
    int n = 0;
    int r = 0;
    int size = 0;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    MPI_Type_size(type, &size);
    size_t nb = count * (size_t)size * (size_t)n;
    unsigned char *in = malloc(nb + 1);
    unsigned char *got = malloc(nb + 1);
    unsigned char *want = malloc(nb + 1);
    size_t blk = count * (size_t)size;
    int ic = (int)count;
    for (size_t i = 0; i < nb; i++) {
        in[i] = (unsigned char)(r * 31 + i * 7 + 1);
    }
    for (int root = 0; root < n; root += (n > 1 ? n - 1 : 1)) {
        memcpy(got, in, blk);
        memcpy(want, in, blk);
        MPI_Bcast(got, ic, type, root, c);
        PMPI_Bcast(want, ic, type, root, c);
        same(got, want, blk, "MPI_Bcast", c);

        memset(got, 0x5a, nb);
        MPI_Gather(in, ic, type, got, ic, type, root, c);
        PMPI_Gather(in, ic, type, want, ic, type, root, c);
        if (r == root) {
            same(got, want, nb, "MPI_Gather", c);
        }
        memset(got, 0x5a, nb);
        memcpy(got + (size_t)r * blk, in, blk);
        MPI_Gather(r == root ? MPI_IN_PLACE : got + (size_t)r * blk, ic, type, got, ic, type, root,
                   c);
        if (r == root) {
            same(got, want, nb, "MPI_Gather in place", c);
        }

        memset(got, 0x5a, nb);
        MPI_Scatter(in, ic, type, got, ic, type, root, c);
        PMPI_Scatter(in, ic, type, want, ic, type, root, c);
        same(got, want, blk, "MPI_Scatter", c);
        memcpy(got, in, nb);
        MPI_Scatter(got, ic, type, r == root ? MPI_IN_PLACE : got, ic, type, root, c);
        same(got + (r == root ? (size_t)r * blk : 0), want, blk, "MPI_Scatter in place", c);
        expect_served += 5;
    }

    memset(got, 0x5a, nb);
    MPI_Allgather(in, ic, type, got, ic, type, c);
    PMPI_Allgather(in, ic, type, want, ic, type, c);
    same(got, want, nb, "MPI_Allgather", c);
    memset(got, 0x5a, nb);
    memcpy(got + (size_t)r * blk, in, blk);
    MPI_Allgather(MPI_IN_PLACE, ic, type, got, ic, type, c);
    same(got, want, nb, "MPI_Allgather in place", c);

    memset(got, 0x5a, nb);
    MPI_Alltoall(in, ic, type, got, ic, type, c);
    PMPI_Alltoall(in, ic, type, want, ic, type, c);
    same(got, want, nb, "MPI_Alltoall", c);
    memcpy(got, in, nb);
    MPI_Alltoall(MPI_IN_PLACE, ic, type, got, ic, type, c);
    same(got, want, nb, "MPI_Alltoall in place", c);

    MPI_Barrier(c);
    expect_served += 5;
    vector_movements(c, type, ic);
    if (!served) {
        fprintf(stderr, "mpi_layer_check: movements are always served on intra-communicators\n");
        exit(2);
    }
    free(in);
    free(got);
    free(want);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    struct pair {
        int i;
        double d;
    } *a = in, *b = inout;
    for (int k = 0; k < *len; k++) {
        b[k].i += a[k].i;
        b[k].d += a[k].d;
    }
}

/* The fallbacks, and derived types that are served (packed locally). */
static void derived_and_fallbacks(MPI_Comm c)
{
    int n = 0;
    int r = 0;
    int in[64];
    int got[64];
    int want[64];
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    for (int i = 0; i < 64; i++) {
        in[i] = r * 100 + i;
    }

    /* A non-contiguous vector of MPI_INT: moved as bytes (the rank packs and
     * unpacks). Neither MPI reduces a derived type with a predefined op. */
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    memcpy(got, in, sizeof in);
    memcpy(want, in, sizeof in);
    MPI_Bcast(got, 2, vec, 0, c);
    PMPI_Bcast(want, 2, vec, 0, c);
    same(got, want, sizeof got, "MPI_Bcast on a vector type", c);
    expect_served += 1;

    /* The same signature built differently on different ranks: rank 0 says
     * 16 x MPI_INT, the others 1 x contiguous(16, MPI_INT). */
    MPI_Datatype block16;
    MPI_Type_contiguous(16, MPI_INT, &block16);
    MPI_Type_commit(&block16);
    MPI_Datatype t = r == 0 ? MPI_INT : block16;
    int cnt = r == 0 ? 16 : 1;
    memcpy(got, in, sizeof in);
    memcpy(want, in, sizeof in);
    MPI_Bcast(got, cnt, t, n - 1, c);
    PMPI_Bcast(want, 16, MPI_INT, n - 1, c);
    same(got, want, 16 * sizeof(int), "MPI_Bcast, MPI_INT on rank 0 and a block type", c);
    expect_served += 1;

    /* Passed: an op obc lacks (MPI_BAND), a type obc lacks (MPI_SHORT; and
     * MPI_OFFSET, whose MPI_MIN Open MPI computes as unsigned), a
     * pair type (MPI_2INT with MPI_MAXLOC), a user op on a struct type. */
    MPI_Allreduce(in, got, 16, MPI_INT, MPI_BAND, c);
    PMPI_Allreduce(in, want, 16, MPI_INT, MPI_BAND, c);
    same(got, want, 16 * sizeof(int), "MPI_Allreduce MPI_BAND", c);
    short sin[4] = {1, 2, 3, (short)r};
    short sgot[4];
    short swant[4];
    MPI_Allreduce(sin, sgot, 4, MPI_SHORT, MPI_SUM, c);
    PMPI_Allreduce(sin, swant, 4, MPI_SHORT, MPI_SUM, c);
    same(sgot, swant, sizeof sgot, "MPI_Allreduce MPI_SHORT", c);
    long long oin = r == 0 ? -2 : 1;
    long long ogot = 0;
    long long owant = 0;
    MPI_Allreduce(&oin, &ogot, 1, MPI_OFFSET, MPI_MIN, c);
    PMPI_Allreduce(&oin, &owant, 1, MPI_OFFSET, MPI_MIN, c);
    same(&ogot, &owant, sizeof ogot, "MPI_Allreduce MPI_OFFSET MPI_MIN", c);
    MPI_Reduce(in, got, 8, MPI_2INT, MPI_MAXLOC, 0, c);
    PMPI_Reduce(in, want, 8, MPI_2INT, MPI_MAXLOC, 0, c);
    if (r == 0) {
        same(got, want, 16 * sizeof(int), "MPI_Reduce MPI_2INT MPI_MAXLOC", c);
    }
    struct {
        int i;
        double d;
    } pin[3] = {{r, 0.5}, {1, r * 2.0}, {2, 1.0}}, pgot[3], pwant[3];
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {0, (MPI_Aint)sizeof(double)};
    MPI_Datatype mem[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype pair;
    MPI_Type_create_struct(2, lens, displs, mem, &pair);
    MPI_Type_commit(&pair);
    MPI_Op uop;
    MPI_Op_create(user_sum, 1, &uop);
    memset(pgot, 0, sizeof pgot);
    memset(pwant, 0, sizeof pwant);
    MPI_Allreduce(pin, pgot, 3, pair, uop, c);
    PMPI_Allreduce(pin, pwant, 3, pair, uop, c);
    for (int k = 0; k < 3; k++) {
        if (pgot[k].i != pwant[k].i || pgot[k].d != pwant[k].d) {
            FAIL("MPI_Allreduce with a user op on a struct type differs at %d", k);
        }
    }
    /* a predefined op on a struct of mixed types: also MPI's (mixed elements) */
    MPI_Reduce_scatter_block(in, got, 1, pair, uop, c);
    PMPI_Reduce_scatter_block(in, want, 1, pair, uop, c);
    expect_passed += 6;
    MPI_Op_free(&uop);
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);
    MPI_Type_free(&block16);
}

/* Gather, Scatter and Alltoall on derived types, against PMPI: a vector of
 * MPI_INT with gaps on both sides (each rank packs and unpacks), and a
 * signature described differently on the two sides of the call (16 x MPI_INT
 * sent, 1 x contiguous(16, MPI_INT) received, and the other way round). The
 * layer moves bytes, so neither may change what it serves or the result. */
static void personal_derived(MPI_Comm c)
{
    int n = 0;
    int r = 0;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    size_t nint = (size_t)n * 64;
    size_t nb = nint * sizeof(int);
    int *in = malloc(nb);
    int *got = malloc(nb);
    int *want = malloc(nb);
    for (size_t i = 0; i < nint; i++) {
        in[i] = r * 100000 + (int)i;
    }
    /* 8 ints with stride 2: extent 15 ints, so an item's gaps stay untouched */
    MPI_Datatype vec;
    MPI_Type_vector(8, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Datatype block16;
    MPI_Type_contiguous(16, MPI_INT, &block16);
    MPI_Type_commit(&block16);
    int root = n - 1;

    memset(got, 0x5a, nb);
    memset(want, 0x5a, nb);
    MPI_Gather(in, 1, vec, got, 1, vec, root, c);
    PMPI_Gather(in, 1, vec, want, 1, vec, root, c);
    if (r == root) {
        same(got, want, nb, "MPI_Gather on a vector type", c);
    }
    memset(got, 0x5a, nb);
    memset(want, 0x5a, nb);
    MPI_Gather(in, 16, MPI_INT, got, 1, block16, root, c);
    PMPI_Gather(in, 16, MPI_INT, want, 1, block16, root, c);
    if (r == root) {
        same(got, want, nb, "MPI_Gather, 16 x MPI_INT sent, a block type received", c);
    }

    /* in place on the root, on a vector type: its block is already in recvbuf */
    memcpy(got, in, nb);
    memcpy(want, in, nb);
    MPI_Gather(r == root ? MPI_IN_PLACE : in, 1, vec, got, 1, vec, root, c);
    PMPI_Gather(r == root ? MPI_IN_PLACE : in, 1, vec, want, 1, vec, root, c);
    if (r == root) {
        same(got, want, nb, "MPI_Gather in place on a vector type", c);
    }

    memset(got, 0x5a, nb);
    memset(want, 0x5a, nb);
    MPI_Scatter(in, 1, vec, got, 1, vec, 0, c);
    PMPI_Scatter(in, 1, vec, want, 1, vec, 0, c);
    same(got, want, nb, "MPI_Scatter on a vector type", c);
    memset(got, 0x5a, nb);
    memset(want, 0x5a, nb);
    MPI_Scatter(in, 1, block16, got, 16, MPI_INT, root, c);
    PMPI_Scatter(in, 1, block16, want, 16, MPI_INT, root, c);
    same(got, want, nb, "MPI_Scatter, a block type sent, 16 x MPI_INT received", c);
    /* in place on the root, on a vector type: its block stays in sendbuf */
    memcpy(got, in, nb);
    memcpy(want, in, nb);
    MPI_Scatter(got, 1, vec, r == 0 ? MPI_IN_PLACE : got, 1, vec, 0, c);
    PMPI_Scatter(want, 1, vec, r == 0 ? MPI_IN_PLACE : want, 1, vec, 0, c);
    same(got, want, nb, "MPI_Scatter in place on a vector type", c);

    memset(got, 0x5a, nb);
    memset(want, 0x5a, nb);
    MPI_Alltoall(in, 1, block16, got, 16, MPI_INT, c);
    PMPI_Alltoall(in, 1, block16, want, 16, MPI_INT, c);
    same(got, want, (size_t)n * 16 * sizeof(int), "MPI_Alltoall, a block type to 16 x MPI_INT", c);
    /* in place on a vector type: the gaps between items keep their bytes */
    memcpy(got, in, nb);
    memcpy(want, in, nb);
    MPI_Alltoall(MPI_IN_PLACE, 1, vec, got, 1, vec, c);
    PMPI_Alltoall(MPI_IN_PLACE, 1, vec, want, 1, vec, c);
    same(got, want, nb, "MPI_Alltoall in place on a vector type", c);
    expect_served += 8;
    vector_movements(c, vec, 5); /* packed block by block, gaps untouched */
    MPI_Type_free(&vec);
    MPI_Type_free(&block16);
    free(in);
    free(got);
    free(want);
}

/* An inter-communicator between the even and the odd ranks: MPI's. */
static void intercomm(void)
{
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2) {
        return;
    }
    MPI_Comm half;
    MPI_Comm inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 7, &inter);
    int v = rank % 2 == 0 ? 42 : -1;
    int hrank = 0;
    MPI_Comm_rank(half, &hrank);
    int root = rank % 2 == 0 ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Bcast(&v, 1, MPI_INT, root, inter);
    if (rank % 2 == 1 && v != 42) {
        FAIL("MPI_Bcast over an inter-communicator gave %d", v);
    }
    int one = 1;
    int sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
    int remote = 0;
    MPI_Comm_remote_size(inter, &remote);
    if (sum != remote) {
        FAIL("MPI_Allreduce over an inter-communicator gave %d, not %d", sum, remote);
    }
    MPI_Barrier(inter);
    /* each rank sends one int to each rank of the other group */
    int to[64];
    int from[64];
    for (int k = 0; k < remote; k++) {
        to[k] = rank * 1000 + k;
        from[k] = -1;
    }
    MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, inter);
    for (int k = 0; k < remote; k++) {
        int world = rank % 2 == 0 ? 2 * k + 1 : 2 * k; /* remote rank k's world rank */
        int h = rank / 2; /* this rank's rank in its own group */
        if (from[k] != world * 1000 + h) {
            FAIL("MPI_Alltoall over an inter-communicator: %d from remote %d, not %d", from[k], k,
                 world * 1000 + h);
        }
    }
    expect_passed += 4;
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

static void comm_suite(MPI_Comm c, int full)
{
    for (int ti = 0; ti < nserved_types; ti++) {
        if (!full && served_types[ti].type != MPI_INT && served_types[ti].type != MPI_DOUBLE) {
            continue;
        }
        for (int opi = 0; opi < 4; opi++) {
            reductions(c, &served_types[ti], opi, 1, 1);
            reductions(c, &served_types[ti], opi, 1000, 1);
        }
    }
    /* bytes: types obc has no reduction for are still moved */
    movements(c, MPI_BYTE, 4099, 1);
    movements(c, MPI_DOUBLE, 0, 1);
    if (full) {
        movements(c, MPI_CHAR, 1, 1);
        movements(c, MPI_SHORT, 333, 1);
        movements(c, MPI_LONG_DOUBLE, 17, 1);
        movements(c, MPI_C_DOUBLE_COMPLEX, 5, 1);
        movements(c, MPI_FLOAT, 300000, 1);
        /* every predefined type the reductions serve, moved as bytes too */
        for (int ti = 0; ti < nserved_types; ti++) {
            movements(c, served_types[ti].type, 3, 1);
        }
    }
    personal_derived(c);
    derived_and_fallbacks(c);
}

int main(int argc, char **argv)
{
    int n = 0;
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    init_types();

    comm_suite(MPI_COMM_WORLD, 1);
    comm_suite(MPI_COMM_SELF, 0);

    /* a split in reverse order (key = -rank), so comm ranks differ from world's */
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
    comm_suite(split, 0);
    MPI_Comm dup;
    MPI_Comm_dup(split, &dup);
    comm_suite(dup, 0);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    /* freed communicators' obc communicators went with them; new ones work */
    for (int k = 0; k < 3; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        int v = rank + k;
        int sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, dup);
        if (sum != n * (n - 1) / 2 + n * k) {
            FAIL("MPI_Allreduce on dup %d gave %d", k, sum);
        }
        expect_served += 1;
        MPI_Comm_free(&dup);
    }
    intercomm();

    int total = 0;
    PMPI_Allreduce(&nfail, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("mpi_layer_check: expect served %ld passed %ld\n", expect_served, expect_passed);
        printf("mpi_layer_check: %s (%d ranks, %d failures)\n", total == 0 ? "ok" : "FAILED", n,
               total);
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
