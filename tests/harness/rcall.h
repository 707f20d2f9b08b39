/* SPDX-License-Identifier: MIT */
/*
 * rcall.h - one call of a reduction or gather collective (allreduce, reduce,
 * allgather, reduce_scatter) described as data, issued blocking or
 * non-blocking and completed in one of the ways a caller may: obc_wait,
 * obc_test polling, or obc_comm_synchronize followed by obc_test (which must
 * then say done at once). Shared by the coll tests of these collectives,
 * with their size classes.
 *
 * Part of the obct test library (tests/harness), included through rcase.h by
 * tests/coll's allreduce_matrix, reduce_matrix, allgather_matrix,
 * reduce_scatter_matrix, reduce_group, reduce_bad_args and coll_mixed.
 */
#ifndef OBCT_RCALL_H
#define OBCT_RCALL_H

#include <stddef.h>

#include "obc.h"

enum obct_rkind { OBCT_ALLREDUCE, OBCT_REDUCE, OBCT_ALLGATHER, OBCT_REDUCE_SCATTER };

enum obct_completion {
    OBCT_SYNC, /* the blocking call */
    OBCT_WAIT, /* obc_i* then obc_wait */
    OBCT_TEST, /* obc_i* then obc_test until done */
    OBCT_SYNCHRONIZE, /* obc_i* then obc_comm_synchronize, then obc_test: done at once */
    OBCT_NCOMPLETIONS
};

struct obct_rcall {
    enum obct_rkind kind;
    const void *sendbuf;
    void *recvbuf;
    size_t count; /* count, sendcount (allgather) or recvcount (reduce_scatter) */
    obc_dtype_t dtype;
    obc_redop_t op; /* not for allgather */
    int root; /* reduce only */
};

const char *obct_rkind_name(enum obct_rkind k);
const char *obct_completion_name(enum obct_completion c);

/* Issue the non-blocking form; returns its result (*req set on success). */
obc_result_t obct_rcall_post(const struct obct_rcall *c, obc_comm_t *comm, obc_request_t **req);
/* Issue the call and complete it as `how` says; returns the operation's result.
 * Fatal when obc_test or obc_comm_synchronize break their contract. */
obc_result_t obct_rcall_run(const struct obct_rcall *c, obc_comm_t *comm, enum obct_completion how);
/* Poll req with obc_test until done (fatal after timeout_s, scaled); returns its result.
 * obc_test must say IN_PROGRESS exactly while done == 0. */
obc_result_t obct_test_until_done(obc_request_t *req, double timeout_s);

/* Size classes of the reduction matrices, in elements: 0, 1, 4099 and about a million
 * (1000003; 30011 under OBCT_QUICK=1). Returns the number of classes (4). */
#define OBCT_RCLASSES 4
#define OBCT_RCLASS_LARGE 3
int obct_rsize_classes(size_t *counts, const char **names);

#endif /* OBCT_RCALL_H */
