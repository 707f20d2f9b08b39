/* SPDX-License-Identifier: MIT */
/*
 * wait_test.c - the one wait (wait.c): a changed word returns at once, an
 * unchanged one times out after the deadline (not before, not much after),
 * a failing health check ends it with its code, and a word changed by
 * another thread wakes a sleeper, whether it spun first or slept at once,
 * and the sleeps are counted (the TRACE hand-off count) only when it slept.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "engine/wait.h"
#include "platform/platform.h"

static _Atomic uint32_t word, sleepers;
static uint32_t slept;
static int health_calls;

static obc_result_t fails_third_time(void *arg)
{
    (void)arg;
    return ++health_calls >= 3 ? OBC_ERR_PEER_LOST : OBC_SUCCESS;
}

static struct obc__wait on_word(bool sleep_now)
{
    return (struct obc__wait){.word = &word,
                              .sleepers = &sleepers,
                              .seen = atomic_load(&word),
                              .peer = -1,
                              .sleep_now = sleep_now,
                              .slept = &slept};
}

static void changed_or_timed_out(void **state)
{
    struct obc__wait_rules r = {1000, 100000, 10000000, false, NULL, NULL};
    struct obc__wait w = on_word(false);
    (void)state;
    atomic_fetch_add(&word, 1);
    assert_int_equal(obc__wait_word(&w, &r, 0), OBC_SUCCESS);
    w = on_word(false);
    int64_t t0 = obc__now_ns();
    assert_int_equal(obc__wait_word(&w, &r, 50000000), OBC_ERR_TIMEOUT);
    int64_t waited = obc__now_ns() - t0;
    assert_true(waited >= 50000000 && waited < 2000000000);
}

static void health_ends_it(void **state)
{
    struct obc__wait_rules r = {0, 0, 1000000, true, fails_third_time, NULL};
    struct obc__wait w = on_word(true);
    (void)state;
    health_calls = 0;
    assert_int_equal(obc__wait_word(&w, &r, -1), OBC_ERR_PEER_LOST);
    assert_int_equal(health_calls, 3);
}

static void *bump_later(void *arg)
{
    (void)arg;
    obc__sleep_ns(20000000);
    atomic_fetch_add_explicit(&word, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&word, false);
    }
    return NULL;
}

static void woken_by_another_thread(void **state)
{
    struct obc__wait_rules r = {20000, 0, -1, false, NULL, NULL};
    (void)state;
    for (int sleep_now = 0; sleep_now < 2; sleep_now++) {
        struct obc__wait w = on_word(sleep_now);
        pthread_t t;
        slept = 0;
        assert_int_equal(pthread_create(&t, NULL, bump_later, NULL), 0);
        assert_int_equal(obc__wait_word(&w, &r, -1), OBC_SUCCESS);
        pthread_join(t, NULL);
        /* 20 ms after 20 us of spinning: it slept (the hand-off count says so) */
        assert_true(slept >= 1);
    }
}

/* A wait the word ends during the spin is no sleep. */
static void spin_is_no_sleep(void **state)
{
    struct obc__wait_rules r = {1000000, 0, -1, false, NULL, NULL};
    struct obc__wait w = on_word(false);
    (void)state;
    slept = 0;
    atomic_fetch_add(&word, 1);
    assert_int_equal(obc__wait_word(&w, &r, -1), OBC_SUCCESS);
    assert_int_equal(slept, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(changed_or_timed_out),
        cmocka_unit_test(health_ends_it),
        cmocka_unit_test(woken_by_another_thread),
        cmocka_unit_test(spin_is_no_sleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
