/* SPDX-License-Identifier: MIT */
/*
 * bcase.c - broadcast test cases (see bcase.h): size classes, buffer set-up per
 * rank and mode, and the full post-completion check.
 */
#include "bcase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obct.h"

#define ODD_BYTES 13

const char *obct_dtype_name(obc_dtype_t t)
{
    static const char *const names[OBCT_NDTYPES] = {
        "int8",   "uint8",   "int32",    "uint32",  "int64",
        "uint64", "float16", "bfloat16", "float32", "float64",
    };
    return (unsigned)t < OBCT_NDTYPES ? names[t] : "bad-dtype";
}

const char *obct_mode_name(enum obct_mode m)
{
    switch (m) {
    case OBCT_IN_PLACE:
        return "in-place";
    case OBCT_OUT_OF_PLACE:
        return "out-of-place";
    case OBCT_OUT_OF_PLACE_DECOY:
        return "out-of-place(decoy sendbuf)";
    }
    return "?";
}

int obct_quick(void)
{
    const char *s = getenv("OBCT_QUICK");
    return s != NULL && strcmp(s, "0") != 0 && s[0] != '\0';
}

static size_t odd_count(size_t bytes, size_t dsize)
{
    return ((bytes + dsize - 1) / dsize) | 1;
}

int obct_size_classes(obc_dtype_t dtype, size_t *counts, const char **names)
{
    size_t dsize = obc_dtype_size(dtype);
    size_t large = (obct_quick() ? (size_t)4 << 20 : (size_t)64 << 20) + ODD_BYTES;
    OBCT_ASSERT_MSG(dsize > 0, "obc_dtype_size(%d) is 0", (int)dtype);
    counts[0] = 0;
    names[0] = "zero";
    counts[1] = 1;
    names[1] = "one";
    counts[2] = 4099;
    names[2] = "odd";
    counts[3] = odd_count(((size_t)1 << 20) + ODD_BYTES, dsize);
    names[3] = "1MiB+odd";
    counts[4] = odd_count(large, dsize);
    names[4] = obct_quick() ? "4MiB+odd" : "64MiB+odd";
    return 5;
}

int obct_size_class_large(void)
{
    return 4;
}

void obct_bcase_setup(struct obct_bcase *c, int rank, size_t count, obc_dtype_t dtype, int root,
                      uint64_t seed, enum obct_mode mode)
{
    size_t nbytes = count * obc_dtype_size(dtype);
    /* Misaligned payloads for byte types only: the library moves bytes, and wider
     * types are the caller's to align. */
    size_t misalign = obc_dtype_size(dtype) == 1 ? (size_t)(seed % 7) : 0;
    memset(c, 0, sizeof(*c));
    c->count = count;
    c->dtype = dtype;
    c->root = root;
    c->rank = rank;
    c->seed = seed;
    c->mode = mode;
    obct_buf_alloc(&c->recv, nbytes, misalign);
    if (rank == root) {
        if (mode == OBCT_IN_PLACE) {
            obct_fill(c->recv.data, nbytes, seed, root);
        } else {
            obct_buf_alloc(&c->send, nbytes, misalign ? misalign + 1 : 0);
            obct_fill(c->send.data, nbytes, seed, root);
            obct_poison(c->recv.data, nbytes);
        }
    } else {
        obct_poison(c->recv.data, nbytes);
        if (mode == OBCT_OUT_OF_PLACE_DECOY) {
            obct_buf_alloc(&c->send, nbytes, 0);
            obct_poison(c->send.data, nbytes);
        }
    }
}

const void *obct_bcase_sendbuf(const struct obct_bcase *c)
{
    if (c->mode == OBCT_IN_PLACE) {
        return c->recv.data;
    }
    return c->send.base != NULL ? c->send.data : NULL;
}

void *obct_bcase_recvbuf(const struct obct_bcase *c)
{
    return c->recv.data;
}

void obct_bcase_reuse(struct obct_bcase *c)
{
    size_t nbytes = c->count * obc_dtype_size(c->dtype);
    if (c->rank != c->root) {
        return;
    }
    obct_poison(c->mode == OBCT_IN_PLACE ? c->recv.data : c->send.data, nbytes);
    c->is_reused = 1;
}

void obct_bcase_describe(const struct obct_bcase *c, char *out, size_t outlen)
{
    snprintf(out, outlen, "bcast count=%zu dtype=%s (%zu bytes) root=%d %s seed=%llu", c->count,
             obct_dtype_name(c->dtype), c->count * obc_dtype_size(c->dtype), c->root,
             obct_mode_name(c->mode), (unsigned long long)c->seed);
}

int obct_bcase_check_at(const char *file, int line, const struct obct_bcase *c)
{
    char what[256];
    char desc[200];
    size_t nbytes = c->count * obc_dtype_size(c->dtype);
    int bad = 0;
    obct_bcase_describe(c, desc, sizeof(desc));
    snprintf(what, sizeof(what), "%s: recvbuf", desc);
    if (!(c->is_reused && c->mode == OBCT_IN_PLACE)) {
        bad |= obct_verify_at(file, line, what, c->recv.data, nbytes, c->seed, c->root);
    }
    bad |= obct_buf_check_at(file, line, what, &c->recv);
    if (c->send.base != NULL) {
        if (c->rank == c->root && c->is_reused) {
            snprintf(what, sizeof(what), "%s: root's sendbuf", desc);
        } else if (c->rank == c->root) {
            snprintf(what, sizeof(what), "%s: root's sendbuf (must stay unchanged)", desc);
            bad |= obct_verify_at(file, line, what, c->send.data, nbytes, c->seed, c->root);
        } else {
            snprintf(what, sizeof(what), "%s: non-root's sendbuf (must not be touched)", desc);
            bad |= obct_verify_poison_at(file, line, what, c->send.data, nbytes);
        }
        bad |= obct_buf_check_at(file, line, what, &c->send);
    }
    return bad;
}

void obct_bcase_free(struct obct_bcase *c)
{
    obct_buf_free(&c->recv);
    obct_buf_free(&c->send);
}

int obct_bcast_verified_at(const char *file, int line, obc_comm_t *comm, size_t count,
                           obc_dtype_t dtype, int root, uint64_t seed, enum obct_mode mode)
{
    struct obct_bcase c;
    obct_bcase_setup(&c, obc_comm_rank(comm), count, dtype, root, seed, mode);
    obc_result_t rc = mode == OBCT_IN_PLACE
        ? obc_bcast(obct_bcase_recvbuf(&c), count, dtype, root, comm)
        : obc_broadcast(obct_bcase_sendbuf(&c), obct_bcase_recvbuf(&c), count, dtype, root, comm);
    obct_expect_rc(file, line, mode == OBCT_IN_PLACE ? "obc_bcast" : "obc_broadcast", rc,
                   OBC_SUCCESS, comm, 1);
    int bad = obct_bcase_check_at(file, line, &c);
    obct_bcase_free(&c);
    return bad;
}
