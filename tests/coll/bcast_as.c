/* SPDX-License-Identifier: MIT */
/*
 * bcast_as.c - obc_broadcast_as (float32 data travelling as float16 or
 * bfloat16) over its matrix: sizes 0, 1, odd, ~1 MiB + odd, 16 MiB + odd
 * (4 MiB + odd with OBCT_QUICK), roots first/middle/last, in place and out
 * of place, both wire dtypes. The root's data mixes random bit patterns with
 * values that exercise the rounding (ties to even, float16 and float32
 * subnormals, NaN, infinities, values beyond float16's range, the largest
 * floats). Every rank's result must equal a scalar reference rounding,
 * written here independently of the library (in double arithmetic), bit for
 * bit (NaN: any NaN, but the same bits on every rank, checked by an
 * allgather of hashes); guards must stay untouched, the root's sendbuf
 * unchanged. Then the argument checks (pairs without a conversion, a
 * converting call inside a group: INVALID_ARG; wire == dtype: a plain
 * broadcast of any dtype), and last a wire dtype mismatch (rank 1 sends
 * float16 where the others say bfloat16) and a count mismatch, each on a
 * fresh communicator, three times each: no rank may succeed, none may hang,
 * and at least one must report OBC_ERR_MISMATCH, within a few seconds (a
 * root may finish its call first, as with obc_broadcast: then its next call
 * must fail); on one host a call that fails must fail with MISMATCH.
 */
/* obct: nranks=1,2 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=4 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 env=OBCT_QUICK=1 nranks=4 */
/* obct: name=small env=OBC_HOST_ID=rank/2 env=OBCT_CAST_SMALL=1 nranks=4 san */
/* obct: name=pieces env=OBC_CAST_CHUNK_BYTES=5000 env=OBC_CAST_DEPTH=2 env=OBCT_QUICK=1 nranks=3 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "obct.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* x rounded to nearest even into a binary format with p significand bits,
 * smallest normal exponent emin and largest finite value maxv; beyond maxv
 * infinity. Exact in double: x has 24 bits, the quantum is a power of 2. */
static float round_ref(float x, int p, int emin, double maxv)
{
    if (isnan(x) || isinf(x) || x == 0.0f) {
        return x;
    }
    int e;
    frexp((double)x, &e); /* |x| = m * 2^e, m in [0.5, 1) */
    e -= 1; /* |x| = m' * 2^e, m' in [1, 2) */
    int qexp = (e < emin ? emin : e) - (p - 1);
    double r = rint(ldexp((double)x, -qexp));
    r = ldexp(r, qexp);
    if (fabs(r) > maxv) {
        return x < 0 ? -INFINITY : INFINITY;
    }
    return (float)r;
}

static float expect_of(float x, obc_dtype_t wire)
{
    if (wire == OBC_FLOAT16) {
        return round_ref(x, 11, -14, 65504.0);
    }
    return round_ref(x, 8, -126, ldexp(2.0 - ldexp(1.0, -7), 127));
}

/* Values at the edges of the rounding, for both wire dtypes. */
static const uint32_t special[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, /* 0, -0, 1, -1 */
    0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, /* bf16 ties (to even down, up), near */
    0x3f801000, 0x3f803000, 0x3f801001, 0x3f800fff, /* f16 ties and near */
    0x35800000, 0x33800000, 0x33c00000, 0x34200000, /* f16 subnormals: 2^-20, 2^-24, 1.5*2^-24 */
    0x33000000, 0x33000001, 0x387fc000, 0x38800000, /* 2^-25 (tie to 0), above; near 2^-14 */
    0x00000001, 0x00400000, 0x80123456, 0x007fffff, /* f32 subnormals */
    0x7f800000, 0xff800000, 0x7fc00000, 0xffc12345, /* inf, -inf, NaN, NaN with payload */
    0x7f800001, 0x477fe000, 0x477ff000, 0x477fefff, /* signalling NaN, 65504, 65520 (tie->inf) */
    0x47800000, 0x7f7fffff, 0xff7fffff, 0x7f7f8000, /* 65536, FLT_MAX (bf16: inf), bf16 tie */
    0x501502f9, 0xd01502f9, 0x3eaaaaab, 0x40490fdb, /* 1e10, -1e10, 1/3, pi */
};
#define NSPECIAL (sizeof(special) / sizeof(special[0]))

static uint32_t mix32(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* Element i of the root's data for call `seed`. */
static float value_at(uint64_t seed, size_t i)
{
    uint32_t h = mix32(seed * 0x9E3779B97F4A7C15ull + i);
    if (h % 4 == 0) {
        return float_of(special[(h >> 8) % NSPECIAL]);
    }
    if (h % 4 == 1) { /* ordinary magnitudes, most of them in float16's range */
        return (float)ldexp((double)(int32_t)mix32(h) / 2147483648.0, (int)(h >> 8) % 40 - 24);
    }
    return float_of(mix32(i ^ h)); /* any bit pattern */
}

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

static bool env_on(const char *name)
{
    const char *s = getenv(name);
    return s != NULL && s[0] == '1';
}

static int check_result(const float *got, size_t count, uint64_t seed, obc_dtype_t wire,
                        const char *what)
{
    for (size_t i = 0; i < count; i++) {
        float x = value_at(seed, i), want = expect_of(x, wire);
        bool ok = isnan(want) ? isnan(got[i]) : bits_of(got[i]) == bits_of(want);
        if (!ok) {
            OBCT_CHECK_EQ_INT(bits_of(got[i]), bits_of(want));
            OBCT_LOG("%s: first bad element %zu of %zu: input %08x, got %08x, want %08x", what, i,
                     count, bits_of(x), bits_of(got[i]), bits_of(want));
            return -1;
        }
    }
    return 0;
}

/* One call of the matrix; every rank checks its result and compares hashes. */
static void one_case(obc_comm_t *comm, size_t count, int root, bool in_place, obc_dtype_t wire,
                     uint64_t seed)
{
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    size_t nbytes = count * sizeof(float);
    struct obct_buf send, recv;
    char what[128];
    snprintf(what, sizeof(what), "count %zu root %d %s %s", count, root,
             in_place ? "in place" : "out of place", wire == OBC_FLOAT16 ? "float16" : "bfloat16");
    obct_buf_alloc(&recv, nbytes, (size_t)seed % 7 * 4);
    obct_buf_alloc(&send, rank == root && !in_place ? nbytes : 0, 12);
    float *src = rank == root && !in_place ? (float *)send.data : (float *)recv.data;
    if (rank == root) {
        for (size_t i = 0; i < count; i++) {
            src[i] = value_at(seed, i);
        }
    } else {
        obct_poison(recv.data, nbytes);
    }
    if (rank == root && !in_place) {
        obct_poison(recv.data, nbytes);
    }
    OBCT_OK(obc_broadcast_as(src, recv.data, count, OBC_FLOAT32, wire, root, comm), comm);
    if (check_result((const float *)recv.data, count, seed, wire, what) != 0) {
        OBCT_FAIL("%s: wrong result", what);
    }
    if (rank == root && !in_place) {
        for (size_t i = 0; i < count; i++) {
            if (bits_of(src[i]) != bits_of(value_at(seed, i))) {
                OBCT_FAIL("%s: the root's sendbuf changed at %zu", what, i);
            }
        }
    }
    obct_buf_check(what, &recv);
    obct_buf_check(what, &send);
    uint64_t mine = hash_bytes(recv.data, nbytes), all[64];
    if (nranks <= 64) {
        OBCT_OK(obc_allgather(&mine, all, 1, OBC_UINT64, comm), comm);
        for (int r = 0; r < nranks; r++) {
            if (all[r] != mine) {
                OBCT_FAIL("%s: rank %d's bytes differ from rank %d's", what, r, rank);
            }
        }
    }
    obct_buf_free(&send);
    obct_buf_free(&recv);
}

static void matrix(obc_comm_t *comm)
{
    int n = obc_comm_size(comm);
    /* OBCT_CAST_SMALL (the sanitizer run; main sets 64 KiB pieces): the two large
     * sizes become 64 Ki + 5 and 96 Ki + 3 elements, several pieces each */
    bool small = env_on("OBCT_CAST_SMALL");
    size_t big = env_on("OBCT_QUICK") ? (4u << 20) / 4 + 3 : (16u << 20) / 4 + 3;
    const size_t sizes[] = {0, 1, 4099, small ? (64u << 10) + 5 : (1u << 20) / 4 + 5,
                            small ? (96u << 10) + 3 : big};
    const int roots[] = {0, n / 2, n - 1};
    const obc_dtype_t wires[] = {OBC_BFLOAT16, OBC_FLOAT16};
    uint64_t seed = 1;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        for (int r = 0; r < 3; r++) {
            for (int mode = 0; mode < 2; mode++) {
                /* the largest size: one wire dtype per root and mode, alternating */
                for (int w = 0; w < 2; w++) {
                    if (s == 4 && (w + r + mode) % 2 != 0) {
                        continue;
                    }
                    one_case(comm, sizes[s], roots[r], mode == 1, wires[w], seed++);
                }
            }
        }
    }
}

static void bad_args(obc_comm_t *comm)
{
    double d[4] = {1, 2, 3, 4};
    int32_t v[4] = {0};
    float f[4] = {1, 2, 3, 4};
    int rank = obc_comm_rank(comm);
    OBCT_RC(obc_broadcast_as(d, d, 4, OBC_FLOAT64, OBC_BFLOAT16, 0, comm), OBC_ERR_INVALID_ARG,
            NULL);
    OBCT_RC(obc_broadcast_as(v, v, 4, OBC_INT32, OBC_FLOAT16, 0, comm), OBC_ERR_INVALID_ARG, NULL);
    OBCT_RC(obc_broadcast_as(f, f, 4, OBC_FLOAT32, OBC_INT8, 0, comm), OBC_ERR_INVALID_ARG, NULL);
    OBCT_RC(obc_broadcast_as(f, f, 4, OBC_FLOAT32, (obc_dtype_t)99, 0, comm), OBC_ERR_INVALID_ARG,
            NULL);
    OBCT_RC(obc_broadcast_as(f, f, 4, OBC_FLOAT32, OBC_BFLOAT16, -1, comm), OBC_ERR_INVALID_ARG,
            NULL);
    OBCT_OK(obc_group_start(), NULL);
    OBCT_RC(obc_broadcast_as(f, f, 4, OBC_FLOAT32, OBC_BFLOAT16, 0, comm), OBC_ERR_INVALID_ARG,
            NULL);
    OBCT_OK(obc_group_end(), NULL);
    /* wire == dtype: a plain broadcast, any dtype */
    for (int i = 0; i < 4; i++) {
        v[i] = rank == 0 ? 1000 + i : -1;
    }
    OBCT_OK(obc_broadcast_as(v, v, 4, OBC_INT32, OBC_INT32, 0, comm), comm);
    for (int i = 0; i < 4; i++) {
        OBCT_EQ_INT(v[i], 1000 + i);
    }
    /* the communicator still works after the refused calls */
    float x[3] = {rank == 0 ? 1.00390625f : 0.0f, 3.0f, 5.0f};
    OBCT_OK(obc_broadcast_as(x, x, 1, OBC_FLOAT32, OBC_BFLOAT16, 0, comm), comm);
    OBCT_EQ_INT(bits_of(x[0]), bits_of(1.0f)); /* a tie, to even */
}

/* Rank 1 disagrees (wire dtype, or count); every rank must fail, by this call or (if it
 * agrees with the root) its next, and one with MISMATCH. */
static void mismatch(const char *what, bool by_count)
{
    obc_comm_t *comm = obct_comm_from_env();
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    size_t count = env_on("OBCT_CAST_SMALL") ? (96u << 10) + 1 : (3u << 20) / 4 + 1;
    float *buf = calloc(count, sizeof(float));
    obc_dtype_t wire = OBC_BFLOAT16;
    size_t mine = count;
    if (rank == 1) {
        wire = by_count ? OBC_BFLOAT16 : OBC_FLOAT16;
        mine = by_count ? count - 1 : count;
    }
    obc_comm_set_timeout(comm, 20.0 * obct_time_scale());
    double t0 = obct_now();
    obc_result_t res = obc_broadcast_as(buf, buf, mine, OBC_FLOAT32, wire, 0, comm);
    double took = obct_now() - t0;
    OBCT_LOG("%s: %s after %.3f s: %s", what, obct_rc_name(res), took, obc_comm_last_error(comm));
    /* On one host every failing piece meets the disagreement itself (a
     * stamp, or the arena's MISMATCH verdict), so a call that fails names
     * it: ABORTED ("not run: broken") from a later piece must not hide the
     * first piece's MISMATCH, whichever thread saw which first. */
    if (getenv("OBC_HOST_ID") == NULL && res != OBC_SUCCESS) {
        OBCT_ASSERT_MSG(res == OBC_ERR_MISMATCH, "%s: rank %d's call failed with %s", what, rank,
                        obct_rc_name(res));
    }
    if (res == OBC_SUCCESS && rank != 1) {
        /* As with obc_broadcast (docs/reliability.md), a rank that agrees
         * with the root may finish with the root's data before rank 1's
         * disagreement is found; then its next call fails. */
        res = obc_barrier(comm);
        OBCT_LOG("%s: rank %d's next call: %s", what, rank, obct_rc_name(res));
    }
    OBCT_ASSERT_MSG(res == OBC_ERR_MISMATCH || res == OBC_ERR_ABORTED, "%s: rank %d got %s", what,
                    rank, obct_rc_name(res));
    OBCT_LE_DBL(obct_now() - t0, 10.0 * obct_time_scale());
    int got = res == OBC_ERR_MISMATCH, any = 0;
    /* the communicator is broken: count the MISMATCHes through a fresh one */
    obc_comm_destroy(comm);
    comm = obct_comm_from_env();
    OBCT_OK(obc_allreduce(&got, &any, 1, OBC_INT32, OBC_SUM, comm), comm);
    OBCT_ASSERT_MSG(any >= 1, "%s: no rank of %d reported OBC_ERR_MISMATCH", what, nranks);
    obc_comm_destroy(comm);
    free(buf);
}

int main(void)
{
    if (env_on("OBCT_CAST_SMALL")) {
        setenv("OBC_CAST_CHUNK_BYTES", "65536", 0); /* several pieces per call */
    }
    obc_comm_t *comm = obct_comm_from_env();
    double t0 = obct_now();
    matrix(comm);
    OBCT_LOG("matrix: %.2f s", obct_now() - t0);
    bad_args(comm);
    int nranks = obc_comm_size(comm);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    /* A few times over: which rank and which thread meets the disagreement
     * first is a race. */
    for (int i = 0; i < 3 && nranks > 1; i++) {
        mismatch("wire dtype mismatch", false);
        mismatch("count mismatch", true);
    }
    return obct_finish("bcast_as");
}
