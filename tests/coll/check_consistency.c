/* SPDX-License-Identifier: MIT */
/*
 * check_consistency.c - obc_check_consistency reports exactly which ranks
 * hold bytes that differ from the root's: identical buffers give ndiff == 0
 * and first_diff_rank == -1 for every root; one rank with one byte flipped
 * (first, middle or last byte) gives ndiff == 1 and first_diff_rank == that
 * rank, for roots first/middle/last; a flipped root makes every other rank
 * differ (ndiff == nranks - 1, first_diff_rank the lowest non-root); two
 * flipped ranks give 2 and the lower one; a rank passing fewer bytes (a
 * prefix of the same data, or 0) differs too, and is not an error; bytes == 0
 * everywhere (buf NULL) is consistent; ndiff and first_diff_rank may be NULL.
 * Every rank must get the same answer (each checks the expected one), sizes
 * run from 0 to 64 MiB + odd (4 MiB + odd under OBCT_QUICK=1) with misaligned
 * starts, and the buffer itself must come back unchanged, guards intact.
 */
/* obct: nranks=1,2,3,4,5,8 asan=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16,32 */
/* obct: name=split2 env=OBC_HOST_SPLIT=2 nranks=4,5 asan=4 */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"

#define SEED_BASE 0x636f6e73ull
#define NONE (-1)

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_case;

struct ccase {
    size_t nbytes; /* what every rank but `short_rank` passes */
    int root;
    int flip[2]; /* ranks whose copy has one byte flipped, or NONE */
    size_t flip_at; /* which byte */
    int short_rank; /* passes short_bytes instead, or NONE */
    size_t short_bytes;
};

/* What every rank must be told: ranks whose bytes differ from the root's. */
static void expected(const struct ccase *c, int *ndiff, int *first)
{
    int differs_from_root[1024] = {0};
    OBCT_ASSERT(g_nranks <= 1024);
    *ndiff = 0;
    *first = -1;
    for (int r = 0; r < g_nranks; r++) {
        int flipped_r = r == c->flip[0] || r == c->flip[1];
        int flipped_root = c->root == c->flip[0] || c->root == c->flip[1];
        size_t len_r = r == c->short_rank ? c->short_bytes : c->nbytes;
        size_t len_root = c->root == c->short_rank ? c->short_bytes : c->nbytes;
        /* flips fall inside every length used with them (flip_at < short_bytes) */
        differs_from_root[r] = len_r != len_root || flipped_r != flipped_root;
        if (differs_from_root[r]) {
            (*ndiff)++;
            if (*first < 0) {
                *first = r;
            }
        }
    }
}

static void run(const struct ccase *c)
{
    struct obct_buf b;
    uint64_t seed = SEED_BASE + g_case;
    size_t len = g_rank == c->short_rank ? c->short_bytes : c->nbytes;
    int flipped = g_rank == c->flip[0] || g_rank == c->flip[1];
    int want_ndiff;
    int want_first;
    int ndiff = -7;
    int first = -7;
    char desc[240];
    obc_result_t rc;
    snprintf(desc, sizeof(desc),
             "check_consistency bytes=%zu root=%d flipped=%d,%d at %zu short rank %d (%zu bytes) "
             "(case %llu)",
             c->nbytes, c->root, c->flip[0], c->flip[1], c->flip_at, c->short_rank, c->short_bytes,
             (unsigned long long)g_case);
    g_case++;
    expected(c, &want_ndiff, &want_first);
    obct_buf_alloc(&b, len, (size_t)(seed % 13));
    obct_fill(b.data, len, seed, 0); /* the same bytes on every rank */
    if (flipped) {
        OBCT_ASSERT(c->flip_at < len);
        b.data[c->flip_at] ^= 0x01;
    }
    rc = obc_check_consistency(len ? b.data : NULL, len, c->root, &ndiff, &first, g_comm);
    if (rc != OBC_SUCCESS) {
        OBCT_FAIL("%s: returned %s: %s", desc, obct_rc_name(rc), obc_comm_last_error(g_comm));
    }
    if (ndiff != want_ndiff || first != want_first) {
        obct_soft_fail(__FILE__, __LINE__,
                       "%s: got ndiff=%d first_diff_rank=%d, expected %d and %d", desc, ndiff,
                       first, want_ndiff, want_first);
    }
    if (flipped) {
        b.data[c->flip_at] ^= 0x01;
    }
    obct_verify(desc, b.data, len, seed, 0);
    obct_buf_check(desc, &b);
    obct_buf_free(&b);
}

static struct ccase plain(size_t nbytes, int root)
{
    struct ccase c = {nbytes, root, {NONE, NONE}, 0, NONE, 0};
    return c;
}

static void all_equal(const size_t *sizes, int nsizes)
{
    for (int s = 0; s < nsizes; s++) {
        for (int root = 0; root < g_nranks; root++) {
            struct ccase c = plain(sizes[s], root);
            run(&c);
        }
    }
    /* bytes == 0 with a NULL buffer, every root; NULL outputs accepted */
    for (int root = 0; root < g_nranks; root++) {
        OBCT_OK(obc_check_consistency(NULL, 0, root, NULL, NULL, g_comm), g_comm);
    }
    {
        struct obct_buf b;
        int ndiff = -7;
        obct_buf_alloc(&b, 100, 0);
        obct_fill(b.data, 100, SEED_BASE, 0);
        OBCT_OK(obc_check_consistency(b.data, 100, g_nranks - 1, &ndiff, NULL, g_comm), g_comm);
        OBCT_CHECK_EQ_INT(ndiff, 0);
        if (g_rank == 0) { /* a difference with NULL outputs: still not an error */
            b.data[99] ^= 0x80;
        }
        OBCT_OK(obc_check_consistency(b.data, 100, 0, NULL, NULL, g_comm), g_comm);
        obct_buf_free(&b);
    }
}

static void flips(const size_t *sizes, int nsizes)
{
    int cand[3] = {0, g_nranks / 2, g_nranks - 1};
    for (int s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        size_t at[3] = {0, n / 2, n - 1};
        if (n == 0) {
            continue;
        }
        for (int v = 0; v < 3; v++) {
            for (int r = 0; r < 3; r++) {
                struct ccase c = plain(n, cand[r]);
                c.flip[0] = cand[v];
                c.flip_at = at[(v + r + s) % 3];
                run(&c);
            }
        }
    }
    if (g_nranks >= 4) { /* two differing ranks, neither the root, the root in between */
        struct ccase c = plain(4099, 2);
        c.flip[0] = 1;
        c.flip[1] = g_nranks - 1;
        c.flip_at = 4098;
        run(&c);
        c.root = 0;
        run(&c);
    }
}

static void lengths(void)
{
    for (int v = 0; v < g_nranks; v++) {
        struct ccase c = plain(4099, (v + 1) % g_nranks);
        c.short_rank = v;
        c.short_bytes = 4098; /* a prefix of the same bytes */
        run(&c);
        c.short_bytes = 0;
        run(&c);
    }
    {
        struct ccase c = plain(0, 0); /* only the last rank has bytes */
        c.short_rank = g_nranks - 1;
        c.short_bytes = 17;
        run(&c);
    }
}

int main(void)
{
    size_t counts[8];
    const char *names[8];
    size_t sizes[8];
    int nsizes = 0;
    double t0 = obct_now();
    obct_size_classes(OBC_UINT8, counts, names);
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    sizes[nsizes++] = 0;
    sizes[nsizes++] = 1;
    sizes[nsizes++] = 7;
    sizes[nsizes++] = 13;
    sizes[nsizes++] = 4099;
    sizes[nsizes++] = counts[3]; /* 1 MiB + odd */
    all_equal(sizes, nsizes);
    flips(sizes, nsizes);
    lengths();
    sizes[0] = counts[obct_size_class_large()];
    flips(sizes, 1);
    if (g_rank == 0) {
        printf("check_consistency: nranks=%d cases=%llu time=%.3f s\n", g_nranks,
               (unsigned long long)g_case, obct_now() - t0);
    }
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("check_consistency");
}
