/* SPDX-License-Identifier: MIT */
/*
 * rcall.c - issue and complete one reduction or gather call (see rcall.h).
 */
#include "rcall.h"

#include <sched.h>

#include "bcase.h"
#include "obct.h"

const char *obct_rkind_name(enum obct_rkind k)
{
    static const char *const names[] = {"allreduce", "reduce", "allgather", "reduce_scatter"};
    return (unsigned)k < 4 ? names[k] : "?";
}

const char *obct_completion_name(enum obct_completion c)
{
    static const char *const names[OBCT_NCOMPLETIONS] = {"sync", "iwait", "itest", "isynchronize"};
    return (unsigned)c < OBCT_NCOMPLETIONS ? names[c] : "?";
}

static obc_result_t call_blocking(const struct obct_rcall *c, obc_comm_t *comm)
{
    switch (c->kind) {
    case OBCT_ALLREDUCE:
        return obc_allreduce(c->sendbuf, c->recvbuf, c->count, c->dtype, c->op, comm);
    case OBCT_REDUCE:
        return obc_reduce(c->sendbuf, c->recvbuf, c->count, c->dtype, c->op, c->root, comm);
    case OBCT_ALLGATHER:
        return obc_allgather(c->sendbuf, c->recvbuf, c->count, c->dtype, comm);
    case OBCT_REDUCE_SCATTER:
        return obc_reduce_scatter(c->sendbuf, c->recvbuf, c->count, c->dtype, c->op, comm);
    }
    OBCT_FAIL("bad call kind %d", (int)c->kind);
}

obc_result_t obct_rcall_post(const struct obct_rcall *c, obc_comm_t *comm, obc_request_t **req)
{
    switch (c->kind) {
    case OBCT_ALLREDUCE:
        return obc_iallreduce(c->sendbuf, c->recvbuf, c->count, c->dtype, c->op, comm, req);
    case OBCT_REDUCE:
        return obc_ireduce(c->sendbuf, c->recvbuf, c->count, c->dtype, c->op, c->root, comm, req);
    case OBCT_ALLGATHER:
        return obc_iallgather(c->sendbuf, c->recvbuf, c->count, c->dtype, comm, req);
    case OBCT_REDUCE_SCATTER:
        return obc_ireduce_scatter(c->sendbuf, c->recvbuf, c->count, c->dtype, c->op, comm, req);
    }
    OBCT_FAIL("bad call kind %d", (int)c->kind);
}

obc_result_t obct_test_until_done(obc_request_t *req, double timeout_s)
{
    double deadline = obct_now() + timeout_s * obct_time_scale();
    for (;;) {
        int done = -1;
        obc_result_t rc = obc_test(req, &done);
        OBCT_ASSERT_MSG(done == 0 || done == 1, "obc_test left done=%d", done);
        OBCT_ASSERT_MSG((rc == OBC_IN_PROGRESS) == (done == 0), "obc_test returned %s with done=%d",
                        obct_rc_name(rc), done);
        if (done) {
            return rc;
        }
        OBCT_ASSERT_MSG(obct_now() < deadline, "obc_test did not report done within %.0f s",
                        timeout_s);
        sched_yield();
    }
}

obc_result_t obct_rcall_run(const struct obct_rcall *c, obc_comm_t *comm, enum obct_completion how)
{
    obc_request_t *req = NULL;
    obc_result_t rc;
    obc_result_t rs;
    int done = -1;
    if (how == OBCT_SYNC) {
        return call_blocking(c, comm);
    }
    rc = obct_rcall_post(c, comm, &req);
    if (rc != OBC_SUCCESS) {
        return rc;
    }
    OBCT_ASSERT_MSG(req != NULL, "obc_i%s returned OBC_SUCCESS without a request",
                    obct_rkind_name(c->kind));
    switch (how) {
    case OBCT_WAIT:
        return obc_wait(req);
    case OBCT_TEST:
        return obct_test_until_done(req, 120);
    case OBCT_SYNCHRONIZE:
        rs = obc_comm_synchronize(comm);
        rc = obc_test(req, &done);
        OBCT_ASSERT_MSG(done == 1, "obc_test after obc_comm_synchronize (%s): done=%d rc=%s",
                        obct_rc_name(rs), done, obct_rc_name(rc));
        OBCT_ASSERT_MSG(rs == rc, "obc_comm_synchronize returned %s but the request %s",
                        obct_rc_name(rs), obct_rc_name(rc));
        return rc;
    default:
        OBCT_FAIL("bad completion %d", (int)how);
    }
}

int obct_rsize_classes(size_t *counts, const char **names)
{
    counts[0] = 0;
    names[0] = "zero";
    counts[1] = 1;
    names[1] = "one";
    counts[2] = 4099;
    names[2] = "odd";
    counts[3] = obct_quick() ? 30011 : 1000003;
    names[3] = obct_quick() ? "30011" : "1000003";
    return OBCT_RCLASSES;
}
