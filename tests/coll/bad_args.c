/* SPDX-License-Identifier: MIT */
/*
 * bad_args.c - every argument error of the broadcast, barrier, request and
 * communicator calls returns OBC_ERR_INVALID_ARG with a non-empty message,
 * at once and before any communication: ranks issue different numbers of
 * bad calls (rank r repeats them r + 1 times), so a bad call that touched
 * the wire would desynchronise the verified broadcasts that follow. Count 0
 * with NULL buffers is valid, and the communicator stays usable.
 */
/* obct: nranks=1,3,64 timeout=120 asan=3 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bcase.h"
#include "obct.h"

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;

/* The call must fail with INVALID_ARG, quickly, with a message on msg_comm. */
static void expect_invalid(const char *file, int line, const char *expr, obc_result_t rc, double t0,
                           const obc_comm_t *msg_comm)
{
    double dt = obct_now() - t0;
    const char *msg = obc_comm_last_error(msg_comm);
    obct_expect_rc(file, line, expr, rc, OBC_ERR_INVALID_ARG, msg_comm, 0);
    if (msg == NULL || msg[0] == '\0') {
        obct_soft_fail(file, line, "%s: obc_comm_last_error(%s) is %s", expr,
                       msg_comm ? "comm" : "NULL", msg ? "empty" : "NULL");
    }
    if (dt > 0.5) {
        obct_soft_fail(file, line, "%s took %.3f s to reject its arguments", expr, dt);
    }
}

#define BAD(expr, msg_comm) \
    do { \
        double bad_t0_ = obct_now(); \
        obc_result_t bad_rc_ = (expr); \
        expect_invalid(__FILE__, __LINE__, #expr, bad_rc_, bad_t0_, (msg_comm)); \
    } while (0)

static void null_comm(void)
{
    int buf[4] = {0};
    obc_request_t *req = NULL;
    BAD(obc_broadcast(buf, buf, 4, OBC_INT32, 0, NULL), NULL);
    BAD(obc_bcast(buf, 4, OBC_INT32, 0, NULL), NULL);
    BAD(obc_ibroadcast(buf, buf, 4, OBC_INT32, 0, NULL, &req), NULL);
    BAD(obc_barrier(NULL), NULL);
    BAD(obc_ibarrier(NULL, &req), NULL);
    BAD(obc_comm_synchronize(NULL), NULL);
    BAD(obc_comm_set_timeout(NULL, 1.0), NULL);
    BAD(obc_comm_abort(NULL), NULL);
    OBCT_CHECK_EQ_INT(obc_comm_rank(NULL), -1);
    OBCT_CHECK_EQ_INT(obc_comm_size(NULL), -1);
    OBCT_CHECK_RC(obc_comm_destroy(NULL), OBC_SUCCESS, NULL);
}

static void bad_buffers(void)
{
    int buf[4] = {0};
    int other = (g_rank + 1) % g_nranks;
    obc_request_t *req = NULL;
    BAD(obc_bcast(NULL, 4, OBC_INT32, 0, g_comm), g_comm);
    BAD(obc_bcast(NULL, 1, OBC_INT8, other, g_comm), g_comm);
    BAD(obc_broadcast(buf, NULL, 4, OBC_INT32, g_rank, g_comm), g_comm);
    BAD(obc_broadcast(NULL, NULL, 4, OBC_INT32, other, g_comm), g_comm);
    BAD(obc_ibroadcast(buf, NULL, 4, OBC_INT32, other, g_comm, &req), g_comm);
    /* root's sendbuf NULL with count > 0: only the root can know it is wrong */
    BAD(obc_broadcast(NULL, buf, 4, OBC_INT32, g_rank, g_comm), g_comm);
    BAD(obc_ibroadcast(NULL, buf, 4, OBC_INT32, g_rank, g_comm, &req), g_comm);
}

static void bad_root_dtype(void)
{
    int buf[4] = {0};
    obc_request_t *req = NULL;
    const int roots[] = {-1, g_nranks, g_nranks + 1, INT_MAX, INT_MIN};
    const int dtypes[] = {99, -1, 10, INT_MAX};
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        BAD(obc_bcast(buf, 4, OBC_INT32, roots[i], g_comm), g_comm);
        BAD(obc_broadcast(buf, buf, 4, OBC_INT32, roots[i], g_comm), g_comm);
        BAD(obc_ibroadcast(buf, buf, 4, OBC_INT32, roots[i], g_comm, &req), g_comm);
        BAD(obc_broadcast(NULL, NULL, 0, OBC_INT32, roots[i], g_comm), g_comm);
    }
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
        BAD(obc_bcast(buf, 4, (obc_dtype_t)dtypes[i], 0, g_comm), g_comm);
        BAD(obc_broadcast(buf, buf, 1, (obc_dtype_t)dtypes[i], 0, g_comm), g_comm);
        BAD(obc_ibroadcast(buf, buf, 4, (obc_dtype_t)dtypes[i], 0, g_comm, &req), g_comm);
        BAD(obc_bcast(NULL, 0, (obc_dtype_t)dtypes[i], 0, g_comm), g_comm);
    }
}

static void bad_requests(void)
{
    int buf[4] = {0};
    int done = 0;
    BAD(obc_ibroadcast(buf, buf, 4, OBC_INT32, 0, g_comm, NULL), g_comm);
    BAD(obc_ibarrier(g_comm, NULL), g_comm);
    BAD(obc_wait(NULL), NULL);
    BAD(obc_test(NULL, &done), NULL);
    BAD(obc_test(NULL, NULL), NULL);
    BAD(obc_comm_init_env(NULL), NULL);
    BAD(obc_get_unique_id(NULL), NULL);
}

static void bad_init_rank(void)
{
    obc_unique_id_t id;
    obc_comm_t *c = NULL;
    memset(&id, 0, sizeof(id));
    BAD(obc_comm_init_rank(NULL, 2, &id, 0), NULL);
    BAD(obc_comm_init_rank(&c, 2, NULL, 0), NULL);
    BAD(obc_comm_init_rank(&c, 0, &id, 0), NULL);
    BAD(obc_comm_init_rank(&c, -3, &id, 0), NULL);
    BAD(obc_comm_init_rank(&c, 2, &id, 2), NULL);
    BAD(obc_comm_init_rank(&c, 2, &id, -1), NULL);
    OBCT_CHECK(c == NULL);
}

/* All bad calls of this rank, repeated rank + 1 times. */
static void all_bad_calls(void)
{
    for (int rep = 0; rep <= g_rank; rep++) {
        null_comm();
        bad_buffers();
        bad_root_dtype();
        bad_requests();
        bad_init_rank();
    }
}

/* A verified broadcast from every root, and a barrier. */
static void comm_still_works(uint64_t seed)
{
    for (int root = 0; root < g_nranks; root++) {
        struct obct_bcase c;
        obct_bcase_setup(&c, g_rank, 4099, OBC_INT32, root, seed + (uint64_t)root,
                         OBCT_OUT_OF_PLACE);
        OBCT_OK(obc_broadcast(obct_bcase_sendbuf(&c), obct_bcase_recvbuf(&c), c.count, c.dtype,
                              root, g_comm),
                g_comm);
        obct_bcase_check(&c);
        obct_bcase_free(&c);
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

static void count_zero_is_valid(void)
{
    obc_request_t *req = NULL;
    for (int root = 0; root < g_nranks; root++) {
        OBCT_OK(obc_broadcast(NULL, NULL, 0, OBC_FLOAT32, root, g_comm), g_comm);
        OBCT_OK(obc_bcast(NULL, 0, OBC_UINT64, root, g_comm), g_comm);
    }
    OBCT_OK(obc_ibroadcast(NULL, NULL, 0, OBC_INT8, g_nranks - 1, g_comm, &req), g_comm);
    OBCT_OK(obc_wait(req), g_comm);
}

/* obc_test with a real request and done == NULL: rejected, the request survives. */
static void test_null_done(void)
{
    struct obct_bcase c;
    obc_request_t *req = NULL;
    obct_bcase_setup(&c, g_rank, 1000, OBC_UINT8, 0, 0x6e756c6cull, OBCT_IN_PLACE);
    OBCT_OK(obc_ibroadcast(obct_bcase_sendbuf(&c), obct_bcase_recvbuf(&c), c.count, c.dtype, 0,
                           g_comm, &req),
            g_comm);
    BAD(obc_test(req, NULL), g_comm);
    OBCT_OK(obc_wait(req), g_comm);
    obct_bcase_check(&c);
    obct_bcase_free(&c);
}

/* A rejected call inside a group queues nothing; the group still runs. */
static void bad_call_in_group(void)
{
    struct obct_bcase c;
    int buf[4] = {0};
    obct_bcase_setup(&c, g_rank, 333, OBC_FLOAT64, g_nranks - 1, 0x67726f75ull, OBCT_IN_PLACE);
    OBCT_OK(obc_group_start(), NULL);
    if (g_rank % 2 == 0) {
        BAD(obc_bcast(buf, 4, OBC_INT32, -1, g_comm), g_comm);
        BAD(obc_broadcast(NULL, buf, 4, OBC_INT32, g_rank, g_comm), g_comm);
    }
    OBCT_OK(obc_bcast(obct_bcase_recvbuf(&c), c.count, c.dtype, c.root, g_comm), g_comm);
    OBCT_OK(obc_group_end(), g_comm);
    obct_bcase_check(&c);
    obct_bcase_free(&c);
}

int main(void)
{
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    comm_still_works(0x62616431ull);
    all_bad_calls();
    comm_still_works(0x62616432ull);
    count_zero_is_valid();
    test_null_done();
    bad_call_in_group();
    all_bad_calls();
    comm_still_works(0x62616433ull);
    if (g_rank == 0) {
        printf("bad_args: nranks=%d done, %d failure(s)\n", g_nranks, obct_failures());
    }
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("bad_args");
}
