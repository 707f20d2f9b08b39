/* SPDX-License-Identifier: MIT */
/*
 * mpi_coll_bench.c - the MPI anchor for allreduce, reduce, allgather,
 * reduce_scatter, gather, scatter, alltoall, alltoallv and allgatherv
 * (MPI_Allreduce, MPI_Reduce, MPI_Allgather, MPI_Reduce_scatter_block,
 * MPI_Gather, MPI_Scatter, MPI_Alltoall, MPI_Alltoallv, MPI_Allgatherv),
 * measured with the method of mpi_bcast_bench.c (beside it) and of
 * obc-perf, so that all of them print comparable lines:
 *
 *   impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
 *
 * Build with any MPI wrapper (bench/run_bench.sh builds it into /tmp):
 *   mpicc.openmpi -O2 -o /tmp/mpi_coll_bench.openmpi bench/anchors/mpi_coll_bench.c
 *
 * Per size (MIN, MIN*F, ..., MAX always included), WARMUP untimed and then
 * ITERS timed iterations of: fill the inputs and poison the outputs (untimed),
 * MPI_Barrier, time this rank's call with CLOCK_MONOTONIC, reduce (max) to
 * rank 0 the rank's own duration, its end and the reference start (the
 * root's for reduce, gather and scatter, the earliest otherwise), then check every output
 * element against a locally computed exact result (untimed). Reported: the
 * median over timed iterations of the slowest rank's time, or with -S of the
 * span (latest end - reference start). ITERS = clamp(BUDGET / wall time of
 * the median warmup iteration, MINIT, MAXIT), decided on rank 0.
 *
 * Sizes and busbw as nccl-tests (and obc-perf): bytes is the whole vector
 * (allreduce, reduce) or the whole buffer of nranks blocks (allgather,
 * reduce_scatter, gather and scatter on the root, alltoall on every rank:
 * each block is bytes / nranks, so alltoall sends bytes / nranks to each
 * peer; alltoallv's bytes are nominal, as alltoall's, and its block from
 * rank i to rank j holds unit x ((i + 2j) mod 3 + 1) elements, unit = half
 * a nominal block (at least 1), packed in rank order, as obc-perf's
 * alltoallv; allgatherv's bytes are nominal, as allgather's, and rank r's
 * block holds unit x (r mod 3 + 1) elements, the same unit, packed in rank
 * order, as obc-perf's allgatherv). busbw = algbw x 2(n-1)/n (allreduce),
 * (n-1)/n (the allgathers, reduce_scatter, gather, scatter, the alltoalls),
 * 1 (reduce). `wrong` counts wrong elements (reductions) or bytes (the
 * others: one byte pattern per source and destination block, per source
 * block for the allgathers) over all ranks and iterations, outputs and
 * unmodified inputs alike.
 *
 * Inputs are chosen so every result is exact, in any order of addition:
 * floats k/2 with |k| <= 2^p / n (p: significand bits), integers k with
 * |k| <= (2^(bits-1) - 1) / n, both with |k| <= 2^20; PROD inputs are +-1 or +-2
 * (floats also +-1/2) with the factors != 1 on a few ranks only. Outputs are
 * poisoned with a value no result can take (NaN; the type's minimum).
 *
 * Options: -i IMPL (label, default "mpi"), -o allreduce|reduce|allgather|
 * reduce_scatter|gather|scatter|alltoall|alltoallv|allgatherv (default allreduce), -d
 * float32|float64|int32|int64|int8 (default float32), --op sum|prod|min|max (default sum), -b MIN,
 * -e MAX (K/M/G suffixes, default 8 and 256M), -f FACTOR (2), -r ROOT (0), -w WARMUP (3), -n MAXIT
 * (200), -m MINIT (5), -t BUDGET seconds (1.0), -c 0|1 (validate, 1), -H (header), -v ('#' detail
 * lines), -S (span), -X (self-test: one output byte per call is damaged, on the rank after the root
 * or on the root for reduce and gather, so wrong must equal the iterations).
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* -w at most this: the warmup iterations' times live on the stack */
#define WARMUP_MAX 1000

enum coll {
    COLL_ALLREDUCE,
    COLL_REDUCE,
    COLL_ALLGATHER,
    COLL_REDUCE_SCATTER,
    COLL_GATHER,
    COLL_SCATTER,
    COLL_ALLTOALL,
    COLL_ALLTOALLV,
    COLL_ALLGATHERV,
    N_COLLS
};
enum redop { OP_SUM, OP_PROD, OP_MIN, OP_MAX };
enum dtype { DT_FLOAT32, DT_FLOAT64, DT_INT32, DT_INT64, DT_INT8 };

static const char *const coll_names[] = {"allreduce",      "reduce",    "allgather",
                                         "reduce_scatter", "gather",    "scatter",
                                         "alltoall",       "alltoallv", "allgatherv"};
static const char *const op_names[] = {"sum", "prod", "min", "max"};
static const char *const dtype_names[] = {"float32", "float64", "int32", "int64", "int8"};

struct opts {
    const char *impl;
    enum coll coll;
    enum redop op;
    enum dtype dtype;
    size_t minb, maxb;
    double factor, budget;
    int root, warmup, maxit, minit, check, header, verbose, span, inject;
    int offset, offset_step; /* -A OFF[,STEP]: as obc-perf's -A */
};

/* The communicator-wide facts every helper needs. */
struct job {
    const struct opts *o;
    int rank, nranks;
    size_t dsize;
    int is_float, bits; /* bits: significand (floats) or width (integers) */
    unsigned char *send, *recv;
    size_t count; /* the count argument of the current call */
    size_t nbytes; /* the current size as nccl-tests counts it */
    int *sc, *sd, *rc, *rd; /* alltoallv: counts and displacements, in elements;
                             * allgatherv: rc, rd (the same on every rank) */
};

/* ---- options ----------------------------------------------------------- */

static void usage_exit(int rank)
{
    if (rank == 0) {
        fprintf(stderr,
                "usage: mpi_coll_bench [-i IMPL] [-o COLL] [-d TYPE] [--op OP] [-b MIN] "
                "[-e MAX] [-f F] [-r ROOT] [-w N] [-n MAXIT] [-m MINIT] [-t SEC] "
                "[-c 0|1] [-A OFF[,STEP]] [-H] [-v] [-S] [-X]\n");
    }
    MPI_Finalize();
    exit(2);
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i], s) == 0) {
            return i;
        }
    }
    return -1;
}

static int parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || v < 0) {
        return -1;
    }
    if (*end == 'k' || *end == 'K') {
        v *= 1024.0;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        v *= 1048576.0;
        end++;
    } else if (*end == 'g' || *end == 'G') {
        v *= 1073741824.0;
        end++;
    }
    *out = (size_t)v;
    return *end == '\0' ? 0 : -1;
}

/* Applies "-x VALUE"; returns 0, or -1 for an unknown flag or a bad value. */
static int apply_opt(struct opts *o, const char *a, const char *v)
{
    int k = 0;
    if (strcmp(a, "-i") == 0) {
        o->impl = v;
    } else if (strcmp(a, "-o") == 0) {
        k = lookup(coll_names, N_COLLS, v);
        o->coll = (enum coll)k;
    } else if (strcmp(a, "--op") == 0) {
        k = lookup(op_names, 4, v);
        o->op = (enum redop)k;
    } else if (strcmp(a, "-d") == 0) {
        k = lookup(dtype_names, 5, v);
        o->dtype = (enum dtype)k;
    } else if (strcmp(a, "-b") == 0) {
        k = parse_size(v, &o->minb);
    } else if (strcmp(a, "-e") == 0) {
        k = parse_size(v, &o->maxb);
    } else if (strcmp(a, "-f") == 0) {
        o->factor = atof(v);
    } else if (strcmp(a, "-t") == 0) {
        o->budget = atof(v);
    } else if (strcmp(a, "-r") == 0) {
        o->root = atoi(v);
    } else if (strcmp(a, "-w") == 0) {
        o->warmup = atoi(v);
    } else if (strcmp(a, "-n") == 0) {
        o->maxit = atoi(v);
    } else if (strcmp(a, "-m") == 0) {
        o->minit = atoi(v);
    } else if (strcmp(a, "-c") == 0) {
        o->check = atoi(v);
    } else if (strcmp(a, "-A") == 0) {
        const char *comma = strchr(v, ',');
        o->offset = atoi(v);
        o->offset_step = comma != NULL ? atoi(comma + 1) : 0;
        k = o->offset >= 0 && o->offset < 4096 && o->offset_step >= 0 && o->offset_step < 4096 ? 0
                                                                                               : -1;
    } else {
        return -1;
    }
    return k < 0 ? -1 : 0;
}

static void parse_opts(int argc, char **argv, struct opts *o, int rank, int nranks)
{
    *o = (struct opts){.impl = "mpi",
                       .minb = 8,
                       .maxb = (size_t)256 << 20,
                       .factor = 2.0,
                       .budget = 1.0,
                       .warmup = 3,
                       .maxit = 200,
                       .minit = 5,
                       .check = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int *flag = strcmp(a, "-H") == 0 ? &o->header
            : strcmp(a, "-v") == 0       ? &o->verbose
            : strcmp(a, "-S") == 0       ? &o->span
            : strcmp(a, "-X") == 0       ? &o->inject
                                         : NULL;
        if (flag != NULL) {
            *flag = 1;
        } else if (i + 1 >= argc || apply_opt(o, a, argv[i + 1]) != 0) {
            usage_exit(rank);
        } else {
            i++;
        }
    }
    if (o->factor <= 1.0 || o->minb < 1 || o->maxb < o->minb || o->warmup < 1 ||
        o->warmup > WARMUP_MAX || o->minit < 1 || o->maxit < o->minit ||
        o->maxb > (size_t)INT32_MAX || o->root < 0 || o->root >= nranks ||
        (o->inject && !o->check)) {
        usage_exit(rank);
    }
}

/* ---- data -------------------------------------------------------------- */

static MPI_Datatype mpi_type(enum dtype t)
{
    switch (t) {
    case DT_FLOAT32:
        return MPI_FLOAT;
    case DT_FLOAT64:
        return MPI_DOUBLE;
    case DT_INT32:
        return MPI_INT32_T;
    case DT_INT64:
        return MPI_INT64_T;
    default:
        return MPI_INT8_T;
    }
}

static MPI_Op mpi_op(enum redop op)
{
    switch (op) {
    case OP_PROD:
        return MPI_PROD;
    case OP_MIN:
        return MPI_MIN;
    case OP_MAX:
        return MPI_MAX;
    default:
        return MPI_SUM;
    }
}

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Rank r's input for element `index` at iteration `it`, exact in the dtype. */
static double input_value(const struct job *j, uint64_t index, uint64_t it, int r)
{
    uint64_t h = mix(mix(index ^ (it << 40)) + (uint64_t)r);
    if (j->o->op == OP_PROD) {
        double sign = (h >> 63) != 0 ? -1.0 : 1.0;
        int few = j->is_float ? 12 : j->bits - 2; /* ranks whose factor may differ from +-1 */
        int e = r < few ? (int)((h >> 8) % (j->is_float ? 3u : 2u)) - (j->is_float ? 1 : 0) : 0;
        return e < 0 ? sign * 0.5 : (e > 0 ? sign * 2.0 : sign);
    }
    /* |k| <= amp keeps every partial sum exact; 2^20 keeps k exact in a double. */
    int64_t amp = j->is_float
        ? ((int64_t)1 << (j->bits < 40 ? j->bits : 40)) / j->nranks
        : (int64_t)((((uint64_t)1 << (j->bits - 1)) - 1) / (uint64_t)j->nranks);
    amp = amp < ((int64_t)1 << 20) ? amp : ((int64_t)1 << 20);
    int64_t k = (int64_t)((h >> 32) % (uint64_t)(2 * amp + 1)) - amp;
    return j->is_float ? (double)k * 0.5 : (double)k;
}

/* op over all ranks, exactly (every partial result is exact in double). */
static double expected_value(const struct job *j, uint64_t index, uint64_t it)
{
    double acc = input_value(j, index, it, 0);
    for (int r = 1; r < j->nranks; r++) {
        double v = input_value(j, index, it, r);
        switch (j->o->op) {
        case OP_PROD:
            acc *= v;
            break;
        case OP_MIN:
            acc = v < acc ? v : acc;
            break;
        case OP_MAX:
            acc = v > acc ? v : acc;
            break;
        default:
            acc += v;
            break;
        }
    }
    return acc;
}

/* Element i of buf set to v (exact in every dtype, see the top of the file). */
static void put(const struct job *j, unsigned char *buf, size_t i, double v)
{
    const float f32 = (float)v;
    const int32_t i32 = (int32_t)v;
    const int64_t i64 = (int64_t)v;
    const int8_t i8 = (int8_t)v;
    const void *const as[] = {&f32, &v, &i32, &i64, &i8}; /* in enum dtype's order */
    memcpy(buf + i * j->dsize, as[j->o->dtype], j->dsize);
}

/* Element i as a double (integers are small, so exact); NaN for float poison. */
static double get(const struct job *j, const unsigned char *buf, size_t i)
{
    union {
        float f32;
        double f64;
        int32_t i32;
        int64_t i64;
        int8_t i8;
    } u = {.i64 = 0};
    memcpy(&u, buf + i * j->dsize, j->dsize);
    switch (j->o->dtype) {
    case DT_FLOAT32:
        return u.f32;
    case DT_FLOAT64:
        return u.f64;
    case DT_INT32:
        return u.i32;
    case DT_INT64:
        return (double)u.i64;
    default:
        return u.i8;
    }
}

/* A value no result can take: NaN (all-ones) for floats, the most negative
 * value for integers (every result has |x| <= 2^(bits-1) - 1). */
static void poison(const struct job *j, unsigned char *buf, size_t n)
{
    if (j->is_float) {
        memset(buf, 0xFF, n * j->dsize);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        memset(buf + i * j->dsize, 0, j->dsize);
        buf[i * j->dsize + j->dsize - 1] = 0x80; /* little-endian sign byte */
    }
}

static void fill_input(const struct job *j, unsigned char *buf, uint64_t first, size_t n,
                       uint64_t it)
{
    for (size_t i = 0; i < n; i++) {
        put(j, buf, i, input_value(j, first + i, it, j->rank));
    }
}

/* Wrong elements; want_rank < 0 compares with the reduction, else with that rank's input. */
static uint64_t wrong_elements(const struct job *j, const unsigned char *buf, uint64_t first,
                               size_t n, uint64_t it, int want_rank)
{
    uint64_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        double want = want_rank < 0 ? expected_value(j, first + i, it)
                                    : input_value(j, first + i, it, want_rank);
        wrong += !(get(j, buf, i) == want);
    }
    return wrong;
}

/* allgather: a byte pattern per (source rank, iteration, position). */
static unsigned char gather_byte(uint64_t pos, uint64_t it, int src)
{
    uint64_t w = mix((pos >> 3) ^ mix(it * 1024u + (uint64_t)src));
    return (unsigned char)(w >> (8 * (pos & 7)));
}

static void gather_fill(unsigned char *buf, size_t n, uint64_t it, int src, int poisoned)
{
    for (size_t i = 0; i < n; i++) {
        buf[i] = (unsigned char)(gather_byte(i, it, src) ^ (poisoned ? 0xFF : 0));
    }
}

static uint64_t gather_wrong(const unsigned char *buf, size_t n, uint64_t it, int src)
{
    uint64_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        wrong += buf[i] != gather_byte(i, it, src);
    }
    return wrong;
}

/* The personalised collectives: block (src -> dst) has its own pattern. */
static void block_fill(const struct job *j, unsigned char *buf, uint64_t it, int src, int dst,
                       int poisoned)
{
    gather_fill(buf, j->count * j->dsize, it, src * j->nranks + dst, poisoned);
}

static uint64_t block_wrong(const struct job *j, const unsigned char *buf, uint64_t it, int src,
                            int dst)
{
    return gather_wrong(buf, j->count * j->dsize, it, src * j->nranks + dst);
}

static unsigned char *block(const struct job *j, unsigned char *buf, int r)
{
    return buf + (size_t)r * j->count * j->dsize;
}

/* Only moves bytes: no reduction, data is a byte pattern. */
static int moves_bytes(enum coll c)
{
    return c == COLL_ALLGATHER || c == COLL_GATHER || c == COLL_SCATTER || c == COLL_ALLTOALL ||
        c == COLL_ALLTOALLV || c == COLL_ALLGATHERV;
}

/* ---- one call ---------------------------------------------------------- */

static int parts(const struct job *j)
{
    enum coll c = j->o->coll;
    return c == COLL_ALLREDUCE || c == COLL_REDUCE ? 1 : j->nranks;
}

/* alltoallv's blocks: unit x 1, 2 or 3 elements, by source and destination;
 * allgatherv's (dst < 0): by source alone, as every rank receives the same. */
static int vblock(const struct job *j, int src, int dst)
{
    int unit = j->count / 2 > 0 ? (int)(j->count / 2) : 1;
    return unit * ((dst < 0 ? src : src + 2 * dst) % 3 + 1);
}

static void shape(struct job *j, size_t want_bytes)
{
    size_t count = want_bytes / j->dsize / (size_t)parts(j);
    j->count = count > 0 ? count : 1;
    j->nbytes = j->count * j->dsize * (size_t)parts(j);
    for (int p = 0, sent = 0, got = 0; j->o->coll == COLL_ALLTOALLV && p < j->nranks; p++) {
        j->sc[p] = vblock(j, j->rank, p);
        j->sd[p] = sent;
        sent += j->sc[p];
        j->rc[p] = vblock(j, p, j->rank);
        j->rd[p] = got;
        got += j->rc[p];
    }
    for (int p = 0, got = 0; j->o->coll == COLL_ALLGATHERV && p < j->nranks; p++) {
        j->rc[p] = vblock(j, p, -1);
        j->rd[p] = got;
        got += j->rc[p];
    }
}

static void fill(const struct job *j, uint64_t it)
{
    size_t n = j->count;
    int root = j->o->root;
    switch (j->o->coll) {
    case COLL_ALLGATHER:
        gather_fill(j->send, n * j->dsize, it, j->rank, 0);
        for (int r = 0; r < j->nranks; r++) {
            gather_fill(j->recv + (size_t)r * n * j->dsize, n * j->dsize, it, r, 1);
        }
        break;
    case COLL_REDUCE_SCATTER:
        fill_input(j, j->send, 0, n * (size_t)j->nranks, it);
        poison(j, j->recv, n);
        break;
    case COLL_GATHER:
        block_fill(j, j->send, it, j->rank, root, 0);
        for (int r = 0; r < j->nranks && j->rank == root; r++) {
            block_fill(j, block(j, j->recv, r), it, r, root, 1);
        }
        break;
    case COLL_SCATTER:
        for (int r = 0; r < j->nranks && j->rank == root; r++) {
            block_fill(j, block(j, j->send, r), it, root, r, 0);
        }
        block_fill(j, j->recv, it, root, j->rank, 1);
        break;
    case COLL_ALLTOALL:
        for (int r = 0; r < j->nranks; r++) {
            block_fill(j, block(j, j->send, r), it, j->rank, r, 0);
            block_fill(j, block(j, j->recv, r), it, r, j->rank, 1);
        }
        break;
    case COLL_ALLTOALLV:
        for (int r = 0; r < j->nranks; r++) {
            gather_fill(j->send + (size_t)j->sd[r] * j->dsize, (size_t)j->sc[r] * j->dsize, it,
                        j->rank * j->nranks + r, 0);
            gather_fill(j->recv + (size_t)j->rd[r] * j->dsize, (size_t)j->rc[r] * j->dsize, it,
                        r * j->nranks + j->rank, 1);
        }
        break;
    case COLL_ALLGATHERV:
        gather_fill(j->send, (size_t)j->rc[j->rank] * j->dsize, it, j->rank, 0);
        for (int r = 0; r < j->nranks; r++) {
            gather_fill(j->recv + (size_t)j->rd[r] * j->dsize, (size_t)j->rc[r] * j->dsize, it, r,
                        1);
        }
        break;
    default:
        fill_input(j, j->send, 0, n, it);
        poison(j, j->recv, n);
        break;
    }
}

static void run(const struct job *j)
{
    MPI_Datatype t = mpi_type(j->o->dtype);
    MPI_Op op = mpi_op(j->o->op);
    int n = (int)j->count;
    switch (j->o->coll) {
    case COLL_ALLREDUCE:
        MPI_Allreduce(j->send, j->recv, n, t, op, MPI_COMM_WORLD);
        break;
    case COLL_REDUCE:
        MPI_Reduce(j->send, j->recv, n, t, op, j->o->root, MPI_COMM_WORLD);
        break;
    case COLL_ALLGATHER:
        MPI_Allgather(j->send, n, t, j->recv, n, t, MPI_COMM_WORLD);
        break;
    case COLL_GATHER:
        MPI_Gather(j->send, n, t, j->recv, n, t, j->o->root, MPI_COMM_WORLD);
        break;
    case COLL_SCATTER:
        MPI_Scatter(j->send, n, t, j->recv, n, t, j->o->root, MPI_COMM_WORLD);
        break;
    case COLL_ALLTOALL:
        MPI_Alltoall(j->send, n, t, j->recv, n, t, MPI_COMM_WORLD);
        break;
    case COLL_ALLTOALLV:
        MPI_Alltoallv(j->send, j->sc, j->sd, t, j->recv, j->rc, j->rd, t, MPI_COMM_WORLD);
        break;
    case COLL_ALLGATHERV:
        MPI_Allgatherv(j->send, j->rc[j->rank], t, j->recv, j->rc, j->rd, t, MPI_COMM_WORLD);
        break;
    default:
        MPI_Reduce_scatter_block(j->send, j->recv, n, t, op, MPI_COMM_WORLD);
        break;
    }
}

/* Wrong elements (bytes for allgather) of this rank's output and input. */
static uint64_t check(const struct job *j, uint64_t it)
{
    size_t n = j->count;
    int root = j->o->root;
    uint64_t wrong = 0;
    switch (j->o->coll) {
    case COLL_GATHER:
        for (int r = 0; r < j->nranks && j->rank == root; r++) {
            wrong += block_wrong(j, block(j, j->recv, r), it, r, root);
        }
        return wrong + block_wrong(j, j->send, it, j->rank, root);
    case COLL_SCATTER:
        for (int r = 0; r < j->nranks && j->rank == root; r++) {
            wrong += block_wrong(j, block(j, j->send, r), it, root, r);
        }
        return wrong + block_wrong(j, j->recv, it, root, j->rank);
    case COLL_ALLTOALL:
        for (int r = 0; r < j->nranks; r++) {
            wrong += block_wrong(j, block(j, j->recv, r), it, r, j->rank);
            wrong += block_wrong(j, block(j, j->send, r), it, j->rank, r);
        }
        return wrong;
    case COLL_ALLTOALLV:
        for (int r = 0; r < j->nranks; r++) {
            wrong += gather_wrong(j->recv + (size_t)j->rd[r] * j->dsize,
                                  (size_t)j->rc[r] * j->dsize, it, r * j->nranks + j->rank);
            wrong += gather_wrong(j->send + (size_t)j->sd[r] * j->dsize,
                                  (size_t)j->sc[r] * j->dsize, it, j->rank * j->nranks + r);
        }
        return wrong;
    case COLL_ALLGATHERV:
        for (int r = 0; r < j->nranks; r++) {
            wrong += gather_wrong(j->recv + (size_t)j->rd[r] * j->dsize,
                                  (size_t)j->rc[r] * j->dsize, it, r);
        }
        return wrong + gather_wrong(j->send, (size_t)j->rc[j->rank] * j->dsize, it, j->rank);
    case COLL_ALLGATHER:
        for (int r = 0; r < j->nranks; r++) {
            wrong += gather_wrong(j->recv + (size_t)r * n * j->dsize, n * j->dsize, it, r);
        }
        return wrong + gather_wrong(j->send, n * j->dsize, it, j->rank);
    case COLL_REDUCE_SCATTER:
        wrong += wrong_elements(j, j->recv, (uint64_t)j->rank * n, n, it, -1);
        return wrong + wrong_elements(j, j->send, 0, n * (size_t)j->nranks, it, j->rank);
    case COLL_REDUCE:
        if (j->rank == j->o->root) {
            wrong += wrong_elements(j, j->recv, 0, n, it, -1);
        }
        return wrong + wrong_elements(j, j->send, 0, n, it, j->rank);
    default:
        wrong += wrong_elements(j, j->recv, 0, n, it, -1);
        return wrong + wrong_elements(j, j->send, 0, n, it, j->rank);
    }
}

/* Output bytes of this rank, the part -X may damage (0: none). */
static size_t out_bytes(const struct job *j)
{
    switch (j->o->coll) {
    case COLL_ALLGATHER:
        return j->nbytes;
    case COLL_REDUCE:
    case COLL_GATHER:
        return j->rank == j->o->root ? j->nbytes : 0;
    case COLL_REDUCE_SCATTER:
    case COLL_SCATTER:
        return j->count * j->dsize;
    case COLL_ALLTOALLV:
    case COLL_ALLGATHERV:
        return (size_t)(j->rd[j->nranks - 1] + j->rc[j->nranks - 1]) * j->dsize;
    default:
        return j->nbytes;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One iteration: this rank's start and end stamps; adds wrong elements or bytes. */
static void one_iter(const struct job *j, uint64_t it, uint64_t *wrong, double *t0, double *t1)
{
    const struct opts *o = j->o;
    if (o->check) {
        fill(j, it);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    *t0 = now_s();
    run(j);
    *t1 = now_s();
    int on_root = o->coll == COLL_REDUCE || o->coll == COLL_GATHER;
    int victim = on_root ? o->root : (o->root + 1) % j->nranks;
    if (o->inject && j->rank == victim && out_bytes(j) > 0) {
        j->recv[out_bytes(j) / 2] ^= 0x5A;
    }
    if (o->check) {
        *wrong += check(j, it);
    }
}

/* ---- driver ------------------------------------------------------------ */

static double busbw_factor(enum coll c, int n)
{
    switch (c) {
    case COLL_ALLREDUCE:
        return 2.0 * (n - 1) / n;
    case COLL_ALLGATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_GATHER:
    case COLL_SCATTER:
    case COLL_ALLTOALL:
    case COLL_ALLTOALLV:
    case COLL_ALLGATHERV:
        return (double)(n - 1) / n;
    default:
        return 1.0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 != 0 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void print_library(const struct job *j)
{
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    for (int i = 0; i < len; i++) {
        ver[i] = ver[i] == '\n' || ver[i] == '\r' ? ' ' : ver[i];
    }
    printf("# impl=%s nranks=%d op=%s dtype=%s redop=%s root=%d library=%.*s\n", j->o->impl,
           j->nranks, coll_names[j->o->coll], dtype_names[j->o->dtype], op_names[j->o->op],
           j->o->root, len < 160 ? len : 160, ver);
}

/* Measures the current size; rank 0 prints its line. it: the global iteration counter. */
static void bench_size(const struct job *j, uint64_t *it, double *times, double *spans)
{
    const struct opts *o = j->o;
    uint64_t wrong = 0;
    double t0 = 0;
    double t1 = 0;
    double warm[WARMUP_MAX];
    for (int i = 0; i < o->warmup; i++) {
        double w0 = now_s();
        one_iter(j, (*it)++, &wrong, &t0, &t1);
        warm[i] = now_s() - w0;
    }
    double per_iter = median(warm, o->warmup); /* the median iteration, as obc-perf's */
    int iters = o->maxit;
    if (j->rank == 0 && per_iter > 0 && o->budget / per_iter < o->maxit) {
        iters = (int)(o->budget / per_iter);
    }
    iters = iters < o->minit ? o->minit : iters;
    MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);

    int has_root = o->coll == COLL_REDUCE || o->coll == COLL_GATHER || o->coll == COLL_SCATTER;
    for (int i = 0; i < iters; i++) {
        one_iter(j, (*it)++, &wrong, &t0, &t1);
        double in[3] = {t1 - t0, t1, (!has_root || j->rank == o->root) ? -t0 : -1e300};
        double out[3] = {0, 0, 0};
        MPI_Reduce(in, out, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        times[i] = out[0];
        spans[i] = out[1] + out[2];
    }
    unsigned long long mine = wrong;
    unsigned long long total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (j->rank != 0) {
        return;
    }
    double med_max = median(times, iters);
    double med_span = median(spans, iters);
    double med = o->span ? med_span : med_max;
    double algbw = med > 0 ? (double)j->nbytes / med / 1e9 : 0.0;
    printf("%s,%d,%zu,%.3f,%.6f,%.6f,%llu\n", o->impl, j->nranks, j->nbytes, med * 1e6, algbw,
           algbw * busbw_factor(o->coll, j->nranks), total);
    if (o->verbose) {
        printf("# bytes=%zu count=%zu iters=%d maxrank_median_usec=%.3f maxrank_min_usec=%.3f "
               "maxrank_max_usec=%.3f span_median_usec=%.3f span_min_usec=%.3f "
               "warmup_wall_usec=%.1f\n",
               j->nbytes, j->count, iters, med_max * 1e6, times[0] * 1e6, times[iters - 1] * 1e6,
               med_span * 1e6, spans[0] * 1e6, per_iter * 1e6);
    }
    fflush(stdout);
}

/* Page-aligned, or `offset` bytes past a page boundary (-A: obc-perf's
 * buffers at the same addresses, so both meet the same copy costs). */
static unsigned char *alloc_touched(size_t n, int rank, size_t offset)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n + offset) != 0) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(p, 0, n + offset); /* fault the pages in before any timing */
    return (unsigned char *)p + offset;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct job j = {.o = &o};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j.nranks);
    parse_opts(argc, argv, &o, j.rank, j.nranks);
    static const size_t sizes[] = {4, 8, 4, 8, 1};
    static const int bits[] = {24, 53, 32, 64, 8};
    j.dsize = sizes[o.dtype];
    j.bits = bits[o.dtype];
    j.is_float = o.dtype == DT_FLOAT32 || o.dtype == DT_FLOAT64;
    if (moves_bytes(o.coll) && o.op != OP_SUM) {
        usage_exit(j.rank); /* these reduce nothing */
    }
    if (j.rank == 0 && o.verbose) {
        print_library(&j);
    }
    if (j.rank == 0 && o.header) {
        printf("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong\n");
    }
    fflush(stdout);

    j.sc = malloc(sizeof(int) * 4 * (size_t)j.nranks);
    if (j.sc == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    j.sd = j.sc + j.nranks;
    j.rc = j.sd + j.nranks;
    j.rd = j.rc + j.nranks;
    shape(&j, o.maxb);
    /* alltoallv, allgatherv: blocks of up to 3 units, a unit at most a nominal block */
    size_t room = o.coll == COLL_ALLTOALLV || o.coll == COLL_ALLGATHERV ? 3 * j.nbytes : j.nbytes;
    size_t offset = (size_t)(o.offset + (long)j.rank * o.offset_step) % 4096;
    j.send = alloc_touched(room, j.rank, offset);
    j.recv = alloc_touched(room, j.rank, offset);
    double *times = malloc(sizeof(double) * (size_t)o.maxit);
    double *spans = malloc(sizeof(double) * (size_t)o.maxit);
    uint64_t it = 0;
    size_t prev = 0;
    for (double want = (double)o.minb;; want *= o.factor) {
        size_t n = (size_t)(want + 0.5);
        shape(&j, n < o.maxb ? n : o.maxb);
        if (j.nbytes != prev) { /* rounding to whole elements can repeat a size */
            bench_size(&j, &it, times, spans);
            prev = j.nbytes;
        }
        if (n >= o.maxb) {
            break;
        }
    }
    free(times);
    free(spans);
    free(j.send - offset);
    free(j.recv - offset);
    free(j.sc);
    MPI_Finalize();
    return 0;
}
