/* SPDX-License-Identifier: MIT */
/*
 * perf_rdata.c - the reductions' data: what rank r puts into element i at
 * iteration `iter`, and the exact result of the operator over all ranks,
 * which every rank computes on its own to check its output element by
 * element. Inputs are chosen so that each result is exact in its dtype
 * whatever order an algorithm adds in (p = significand bits, n = nranks):
 *  - integers: 64 pseudo-random bits cut to the width, even for SUM, MIN
 *    and MAX (so the result is even) and odd for PROD (so the product is
 *    odd, and never collapses to 0); SUM and PROD wrap modulo 2^bits and AVG
 *    truncates the wrapped SUM divided by n, as obc.h specifies;
 *  - floats, SUM MIN MAX: k/2 with |k| <= 2^p / n (at most 2^20), so every
 *    partial sum is exact: |sum| <= 1024 in float16, 128 in bfloat16;
 *  - floats, AVG: k = b(i) + c(i) (2r - n + 1) with c in {-1, 0, 1}: the
 *    ranks' terms cancel, the SUM is n b(i)/2 and the average b(i)/2, both
 *    exact;
 *  - floats, PROD: +-2^e with e in {-1, 0, 1} on ranks below 12 (e = 0
 *    above), so products are powers of two within float16's normal range.
 * Poison, which no result can equal, so a missed write is always counted:
 * all-ones bytes for floats (a NaN) and for integer SUM, MIN, MAX (odd);
 * zero for integer PROD (even); the bitwise NOT of the expected value for
 * integer AVG. Only AVG pays for computing results twice.
 */
#include <math.h>
#include <string.h>

#include "perf.h"

#define PROD_EXP_RANKS 12 /* ranks whose PROD inputs may be 1/2 or 2 */
#define FLOAT_AMP_CAP ((int64_t)1 << 20) /* largest |k| of a float input */

/* What the inputs look like for one (dtype, op, nranks). */
struct rgen {
    obc_dtype_t dtype;
    enum perf_kind kind;
    obc_redop_t op;
    int nranks;
    size_t dsize;
    int bits; /* integers: the width */
    int64_t amp; /* floats: |k| <= amp */
    int64_t avg_amp; /* floats, AVG: |b| <= avg_amp */
    int64_t avg_spread; /* floats, AVG: |c| <= avg_spread (0 or 1) */
};

static struct rgen rgen_make(const struct perf_ctx *ctx)
{
    struct rgen g = {
        .dtype = ctx->dtype,
        .kind = perf_dtype_kind(ctx->dtype),
        .op = ctx->redop,
        .nranks = ctx->nranks > 0 ? ctx->nranks : 1,
        .dsize = ctx->dsize,
        .bits = perf_dtype_exact_bits(ctx->dtype),
    };
    if (g.kind == PERF_KIND_FLOAT) {
        int p = g.bits < 40 ? g.bits : 40;
        g.amp = ((int64_t)1 << p) / g.nranks;
        if (g.amp > FLOAT_AMP_CAP) {
            g.amp = FLOAT_AMP_CAP;
        }
        /* |b| + |c| (n - 1) <= amp keeps every partial sum of n inputs exact. */
        g.avg_spread = g.amp >= 2 * (int64_t)(g.nranks - 1) ? 1 : 0;
        g.avg_amp = g.amp - g.avg_spread * (g.nranks - 1);
    }
    return g;
}

/* 64 pseudo-random bits per (element, iteration): MurmurHash3's fmix64. */
static uint64_t elem_seed(uint64_t index, uint64_t iter)
{
    uint64_t x = (index + 1) * 0x9E3779B97F4A7C15ull;
    x ^= (iter + 1) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 33;
    return x;
}

/* Rank r's bits for one element: a cheap mix, because checking an element
 * recomputes it for every rank. */
static uint64_t rank_bits(uint64_t seed, int rank)
{
    uint64_t x = seed + (uint64_t)(rank + 1) * 0xD1B54A32D192ED03ull;
    x ^= x >> 32;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

/* An integer in [-a, a] from the top 32 bits of x (a <= 2^20: no overflow). */
static int64_t uniform(uint64_t x, int64_t a)
{
    return (int64_t)(((x >> 32) * (uint64_t)(2 * a + 1)) >> 32) - a;
}

/* v cut to the dtype's width; sign-extended for the signed types, so that
 * comparing as int64_t (signed) or uint64_t (unsigned) is the dtype's order. */
static uint64_t int_norm(const struct rgen *g, uint64_t v)
{
    if (g->bits >= 64) {
        return v;
    }
    uint64_t mask = ((uint64_t)1 << g->bits) - 1;
    v &= mask;
    if (g->kind == PERF_KIND_SIGNED && (v >> (g->bits - 1)) != 0) {
        v |= ~mask;
    }
    return v;
}

/* Odd for PROD, even otherwise (the parity the poison relies on). */
static uint64_t int_raw(const struct rgen *g, uint64_t seed, int rank)
{
    uint64_t x = rank_bits(seed, rank);
    return g->op == OBC_PROD ? x | 1u : x & ~(uint64_t)1;
}

static uint64_t int_input(const struct rgen *g, uint64_t seed, int rank)
{
    return int_norm(g, int_raw(g, seed, rank));
}

static bool int_less(const struct rgen *g, uint64_t a, uint64_t b)
{
    return g->kind == PERF_KIND_SIGNED ? (int64_t)a < (int64_t)b : a < b;
}

/* One loop per operator: this runs once per rank and element checked.
 * SUM and PROD work on the raw 64 bits, whose low bits wrap exactly as the
 * dtype does; MIN and MAX compare normalised values. */
static uint64_t int_expected(const struct rgen *g, uint64_t seed)
{
    uint64_t acc = int_raw(g, seed, 0);
    if (g->op == OBC_PROD) {
        for (int r = 1; r < g->nranks; r++) {
            acc *= int_raw(g, seed, r);
        }
    } else if (g->op == OBC_MIN || g->op == OBC_MAX) {
        acc = int_norm(g, acc);
        for (int r = 1; r < g->nranks; r++) {
            uint64_t v = int_input(g, seed, r);
            bool take = g->op == OBC_MIN ? int_less(g, v, acc) : int_less(g, acc, v);
            acc = take ? v : acc;
        }
    } else {
        for (int r = 1; r < g->nranks; r++) {
            acc += int_raw(g, seed, r);
        }
    }
    if (g->op == OBC_AVG) {
        acc = int_norm(g, acc);
        uint64_t n = (uint64_t)g->nranks;
        acc = g->kind == PERF_KIND_SIGNED ? (uint64_t)((int64_t)acc / (int64_t)n) : acc / n;
    }
    return acc;
}

/* PROD: rank r's exponent in {-1, 0, 1} (0 on ranks from PROD_EXP_RANKS on). */
static int prod_exp(uint64_t x, int rank)
{
    return rank < PROD_EXP_RANKS ? (int)((((x >> 32) & 0xFFFFu) * 3u) >> 16) - 1 : 0;
}

/* AVG: b(i) and c(i), from the element's seed alone. */
static int64_t avg_base(const struct rgen *g, uint64_t seed)
{
    return uniform(seed, g->avg_amp);
}

static int64_t avg_spread(const struct rgen *g, uint64_t seed)
{
    return g->avg_spread != 0 ? uniform(seed << 32, 1) : 0;
}

static double float_input(const struct rgen *g, uint64_t seed, int rank)
{
    uint64_t x = rank_bits(seed, rank);
    if (g->op == OBC_PROD) {
        return ldexp((x >> 63) != 0 ? -1.0 : 1.0, prod_exp(x, rank));
    }
    if (g->op == OBC_AVG) {
        int64_t k = avg_base(g, seed) + avg_spread(g, seed) * (2 * (int64_t)rank - g->nranks + 1);
        return (double)k * 0.5;
    }
    return (double)uniform(x, g->amp) * 0.5;
}

/* Computed on the integers behind the inputs (numerators of k/2, signs and
 * exponents), which is exact and cheaper than adding doubles: this runs once
 * per rank and element checked. AVG is b/2, since the ranks' terms cancel. */
static double float_expected(const struct rgen *g, uint64_t seed)
{
    if (g->op == OBC_AVG) {
        return (double)avg_base(g, seed) * 0.5;
    }
    if (g->op == OBC_PROD) {
        uint64_t sign = 0;
        int exp = 0;
        for (int r = 0; r < g->nranks; r++) {
            uint64_t x = rank_bits(seed, r);
            sign ^= x >> 63;
            exp += prod_exp(x, r);
        }
        return ldexp(sign != 0 ? -1.0 : 1.0, exp);
    }
    int64_t acc = uniform(rank_bits(seed, 0), g->amp);
    for (int r = 1; r < g->nranks; r++) {
        int64_t k = uniform(rank_bits(seed, r), g->amp);
        if (g->op == OBC_MIN) {
            acc = k < acc ? k : acc;
        } else if (g->op == OBC_MAX) {
            acc = k > acc ? k : acc;
        } else {
            acc += k;
        }
    }
    return (double)acc * 0.5;
}

static void encode_input(const struct rgen *g, uint64_t seed, int rank, unsigned char *dst)
{
    if (g->kind == PERF_KIND_FLOAT) {
        perf_dtype_store_float(g->dtype, dst, float_input(g, seed, rank));
    } else {
        perf_dtype_store_int(g->dtype, dst, int_input(g, seed, rank));
    }
}

static void encode_expected(const struct rgen *g, uint64_t seed, unsigned char *dst)
{
    if (g->kind == PERF_KIND_FLOAT) {
        perf_dtype_store_float(g->dtype, dst, float_expected(g, seed));
    } else {
        perf_dtype_store_int(g->dtype, dst, int_expected(g, seed));
    }
}

/* a == b for one element (fixed-size copies, so no call per element). */
static bool same_element(const unsigned char *a, const unsigned char *b, size_t dsize)
{
    switch (dsize) {
    case 1:
        return a[0] == b[0];
    case 2: {
        uint16_t x, y;
        memcpy(&x, a, 2);
        memcpy(&y, b, 2);
        return x == y;
    }
    case 4: {
        uint32_t x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return x == y;
    }
    default: {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x == y;
    }
    }
}

void perf_rdata_input(const struct perf_ctx *ctx, unsigned char *buf, size_t first, size_t count,
                      int rank, uint64_t iter)
{
    struct rgen g = rgen_make(ctx);
    for (size_t j = 0; j < count; j++) {
        encode_input(&g, elem_seed(first + j, iter), rank, buf + j * g.dsize);
    }
}

uint64_t perf_rdata_input_wrong(const struct perf_ctx *ctx, const unsigned char *buf, size_t first,
                                size_t count, int rank, uint64_t iter)
{
    struct rgen g = rgen_make(ctx);
    uint64_t wrong = 0;
    unsigned char want[8];
    for (size_t j = 0; j < count; j++) {
        encode_input(&g, elem_seed(first + j, iter), rank, want);
        wrong += !same_element(buf + j * g.dsize, want, g.dsize);
    }
    return wrong;
}

void perf_rdata_poison(const struct perf_ctx *ctx, unsigned char *buf, size_t first, size_t count,
                       uint64_t iter)
{
    struct rgen g = rgen_make(ctx);
    if (g.kind == PERF_KIND_FLOAT || g.op == OBC_SUM || g.op == OBC_MIN || g.op == OBC_MAX) {
        memset(buf, 0xFF, count * g.dsize);
        return;
    }
    if (g.op == OBC_PROD) {
        memset(buf, 0, count * g.dsize);
        return;
    }
    for (size_t j = 0; j < count; j++) {
        perf_dtype_store_int(g.dtype, buf + j * g.dsize,
                             ~int_expected(&g, elem_seed(first + j, iter)));
    }
}

uint64_t perf_rdata_result_wrong(const struct perf_ctx *ctx, const unsigned char *buf, size_t first,
                                 size_t count, uint64_t iter)
{
    struct rgen g = rgen_make(ctx);
    uint64_t wrong = 0;
    unsigned char want[8];
    for (size_t j = 0; j < count; j++) {
        encode_expected(&g, elem_seed(first + j, iter), want);
        wrong += !same_element(buf + j * g.dsize, want, g.dsize);
    }
    return wrong;
}
