/* SPDX-License-Identifier: MIT */
/*
 * perf_dtype.c - how one element of each obc dtype is stored: its kind
 * (signed, unsigned, floating), how many significant bits make integers
 * exact in it, and writing an element from wrapped integer bits or from a
 * double. float16 and bfloat16 are encoded here, because obc-perf uses
 * include/obc.h only and the library's own conversions are private.
 *
 * Conversions round to nearest even, as the library does; obc-perf only
 * ever stores values that are exact in the dtype, so the rounding matters
 * for correctness of the encoder, never for the expected results.
 */
#include <string.h>

#include "perf.h"

enum perf_kind perf_dtype_kind(obc_dtype_t dtype)
{
    switch (dtype) {
    case OBC_INT8:
    case OBC_INT32:
    case OBC_INT64:
        return PERF_KIND_SIGNED;
    case OBC_UINT8:
    case OBC_UINT32:
    case OBC_UINT64:
        return PERF_KIND_UNSIGNED;
    default:
        return PERF_KIND_FLOAT;
    }
}

/* Floats: integers of magnitude up to 2^bits are exact (significand bits,
 * the implicit one included). Integers: their width. */
int perf_dtype_exact_bits(obc_dtype_t dtype)
{
    switch (dtype) {
    case OBC_FLOAT16:
        return 11;
    case OBC_BFLOAT16:
        return 8;
    case OBC_FLOAT32:
        return 24;
    case OBC_FLOAT64:
        return 53;
    default:
        return 8 * (int)obc_dtype_size(dtype);
    }
}

/* Writes the low bits of `bits`: modulo 2^width, which is exactly how the
 * library wraps integer SUM and PROD. Called per element: no library calls. */
void perf_dtype_store_int(obc_dtype_t dtype, void *dst, uint64_t bits)
{
    switch (dtype) {
    case OBC_INT8:
    case OBC_UINT8: {
        uint8_t v = (uint8_t)bits;
        memcpy(dst, &v, 1);
        break;
    }
    case OBC_INT32:
    case OBC_UINT32: {
        uint32_t v = (uint32_t)bits;
        memcpy(dst, &v, 4);
        break;
    }
    default:
        memcpy(dst, &bits, 8);
        break;
    }
}

/* Round-to-nearest-even of an unsigned value shifted right by `shift` (1..31). */
static uint32_t shift_round_even(uint32_t v, int shift)
{
    uint32_t kept = v >> shift;
    uint32_t rest = v & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u) != 0)) {
        kept++;
    }
    return kept;
}

/* binary32 -> binary16 bits. A carry out of the significand moves into the
 * exponent, which is the right result (up to infinity). */
static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t mag = x & 0x7FFFFFFFu;
    if (mag >= 0x7F800000u) { /* inf or NaN */
        return (uint16_t)(sign | (mag > 0x7F800000u ? 0x7E00u : 0x7C00u));
    }
    if (mag >= 0x477FF000u) { /* >= 65520 rounds to infinity */
        return (uint16_t)(sign | 0x7C00u);
    }
    if (mag >= 0x38800000u) { /* normal in binary16: rebias the exponent by 127 - 15 */
        return (uint16_t)(sign | shift_round_even(mag - 0x38000000u, 13));
    }
    if (mag < 0x33000000u) { /* below half the smallest subnormal: zero */
        return (uint16_t)sign;
    }
    /* Subnormal: the significand with its implicit bit, scaled to units of 2^-24. */
    int shift = 126 - (int)(mag >> 23);
    uint32_t significand = (mag & 0x7FFFFFu) | 0x800000u;
    return (uint16_t)(sign | shift_round_even(significand, shift));
}

/* binary32 -> bfloat16 bits: the upper half, rounded to nearest even. */
static uint16_t float_to_bfloat(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
        return (uint16_t)((x >> 16) | 0x40u); /* a quiet NaN */
    }
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

void perf_dtype_store_float(obc_dtype_t dtype, void *dst, double value)
{
    switch (dtype) {
    case OBC_FLOAT16: {
        uint16_t h = float_to_half((float)value);
        memcpy(dst, &h, 2);
        break;
    }
    case OBC_BFLOAT16: {
        uint16_t h = float_to_bfloat((float)value);
        memcpy(dst, &h, 2);
        break;
    }
    case OBC_FLOAT32: {
        float f = (float)value;
        memcpy(dst, &f, 4);
        break;
    }
    default:
        memcpy(dst, &value, 8);
        break;
    }
}
