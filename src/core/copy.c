/* SPDX-License-Identifier: MIT */
/*
 * copy.c - the library's copies of user data (see copy.h): memcpy where it
 * is fast, a vector loop where it is not, and streaming stores on request.
 *
 * Why not always memcpy: glibc copies 2 KiB up to a few MiB with `rep
 * movsb`, and on the development VM's CPU (AMD EPYC, FSRM) that instruction
 * runs at 3 GB/s instead of 40-80 when the destination lies 1-31 bytes
 * after the source modulo 4 KiB (64 KiB: 3.1 against 50 GB/s; the plain
 * SSE2 loop below: 43 GB/s at the same addresses). Which addresses a copy
 * gets is the user's choice: a numpy array starts 16 bytes into its page,
 * a posix_memalign'd buffer at 0, so copying between them hits it.
 *
 * The loops use SSE2, which every x86-64 CPU has: 64 bytes per iteration,
 * unaligned loads, 16-byte aligned stores; the streaming variant stores
 * non-temporally and ends with an sfence so the data is globally visible
 * before the caller publishes it.
 */
#include "core/copy.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>

#define STREAM_MIN_BYTES 4096
/* glibc starts using rep movsb at 2 KiB; below, its own loops are fine. */
#define LOOP_MIN_BYTES 2048

bool obc__copy_distance_is_slow(const void *dst, const void *src)
{
    uintptr_t d = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    return d != 0 && d < 64;
}

static void copy_loop(unsigned char *dst, const unsigned char *src, size_t n, bool streaming)
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
        if (streaming) {
            _mm_stream_si128((__m128i *)(void *)dst, a);
            _mm_stream_si128((__m128i *)(void *)(dst + 16), b);
            _mm_stream_si128((__m128i *)(void *)(dst + 32), c);
            _mm_stream_si128((__m128i *)(void *)(dst + 48), d);
        } else {
            _mm_store_si128((__m128i *)(void *)dst, a);
            _mm_store_si128((__m128i *)(void *)(dst + 16), b);
            _mm_store_si128((__m128i *)(void *)(dst + 32), c);
            _mm_store_si128((__m128i *)(void *)(dst + 48), d);
        }
    }
    memcpy(dst, src, n);
    if (streaming) {
        _mm_sfence();
    }
}

void obc__copy(void *dst, const void *src, size_t n, int streaming)
{
    if (streaming && n >= STREAM_MIN_BYTES) {
        copy_loop(dst, src, n, true);
    } else if (n >= LOOP_MIN_BYTES && obc__copy_distance_is_slow(dst, src)) {
        copy_loop(dst, src, n, false);
    } else {
        memcpy(dst, src, n);
    }
}
#else
bool obc__copy_distance_is_slow(const void *dst, const void *src)
{
    (void)dst;
    (void)src;
    return false;
}

void obc__copy(void *dst, const void *src, size_t n, int streaming)
{
    (void)streaming;
    memcpy(dst, src, n);
}
#endif
