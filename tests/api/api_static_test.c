/* SPDX-License-Identifier: MIT */
/*
 * api_static_test.c - the parts of obc.h that need no communicator, as
 * cmocka unit tests: obc_strerror (never NULL, distinct per code, also for
 * unknown codes), obc_result_name (the header's identifiers, NULL past the
 * last code: what the Python package builds its table from), obc_dtype_size for every dtype and for
 * invalid ones, obc_version against the header, and the message after an argument error made
 * without a communicator, and obc_hash64 (XXH3-64's published value for empty input; content, not
 * address, decides the hash).
 */
/* obct: san */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "obc.h"

static void strerror_distinct(void **state)
{
    (void)state;
    for (int a = OBC_SUCCESS; a <= OBC_IN_PROGRESS; a++) {
        const char *sa = obc_strerror((obc_result_t)a);
        assert_non_null(sa);
        assert_true(strlen(sa) > 0);
        for (int b = OBC_SUCCESS; b < a; b++) {
            const char *sb = obc_strerror((obc_result_t)b);
            if (strcmp(sa, sb) == 0) {
                fail_msg("obc_strerror(%d) == obc_strerror(%d) == \"%s\"", a, b, sa);
            }
        }
    }
}

static void strerror_unknown(void **state)
{
    (void)state;
    assert_non_null(obc_strerror((obc_result_t)(OBC_IN_PROGRESS + 1)));
    assert_non_null(obc_strerror((obc_result_t)999));
    assert_non_null(obc_strerror((obc_result_t)-1));
}

/* Spelled out here on purpose: this is the check that the library's table and
 * the header's enum agree, name for value. */
static void result_names_are_the_headers(void **state)
{
#define NAMED(code) \
    { \
        code, #code \
    }
    static const struct {
        obc_result_t code;
        const char *name;
    } want[] = {
        NAMED(OBC_SUCCESS),      NAMED(OBC_ERR_INVALID_ARG), NAMED(OBC_ERR_NO_MEMORY),
        NAMED(OBC_ERR_SYSTEM),   NAMED(OBC_ERR_TIMEOUT),     NAMED(OBC_ERR_PEER_LOST),
        NAMED(OBC_ERR_MISMATCH), NAMED(OBC_ERR_ABORTED),     NAMED(OBC_ERR_AUTH),
        NAMED(OBC_ERR_PROTOCOL), NAMED(OBC_ERR_INTERNAL),    NAMED(OBC_IN_PROGRESS),
    };
#undef NAMED
    (void)state;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        assert_non_null(obc_result_name(want[i].code));
        assert_string_equal(obc_result_name(want[i].code), want[i].name);
    }
    assert_null(obc_result_name((obc_result_t)(OBC_IN_PROGRESS + 1)));
    assert_null(obc_result_name((obc_result_t)-1));
}

static void dtype_sizes(void **state)
{
    static const size_t want[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
    static const obc_dtype_t types[] = {OBC_INT8,    OBC_UINT8,  OBC_INT32,   OBC_UINT32,
                                        OBC_INT64,   OBC_UINT64, OBC_FLOAT16, OBC_BFLOAT16,
                                        OBC_FLOAT32, OBC_FLOAT64};
    (void)state;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        assert_int_equal(obc_dtype_size(types[i]), want[i]);
    }
    assert_int_equal(obc_dtype_size((obc_dtype_t)10), 0);
    assert_int_equal(obc_dtype_size((obc_dtype_t)99), 0);
    assert_int_equal(obc_dtype_size((obc_dtype_t)-1), 0);
}

static void version_matches_header(void **state)
{
    char want[64];
    (void)state;
    snprintf(want, sizeof(want), "%d.%d.%d", OBC_VERSION_MAJOR, OBC_VERSION_MINOR,
             OBC_VERSION_PATCH);
    assert_non_null(obc_version());
    assert_string_equal(obc_version(), want);
}

static void message_without_comm(void **state)
{
    int buf[2] = {0, 0};
    const char *msg;
    (void)state;
    assert_int_equal(obc_bcast(buf, 2, OBC_INT32, 0, NULL), OBC_ERR_INVALID_ARG);
    msg = obc_comm_last_error(NULL);
    assert_non_null(msg);
    assert_true(strlen(msg) > 0);
    assert_int_equal(obc_get_unique_id(NULL), OBC_ERR_INVALID_ARG);
    assert_int_equal(obc_comm_rank(NULL), -1);
    assert_int_equal(obc_comm_size(NULL), -1);
    assert_int_equal(obc_comm_destroy(NULL), OBC_SUCCESS);
}

static void hash64_is_xxh3_of_the_bytes(void **state)
{
    (void)state;
    unsigned char a[1001], b[1002];
    assert_int_equal(obc_hash64(NULL, 0), 0x2D06800538D394C2ULL); /* XXH3_64bits("") */
    for (size_t i = 0; i < sizeof(a); i++) {
        a[i] = (unsigned char)(i * 7);
        b[i + 1] = a[i];
    }
    assert_int_equal(obc_hash64(a, sizeof(a)), obc_hash64(b + 1, sizeof(a)));
    for (size_t i = 0; i < sizeof(a); i += 97) {
        b[i + 1] ^= 1;
        assert_int_not_equal(obc_hash64(a, sizeof(a)), obc_hash64(b + 1, sizeof(a)));
        b[i + 1] ^= 1;
    }
    assert_int_not_equal(obc_hash64(a, sizeof(a)), obc_hash64(a, sizeof(a) - 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strerror_distinct),
        cmocka_unit_test(strerror_unknown),
        cmocka_unit_test(result_names_are_the_headers),
        cmocka_unit_test(dtype_sizes),
        cmocka_unit_test(version_matches_header),
        cmocka_unit_test(message_without_comm),
        cmocka_unit_test(hash64_is_xxh3_of_the_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
