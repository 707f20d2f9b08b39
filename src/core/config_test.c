/* SPDX-License-Identifier: MIT */
/*
 * config_test.c - the config table: defaults, parsing of each type
 * (sizes with K/M/G, numbers, strings), rejection of malformed values, and
 * the seconds-to-deadline rule (<= 0 means never).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/config.h"

static void clear_env(void **state)
{
    (void)state;
    unsetenv("OBC_TIMEOUT");
    unsetenv("OBC_CHUNK_BYTES");
    unsetenv("OBC_ALGO");
    unsetenv("OBC_CHECK");
}

static void defaults(void **state)
{
    struct obc__config cfg;
    char err[128];
    clear_env(state);
    assert_int_equal(obc__config_load(&cfg, err, sizeof(err)), 0);
    assert_true(cfg.timeout_s == 300.0);
    assert_int_equal(cfg.check, 0);
    assert_string_equal(cfg.algo, "");
    assert_true(cfg.chunk_bytes > 0);
}

static void parses_values(void **state)
{
    struct obc__config cfg;
    char err[128];
    clear_env(state);
    setenv("OBC_TIMEOUT", "2.5", 1);
    setenv("OBC_CHUNK_BYTES", "512K", 1);
    setenv("OBC_ALGO", "broadcast=arena", 1);
    setenv("OBC_CHECK", "2", 1);
    assert_int_equal(obc__config_load(&cfg, err, sizeof(err)), 0);
    assert_true(cfg.timeout_s == 2.5);
    assert_int_equal(cfg.chunk_bytes, 512 * 1024);
    assert_string_equal(cfg.algo, "broadcast=arena");
    assert_int_equal(cfg.check, 2);
    setenv("OBC_CHUNK_BYTES", "2G", 1);
    assert_int_equal(obc__config_load(&cfg, err, sizeof(err)), 0);
    assert_int_equal(cfg.chunk_bytes, (size_t)2 << 30);
    clear_env(state);
}

static void rejects_malformed(void **state)
{
    struct obc__config cfg;
    char err[128];
    const char *bad[][2] = {{"OBC_TIMEOUT", "soon"},
                            {"OBC_CHUNK_BYTES", "12Q"},
                            {"OBC_CHUNK_BYTES", "-4"},
                            {"OBC_CHECK", "1.5"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        clear_env(state);
        setenv(bad[i][0], bad[i][1], 1);
        assert_int_equal(obc__config_load(&cfg, err, sizeof(err)), -1);
        assert_non_null(strstr(err, bad[i][0])); /* the message names the variable */
    }
    clear_env(state);
}

static void timeouts(void **state)
{
    (void)state;
    assert_true(obc__config_timeout_ns(2.5) == 2500000000ll);
    assert_true(obc__config_timeout_ns(0) == -1);
    assert_true(obc__config_timeout_ns(-3) == -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(parses_values),
        cmocka_unit_test(rejects_malformed),
        cmocka_unit_test(timeouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
