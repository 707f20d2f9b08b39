/* SPDX-License-Identifier: MIT */
/*
 * rdata.h - test data for the reduction collectives: the input of element
 * `index` on rank r is a deterministic function of (pattern, dtype, op, seed,
 * r, index), so every rank can compute every other rank's input and from them
 * the expected result, element by element, with its own arithmetic (its own
 * float16/bfloat16 conversions, independent of the library's).
 *
 * Patterns:
 *  - OBCT_RPAT_EXACT: results are exact whatever order the library adds in.
 *    Integers: random bits of the full width (SUM and PROD wrap, AVG divides
 *    the wrapped sum, truncating toward zero). Floats: SUM/AVG inputs are
 *    small multiples of a power of two whose sum over up to 64 ranks is exact
 *    in the accumulator (float32 for float16/bfloat16), so the only rounding
 *    is the library's final one: float16 inputs are integers in [-1023, 1023]
 *    and bfloat16 inputs integers in [-4096, 4096] (rounded to bfloat16), so
 *    sums round (with ties) to the 16-bit type; PROD inputs are +-2^k
 *    (k in -1..1; -4..4 for float64), so products are exact in float32 and
 *    may overflow to inf or fall to subnormals or zero in float16; MIN/MAX
 *    inputs are random finite bit patterns (subnormals and +-0 included), and
 *    element i is a NaN on rank (i / 7) % 8 when i % 7 == 3.
 *    Expected: the exact value rounded once to the dtype, to nearest even; AVG
 *    divides the exact sum in the accumulator type (float32 for float16,
 *    bfloat16 and float32; float64 for float64), then rounds to the dtype.
 *    The result must equal it (as a value: +0 == -0; NaN where NaN is due).
 *  - OBCT_RPAT_RANDOM: general floats, random sign and 2^-9 <= |x| < 1 with
 *    random significand bits (PROD: 0.75 <= |x| < 1.5), compared with the
 *    float64 reference `ref` (sum, average or product of the inputs) within:
 *      float64:  |got - ref| <= 1e-12 * n * S
 *      float32:  |got - ref| <= 1e-5 * n * S
 *      float16:  |got - ref| <= ulp16(ref) + n * 2^-24 * S
 *      bfloat16: |got - ref| <= ulpbf16(ref) + n * 2^-24 * S
 *    where n is the rank count, S = sum of |x| (divided by n for AVG; |ref|
 *    for PROD) and ulpT(ref) the spacing of type T at |ref| (subnormal spacing
 *    below the normal range). The 16-bit rule is "one ulp of the library's
 *    single rounding", plus the float32 accumulation error, which is 2^13
 *    times smaller than what float16 accumulation would cost. Integers and
 *    MIN/MAX are exact under this pattern too.
 *
 * Part of the obct test library (tests/harness). Used by rcase.c for every
 * reduction case's inputs and checks, so by the tests/coll programs that
 * include rcase.h.
 */
#ifndef OBCT_RDATA_H
#define OBCT_RDATA_H

#include <stddef.h>
#include <stdint.h>

#include "obc.h"

#define OBCT_NREDOPS 5

enum obct_rpat { OBCT_RPAT_EXACT, OBCT_RPAT_RANDOM };

struct obct_rdata {
    enum obct_rpat pat;
    obc_dtype_t dtype;
    obc_redop_t op; /* decides the input pattern; ignored by allgather */
    uint64_t seed;
    int nranks;
};

const char *obct_redop_name(obc_redop_t op);
const char *obct_rpat_name(enum obct_rpat p);
int obct_dtype_is_float(obc_dtype_t t);

/* Write elements first .. first + n - 1 of rank's input to p (n elements of dtype). */
void obct_rfill(const struct obct_rdata *d, void *p, size_t n, size_t first, int rank);

/* Check n result elements at got: element k must be the reduction over ranks
 * 0 .. nranks - 1 of input element first + k (pattern rules above). Soft-fails
 * with the first bad index, got, expected, tolerance and how many are bad;
 * returns 0 when all good. */
int obct_rcheck_at(const char *file, int line, const char *what, const struct obct_rdata *d,
                   const void *got, size_t n, size_t first);
#define obct_rcheck(what, d, got, n, first) \
    obct_rcheck_at(__FILE__, __LINE__, what, d, got, n, first)

/* Check n elements at got hold rank's input elements first .. (bytewise). */
int obct_rcheck_input_at(const char *file, int line, const char *what, const struct obct_rdata *d,
                         const void *got, size_t n, size_t first, int rank);
#define obct_rcheck_input(what, d, got, n, first, rank) \
    obct_rcheck_input_at(__FILE__, __LINE__, what, d, got, n, first, rank)

/* Bytewise comparison of nbytes at got with want; soft-fails naming the first differing
 * byte; 0 when equal. */
int obct_same_bytes_at(const char *file, int line, const char *what, const void *got,
                       const void *want, size_t nbytes);
#define obct_same_bytes(what, got, want, n) \
    obct_same_bytes_at(__FILE__, __LINE__, what, got, want, n)

/* The test's own float16/bfloat16 conversions (round to nearest even; inf on overflow). */
double obct_half_to_double(uint16_t h);
uint16_t obct_double_to_half(double x);
double obct_bf16_to_double(uint16_t h);
uint16_t obct_double_to_bf16(double x);

#endif /* OBCT_RDATA_H */
