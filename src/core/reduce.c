/* SPDX-License-Identifier: MIT */
/*
 * reduce.c - the reduction kernels of reduce.h: one table of small loops
 * per (dtype, op), and the float16/bfloat16 conversions they use.
 *
 * Accumulators: float16 and bfloat16 are widened to float32 as they are
 * loaded, every partial result stays float32, and obc__red_finish narrows
 * once, to nearest even. The other dtypes are their own accumulator.
 * Integer SUM and PROD run in the unsigned type of the same width, so they
 * wrap without undefined behaviour (and signed and unsigned share them).
 *
 * Vectorisation: every kernel is one `d[i] = OP(x[i], WIDEN(y[i]))` loop
 * with no calls and no branches (the conversions are integer bit
 * manipulation and selects), which gcc and clang vectorise at -O2 given
 * three things: gcc's -O2 cost model refuses any loop that needs a scalar
 * epilogue, so this file asks for gcc's -O3 one; a loop pragma states the
 * contract that buffers are equal or disjoint, so no runtime alias check
 * sends the in-place case (dst == a) to the scalar loop, as clang's would;
 * and the kernels are compiled twice, for baseline x86-64 and for AVX2,
 * and each call picks a table with __builtin_cpu_supports. (Not with
 * target_clones: its ifunc resolvers run while the dynamic linker
 * relocates, before the TSan runtime is ready, and crash those builds.)
 * Both tables give bit-identical results: elements are independent (no
 * reassociation), IEEE add, multiply, divide and compare round the same in
 * every instruction set, and no kernel has a multiply-add to fuse.
 */
#include "core/reduce.h"
#include "core/copy.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
/* The -O3 cost model (gcc enables it by itself only at -O3). */
#pragma GCC optimize("vect-cost-model=dynamic")
#endif

#if defined(__clang__)
/* assume_safety also asks for vectorisation, and clang warns where it
 * cannot oblige (under UBSan, whose checks prevent it): no reason to fail
 * a -Werror build. */
#pragma clang diagnostic ignored "-Wpass-failed"
#define VECTOR_LOOP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define VECTOR_LOOP _Pragma("GCC ivdep")
#else
#define VECTOR_LOOP
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#define RED_HAVE_AVX2 1
#else
#define RED_HAVE_AVX2 0
#endif

/* Elements per block of obc__red_many: 8 KiB of the widest accumulator. */
#define MANY_BLOCK 1024

static const char *const redop_names[] = {
    [OBC_SUM] = "sum", [OBC_PROD] = "prod", [OBC_MIN] = "min", [OBC_MAX] = "max", [OBC_AVG] = "avg",
};
static_assert(sizeof(redop_names) / sizeof(redop_names[0]) == OBC_AVG + 1,
              "every obc_redop_t needs a name");

/* ---- float16 and bfloat16 <-> float32 ---------------------------------
 * Bit manipulation plus selects, so that they vectorise inside the loops.
 * Widening is exact for every pattern (a signalling NaN stays signalling;
 * arithmetic quiets it later). Narrowing rounds to nearest even, overflows
 * to infinity, and turns a NaN into a quiet NaN with the same sign and the
 * top payload bits, as F16C's vcvtps2ph does. Compares are on int32_t of
 * values below 2^31, because SSE2 has no unsigned compare. */

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static inline float f32_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* x where `mask` is all ones, else y. Masks rather than ?: because gcc
 * will not if-convert a select whose arm holds a float operation (it might
 * trap), and a loop that keeps a branch is not vectorised. */
static inline uint32_t select_u32(uint32_t mask, uint32_t x, uint32_t y)
{
    return (x & mask) | (y & ~mask);
}

static inline uint32_t mask_of(bool c)
{
    return 0u - (uint32_t)c;
}

static inline float half_to_float(uint16_t h)
{
    uint32_t body = (uint32_t)(h & 0x7fff) << 13; /* exponent and mantissa, float-aligned */
    uint32_t exp = body & (0x1fu << 23);
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t normal = body + ((127u - 15) << 23);
    uint32_t inf_nan = body + ((255u - 31) << 23);
    /* Subnormal or zero: m * 2^-24 = (2^-14 * (1 + m/1024)) - 2^-14, both exact floats. */
    uint32_t subnormal = f32_bits(f32_of(body + (113u << 23)) - f32_of(113u << 23));
    uint32_t r = select_u32(mask_of(exp == 0), subnormal, normal);
    r = select_u32(mask_of(exp == (0x1fu << 23)), inf_nan, r);
    return f32_of(r | sign);
}

/* The three candidates stay 13 bits up, in float position, until one
 * shift at the end: were they selected as 16-bit values, gcc would narrow
 * each to 16 bits first (three packs instead of one; 25% slower). */
static inline uint16_t float_to_half(float f)
{
    uint32_t u = f32_bits(f);
    int32_t mag = (int32_t)(u & 0x7fffffff);
    uint32_t m = (uint32_t)mag;
    /* Rebias the exponent, then round half to even: add 0xfff plus the lowest kept bit, and
     * let a carry ripple into the exponent (up to infinity, which is then exact). */
    uint32_t normal = m - ((127u - 15) << 23) + 0xfff + ((m >> 13) & 1);
    /* Below 2^-14 the result is subnormal: adding 0.5 puts its 10 bits at the bottom of the
     * float's mantissa and the FPU rounds to nearest even; 0.5's bits then come off. */
    uint32_t subnormal = (f32_bits(f32_of(m) + 0.5f) - f32_bits(0.5f)) << 13;
    uint32_t inf_nan = mag > 0x7f800000 ? (0x7e00u << 13) | (m & 0x7fffff) : 0x7c00u << 13;
    uint32_t r = select_u32(mask_of(mag < (113 << 23)), subnormal, normal);
    r = select_u32(mask_of(mag >= (143 << 23)), inf_nan, r);
    return (uint16_t)((r >> 13) | ((u >> 16) & 0x8000));
}

static inline float bf16_to_float(uint16_t h)
{
    return f32_of((uint32_t)h << 16);
}

static inline uint16_t float_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    uint32_t rounded = (u + 0x7fff + ((u >> 16) & 1)) >> 16; /* half to even; sign unaffected */
    uint32_t r = (int32_t)(u & 0x7fffffff) > 0x7f800000 ? (u >> 16) | 0x40 : rounded;
    return (uint16_t)r;
}

/* ---- the kernels ------------------------------------------------------ */

typedef void combine_fn(void *dst, const void *a, const void *b, size_t n);
typedef void convert_fn(void *dst, const void *src, size_t n);
typedef void average_fn(void *dst, const void *acc, size_t n, int nranks);

/* One row per dtype; every pointer is set, except widen and narrow, which
 * are NULL for the types that are their own accumulator. */
struct red_row {
    combine_fn *combine[OBC_MAX + 1]; /* dst = a op widen(b); OBC_AVG combines as OBC_SUM */
    convert_fn *widen; /* accumulator = widen(dtype) */
    convert_fn *narrow; /* dtype = narrow(accumulator) */
    average_fn *average; /* dtype = narrow(accumulator / nranks) */
};

#define AS_IS(v) (v)
#define OP_SUM(x, y) ((x) + (y))
#define OP_PROD(x, y) ((x) * (y))
#define OP_IMIN(x, y) ((y) < (x) ? (y) : (x))
#define OP_IMAX(x, y) ((y) > (x) ? (y) : (x))
/* A NaN y is caught by y != y; a NaN x fails the compare and is kept; equal keeps x. */
#define OP_FMIN(x, y) ((y) < (x) || (y) != (y) ? (y) : (x))
#define OP_FMAX(x, y) ((y) > (x) || (y) != (y) ? (y) : (x))

/* Kernel names carry KSFX, the suffix of the instruction set being instantiated. */
#define KNAME(p, op) KNAME_(p, op, KSFX)
#define KNAME_(p, op, sfx) KNAME__(p, op, sfx)
#define KNAME__(p, op, sfx) p##_##op##sfx

#define COMBINE(name, TA, TB, WIDEN, OP) \
    KATTR static void name(void *dst, const void *a, const void *b, size_t n) \
    { \
        TA *d = dst; \
        const TA *x = a; \
        const TB *y = b; \
        VECTOR_LOOP \
        for (size_t i = 0; i < n; i++) { \
            d[i] = OP(x[i], WIDEN(y[i])); \
        } \
    }

#define CONVERT(name, TD, TS, FN) \
    KATTR static void name(void *dst, const void *src, size_t n) \
    { \
        TD *d = dst; \
        const TS *s = src; \
        VECTOR_LOOP \
        for (size_t i = 0; i < n; i++) { \
            d[i] = FN(s[i]); \
        } \
    }

/* nranks > 0, converted to TDIV; the quotient converts back truncating
 * toward zero, as C's integer division does. 8- and 32-bit integers divide
 * in double, which vectorises where integer division cannot, and is exact:
 * |x| < 2^32 makes the quotient's rounding error smaller than its distance
 * 1/nranks to the next integer, so the truncation is the same. */
#define AVERAGE(name, TD, TA, TDIV, NARROW) \
    KATTR static void name(void *dst, const void *acc, size_t n, int nranks) \
    { \
        TD *d = dst; \
        const TA *x = acc; \
        const TDIV div = (TDIV)nranks; \
        VECTOR_LOOP \
        for (size_t i = 0; i < n; i++) { \
            d[i] = NARROW(x[i] / div); \
        } \
    }

/* The dtypes that are their own accumulator: dtype, kernel prefix, element type, the type
 * SUM and PROD run in (unsigned for integers), MIN and MAX, the type AVG divides in. */
#define SELF_ACC_TYPES(X) \
    X(OBC_INT8, i8, int8_t, uint8_t, OP_IMIN, OP_IMAX, double) \
    X(OBC_UINT8, u8, uint8_t, uint8_t, OP_IMIN, OP_IMAX, double) \
    X(OBC_INT32, i32, int32_t, uint32_t, OP_IMIN, OP_IMAX, double) \
    X(OBC_UINT32, u32, uint32_t, uint32_t, OP_IMIN, OP_IMAX, double) \
    X(OBC_INT64, i64, int64_t, uint64_t, OP_IMIN, OP_IMAX, int64_t) \
    X(OBC_UINT64, u64, uint64_t, uint64_t, OP_IMIN, OP_IMAX, uint64_t) \
    X(OBC_FLOAT32, f32, float, float, OP_FMIN, OP_FMAX, float) \
    X(OBC_FLOAT64, f64, double, double, OP_FMIN, OP_FMAX, double)

/* The 16-bit floats, accumulated in float32: dtype, kernel prefix, widen, narrow. */
#define HALF_TYPES(X) \
    X(OBC_FLOAT16, f16, half_to_float, float_to_half) \
    X(OBC_BFLOAT16, bf16, bf16_to_float, float_to_bf16)

#define DEFINE_SELF(DT, p, T, W, MIN, MAX, DIV) \
    COMBINE(KNAME(p, sum), W, W, AS_IS, OP_SUM) \
    COMBINE(KNAME(p, prod), W, W, AS_IS, OP_PROD) \
    COMBINE(KNAME(p, min), T, T, AS_IS, MIN) \
    COMBINE(KNAME(p, max), T, T, AS_IS, MAX) \
    AVERAGE(KNAME(p, avg), T, T, DIV, AS_IS)

#define DEFINE_HALF(DT, p, WIDEN, NARROW) \
    COMBINE(KNAME(p, sum), float, uint16_t, WIDEN, OP_SUM) \
    COMBINE(KNAME(p, prod), float, uint16_t, WIDEN, OP_PROD) \
    COMBINE(KNAME(p, min), float, uint16_t, WIDEN, OP_FMIN) \
    COMBINE(KNAME(p, max), float, uint16_t, WIDEN, OP_FMAX) \
    CONVERT(KNAME(p, widen), float, uint16_t, WIDEN) \
    CONVERT(KNAME(p, narrow), uint16_t, float, NARROW) \
    AVERAGE(KNAME(p, avg), uint16_t, float, float, NARROW)

#define ROW_SELF(DT, p, ...) \
    [DT] = { \
        {KNAME(p, sum), KNAME(p, prod), KNAME(p, min), KNAME(p, max)}, NULL, NULL, KNAME(p, avg)},
#define ROW_HALF(DT, p, ...) \
    [DT] = {{KNAME(p, sum), KNAME(p, prod), KNAME(p, min), KNAME(p, max)}, \
            KNAME(p, widen), \
            KNAME(p, narrow), \
            KNAME(p, avg)},

/* Every kernel for one instruction set (KATTR, KSFX), and their table. */
#define INSTANTIATE(rows) \
    SELF_ACC_TYPES(DEFINE_SELF) \
    HALF_TYPES(DEFINE_HALF) \
    static const struct red_row rows[] = {SELF_ACC_TYPES(ROW_SELF) HALF_TYPES(ROW_HALF)}; \
    static_assert(sizeof(rows) / sizeof(rows[0]) == OBC_FLOAT64 + 1, "a row per dtype");

#define KATTR
#define KSFX _base
INSTANTIATE(rows_base)
#undef KATTR
#undef KSFX

#if RED_HAVE_AVX2
#define KATTR __attribute__((target("avx2")))
#define KSFX _avx2
INSTANTIATE(rows_avx2)
#undef KATTR
#undef KSFX
#endif

/* Set by tests only; relaxed, as it orders nothing. */
static atomic_bool force_baseline;

static const struct red_row *table(void)
{
#if RED_HAVE_AVX2
    /* __builtin_cpu_supports reads what libgcc's constructor found: no state of our own. */
    if (__builtin_cpu_supports("avx2") &&
        !atomic_load_explicit(&force_baseline, memory_order_relaxed)) {
        return rows_avx2;
    }
#endif
    return rows_base;
}

static bool dtype_valid(obc_dtype_t t)
{
    return (unsigned)t <= OBC_FLOAT64;
}

static bool is_half(obc_dtype_t t)
{
    return t == OBC_FLOAT16 || t == OBC_BFLOAT16;
}

static combine_fn *combine_kernel(obc_dtype_t t, obc_redop_t op)
{
    return table()[t].combine[op == OBC_AVG ? OBC_SUM : op];
}

/* ---- reduce.h --------------------------------------------------------- */

size_t obc__acc_size(obc_dtype_t t)
{
    return is_half(t) ? sizeof(float) : obc_dtype_size(t);
}

bool obc__redop_valid(obc_redop_t op)
{
    return (unsigned)op <= OBC_AVG;
}

const char *obc__redop_name(obc_redop_t op)
{
    return obc__redop_valid(op) ? redop_names[op] : "invalid op";
}

const char *obc__red_isa(void)
{
    return table() == rows_base ? "baseline" : "avx2";
}

void obc__red_force_baseline(bool on)
{
    atomic_store_explicit(&force_baseline, on, memory_order_relaxed);
}

void obc__red_widen(void *acc, const void *in, size_t n, obc_dtype_t t)
{
    if (n == 0 || !dtype_valid(t)) {
        return;
    }
    if (is_half(t)) {
        table()[t].widen(acc, in, n);
    } else if (acc != in) {
        obc__copy(acc, in, n * obc_dtype_size(t), 0);
    }
}

void obc__red_combine(void *dst, const void *a, const void *b, size_t n, obc_dtype_t t,
                      obc_redop_t op)
{
    if (n == 0 || !dtype_valid(t) || !obc__redop_valid(op)) {
        return;
    }
    combine_kernel(t, op)(dst, a, b, n);
}

void obc__red_combine_acc(void *dst, const void *a, const void *b, size_t n, obc_dtype_t t,
                          obc_redop_t op)
{
    if (n == 0 || !dtype_valid(t) || !obc__redop_valid(op)) {
        return;
    }
    combine_kernel(is_half(t) ? OBC_FLOAT32 : t, op)(dst, a, b, n);
}

void obc__red_finish(void *dst, const void *acc, size_t n, obc_dtype_t t, obc_redop_t op,
                     int nranks)
{
    if (n == 0 || !dtype_valid(t) || !obc__redop_valid(op)) {
        return;
    }
    if (op == OBC_AVG) {
        table()[t].average(dst, acc, n, nranks);
    } else if (is_half(t)) {
        table()[t].narrow(dst, acc, n);
    } else if (dst != acc) {
        obc__copy(dst, acc, n * obc_dtype_size(t), 0);
    }
}

/* One block of obc__red_many: elements [off, off + m). For the types that
 * are their own accumulator the first step reads in[0] directly and the
 * last writes dst directly (AVG then divides it in place): by then every
 * input of the block has been read, except in[nin-1] element by element,
 * which the kernels allow. So dst may equal any input. */
static void many_block(unsigned char *dst, const void *const *in, int nin, size_t off, size_t m,
                       obc_dtype_t t, obc_redop_t op, int nranks, void *acc)
{
    size_t byte_off = off * obc_dtype_size(t);
    unsigned char *out = dst + byte_off;
    combine_fn *combine = combine_kernel(t, op);
    bool self = !is_half(t);
    const void *a = (const unsigned char *)in[0] + byte_off;
    if (!self) {
        table()[t].widen(acc, a, m);
        a = acc;
    }
    for (int j = 1; j < nin; j++) {
        void *to = self && j == nin - 1 ? (void *)out : acc;
        combine(to, a, (const unsigned char *)in[j] + byte_off, m);
        a = to;
    }
    obc__red_finish(out, a, m, t, op, nranks); /* in place when a == out */
}

void obc__red_many(void *dst, const void *const *in, int nin, size_t n, obc_dtype_t t,
                   obc_redop_t op, int nranks)
{
    /* A union, so the block is aligned for, and may be accessed as, every accumulator type. */
    union {
        double f64[MANY_BLOCK];
        uint64_t u64[MANY_BLOCK];
        float f32[MANY_BLOCK];
        uint32_t u32[MANY_BLOCK];
    } acc;
    if (nin < 1 || !dtype_valid(t) || !obc__redop_valid(op)) {
        return;
    }
    for (size_t off = 0; off < n; off += MANY_BLOCK) {
        size_t m = n - off < MANY_BLOCK ? n - off : MANY_BLOCK;
        many_block(dst, in, nin, off, m, t, op, nranks, &acc);
    }
}

float obc__half_to_float(unsigned short h)
{
    return half_to_float(h);
}

unsigned short obc__float_to_half(float f)
{
    return float_to_half(f);
}

float obc__bf16_to_float(unsigned short h)
{
    return bf16_to_float(h);
}

unsigned short obc__float_to_bf16(float f)
{
    return float_to_bf16(f);
}
