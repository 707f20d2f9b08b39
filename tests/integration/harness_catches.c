/* SPDX-License-Identifier: MIT */
/*
 * harness_catches.c - the reduction checks of tests/harness (rcase.c) see a
 * changed byte: in a result, in an out-of-place sendbuf, in a non-root's
 * read-only buffer and outside a rank's block of an in-place reduce_scatter.
 * The inputs are checked by hashing them at set-up and again after the call
 * (the element-wise regeneration only names the first changed element), so
 * this proves the hash path can fail. No library call is made: the "results"
 * are put in place by hand. Each planted change prints a FAIL line from the
 * check it trips; the program passes when every one was counted, and when
 * the untouched cases counted none.
 */
#include <stdio.h>
#include <string.h>

#include "obct.h"
#include "rcase.h"

static int g_missed;

/* Run the check and compare the failures it counted with `want`. */
static void expect_failures(const char *what, const struct obct_rcase *c, int want)
{
    int before = obct_failures();
    int bad = obct_rcase_check(c);
    int got = obct_failures() - before;
    if (got != want || (want > 0) != (bad != 0)) {
        printf("MISSED: %s: the check counted %d failures (returned %d), expected %d\n", what, got,
               bad, want);
        g_missed++;
    } else {
        printf("ok: %s (%d failure%s counted, as planted)\n", what, got, got == 1 ? "" : "s");
    }
}

static void flip(unsigned char *p, size_t at)
{
    p[at] ^= 0x20;
}

/* One rank: the allreduce result is the input itself. */
static void allreduce_out_of_place(void)
{
    struct obct_rdata d = {OBCT_RPAT_EXACT, OBC_INT32, OBC_SUM, 11, 1};
    struct obct_rcase c;
    size_t nbytes = 100003 * 4;
    obct_rcase_setup(&c, OBCT_ALLREDUCE, &d, 100003, 0, 0, 0, 0);
    memcpy(c.recv.data, c.send.data, nbytes);
    expect_failures("allreduce, untouched", &c, 0);
    flip(c.recv.data, nbytes - 3);
    expect_failures("allreduce, one result byte changed", &c, 1);
    flip(c.recv.data, nbytes - 3);
    flip(c.send.data, 4097);
    expect_failures("allreduce, one sendbuf byte changed", &c, 1);
    obct_rcase_free(&c);
}

/* A non-root's in-place reduce buffer is its input and must stay so. */
static void reduce_nonroot_in_place(void)
{
    struct obct_rdata d = {OBCT_RPAT_EXACT, OBC_FLOAT32, OBC_MAX, 12, 2};
    struct obct_rcase c;
    obct_rcase_setup(&c, OBCT_REDUCE, &d, 5000, 0, 1, 1, 1);
    expect_failures("reduce non-root in place, untouched", &c, 0);
    flip(c.recv.data, 0);
    expect_failures("reduce non-root in place, first byte changed", &c, 1);
    obct_rcase_free(&c);
}

/* Outside the rank's block of an in-place reduce_scatter, before it and after it. Two ranks'
 * sum is never put in place here, so the block check fails every time: count beyond it. */
static void reduce_scatter_in_place(void)
{
    struct obct_rdata d = {OBCT_RPAT_EXACT, OBC_INT64, OBC_SUM, 13, 3};
    struct obct_rcase c;
    int block_failures;
    int before = obct_failures();
    obct_rcase_setup(&c, OBCT_REDUCE_SCATTER, &d, 777, 0, 1, 0, 1);
    obct_rcase_check(&c);
    block_failures = obct_failures() - before;
    flip(c.send.data, 5);
    expect_failures("reduce_scatter in place, a byte before the block changed", &c,
                    block_failures + 1);
    flip(c.send.data, 5);
    flip(c.send.data, 3 * 777 * 8 - 1);
    expect_failures("reduce_scatter in place, the last byte after the block changed", &c,
                    block_failures + 1);
    obct_rcase_free(&c);
}

int main(void)
{
    printf("harness_catches: each FAIL line below is a planted change being caught\n");
    allreduce_out_of_place();
    reduce_nonroot_in_place();
    reduce_scatter_in_place();
    if (g_missed != 0) {
        printf("harness_catches: %d planted change(s) missed or false alarms\n", g_missed);
        return 1;
    }
    printf("harness_catches: every planted change was caught\n");
    return 0;
}
