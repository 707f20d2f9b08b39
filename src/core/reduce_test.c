/* SPDX-License-Identifier: MIT */
/*
 * reduce_test.c - the reduction kernels against a scalar reference written
 * independently here (the 16-bit float conversions too, in double
 * arithmetic): every dtype and op, in place and not, lengths that leave
 * vector tails (0, 1, 7, 1025, ...), obc__red_many over 1..9 inputs across
 * block boundaries with dst aliasing an input, and the documented edge
 * cases: wrapping, AVG truncation, NaN and -0.0 in MIN/MAX, rounding ties
 * and overflow of the conversions. Each test runs twice: with the kernels
 * the CPU selects and with the baseline ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "core/reduce.h"

#define NMAX 3001
#define NIN_MAX 9

static const obc_dtype_t all_dtypes[] = {OBC_INT8,    OBC_UINT8,  OBC_INT32,   OBC_UINT32,
                                         OBC_INT64,   OBC_UINT64, OBC_FLOAT16, OBC_BFLOAT16,
                                         OBC_FLOAT32, OBC_FLOAT64};
static const obc_redop_t all_ops[] = {OBC_SUM, OBC_PROD, OBC_MIN, OBC_MAX, OBC_AVG};
static const size_t lengths[] = {0, 1, 7, 1025, 2051, NMAX};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- reference conversions, in double ------------------------------- */

static uint32_t bits_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static double ref_half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    int m = h & 0x3ff;
    double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double ref_bf16_value(uint16_t h)
{
    int e = (h >> 7) & 0xff;
    int m = h & 0x7f;
    double v = e == 255 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -133) : ldexp(128 + m, e - 134);
    return (h & 0x8000) ? -v : v;
}

static bool half_is_nan(uint16_t h)
{
    return (h & 0x7fff) > 0x7c00;
}

static bool bf16_is_nan(uint16_t h)
{
    return (h & 0x7fff) > 0x7f80;
}

/* x (0 <= x < 2^52) to the nearest integer, ties to even: adding 2^52
 * leaves no fraction bits, so the FPU rounds there (and the tests link
 * no libm for rint). */
static double round_even(double x)
{
    return (x + 0x1p52) - 0x1p52;
}

/* Round |f| to `digits` significant bits (nearest even), with subnormal
 * quantum 2^min_exp; returns the rounded magnitude. */
static double ref_round(double a, int digits, int min_exp)
{
    int e;
    if (a == 0) {
        return 0;
    }
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    if (e - digits < min_exp) {
        return ldexp(round_even(ldexp(a, -min_exp)), min_exp);
    }
    return ldexp(round_even(ldexp(a, digits - e)), e - digits);
}

static uint16_t ref_float_to_half(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    double r = ref_round(fabs((double)f), 11, -24);
    if (isnan(f)) {
        return 0x7e00;
    }
    if (r >= 65536.0) {
        return sign | 0x7c00;
    }
    if (r < 0x1p-14) {
        return sign | (uint16_t)ldexp(r, 24);
    }
    int e;
    double m = frexp(r, &e); /* r = m * 2^e, m in [0.5, 1): half exponent e - 1 */
    return sign | (uint16_t)(((e + 14) << 10) | ((unsigned)ldexp(m, 11) - 1024));
}

static uint16_t ref_float_to_bf16(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    double r = ref_round(fabs((double)f), 8, -133);
    if (isnan(f)) {
        return 0x7fc0;
    }
    if (r >= 0x1p128) {
        return sign | 0x7f80;
    }
    return sign | (uint16_t)(bits_f32((float)r) >> 16);
}

/* ---- reference reduction --------------------------------------------- */

static unsigned bits_of(obc_dtype_t t)
{
    return 8 * (unsigned)obc_dtype_size(t);
}

static bool is_signed_int(obc_dtype_t t)
{
    return t == OBC_INT8 || t == OBC_INT32 || t == OBC_INT64;
}

static bool is_int(obc_dtype_t t)
{
    return t <= OBC_UINT64;
}

static bool is_half(obc_dtype_t t)
{
    return t == OBC_FLOAT16 || t == OBC_BFLOAT16;
}

static obc_dtype_t acc_type(obc_dtype_t t)
{
    return is_half(t) ? OBC_FLOAT32 : t;
}

static uint64_t mask_of(obc_dtype_t t)
{
    return bits_of(t) == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits_of(t)) - 1;
}

static int64_t sext(uint64_t u, obc_dtype_t t)
{
    unsigned shift = 64 - bits_of(t);
    return (int64_t)(u << shift) >> shift;
}

/* An element: raw bits (integers, and 16-bit floats once narrowed) or a value (floats). */
struct val {
    uint64_t u;
    double f;
};

static struct val load(const void *p, size_t i, obc_dtype_t t)
{
    struct val v = {0, 0};
    switch (t) {
    case OBC_INT8:
    case OBC_UINT8:
        v.u = ((const uint8_t *)p)[i];
        break;
    case OBC_INT32:
    case OBC_UINT32:
        v.u = ((const uint32_t *)p)[i];
        break;
    case OBC_INT64:
    case OBC_UINT64:
        v.u = ((const uint64_t *)p)[i];
        break;
    case OBC_FLOAT16:
        v.u = ((const uint16_t *)p)[i];
        v.f = ref_half_value((uint16_t)v.u);
        break;
    case OBC_BFLOAT16:
        v.u = ((const uint16_t *)p)[i];
        v.f = ref_bf16_value((uint16_t)v.u);
        break;
    case OBC_FLOAT32:
        v.f = ((const float *)p)[i];
        break;
    case OBC_FLOAT64:
        v.f = ((const double *)p)[i];
        break;
    }
    return v;
}

static double ref_float_op(double x, double y, obc_redop_t op, bool single)
{
    if ((op == OBC_MIN || op == OBC_MAX) && (isnan(x) || isnan(y))) {
        return NAN;
    }
    switch (op) {
    case OBC_SUM:
    case OBC_AVG:
        return single ? (double)((float)x + (float)y) : x + y;
    case OBC_PROD:
        return single ? (double)((float)x * (float)y) : x * y;
    case OBC_MIN:
        return y < x ? y : x;
    case OBC_MAX:
        return y > x ? y : x;
    }
    return 0;
}

static uint64_t ref_int_op(uint64_t x, uint64_t y, obc_redop_t op, obc_dtype_t t)
{
    bool y_less = is_signed_int(t) ? sext(y, t) < sext(x, t) : y < x;
    switch (op) {
    case OBC_SUM:
    case OBC_AVG:
        return (x + y) & mask_of(t);
    case OBC_PROD:
        return (x * y) & mask_of(t);
    case OBC_MIN:
        return y_less ? y : x;
    case OBC_MAX:
        return y_less || y == x ? x : y;
    }
    return 0;
}

/* acc op y, where acc has type acc_type(t) and y has been loaded from dtype t. */
static struct val ref_step(struct val acc, struct val y, obc_redop_t op, obc_dtype_t t)
{
    if (is_int(t)) {
        acc.u = ref_int_op(acc.u, y.u, op, t);
    } else {
        acc.f = ref_float_op(acc.f, y.f, op, t != OBC_FLOAT64);
    }
    return acc;
}

/* The final element in dtype t: integers as bits, 16-bit floats narrowed to bits. */
static struct val ref_finish(struct val acc, obc_redop_t op, obc_dtype_t t, int nranks)
{
    if (op == OBC_AVG && is_int(t)) {
        acc.u = is_signed_int(t) ? (uint64_t)(sext(acc.u, t) / nranks) : acc.u / (uint64_t)nranks;
        acc.u &= mask_of(t);
    } else if (op == OBC_AVG) {
        acc.f = t == OBC_FLOAT64 ? acc.f / nranks : (double)((float)acc.f / (float)nranks);
    }
    if (t == OBC_FLOAT16) {
        acc.u = ref_float_to_half((float)acc.f);
    } else if (t == OBC_BFLOAT16) {
        acc.u = ref_float_to_bf16((float)acc.f);
    }
    return acc;
}

/* Element i of `got` (type t) against `want`; NaN matches any NaN, quiet for 16-bit floats. */
static void expect(const void *got, size_t i, obc_dtype_t t, struct val want)
{
    struct val g = load(got, i, t);
    if (is_int(t)) {
        assert_int_equal(g.u, want.u);
    } else if (t == OBC_FLOAT16 && half_is_nan((uint16_t)want.u)) {
        assert_true(half_is_nan((uint16_t)g.u) && (g.u & 0x200));
    } else if (t == OBC_BFLOAT16 && bf16_is_nan((uint16_t)want.u)) {
        assert_true(bf16_is_nan((uint16_t)g.u) && (g.u & 0x40));
    } else if (is_half(t)) {
        assert_int_equal(g.u, want.u);
    } else if (isnan(want.f)) {
        assert_true(isnan(g.f));
    } else {
        /* Bitwise, so that -0.0 and +0.0 differ. */
        assert_true(g.f == want.f && signbit(g.f) == signbit(want.f));
    }
}

/* ---- inputs ------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* A float with exponent in [-emax, emax]; now and then NaN, an infinity, a zero or a subnormal. */
static double random_float(int emax)
{
    static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1p-149, -0x1p-1070};
    uint64_t r = rnd();
    if (r % 32 == 0) {
        return special[(r >> 8) % COUNT(special)];
    }
    double m = 1.0 + (double)(r >> 40) / 0x1p24;
    int e = (int)((r >> 8) % (uint64_t)(2 * emax + 1)) - emax;
    return ((r >> 32) & 1) ? -ldexp(m, e) : ldexp(m, e);
}

static void fill(void *p, size_t n, obc_dtype_t t)
{
    static const uint64_t extremes[] = {0,    1,          ~(uint64_t)0, 0x80,
                                        0x7f, 0x80000000, 0x7fffffff,   (uint64_t)1 << 63};
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        uint64_t u = (r & 7) == 0 ? extremes[(r >> 3) % COUNT(extremes)] : rnd();
        switch (t) {
        case OBC_INT8:
        case OBC_UINT8:
            ((uint8_t *)p)[i] = (uint8_t)u;
            break;
        case OBC_INT32:
        case OBC_UINT32:
            ((uint32_t *)p)[i] = (uint32_t)u;
            break;
        case OBC_INT64:
        case OBC_UINT64:
            ((uint64_t *)p)[i] = u;
            break;
        case OBC_FLOAT16:
        case OBC_BFLOAT16:
            ((uint16_t *)p)[i] = (uint16_t)u; /* every pattern: NaNs, subnormals, infinities */
            break;
        case OBC_FLOAT32:
            ((float *)p)[i] = (float)random_float(20);
            break;
        case OBC_FLOAT64:
            ((double *)p)[i] = random_float(300);
            break;
        }
    }
}

/* An accumulator buffer of t: for the 16-bit floats, float32 values
 * around and beyond their range, so narrowing rounds, overflows and
 * underflows. */
static void fill_acc(void *p, size_t n, obc_dtype_t t)
{
    if (!is_half(t)) {
        fill(p, n, t);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        ((float *)p)[i] = (float)random_float(t == OBC_FLOAT16 ? 26 : 127);
    }
}

static void *buffer(void)
{
    void *p = calloc(NMAX, 8);
    assert_non_null(p);
    return p;
}

/* ---- tests ------------------------------------------------------------- */

static int use_baseline(void **state)
{
    (void)state;
    obc__red_force_baseline(true);
    return 0;
}

static int use_default(void **state)
{
    (void)state;
    obc__red_force_baseline(false);
    return 0;
}

static void names_and_sizes(void **state)
{
    (void)state;
    assert_string_equal(obc__redop_name(OBC_SUM), "sum");
    assert_string_equal(obc__redop_name(OBC_PROD), "prod");
    assert_string_equal(obc__redop_name(OBC_MIN), "min");
    assert_string_equal(obc__redop_name(OBC_MAX), "max");
    assert_string_equal(obc__redop_name(OBC_AVG), "avg");
    assert_true(obc__redop_valid(OBC_AVG));
    assert_false(obc__redop_valid((obc_redop_t)5));
    assert_false(obc__redop_valid((obc_redop_t)-1));
    assert_int_equal(obc__acc_size(OBC_FLOAT16), 4);
    assert_int_equal(obc__acc_size(OBC_BFLOAT16), 4);
    assert_int_equal(obc__acc_size(OBC_INT8), 1);
    assert_int_equal(obc__acc_size(OBC_FLOAT64), 8);
    assert_int_equal(obc__acc_size((obc_dtype_t)10), 0);
    assert_non_null(obc__red_isa());
}

/* Every pattern, widened by the kernel and narrowed back by it. */
static void half_exhaustive(void **state)
{
    static uint16_t h[0x10000], back[0x10000];
    static float f[0x10000];
    (void)state;
    for (uint32_t i = 0; i < 0x10000; i++) {
        h[i] = (uint16_t)i;
    }
    obc__red_widen(f, h, 0x10000, OBC_FLOAT16);
    obc__red_finish(back, f, 0x10000, OBC_FLOAT16, OBC_SUM, 1);
    for (uint32_t i = 0; i < 0x10000; i++) {
        assert_int_equal(bits_f32(f[i]), bits_f32(obc__half_to_float(h[i])));
        assert_int_equal(back[i], obc__float_to_half(f[i]));
        if (half_is_nan(h[i])) {
            /* Widening keeps every bit; narrowing quiets, keeping sign and payload. */
            assert_int_equal(bits_f32(f[i]),
                             ((i & 0x8000) << 16) | 0x7f800000 | ((i & 0x3ff) << 13));
            assert_int_equal(back[i], i | 0x200);
        } else {
            assert_true((double)f[i] == ref_half_value(h[i]));
            assert_int_equal(signbit(f[i]) != 0, (i & 0x8000) != 0);
            assert_int_equal(back[i], i);
        }
    }
}

static void half_rounding(void **state)
{
    static const struct {
        float f;
        unsigned short h;
    } cases[] = {
        {2048.0f, 0x6800},         {2049.0f, 0x6800}, /* tie: to even 2048 */
        {2050.0f, 0x6801},         {2051.0f, 0x6802}, /* tie: to even 2052 */
        {2049.0005f, 0x6801},      {65504.0f, 0x7bff},     {65519.99f, 0x7bff},
        {65520.0f, 0x7c00}, /* tie between 65504 and 2^16: to even, infinity */
        {-65520.0f, 0xfc00},       {1e9f, 0x7c00},         {INFINITY, 0x7c00},
        {-INFINITY, 0xfc00},       {0.0f, 0x0000},         {-0.0f, 0x8000},
        {0x1p-24f, 0x0001}, /* the smallest subnormal */
        {0x1p-25f, 0x0000}, /* tie: to even zero */
        {0x1.000002p-25f, 0x0001}, {0x1.8p-24f, 0x0002}, /* tie: 1.5 quanta to 2 */
        {0x1p-14f, 0x0400},        {0x1.ff8p-15f, 0x03ff}, /* the largest subnormal */
        {0x1.ffcp-15f, 0x0400}, /* tie: rounds up into the normals */
        {0x1p-149f, 0x0000},       {-0x1p-149f, 0x8000},   {1.0f, 0x3c00},
        {1.0009765625f, 0x3c01},   {0.333333343f, 0x3555},
    };
    (void)state;
    for (size_t i = 0; i < COUNT(cases); i++) {
        assert_int_equal(obc__float_to_half(cases[i].f), cases[i].h);
        assert_int_equal(ref_float_to_half(cases[i].f), cases[i].h);
    }
    assert_true(half_is_nan(obc__float_to_half(NAN)));
    assert_int_equal(obc__float_to_half(f32_bits(0x7f800001)), 0x7e00); /* sNaN: quieted */
    assert_int_equal(obc__float_to_half(f32_bits(0xffc12345)), 0xfe09);
}

/* Narrows f[0..n) with the kernel (and the scalar function) against the reference. */
static void check_narrow(const float *f, size_t n, obc_dtype_t t, uint16_t *out)
{
    obc__red_finish(out, f, n, t, OBC_MAX, 1);
    for (size_t i = 0; i < n; i++) {
        bool half = t == OBC_FLOAT16;
        uint16_t scalar = half ? obc__float_to_half(f[i]) : obc__float_to_bf16(f[i]);
        assert_int_equal(out[i], scalar);
        if (isnan(f[i])) {
            assert_true(half ? half_is_nan(out[i]) && (out[i] & 0x200)
                             : bf16_is_nan(out[i]) && (out[i] & 0x40));
        } else {
            assert_int_equal(out[i], half ? ref_float_to_half(f[i]) : ref_float_to_bf16(f[i]));
        }
    }
}

/* Every float whose dropped low bits are a tie, next to one, or zero;
 * every multiple of 2^-26 in float16's subnormal range; random patterns. */
static void narrow_sweep(obc_dtype_t t)
{
    static const uint32_t half_lows[] = {0, 1, 0xfff, 0x1000, 0x1001, 0x1fff};
    static const uint32_t bf16_lows[] = {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff};
    bool half = t == OBC_FLOAT16;
    unsigned shift = half ? 13 : 16;
    size_t nhi = (size_t)1 << (32 - shift), n = 0;
    size_t cap = COUNT(half_lows) << 19; /* the largest of the two sets below */
    float *f = malloc(cap * sizeof(float));
    uint16_t *out = malloc(cap * sizeof(uint16_t));
    assert_true(f != NULL && out != NULL);
    for (uint32_t hi = 0; hi < nhi; hi++) {
        for (size_t k = 0; k < COUNT(half_lows); k++) {
            f[n++] = f32_bits(hi << shift | (half ? half_lows : bf16_lows)[k]);
        }
    }
    check_narrow(f, n, t, out);
    n = 0;
    for (uint32_t q = 0; q < (1u << 13); q++) {
        f[n++] = ldexpf((float)q, -26);
        f[n++] = -ldexpf((float)q, -26);
    }
    for (int i = 0; i < 1000000; i++) {
        f[n++] = f32_bits((uint32_t)rnd());
    }
    check_narrow(f, n, t, out);
    free(f);
    free(out);
}

static void half_sweep(void **state)
{
    (void)state;
    narrow_sweep(OBC_FLOAT16);
}

static void bf16_sweep(void **state)
{
    (void)state;
    narrow_sweep(OBC_BFLOAT16);
}

static void bf16_conversions(void **state)
{
    static const struct {
        uint32_t f;
        unsigned short h;
    } cases[] = {
        {0x3f808000, 0x3f80}, /* tie: to even */
        {0x3f818000, 0x3f82}, /* tie: to even, up */
        {0x3f808001, 0x3f81}, {0x3f807fff, 0x3f80}, {0x7f7fffff, 0x7f80}, /* overflow */
        {0xff7fffff, 0xff80}, {0x7f7f7fff, 0x7f7f}, {0x00008000, 0x0000}, /* subnormal tie */
        {0x00018000, 0x0002}, {0x80000001, 0x8000}, {0x7f800000, 0x7f80},
        {0x7f800001, 0x7fc0}, {0xffa00000, 0xffe0}, {0x7fc00000, 0x7fc0},
    };
    static uint16_t h[0x10000], back[0x10000];
    static float f[0x10000];
    (void)state;
    for (size_t i = 0; i < COUNT(cases); i++) {
        assert_int_equal(obc__float_to_bf16(f32_bits(cases[i].f)), cases[i].h);
        if (!bf16_is_nan(cases[i].h)) {
            assert_int_equal(ref_float_to_bf16(f32_bits(cases[i].f)), cases[i].h);
        }
    }
    for (uint32_t i = 0; i < 0x10000; i++) {
        h[i] = (uint16_t)i;
    }
    obc__red_widen(f, h, 0x10000, OBC_BFLOAT16);
    obc__red_finish(back, f, 0x10000, OBC_BFLOAT16, OBC_SUM, 1);
    for (uint32_t i = 0; i < 0x10000; i++) {
        assert_int_equal(bits_f32(f[i]), i << 16);
        assert_int_equal(bits_f32(obc__bf16_to_float(h[i])), i << 16);
        if (!bf16_is_nan(h[i])) {
            assert_true((double)f[i] == ref_bf16_value(h[i]));
        }
        assert_int_equal(back[i], bf16_is_nan(h[i]) ? (i | 0x40) : i);
    }
}

/* widen, combine (dst apart, dst == a), combine_acc (dst == a, dst == b), finish. */
static void check_kernels(obc_dtype_t t, obc_redop_t op, size_t n, void *b[5])
{
    obc_dtype_t at = acc_type(t);
    size_t asz = obc__acc_size(t);
    void *x = b[0], *y = b[1], *d = b[2], *d2 = b[3], *ya = b[4];
    fill_acc(x, n, t);
    fill(y, n, t);
    fill_acc(ya, n, t);

    obc__red_widen(d, y, n, t);
    for (size_t i = 0; i < n; i++) {
        struct val w = load(y, i, t);
        expect(d, i, at, is_half(t) ? (struct val){0, w.f} : w);
    }
    obc__red_combine(d, x, y, n, t, op);
    memcpy(d2, x, n * asz);
    obc__red_combine(d2, d2, y, n, t, op);
    for (size_t i = 0; i < n; i++) {
        struct val want = ref_step(load(x, i, at), load(y, i, t), op, t);
        expect(d, i, at, want);
        expect(d2, i, at, want);
    }
    obc__red_combine_acc(d, x, ya, n, t, op);
    memcpy(d2, ya, n * asz);
    obc__red_combine_acc(d2, x, d2, n, t, op);
    for (size_t i = 0; i < n; i++) {
        struct val want = ref_step(load(x, i, at), load(ya, i, at), op, at);
        expect(d, i, at, want);
        expect(d2, i, at, want);
    }
    obc__red_finish(d, x, n, t, op, 3);
    memcpy(d2, x, n * asz);
    if (!is_half(t)) {
        obc__red_finish(d2, d2, n, t, op, 3);
    }
    for (size_t i = 0; i < n; i++) {
        struct val want = ref_finish(load(x, i, at), op, t, 3);
        expect(d, i, t, want);
        if (!is_half(t)) {
            expect(d2, i, t, want);
        }
    }
}

static void every_dtype_and_op(void **state)
{
    void *b[5];
    (void)state;
    for (int i = 0; i < 5; i++) {
        b[i] = buffer();
    }
    for (size_t ti = 0; ti < COUNT(all_dtypes); ti++) {
        for (size_t oi = 0; oi < COUNT(all_ops); oi++) {
            for (size_t li = 0; li < COUNT(lengths); li++) {
                check_kernels(all_dtypes[ti], all_ops[oi], lengths[li], b);
            }
        }
    }
    for (int i = 0; i < 5; i++) {
        free(b[i]);
    }
}

/* in[0..nin) of type t against the reference; `alias` < nin makes dst that input. */
static void check_many(obc_dtype_t t, obc_redop_t op, int nin, size_t n, int alias, void **in,
                       void *dst)
{
    static struct val want[NMAX];
    const void *cin[NIN_MAX];
    for (int j = 0; j < nin; j++) {
        fill(in[j], n, t);
        cin[j] = in[j];
    }
    /* The reference first: the call may overwrite an input. */
    for (size_t i = 0; i < n; i++) {
        struct val acc = load(in[0], i, t);
        for (int j = 1; j < nin; j++) {
            acc = ref_step(acc, load(in[j], i, t), op, t);
        }
        want[i] = ref_finish(acc, op, t, nin + 1);
    }
    void *out = alias < nin ? in[alias] : dst;
    obc__red_many(out, cin, nin, n, t, op, nin + 1);
    for (size_t i = 0; i < n; i++) {
        expect(out, i, t, want[i]);
    }
}

static void many_inputs(void **state)
{
    void *in[NIN_MAX];
    void *dst = buffer();
    (void)state;
    for (int j = 0; j < NIN_MAX; j++) {
        in[j] = buffer();
    }
    for (size_t ti = 0; ti < COUNT(all_dtypes); ti++) {
        for (size_t oi = 0; oi < COUNT(all_ops); oi++) {
            for (int nin = 1; nin <= NIN_MAX; nin++) {
                for (size_t li = 0; li < COUNT(lengths); li++) {
                    obc_dtype_t t = all_dtypes[ti];
                    check_many(t, all_ops[oi], nin, lengths[li], nin, in, dst);
                    check_many(t, all_ops[oi], nin, lengths[li], 0, in, dst);
                    check_many(t, all_ops[oi], nin, lengths[li], nin - 1, in, dst);
                }
            }
        }
    }
    for (int j = 0; j < NIN_MAX; j++) {
        free(in[j]);
    }
    free(dst);
}

static void wrapping(void **state)
{
    int8_t i8[2] = {100, 100}, i8b[2] = {-128, 16};
    uint8_t u8[2] = {200, 100};
    int32_t i32[2] = {INT32_MAX, 1}, i32b[2] = {INT32_MIN, -1};
    int64_t i64[2] = {INT64_MAX, 1}, i64b[2] = {INT64_MIN, -1};
    uint64_t u64[2] = {UINT64_MAX, 2};
    (void)state;
    obc__red_combine(&i8[0], &i8[0], &i8[1], 1, OBC_INT8, OBC_SUM);
    assert_int_equal(i8[0], -56);
    obc__red_combine(&i8b[1], &i8b[1], &i8b[1], 1, OBC_INT8, OBC_PROD);
    assert_int_equal(i8b[1], 0); /* 16 * 16 = 256 */
    i8b[1] = -1;
    obc__red_combine(&i8b[0], &i8b[0], &i8b[1], 1, OBC_INT8, OBC_PROD);
    assert_int_equal(i8b[0], -128);
    obc__red_combine(&u8[0], &u8[0], &u8[1], 1, OBC_UINT8, OBC_SUM);
    assert_int_equal(u8[0], 44);
    obc__red_combine(&i32[0], &i32[0], &i32[1], 1, OBC_INT32, OBC_SUM);
    assert_int_equal(i32[0], INT32_MIN);
    obc__red_combine(&i32b[0], &i32b[0], &i32b[1], 1, OBC_INT32, OBC_PROD);
    assert_int_equal(i32b[0], INT32_MIN);
    i32[0] = 65536;
    obc__red_combine(&i32[0], &i32[0], &i32[0], 1, OBC_INT32, OBC_PROD);
    assert_int_equal(i32[0], 0);
    obc__red_combine(&i64[0], &i64[0], &i64[1], 1, OBC_INT64, OBC_SUM);
    assert_true(i64[0] == INT64_MIN);
    obc__red_combine(&i64b[0], &i64b[0], &i64b[1], 1, OBC_INT64, OBC_PROD);
    assert_true(i64b[0] == INT64_MIN);
    obc__red_combine(&u64[0], &u64[0], &u64[1], 1, OBC_UINT64, OBC_SUM);
    assert_true(u64[0] == 1);
}

static void average_truncates(void **state)
{
    int8_t i8 = -7;
    int32_t i32 = -7;
    int64_t i64 = -7, i64min = INT64_MIN;
    uint32_t u32 = UINT32_MAX;
    uint64_t u64 = UINT64_MAX;
    float f32 = 1.0f;
    (void)state;
    obc__red_finish(&i8, &i8, 1, OBC_INT8, OBC_AVG, 2);
    obc__red_finish(&i32, &i32, 1, OBC_INT32, OBC_AVG, 2);
    obc__red_finish(&i64, &i64, 1, OBC_INT64, OBC_AVG, 2);
    assert_int_equal(i8, -3);
    assert_int_equal(i32, -3);
    assert_true(i64 == -3);
    obc__red_finish(&i64min, &i64min, 1, OBC_INT64, OBC_AVG, 1);
    assert_true(i64min == INT64_MIN);
    obc__red_finish(&u32, &u32, 1, OBC_UINT32, OBC_AVG, 2);
    assert_int_equal(u32, 0x7fffffff);
    obc__red_finish(&u64, &u64, 1, OBC_UINT64, OBC_AVG, 3);
    assert_true(u64 == UINT64_MAX / 3);
    obc__red_finish(&f32, &f32, 1, OBC_FLOAT32, OBC_AVG, 3);
    assert_true(f32 == 1.0f / 3.0f);
}

/* 32-bit AVG divides in double: the largest dividends and divisors, whose
 * quotients sit closest below an integer, then random pairs. */
static void average_32bit_exact(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++) {
        int n = i < 64 ? INT32_MAX - i % 8 : (int)(rnd() % (i & 1 ? INT32_MAX : 300)) + 1;
        uint32_t u = i < 64 ? UINT32_MAX - (uint32_t)(i / 8) : (uint32_t)rnd();
        int32_t s = i < 64 ? INT32_MIN + i / 8 : (int32_t)(u >> 1) - (int32_t)(rnd() >> 33);
        uint32_t v = u;
        int32_t w = s;
        obc__red_finish(&v, &v, 1, OBC_UINT32, OBC_AVG, n);
        obc__red_finish(&w, &w, 1, OBC_INT32, OBC_AVG, n);
        assert_int_equal(v, u / (uint32_t)n);
        assert_int_equal(w, s / n);
    }
}

static void nan_and_zero_in_min_max(void **state)
{
    static const obc_dtype_t types[] = {OBC_FLOAT16, OBC_BFLOAT16, OBC_FLOAT32, OBC_FLOAT64};
    /* x op y for pairs (x, y); expected: 'n' NaN, 'x' first, 'y' second. */
    static const struct {
        double x, y;
        char min, max;
    } cases[] = {
        {NAN, 1.0, 'n', 'n'},  {1.0, NAN, 'n', 'n'},       {NAN, NAN, 'n', 'n'},
        {-0.0, 0.0, 'x', 'x'}, {0.0, -0.0, 'x', 'x'},      {1.0, 2.0, 'x', 'y'},
        {2.0, 1.0, 'y', 'x'},  {-INFINITY, NAN, 'n', 'n'}, {INFINITY, -1.0, 'y', 'x'},
    };
    (void)state;
    for (size_t ti = 0; ti < COUNT(types); ti++) {
        obc_dtype_t t = types[ti];
        for (size_t i = 0; i < COUNT(cases); i++) {
            float ax = (float)cases[i].x, ay = (float)cases[i].y, out[2];
            double dx = cases[i].x, dy = cases[i].y, dout[2];
            unsigned short hy = t == OBC_FLOAT16 ? obc__float_to_half(ay) : obc__float_to_bf16(ay);
            for (int k = 0; k < 2; k++) {
                obc_redop_t op = k ? OBC_MAX : OBC_MIN;
                char e = k ? cases[i].max : cases[i].min;
                double got, want = e == 'x' ? dx : dy;
                if (t == OBC_FLOAT64) {
                    obc__red_combine(&dout[k], &dx, &dy, 1, t, op);
                    got = dout[k];
                } else if (t == OBC_FLOAT32) {
                    obc__red_combine(&out[k], &ax, &ay, 1, t, op);
                    got = out[k];
                } else {
                    obc__red_combine(&out[k], &ax, &hy, 1, t, op);
                    got = out[k];
                }
                if (e == 'n') {
                    assert_true(isnan(got));
                } else {
                    assert_true(got == want && signbit(got) == signbit(want));
                }
            }
        }
    }
}

/* Read-only (in .rodata): a kernel that writes where it has nothing to do crashes. */
static const uint64_t read_only[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/* For the types that are their own accumulator, finish (but for AVG),
 * widen and a one-input red_many in place have nothing to do, and must
 * not even copy the buffer onto itself. */
static void in_place_is_nothing(void **state)
{
    void *p = (void *)(uintptr_t)read_only;
    (void)state;
    for (size_t ti = 0; ti < COUNT(all_dtypes); ti++) {
        obc_dtype_t t = all_dtypes[ti];
        size_t n = sizeof(read_only) / obc_dtype_size(t);
        if (is_half(t)) {
            continue;
        }
        for (size_t oi = 0; oi < COUNT(all_ops) - 1; oi++) {
            obc__red_finish(p, p, n, t, all_ops[oi], 4);
            obc__red_many(p, (const void *const[]){p}, 1, n, t, all_ops[oi], 4);
        }
        obc__red_widen(p, p, n, t);
    }
    assert_int_equal(read_only[15], 16);
}

/* Each test with the selected kernels, then with the baseline ones. */
#define WITH_SETUP(f, name, setup) \
    { \
        name, f, setup, use_default, NULL \
    }
#define TWICE(f) WITH_SETUP(f, #f, use_default), WITH_SETUP(f, #f " (baseline)", use_baseline)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_sizes),
        cmocka_unit_test(half_rounding),
        TWICE(half_exhaustive),
        TWICE(half_sweep),
        TWICE(bf16_conversions),
        TWICE(bf16_sweep),
        TWICE(every_dtype_and_op),
        TWICE(many_inputs),
        TWICE(wrapping),
        TWICE(average_truncates),
        TWICE(average_32bit_exact),
        TWICE(nan_and_zero_in_min_max),
        TWICE(in_place_is_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
