/* SPDX-License-Identifier: MIT */
/*
 * bcase.h - one broadcast test case: guarded buffers set up for a rank,
 * the arguments to pass, and the check after completion.
 *
 * The root's data is pattern (seed, root); every other receive buffer starts
 * as poison. The check verifies the payload, every guard, the root's sendbuf
 * (unchanged) and a non-root's decoy sendbuf (never touched). Also the size
 * classes of the matrix and dtype names, shared by the coll tests.
 *
 * Part of the obct test library (tests/harness). Used by the broadcast tests of
 * tests/coll, by every fault, integration and large test that needs one verified
 * broadcast, and by rcase/rcall/rdata (size classes, dtype and mode names).
 */
#ifndef OBCT_BCASE_H
#define OBCT_BCASE_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "obc.h"

#define OBCT_NDTYPES 10

enum obct_mode {
    OBCT_IN_PLACE, /* obc_bcast(buf) / obc_broadcast(buf, buf) */
    OBCT_OUT_OF_PLACE, /* obc_broadcast(send, recv); non-roots pass sendbuf NULL */
    OBCT_OUT_OF_PLACE_DECOY /* as above, but non-roots pass a poisoned sendbuf that must
                             * stay untouched */
};

struct obct_bcase {
    size_t count;
    obc_dtype_t dtype;
    int root;
    int rank;
    uint64_t seed;
    enum obct_mode mode;
    struct obct_buf recv;
    struct obct_buf send; /* root (out of place) or decoy on non-roots */
    int is_reused; /* the root overwrote its source after the call (obct_bcase_reuse) */
};

const char *obct_dtype_name(obc_dtype_t t);
const char *obct_mode_name(enum obct_mode m);

/* Size classes of the matrix, in elements of dtype: 0, 1, 4099, ~1 MiB + odd and
 * the large one (64 MiB + odd, or 4 MiB + odd under OBCT_QUICK=1). Element counts
 * above 1 are odd. Returns the number of classes (at most 8). */
int obct_size_classes(obc_dtype_t dtype, size_t *counts, const char **names);
/* Index of the large class in that list. */
int obct_size_class_large(void);
int obct_quick(void);

void obct_bcase_setup(struct obct_bcase *c, int rank, size_t count, obc_dtype_t dtype, int root,
                      uint64_t seed, enum obct_mode mode);
const void *obct_bcase_sendbuf(const struct obct_bcase *c);
void *obct_bcase_recvbuf(const struct obct_bcase *c);
/* On the root: overwrite the source (sendbuf, or the in-place buffer) at once, as a
 * caller may once the call returned; non-roots must still receive the original data.
 * The check then skips the root's source. No-op on other ranks. */
void obct_bcase_reuse(struct obct_bcase *c);
/* Soft-checks everything; returns 0 if all good. */
int obct_bcase_check_at(const char *file, int line, const struct obct_bcase *c);
void obct_bcase_free(struct obct_bcase *c);
/* One-line description for messages. */
void obct_bcase_describe(const struct obct_bcase *c, char *out, size_t outlen);

/* One whole verified broadcast on comm: set up the case for this rank, call
 * obc_bcast (in place) or obc_broadcast, expect OBC_SUCCESS (fatal: the
 * call's failure stops the rank), check every byte and guard, free.
 * Returns 0 if all good. */
int obct_bcast_verified_at(const char *file, int line, obc_comm_t *comm, size_t count,
                           obc_dtype_t dtype, int root, uint64_t seed, enum obct_mode mode);

#define obct_bcase_check(c) obct_bcase_check_at(__FILE__, __LINE__, c)
#define obct_bcast_verified(comm, count, dtype, root, seed, mode) \
    obct_bcast_verified_at(__FILE__, __LINE__, comm, count, dtype, root, seed, mode)

#endif /* OBCT_BCASE_H */
