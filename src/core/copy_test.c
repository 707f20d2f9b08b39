/* SPDX-License-Identifier: MIT */
/*
 * copy_test.c - obc__copy moves exactly the bytes asked, whichever of its
 * three ways it takes (memcpy, the plain loop for addresses where memcpy is
 * slow, the streaming loop): every distance modulo 4 KiB from 0 to 127 and
 * near 4 KiB, every destination offset within 16 bytes, lengths around
 * each threshold and loop tail. The bytes before and after the destination
 * must stay untouched. Also the rule that picks the loop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/copy.h"

#define ROOM (3u << 16)
#define GUARD 64

static unsigned char *src_page, *dst_page;

static int setup(void **state)
{
    (void)state;
    if (posix_memalign((void **)&src_page, 4096, ROOM) != 0 ||
        posix_memalign((void **)&dst_page, 4096, ROOM) != 0) {
        return -1;
    }
    for (size_t i = 0; i < ROOM; i++) {
        src_page[i] = (unsigned char)(i * 131u + (i >> 8) * 7u + 1u);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(src_page);
    free(dst_page);
    return 0;
}

static void check_one(size_t src_off, size_t dst_off, size_t n, int streaming)
{
    memset(dst_page, 0xA5, ROOM);
    obc__copy(dst_page + dst_off, src_page + src_off, n, streaming);
    assert_memory_equal(dst_page + dst_off, src_page + src_off, n);
    for (size_t g = 1; g <= GUARD && g <= dst_off; g++) {
        assert_int_equal(dst_page[dst_off - g], 0xA5);
    }
    for (size_t g = 0; g < GUARD; g++) {
        assert_int_equal(dst_page[dst_off + n + g], 0xA5);
    }
}

static const size_t lengths[] = {0,    1,    15,   63,   64,   65,        2047,
                                 2048, 2049, 4095, 4096, 4097, 65536 + 37};

static void test_every_distance(void **state)
{
    (void)state;
    static const size_t far[] = {2304, 4000, 4032, 4033, 4095};
    for (int streaming = 0; streaming <= 1; streaming++) {
        for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
            for (size_t dist = 0; dist < 128; dist++) {
                check_one(GUARD + 5, GUARD + 5 + dist, lengths[l], streaming);
                check_one(GUARD + 5 + dist, GUARD + 5, lengths[l], streaming);
            }
            for (size_t f = 0; f < sizeof(far) / sizeof(far[0]); f++) {
                check_one(GUARD, GUARD + far[f], lengths[l], streaming);
            }
        }
    }
}

static void test_every_destination_offset(void **state)
{
    (void)state;
    for (int streaming = 0; streaming <= 1; streaming++) {
        for (size_t d = 0; d < 16; d++) {
            for (size_t s = 0; s < 16; s++) {
                check_one(4096 + s, 4096 + 16 + d, 8192 + 13, streaming);
            }
        }
    }
}

static void test_slow_distance_rule(void **state)
{
    (void)state;
    const unsigned char *base = src_page;
    assert_false(obc__copy_distance_is_slow(base, base));
    assert_false(obc__copy_distance_is_slow(base + 4096, base));
#if defined(__x86_64__)
    assert_true(obc__copy_distance_is_slow(base + 16, base));
    assert_true(obc__copy_distance_is_slow(base + 4096 + 63, base));
    assert_true(obc__copy_distance_is_slow(base + 2304 + 1, base + 2304));
#endif
    assert_false(obc__copy_distance_is_slow(base + 64, base));
    assert_false(obc__copy_distance_is_slow(base, base + 16)); /* destination before */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_distance),
        cmocka_unit_test(test_every_destination_offset),
        cmocka_unit_test(test_slow_distance_rule),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
