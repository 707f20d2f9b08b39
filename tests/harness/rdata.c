/* SPDX-License-Identifier: MIT */
/*
 * rdata.c - reduction inputs, the expected results and their checks (see
 * rdata.h for the patterns and the tolerance rules).
 *
 * Every input element is made from one 64-bit hash of (seed, rank, index),
 * cheap enough that a rank recomputes all ranks' inputs of a million
 * elements in tens of milliseconds. The float16 decoder is a table; the
 * rounding to float16/bfloat16 is done in double with rint() (nearest even),
 * independent of the library's conversions.
 */
#include "rdata.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bcase.h"
#include "obct.h"

#define NAN_EVERY 7
#define NAN_AT 3
#define NAN_RANKS 8
#define SHOW_RANKS 16

const char *obct_redop_name(obc_redop_t op)
{
    static const char *const names[OBCT_NREDOPS] = {"sum", "prod", "min", "max", "avg"};
    return (unsigned)op < OBCT_NREDOPS ? names[op] : "bad-op";
}

const char *obct_rpat_name(enum obct_rpat p)
{
    return p == OBCT_RPAT_EXACT ? "exact" : "random";
}

int obct_dtype_is_float(obc_dtype_t t)
{
    return t == OBC_FLOAT16 || t == OBC_BFLOAT16 || t == OBC_FLOAT32 || t == OBC_FLOAT64;
}

static int dtype_signed(obc_dtype_t t)
{
    return t == OBC_INT8 || t == OBC_INT32 || t == OBC_INT64;
}

static unsigned dtype_bits(obc_dtype_t t)
{
    return (unsigned)(obc_dtype_size(t) * 8);
}

static uint64_t width_mask(obc_dtype_t t)
{
    unsigned b = dtype_bits(t);
    return b >= 64 ? ~0ull : (1ull << b) - 1;
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rank_key(const struct obct_rdata *d, int rank)
{
    return mix64(d->seed * 0x2545F4914F6CDD1Dull ^ ((uint64_t)(unsigned)(rank + 11) << 40) ^
                 ((uint64_t)d->dtype << 8) ^ (uint64_t)d->op);
}

static uint64_t elem_hash(uint64_t key, size_t index)
{
    return mix64(key + (uint64_t)index * 0x9E3779B97F4A7C15ull);
}

/* ---- float16 / bfloat16, the test's own ---- */

static double g_half[65536];
static int g_half_ready;

static double half_decode(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    int m = h & 0x3ff;
    double v;
    if (e == 0x1f) {
        v = m ? NAN : INFINITY;
    } else if (e == 0) {
        v = ldexp((double)m, -24);
    } else {
        v = ldexp((double)(1024 + m), e - 25);
    }
    return (h & 0x8000) ? -v : v;
}

double obct_half_to_double(uint16_t h)
{
    if (!g_half_ready) {
        for (unsigned i = 0; i < 65536; i++) {
            g_half[i] = half_decode((uint16_t)i);
        }
        g_half_ready = 1;
    }
    return g_half[h];
}

double obct_bf16_to_double(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* x rounded to nearest even in a binary format with p significand bits (implicit bit
 * included), normal exponents emin..emax and subnormals below; inf past the largest. */
static double round_fmt(double x, int p, int emin, int emax)
{
    double a = fabs(x);
    double q;
    double r;
    int e;
    if (isnan(x) || isinf(x) || a == 0) {
        return x;
    }
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    e -= 1;
    if (e < emin) {
        e = emin;
    }
    q = ldexp(1.0, e - (p - 1));
    r = rint(a / q) * q;
    if (r >= ldexp(1.0, emax + 1)) {
        r = INFINITY;
    }
    return copysign(r, x);
}

/* Spacing of the format at |x| (the subnormal spacing below the normal range). */
static double ulp_fmt(double x, int p, int emin)
{
    int e = emin;
    if (x != 0 && !isinf(x) && !isnan(x)) {
        frexp(fabs(x), &e);
        e -= 1;
        if (e < emin) {
            e = emin;
        }
    }
    return ldexp(1.0, e - (p - 1));
}

uint16_t obct_double_to_half(double x)
{
    uint16_t s = signbit(x) ? 0x8000 : 0;
    double a = fabs(round_fmt(x, 11, -14, 15));
    int e;
    if (isnan(x)) {
        return (uint16_t)(s | 0x7e00);
    }
    if (isinf(a)) {
        return (uint16_t)(s | 0x7c00);
    }
    if (a < ldexp(1.0, -14)) {
        return (uint16_t)(s | (uint16_t)ldexp(a, 24));
    }
    frexp(a, &e);
    e -= 1;
    return (uint16_t)(s | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(a, 10 - e) - 1024));
}

uint16_t obct_double_to_bf16(double x)
{
    float f = (float)round_fmt(x, 8, -126, 127); /* exact in float32 */
    uint32_t u;
    if (isnan(x)) {
        return signbit(x) ? 0xffc0 : 0x7fc0;
    }
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

/* The dtype's value closest to x (nearest even); float64 is x itself. */
static double narrow(obc_dtype_t t, double x)
{
    switch (t) {
    case OBC_FLOAT16:
        return round_fmt(x, 11, -14, 15);
    case OBC_BFLOAT16:
        return round_fmt(x, 8, -126, 127);
    case OBC_FLOAT32:
        return (double)(float)x;
    default:
        return x;
    }
}

static double decode(obc_dtype_t t, uint64_t bits)
{
    float f;
    double v;
    uint32_t u = (uint32_t)bits;
    switch (t) {
    case OBC_FLOAT16:
        return obct_half_to_double((uint16_t)bits);
    case OBC_BFLOAT16:
        return obct_bf16_to_double((uint16_t)bits);
    case OBC_FLOAT32:
        memcpy(&f, &u, 4);
        return f;
    default:
        memcpy(&v, &bits, 8);
        return v;
    }
}

static uint64_t encode(obc_dtype_t t, double v)
{
    float f = (float)v;
    uint32_t u;
    uint64_t b;
    switch (t) {
    case OBC_FLOAT16:
        return obct_double_to_half(v);
    case OBC_BFLOAT16:
        return obct_double_to_bf16(v);
    case OBC_FLOAT32:
        memcpy(&u, &f, 4);
        return u;
    default:
        memcpy(&b, &v, 8);
        return b;
    }
}

/* ---- inputs ---- */

/* Field layout of a float dtype: exponent bias, significand bits stored, total bits. */
static void float_layout(obc_dtype_t t, int *bias, int *mbits, int *bits)
{
    switch (t) {
    case OBC_FLOAT16:
        *bias = 15, *mbits = 10, *bits = 16;
        break;
    case OBC_BFLOAT16:
        *bias = 127, *mbits = 7, *bits = 16;
        break;
    case OBC_FLOAT32:
        *bias = 127, *mbits = 23, *bits = 32;
        break;
    default:
        *bias = 1023, *mbits = 52, *bits = 64;
        break;
    }
}

/* Which input pattern gen draws from, and the dtype's layout: worked out once per fill
 * or check, not per element (a check of a million elements on 8 ranks calls gen 8
 * million times, and these tests are most of CI's time). */
enum gen_kind {
    GEN_INT, /* random bits of the full width */
    GEN_MINMAX, /* random finite floats, NaN at the planted places */
    GEN_PROD_EXACT, /* +-2^k */
    GEN_PROD_RANDOM, /* 0.75 <= |x| < 1.5 */
    GEN_RANDOM, /* 2^-9 <= |x| < 1 */
    GEN_SUM_BF16, /* exact SUM / AVG inputs, one kind per float dtype */
    GEN_SUM_F16,
    GEN_SUM_F32,
    GEN_SUM_F64
};

struct gen_rule {
    enum gen_kind kind;
    obc_dtype_t t;
    int bias;
    int mbits;
    int nbits; /* the dtype's width, integers too */
    uint64_t mask; /* integers: the dtype's width as a mask */
};

static struct gen_rule gen_rule_of(const struct obct_rdata *d)
{
    struct gen_rule g;
    memset(&g, 0, sizeof(g));
    g.t = d->dtype;
    g.mask = width_mask(d->dtype);
    if (!obct_dtype_is_float(d->dtype)) {
        g.kind = GEN_INT;
        g.nbits = (int)dtype_bits(d->dtype);
        return g;
    }
    float_layout(d->dtype, &g.bias, &g.mbits, &g.nbits);
    if (d->op == OBC_MIN || d->op == OBC_MAX) {
        g.kind = GEN_MINMAX;
    } else if (d->op == OBC_PROD) {
        g.kind = d->pat == OBCT_RPAT_EXACT ? GEN_PROD_EXACT : GEN_PROD_RANDOM;
    } else if (d->pat == OBCT_RPAT_RANDOM) {
        g.kind = GEN_RANDOM;
    } else if (d->dtype == OBC_BFLOAT16) {
        g.kind = GEN_SUM_BF16;
    } else if (d->dtype == OBC_FLOAT16) {
        g.kind = GEN_SUM_F16;
    } else if (d->dtype == OBC_FLOAT32) {
        g.kind = GEN_SUM_F32;
    } else {
        g.kind = GEN_SUM_F64;
    }
    return g;
}

static inline uint64_t make_float(const struct gen_rule *g, int sign, int exp_field, uint64_t mant)
{
    return ((uint64_t)(sign & 1) << (g->nbits - 1)) | ((uint64_t)exp_field << g->mbits) |
        (mant & ((1ull << g->mbits) - 1));
}

/* A random finite bit pattern (an all-ones exponent is folded into range). */
static inline uint64_t random_finite(const struct gen_rule *g, uint64_t h)
{
    uint64_t b = g->nbits == 64 ? h : h & ((1ull << g->nbits) - 1);
    uint64_t emask = ((uint64_t)(2 * g->bias + 1)) << g->mbits;
    if ((b & emask) == emask) {
        b ^= 1ull << (g->nbits - 2); /* top exponent bit off */
    }
    return b;
}

static inline uint64_t nan_bits(const struct gen_rule *g, int sign)
{
    return make_float(g, sign, 2 * g->bias + 1, 1ull << (g->mbits - 1));
}

/* bfloat16 nearest to the integer k (|k| < 2^24), ties to even, by the carry trick on the
 * float32 bits (the inputs only; results are rounded by round_fmt). */
static uint64_t bf16_of_int(int k)
{
    float f = (float)k;
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return u >> 16;
}

/* Input element `index` of rank: its value (floats) and, unless bits is NULL (only the
 * value is needed), its bits in the low bytes of *bits. Integers always set *bits. */
static inline double gen(const struct gen_rule *g, uint64_t key, int rank, size_t index,
                         uint64_t *bits)
{
    uint64_t h = elem_hash(key, index);
    int sign = (int)(h >> 63);
    uint64_t b;
    double v;
    switch (g->kind) {
    case GEN_INT:
        *bits = h & g->mask;
        return 0;
    case GEN_MINMAX:
        if (index % NAN_EVERY == NAN_AT && (int)(index / NAN_EVERY % NAN_RANKS) == rank) {
            b = nan_bits(g, sign);
        } else {
            b = random_finite(g, h);
        }
        break;
    case GEN_PROD_EXACT: {
        int k = g->t == OBC_FLOAT64 ? (int)(h % 9) - 4 : (int)(h % 3) - 1;
        b = make_float(g, sign, g->bias + k, 0);
        break;
    }
    case GEN_PROD_RANDOM: {
        uint64_t m = mix64(h);
        int top = (int)((m >> (g->mbits - 1)) & 1); /* 1.5 <= significand: halve it */
        b = make_float(g, sign, g->bias - top, m);
        break;
    }
    case GEN_RANDOM: {
        int e = (int)((h >> 48) % 9); /* 2^-(e+1) <= |x| < 2^-e */
        b = make_float(g, sign, g->bias - 1 - e, mix64(h));
        break;
    }
    case GEN_SUM_BF16:
        b = bf16_of_int((int)(h % 8193) - 4096);
        break;
    default:
        if (g->kind == GEN_SUM_F16) {
            v = (double)((int)(h % 2047) - 1023);
        } else if (g->kind == GEN_SUM_F32) {
            v = (double)((int64_t)(h % 131073) - 65536) * 0.0625;
        } else {
            v = (double)((int64_t)(h & ((1ull << 41) - 1)) - ((int64_t)1 << 40)) / 256.0;
        }
        if (bits != NULL) {
            *bits = encode(g->t, v);
        }
        return v;
    }
    if (bits != NULL) {
        *bits = b;
    }
    return decode(g->t, b);
}

static void store(void *p, size_t k, size_t esize, uint64_t bits)
{
    memcpy((unsigned char *)p + k * esize, &bits, esize); /* little-endian host */
}

static uint64_t load(const void *p, size_t k, size_t esize)
{
    uint64_t b = 0;
    memcpy(&b, (const unsigned char *)p + k * esize, esize);
    return b;
}

void obct_rfill(const struct obct_rdata *d, void *p, size_t n, size_t first, int rank)
{
    size_t esize = obc_dtype_size(d->dtype);
    uint64_t key = rank_key(d, rank);
    struct gen_rule g = gen_rule_of(d);
    for (size_t k = 0; k < n; k++) {
        uint64_t bits;
        gen(&g, key, rank, first + k, &bits);
        store(p, k, esize, bits);
    }
}

/* ---- expected results ---- */

struct expect {
    int is_int;
    uint64_t want_bits; /* integers */
    double want; /* floats: the expected value, or the reference when tol > 0 */
    double tol;
};

static int64_t sign_extend(uint64_t v, unsigned bits)
{
    if (bits >= 64) {
        return (int64_t)v;
    }
    if (v & (1ull << (bits - 1))) {
        v |= ~((1ull << bits) - 1);
    }
    return (int64_t)v;
}

static uint64_t int_expect(const struct obct_rdata *d, const struct gen_rule *g,
                           const uint64_t *keys, size_t index)
{
    unsigned nb = (unsigned)g->nbits;
    uint64_t mask = g->mask;
    int sgn = dtype_signed(d->dtype);
    uint64_t acc = 0;
    for (int r = 0; r < d->nranks; r++) {
        uint64_t x;
        gen(g, keys[r], r, index, &x);
        if (r == 0) {
            acc = x;
            continue;
        }
        switch (d->op) {
        case OBC_SUM:
        case OBC_AVG:
            acc += x;
            break;
        case OBC_PROD:
            acc *= x;
            break;
        case OBC_MIN:
            if (sgn ? sign_extend(x, nb) < sign_extend(acc & mask, nb) : x < (acc & mask)) {
                acc = x;
            }
            break;
        case OBC_MAX:
            if (sgn ? sign_extend(x, nb) > sign_extend(acc & mask, nb) : x > (acc & mask)) {
                acc = x;
            }
            break;
        }
    }
    acc &= mask;
    if (d->op == OBC_AVG) {
        if (sgn) {
            acc = (uint64_t)(sign_extend(acc, nb) / (int64_t)d->nranks);
        } else {
            acc /= (uint64_t)d->nranks;
        }
    }
    return acc & mask;
}

static double tol16(obc_dtype_t t, double ref, double s, int n)
{
    double ulp = t == OBC_FLOAT16 ? ulp_fmt(ref, 11, -14) : ulp_fmt(ref, 8, -126);
    return ulp + n * ldexp(1.0, -24) * s;
}

static struct expect float_expect(const struct obct_rdata *d, const struct gen_rule *g,
                                  const uint64_t *keys, size_t index)
{
    obc_dtype_t t = d->dtype;
    int n = d->nranks;
    double sum = 0;
    double abs_sum = 0;
    double prod = 1;
    double mn = INFINITY;
    double mx = -INFINITY;
    int nan = 0;
    struct expect e = {0, 0, 0, 0};
    double s;
    for (int r = 0; r < n; r++) {
        double v = gen(g, keys[r], r, index, NULL);
        sum += v;
        abs_sum += fabs(v);
        prod *= v;
        if (isnan(v)) {
            nan = 1;
        } else {
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
    }
    switch (d->op) {
    case OBC_MIN:
        e.want = nan ? NAN : mn;
        return e;
    case OBC_MAX:
        e.want = nan ? NAN : mx;
        return e;
    case OBC_SUM:
        e.want = sum;
        s = abs_sum;
        break;
    case OBC_AVG:
        if (d->pat == OBCT_RPAT_RANDOM || t == OBC_FLOAT64) {
            e.want = sum / n;
        } else {
            e.want = (double)((float)sum / (float)n); /* divided in the float32 accumulator */
        }
        s = abs_sum / n;
        break;
    default:
        e.want = prod;
        s = fabs(prod);
        break;
    }
    if (d->pat == OBCT_RPAT_EXACT) {
        e.want = narrow(t, e.want);
        return e;
    }
    switch (t) {
    case OBC_FLOAT64:
        e.tol = 1e-12 * n * s;
        break;
    case OBC_FLOAT32:
        e.tol = 1e-5 * n * s;
        break;
    default:
        e.tol = tol16(t, e.want, s, n);
        break;
    }
    return e;
}

static void format_value(char *out, size_t len, obc_dtype_t t, uint64_t bits)
{
    unsigned nb = dtype_bits(t);
    if (obct_dtype_is_float(t)) {
        snprintf(out, len, "%.17g (0x%0*llx)", decode(t, bits), (int)(nb / 4),
                 (unsigned long long)bits);
    } else if (dtype_signed(t)) {
        snprintf(out, len, "%lld (0x%0*llx)", (long long)sign_extend(bits, nb), (int)(nb / 4),
                 (unsigned long long)bits);
    } else {
        snprintf(out, len, "%llu (0x%0*llx)", (unsigned long long)bits, (int)(nb / 4),
                 (unsigned long long)bits);
    }
}

/* "r0=... r1=..." for the first SHOW_RANKS ranks' inputs at index. */
static void format_inputs(char *out, size_t len, const struct obct_rdata *d, const uint64_t *keys,
                          size_t index)
{
    size_t used = 0;
    struct gen_rule g = gen_rule_of(d);
    out[0] = '\0';
    for (int r = 0; r < d->nranks && r < SHOW_RANKS && used + 1 < len; r++) {
        char v[64];
        uint64_t bits;
        gen(&g, keys[r], r, index, &bits);
        format_value(v, sizeof(v), d->dtype, bits);
        used += (size_t)snprintf(out + used, len - used, "%sr%d=%s", r ? " " : "", r, v);
    }
}

int obct_rcheck_at(const char *file, int line, const char *what, const struct obct_rdata *d,
                   const void *got, size_t n, size_t first)
{
    size_t esize = obc_dtype_size(d->dtype);
    uint64_t keys[1024];
    size_t nbad = 0;
    size_t bad_k = 0;
    struct expect bad_e = {0, 0, 0, 0};
    int is_float = obct_dtype_is_float(d->dtype);
    struct gen_rule rule = gen_rule_of(d);
    OBCT_ASSERT(d->nranks >= 1 && d->nranks <= 1024);
    for (int r = 0; r < d->nranks; r++) {
        keys[r] = rank_key(d, r);
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t gb = load(got, k, esize);
        struct expect e;
        int ok;
        if (!is_float) {
            e.is_int = 1;
            e.want_bits = int_expect(d, &rule, keys, first + k);
            e.tol = 0;
            ok = gb == e.want_bits;
        } else {
            double g = decode(d->dtype, gb);
            e = float_expect(d, &rule, keys, first + k);
            if (e.tol == 0) {
                ok = isnan(e.want) ? isnan(g) : g == e.want;
            } else {
                ok = !isnan(g) && fabs(g - e.want) <= e.tol;
            }
        }
        if (!ok && nbad++ == 0) {
            bad_k = k;
            bad_e = e;
        }
    }
    if (nbad > 0) {
        char gs[96];
        char ws[96];
        char ins[SHOW_RANKS * 64];
        format_value(gs, sizeof(gs), d->dtype, load(got, bad_k, esize));
        if (bad_e.is_int) {
            format_value(ws, sizeof(ws), d->dtype, bad_e.want_bits);
        } else if (bad_e.tol == 0) {
            format_value(ws, sizeof(ws), d->dtype, encode(d->dtype, bad_e.want));
        } else {
            snprintf(ws, sizeof(ws), "%.17g +- %.3g", bad_e.want, bad_e.tol);
        }
        format_inputs(ins, sizeof(ins), d, keys, first + bad_k);
        obct_soft_fail(file, line,
                       "%s: %zu of %zu elements wrong (%s %s %s, %d ranks, seed=%llu); first bad "
                       "element %zu (input index %zu): got %s, expected %s; inputs %s",
                       what, nbad, n, obct_rpat_name(d->pat), obct_dtype_name(d->dtype),
                       obct_redop_name(d->op), d->nranks, (unsigned long long)d->seed, bad_k,
                       first + bad_k, gs, ws, ins);
        return -1;
    }
    return 0;
}

int obct_rcheck_input_at(const char *file, int line, const char *what, const struct obct_rdata *d,
                         const void *got, size_t n, size_t first, int rank)
{
    size_t esize = obc_dtype_size(d->dtype);
    uint64_t key = rank_key(d, rank);
    struct gen_rule g = gen_rule_of(d);
    size_t nbad = 0;
    size_t bad_k = 0;
    uint64_t bad_want = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t want;
        gen(&g, key, rank, first + k, &want);
        if (load(got, k, esize) != want && nbad++ == 0) {
            bad_k = k;
            bad_want = want;
        }
    }
    if (nbad > 0) {
        char gs[96];
        char ws[96];
        format_value(gs, sizeof(gs), d->dtype, load(got, bad_k, esize));
        format_value(ws, sizeof(ws), d->dtype, bad_want);
        obct_soft_fail(file, line,
                       "%s: %zu of %zu elements changed (%s %s, rank %d's input, seed=%llu); first "
                       "at element %zu: got %s, expected %s",
                       what, nbad, n, obct_dtype_name(d->dtype), obct_redop_name(d->op), rank,
                       (unsigned long long)d->seed, bad_k, gs, ws);
        return -1;
    }
    return 0;
}

int obct_same_bytes_at(const char *file, int line, const char *what, const void *got,
                       const void *want, size_t nbytes)
{
    const unsigned char *g = got;
    const unsigned char *w = want;
    size_t nbad = 0;
    size_t first = 0;
    if (nbytes == 0 || memcmp(got, want, nbytes) == 0) {
        return 0;
    }
    for (size_t i = 0; i < nbytes; i++) {
        if (g[i] != w[i] && nbad++ == 0) {
            first = i;
        }
    }
    obct_soft_fail(file, line,
                   "%s: %zu of %zu bytes differ; first at byte %zu: expected 0x%02x got 0x%02x",
                   what, nbad, nbytes, first, w[first], g[first]);
    return -1;
}
