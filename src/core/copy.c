/* SPDX-License-Identifier: MIT */
/*
 * copy_kernel.c - plain and streaming copies (see copy_kernel.h). The
 * streaming loop uses SSE2, which every x86-64 CPU has: 64 bytes per
 * iteration, unaligned loads, aligned non-temporal stores, and an sfence at
 * the end so the data is globally visible before the caller publishes it.
 */
#include "algo/copy_kernel.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>

#define STREAM_MIN_BYTES 4096

static void copy_stream(unsigned char *dst, const unsigned char *src, size_t n)
{
    size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
    memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)src);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(src + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(src + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(src + 48));
        _mm_stream_si128((__m128i *)(void *)dst, a);
        _mm_stream_si128((__m128i *)(void *)(dst + 16), b);
        _mm_stream_si128((__m128i *)(void *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(void *)(dst + 48), d);
    }
    memcpy(dst, src, n);
    _mm_sfence();
}

void obc__copy(void *dst, const void *src, size_t n, int streaming)
{
    if (streaming && n >= STREAM_MIN_BYTES) {
        copy_stream(dst, src, n);
    } else {
        memcpy(dst, src, n);
    }
}
#else
void obc__copy(void *dst, const void *src, size_t n, int streaming)
{
    (void)streaming;
    memcpy(dst, src, n);
}
#endif
