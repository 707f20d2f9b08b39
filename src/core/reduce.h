/* SPDX-License-Identifier: MIT */
/*
 * reduce.h - elementwise reduction kernels, the only code in obc that knows
 * how to add, multiply, compare or average the values of a dtype.
 *
 * Algorithms work in an accumulator type: float32 for float16 and bfloat16
 * (so that a sum over many ranks rounds once, at the end, to nearest even),
 * the dtype itself for every other type. Partial results that travel
 * between ranks are in the accumulator type; obc__red_finish turns an
 * accumulator into the user's dtype (and divides for OBC_AVG).
 *
 * Semantics (documented for users in include/obc.h):
 *  - integers: SUM and PROD wrap modulo 2^bits (computed unsigned, so signed
 *    overflow is never undefined behaviour); AVG divides the wrapped sum by
 *    nranks, truncating toward zero;
 *  - floats: MIN/MAX give NaN when either operand is NaN; otherwise the
 *    smaller/larger, the first operand when they compare equal (so -0.0 vs
 *    +0.0 depends only on the fixed operand order, never on timing);
 *  - OBC_AVG combines as OBC_SUM; only obc__red_finish divides.
 * Operand order is part of the result for floats: callers pass the
 * lower-ordered partial as `a` and keep that order fixed.
 *
 * Every kernel accepts dst == a (and dst == b when b has the accumulator
 * type), element by element; no other overlap.
 */
#ifndef OBC_CORE_REDUCE_H
#define OBC_CORE_REDUCE_H

#include <stdbool.h>
#include <stddef.h>

#include "obc.h"

/* Bytes of one accumulator element of t (4 for the 16-bit floats). */
size_t obc__acc_size(obc_dtype_t t);
/* Whether op is one of OBC_SUM..OBC_AVG. */
bool obc__redop_valid(obc_redop_t op);
const char *obc__redop_name(obc_redop_t op);

/* acc[i] = widen(in[i]): in has dtype t, acc the accumulator type. */
void obc__red_widen(void *acc, const void *in, size_t n, obc_dtype_t t);

/* dst[i] = a[i] op widen(b[i]): a and dst in the accumulator type, b in t. */
void obc__red_combine(void *dst, const void *a, const void *b, size_t n, obc_dtype_t t,
                      obc_redop_t op);

/* dst[i] = a[i] op b[i]: all three in the accumulator type. */
void obc__red_combine_acc(void *dst, const void *a, const void *b, size_t n, obc_dtype_t t,
                          obc_redop_t op);

/* dst[i] = narrow(acc[i]), divided by nranks first for OBC_AVG: dst has
 * dtype t. A plain copy (or nothing, when dst == acc) for the types that
 * are their own accumulator and every op but AVG. */
void obc__red_finish(void *dst, const void *acc, size_t n, obc_dtype_t t, obc_redop_t op,
                     int nranks);

/* dst[i] = finish(in[0][i] op in[1][i] op ... op in[nin-1][i]), left to
 * right, accumulating in the accumulator type (in blocks on the stack: no
 * allocation); every in[j] and dst have dtype t. nranks is the AVG divisor.
 * dst may equal one of the inputs. The shared-memory reduction's kernel. */
void obc__red_many(void *dst, const void *const *in, int nin, size_t n, obc_dtype_t t,
                   obc_redop_t op, int nranks);

/* Conversions, exposed for tests and the obc-perf checker. */
float obc__half_to_float(unsigned short h);
unsigned short obc__float_to_half(float f); /* round to nearest even */
float obc__bf16_to_float(unsigned short h);
unsigned short obc__float_to_bf16(float f); /* round to nearest even */

/* The instruction set the kernels run with: "avx2" where the CPU has it,
 * else "baseline" (x86-64 SSE2, or the compiler's default elsewhere). Both
 * give bit-identical results. */
const char *obc__red_isa(void);
/* Tests only: run the baseline kernels even where AVX2 is available. */
void obc__red_force_baseline(bool on);

#endif
