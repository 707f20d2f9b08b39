/* SPDX-License-Identifier: MIT */
/*
 * rcase.h - one test case of a reduction or gather collective (allreduce,
 * reduce, allgather, reduce_scatter): guarded buffers set up for a rank, the
 * call to make (struct obct_rcall), and the full check after completion.
 *
 * Inputs and expected results come from rdata.h (allgather moves rank r's
 * byte pattern (seed, r) of data.h instead). Layouts:
 *  - allreduce: in place sendbuf == recvbuf; out of place recvbuf poisoned;
 *  - reduce: the root as allreduce; a non-root passes recvbuf NULL
 *    (variant 0) or a buffer (variant 1): out of place a poisoned decoy that
 *    must stay untouched, in place its own sendbuf (sendbuf == recvbuf),
 *    which must keep its input;
 *  - allgather: recvbuf of nranks blocks, poisoned; in place sendbuf is
 *    recvbuf + rank * sendcount elements, holding the rank's block;
 *  - reduce_scatter: sendbuf of nranks * recvcount input elements; in place
 *    recvbuf is sendbuf + rank * recvcount elements, and the other blocks of
 *    sendbuf must keep their input (sendbuf is const).
 * The check verifies the result (rank's block, or the root's buffer), every
 * guard, and that every sendbuf and decoy is unchanged. Byte-type payloads
 * start misaligned (seed % 7), as the broadcast cases do.
 *
 * Part of the obct test library (tests/harness). Used by tests/coll's
 * allreduce_matrix, reduce_matrix, allgather_matrix, reduce_scatter_matrix,
 * reduce_group, reduce_bad_args and coll_mixed.
 */
#ifndef OBCT_RCASE_H
#define OBCT_RCASE_H

#include <stddef.h>

#include "data.h"
#include "obc.h"
#include "rcall.h"
#include "rdata.h"

/* obct_rcase_run checks allreduces of at least this many elements sliced (see .sliced). */
#define OBCT_SLICED_MIN_COUNT 16384

struct obct_rcase {
    enum obct_rkind kind;
    struct obct_rdata d; /* pattern, dtype, op, seed, nranks */
    size_t count; /* as in struct obct_rcall */
    int root;
    int rank;
    int in_place;
    int variant;
    struct obct_buf send;
    struct obct_buf recv;
    struct obct_rcall call; /* the arguments to pass */
    obc_request_t *req; /* free for the caller's use */
    const char *note; /* printed in messages when set (how it was called or completed) */
    /* allreduce: check only this rank's 1/nranks slice of the result against the
     * expected values. Sound only when the caller also proves every rank holds the
     * same bytes (obct_rcase_check_consistent, or a byte comparison with a fully
     * checked run): then each element is checked by exactly one rank, and the
     * check costs O(count) per rank instead of O(nranks * count). */
    int sliced;
    /* Input regions the call must leave unchanged, hashed at set-up: the check hashes
     * them again (one memory pass) and regenerates their elements only to name the
     * first changed one. */
    struct obct_rkept {
        const unsigned char *p;
        size_t n; /* elements */
        size_t first; /* index of p[0] in the rank's input */
        uint64_t hash;
        const char *what;
    } kept[2];
    int nkept;
};

void obct_rcase_setup(struct obct_rcase *c, enum obct_rkind kind, const struct obct_rdata *d,
                      size_t count, int root, int in_place, int variant, int rank);
/* Soft-checks everything; 0 when all good. */
int obct_rcase_check_at(const char *file, int line, const struct obct_rcase *c);
#define obct_rcase_check(c) obct_rcase_check_at(__FILE__, __LINE__, c)
/* Collective: for allreduce and allgather, obc_check_consistency of the result with root 0
 * must report ndiff == 0 and first_diff_rank == -1 (soft); a no-op for the others. */
void obct_rcase_check_consistent_at(const char *file, int line, const struct obct_rcase *c,
                                    obc_comm_t *comm);
#define obct_rcase_check_consistent(c, comm) \
    obct_rcase_check_consistent_at(__FILE__, __LINE__, c, comm)
void obct_rcase_free(struct obct_rcase *c);
void obct_rcase_describe(const struct obct_rcase *c, char *out, size_t outlen);

/* Set up, run with `how`, fail (fatal) unless OBC_SUCCESS, check, consistency, free. */
void obct_rcase_run_at(const char *file, int line, enum obct_rkind kind, const struct obct_rdata *d,
                       size_t count, int root, int in_place, int variant, obc_comm_t *comm,
                       enum obct_completion how);
#define obct_rcase_run(kind, d, count, root, in_place, variant, comm, how) \
    obct_rcase_run_at(__FILE__, __LINE__, kind, d, count, root, in_place, variant, comm, how)

#endif /* OBCT_RCASE_H */
