/* SPDX-License-Identifier: MIT */
/*
 * reduce_bad_args.c - every argument error of obc_allreduce, obc_reduce,
 * obc_allgather, obc_reduce_scatter, their obc_i* forms and
 * obc_check_consistency returns OBC_ERR_INVALID_ARG at once (< 0.5 s) and
 * before any communication, with a message in obc_comm_last_error that names
 * the problem (it contains "NULL", "dtype", "op", "root", "overlap" or "req",
 * whichever applies): a NULL comm; a NULL buffer with count > 0 (the root's
 * recvbuf for reduce); a bad dtype ((obc_dtype_t)99 and others) or op
 * ((obc_redop_t)99 and others), also with count 0; a reduce or consistency
 * root out of range; send and receive buffers that overlap without being
 * equal or following the in-place conventions (allgather: sendbuf == recvbuf +
 * rank * sendcount; reduce_scatter: recvbuf == sendbuf + rank * recvcount);
 * a NULL req; a count whose byte size overflows. Ranks issue different
 * numbers of bad calls (rank r repeats them r + 1 times), so a bad call that
 * touched the wire would desynchronise the verified collectives that follow.
 * Count 0 with NULL buffers is valid (non-root recvbuf NULL too), a rejected
 * call inside a group queues nothing, and the communicator stays usable.
 */
/* obct: nranks=1,3,8 timeout=120 asan=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=64 timeout=120 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bcase.h"
#include "obct.h"
#include "rcase.h"

#define N 4 /* elements per rank in the bad calls */

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_seed = 0x72626164ull;
static int64_t *g_big; /* (nranks + 2) * N elements: room for every overlap */
static int64_t *g_big2;

/* The call must fail with INVALID_ARG, quickly, with a message on msg_comm that
 * contains `word` (case-insensitive). */
static void expect_invalid(const char *file, int line, const char *expr, obc_result_t rc, double t0,
                           const obc_comm_t *msg_comm, const char *word)
{
    double dt = obct_now() - t0;
    const char *msg = obc_comm_last_error(msg_comm);
    obct_expect_rc(file, line, expr, rc, OBC_ERR_INVALID_ARG, msg_comm, 0);
    if (msg == NULL || msg[0] == '\0') {
        obct_soft_fail(file, line, "%s: obc_comm_last_error(%s) is %s", expr,
                       msg_comm ? "comm" : "NULL", msg ? "empty" : "NULL");
    } else if (strcasestr(msg, word) == NULL) {
        obct_soft_fail(file, line, "%s: the message \"%s\" does not name the problem (\"%s\")",
                       expr, msg, word);
    }
    if (dt > 0.5) {
        obct_soft_fail(file, line, "%s took %.3f s to reject its arguments", expr, dt);
    }
}

#define BAD(expr, msg_comm, word) \
    do { \
        double bad_t0_ = obct_now(); \
        obc_result_t bad_rc_ = (expr); \
        expect_invalid(__FILE__, __LINE__, #expr, bad_rc_, bad_t0_, (msg_comm), word); \
    } while (0)

static void null_comm(void)
{
    int64_t s[N] = {0};
    int64_t r[N] = {0};
    int nd;
    int fd;
    obc_request_t *req = NULL;
    BAD(obc_allreduce(s, r, N, OBC_INT64, OBC_SUM, NULL), NULL, "comm");
    BAD(obc_reduce(s, r, N, OBC_INT64, OBC_SUM, 0, NULL), NULL, "comm");
    BAD(obc_allgather(s, r, 1, OBC_INT64, NULL), NULL, "comm");
    BAD(obc_reduce_scatter(s, r, 1, OBC_INT64, OBC_SUM, NULL), NULL, "comm");
    BAD(obc_iallreduce(s, r, N, OBC_INT64, OBC_SUM, NULL, &req), NULL, "comm");
    BAD(obc_ireduce(s, r, N, OBC_INT64, OBC_SUM, 0, NULL, &req), NULL, "comm");
    BAD(obc_iallgather(s, r, 1, OBC_INT64, NULL, &req), NULL, "comm");
    BAD(obc_ireduce_scatter(s, r, 1, OBC_INT64, OBC_SUM, NULL, &req), NULL, "comm");
    BAD(obc_check_consistency(s, sizeof(s), 0, &nd, &fd, NULL), NULL, "comm");
}

static void null_buffers(void)
{
    int64_t s[N] = {0};
    int64_t *r = g_big;
    int other = (g_rank + 1) % g_nranks;
    int nd;
    int fd;
    obc_request_t *req = NULL;
    BAD(obc_allreduce(NULL, r, N, OBC_INT64, OBC_SUM, g_comm), g_comm, "NULL");
    BAD(obc_allreduce(s, NULL, N, OBC_INT64, OBC_SUM, g_comm), g_comm, "NULL");
    BAD(obc_allreduce(NULL, NULL, 1, OBC_INT8, OBC_MAX, g_comm), g_comm, "NULL");
    BAD(obc_iallreduce(NULL, r, N, OBC_INT64, OBC_SUM, g_comm, &req), g_comm, "NULL");
    BAD(obc_iallreduce(s, NULL, N, OBC_INT64, OBC_SUM, g_comm, &req), g_comm, "NULL");
    /* reduce: every rank needs a sendbuf; only the root a recvbuf */
    BAD(obc_reduce(NULL, r, N, OBC_INT64, OBC_SUM, other, g_comm), g_comm, "NULL");
    BAD(obc_reduce(NULL, NULL, N, OBC_INT64, OBC_SUM, other, g_comm), g_comm, "NULL");
    BAD(obc_reduce(s, NULL, N, OBC_INT64, OBC_SUM, g_rank, g_comm), g_comm, "NULL");
    BAD(obc_ireduce(s, NULL, N, OBC_INT64, OBC_SUM, g_rank, g_comm, &req), g_comm, "NULL");
    BAD(obc_ireduce(NULL, r, N, OBC_INT64, OBC_SUM, g_rank, g_comm, &req), g_comm, "NULL");
    BAD(obc_allgather(NULL, r, N, OBC_INT64, g_comm), g_comm, "NULL");
    BAD(obc_allgather(s, NULL, N, OBC_INT64, g_comm), g_comm, "NULL");
    BAD(obc_iallgather(s, NULL, N, OBC_INT64, g_comm, &req), g_comm, "NULL");
    BAD(obc_reduce_scatter(NULL, r, 1, OBC_INT64, OBC_SUM, g_comm), g_comm, "NULL");
    BAD(obc_reduce_scatter(g_big2, NULL, 1, OBC_INT64, OBC_SUM, g_comm), g_comm, "NULL");
    BAD(obc_ireduce_scatter(NULL, r, 1, OBC_INT64, OBC_SUM, g_comm, &req), g_comm, "NULL");
    BAD(obc_check_consistency(NULL, 8, 0, &nd, &fd, g_comm), g_comm, "NULL");
}

static void bad_dtype_op(void)
{
    int64_t s[N] = {0};
    int64_t *r = g_big;
    obc_request_t *req = NULL;
    const int dtypes[] = {99, -1, 10, INT_MAX};
    const int ops[] = {99, -1, 5, INT_MAX};
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
        obc_dtype_t t = (obc_dtype_t)dtypes[i];
        BAD(obc_allreduce(s, r, N, t, OBC_SUM, g_comm), g_comm, "dtype");
        BAD(obc_allreduce(NULL, NULL, 0, t, OBC_SUM, g_comm), g_comm, "dtype");
        BAD(obc_iallreduce(s, r, N, t, OBC_MIN, g_comm, &req), g_comm, "dtype");
        BAD(obc_reduce(s, r, N, t, OBC_SUM, 0, g_comm), g_comm, "dtype");
        BAD(obc_ireduce(s, r, N, t, OBC_SUM, 0, g_comm, &req), g_comm, "dtype");
        BAD(obc_allgather(s, r, 1, t, g_comm), g_comm, "dtype");
        BAD(obc_iallgather(NULL, NULL, 0, t, g_comm, &req), g_comm, "dtype");
        BAD(obc_reduce_scatter(g_big2, r, 1, t, OBC_SUM, g_comm), g_comm, "dtype");
        BAD(obc_ireduce_scatter(g_big2, r, 1, t, OBC_SUM, g_comm, &req), g_comm, "dtype");
    }
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        obc_redop_t op = (obc_redop_t)ops[i];
        BAD(obc_allreduce(s, r, N, OBC_FLOAT32, op, g_comm), g_comm, "op");
        BAD(obc_allreduce(NULL, NULL, 0, OBC_INT32, op, g_comm), g_comm, "op");
        BAD(obc_iallreduce(s, r, N, OBC_FLOAT64, op, g_comm, &req), g_comm, "op");
        BAD(obc_reduce(s, r, N, OBC_UINT8, op, g_nranks - 1, g_comm), g_comm, "op");
        BAD(obc_ireduce(s, r, N, OBC_BFLOAT16, op, 0, g_comm, &req), g_comm, "op");
        BAD(obc_reduce_scatter(g_big2, r, 1, OBC_FLOAT16, op, g_comm), g_comm, "op");
        BAD(obc_ireduce_scatter(NULL, NULL, 0, OBC_INT8, op, g_comm, &req), g_comm, "op");
    }
}

static void bad_root(void)
{
    int64_t s[N] = {0};
    int64_t *r = g_big;
    int nd;
    int fd;
    obc_request_t *req = NULL;
    const int roots[] = {-1, g_nranks, g_nranks + 1, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        BAD(obc_reduce(s, r, N, OBC_INT64, OBC_SUM, roots[i], g_comm), g_comm, "root");
        BAD(obc_reduce(NULL, NULL, 0, OBC_INT64, OBC_SUM, roots[i], g_comm), g_comm, "root");
        BAD(obc_ireduce(s, r, N, OBC_INT64, OBC_SUM, roots[i], g_comm, &req), g_comm, "root");
        BAD(obc_check_consistency(s, sizeof(s), roots[i], &nd, &fd, g_comm), g_comm, "root");
    }
}

/* Overlaps that are neither equal buffers nor an in-place convention. */
static void overlaps(void)
{
    int64_t *b = g_big;
    unsigned char *c = (unsigned char *)g_big;
    size_t me = (size_t)g_rank * N;
    obc_request_t *req = NULL;
    BAD(obc_allreduce(b, b + 1, N, OBC_INT64, OBC_SUM, g_comm), g_comm, "overlap");
    BAD(obc_allreduce(b + 1, b, N, OBC_INT64, OBC_SUM, g_comm), g_comm, "overlap");
    BAD(obc_allreduce(c, c + 3, 8, OBC_UINT8, OBC_MAX, g_comm), g_comm, "overlap");
    BAD(obc_iallreduce(b, b + N - 1, N, OBC_INT64, OBC_SUM, g_comm, &req), g_comm, "overlap");
    BAD(obc_reduce(b, b + 2, N, OBC_INT64, OBC_SUM, g_rank, g_comm), g_comm, "overlap");
    BAD(obc_ireduce(b + 2, b, N, OBC_INT64, OBC_SUM, g_rank, g_comm, &req), g_comm, "overlap");
    /* allgather: recvbuf is b[0 .. nranks*N); the convention is sendbuf == b + me */
    BAD(obc_allgather(b + me + 1, b, N, OBC_INT64, g_comm), g_comm, "overlap");
    BAD(obc_iallgather(b + me + 1, b, N, OBC_INT64, g_comm, &req), g_comm, "overlap");
    BAD(obc_allgather(b, b + 1, N, OBC_INT64, g_comm), g_comm, "overlap");
    if (g_rank != 0) { /* sendbuf == recvbuf is the convention of rank 0 only */
        BAD(obc_allgather(b, b, N, OBC_INT64, g_comm), g_comm, "overlap");
        BAD(obc_allgather(b + me - 1, b, N, OBC_INT64, g_comm), g_comm, "overlap");
    }
    /* reduce_scatter: sendbuf is b[0 .. nranks*N); the convention is recvbuf == b + me */
    BAD(obc_reduce_scatter(b, b + me + 1, N, OBC_INT64, OBC_SUM, g_comm), g_comm, "overlap");
    BAD(obc_ireduce_scatter(b, b + me + 1, N, OBC_INT64, OBC_SUM, g_comm, &req), g_comm, "overlap");
    BAD(obc_reduce_scatter(b + 1, b, N, OBC_INT64, OBC_SUM, g_comm), g_comm, "overlap");
    if (g_rank != 0) {
        BAD(obc_reduce_scatter(b, b, N, OBC_INT64, OBC_SUM, g_comm), g_comm, "overlap");
    }
}

static void bad_requests_and_sizes(void)
{
    int64_t s[N] = {0};
    int64_t *r = g_big;
    BAD(obc_iallreduce(s, r, N, OBC_INT64, OBC_SUM, g_comm, NULL), g_comm, "req");
    BAD(obc_ireduce(s, r, N, OBC_INT64, OBC_SUM, 0, g_comm, NULL), g_comm, "req");
    BAD(obc_iallgather(s, r, N, OBC_INT64, g_comm, NULL), g_comm, "req");
    BAD(obc_ireduce_scatter(g_big2, r, 1, OBC_INT64, OBC_SUM, g_comm, NULL), g_comm, "req");
    BAD(obc_iallreduce(NULL, NULL, 0, OBC_INT64, OBC_SUM, g_comm, NULL), g_comm, "req");
    BAD(obc_allreduce(s, r, SIZE_MAX / 2, OBC_INT32, OBC_SUM, g_comm), g_comm, "count");
}

static void all_bad_calls(void)
{
    for (int rep = 0; rep <= g_rank; rep++) {
        null_comm();
        null_buffers();
        bad_dtype_op();
        bad_root();
        overlaps();
        bad_requests_and_sizes();
    }
}

/* Verified calls of every kind (reduce from every root), and a barrier. */
static void comm_still_works(void)
{
    for (int k = 0; k < 4; k++) {
        struct obct_rdata d = {OBCT_RPAT_EXACT, (obc_dtype_t)(k * 3 % OBCT_NDTYPES),
                               (obc_redop_t)(k % OBCT_NREDOPS), g_seed++, g_nranks};
        obct_rcase_run((enum obct_rkind)k, &d, 4099, 0, k % 2, 0, g_comm, OBCT_SYNC);
    }
    for (int root = 0; root < g_nranks; root++) {
        struct obct_rdata d = {OBCT_RPAT_EXACT, OBC_INT32, OBC_SUM, g_seed++, g_nranks};
        obct_rcase_run(OBCT_REDUCE, &d, 99, root, 0, root % 2, g_comm, OBCT_WAIT);
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

static void count_zero_is_valid(void)
{
    obc_request_t *req[4] = {NULL, NULL, NULL, NULL};
    int nd = -7;
    int fd = -7;
    OBCT_OK(obc_allreduce(NULL, NULL, 0, OBC_FLOAT32, OBC_SUM, g_comm), g_comm);
    OBCT_OK(obc_allgather(NULL, NULL, 0, OBC_UINT64, g_comm), g_comm);
    OBCT_OK(obc_reduce_scatter(NULL, NULL, 0, OBC_INT8, OBC_AVG, g_comm), g_comm);
    for (int root = 0; root < g_nranks; root++) {
        OBCT_OK(obc_reduce(NULL, NULL, 0, OBC_FLOAT16, OBC_PROD, root, g_comm), g_comm);
    }
    OBCT_OK(obc_iallreduce(NULL, NULL, 0, OBC_INT8, OBC_MIN, g_comm, &req[0]), g_comm);
    OBCT_OK(obc_ireduce(NULL, NULL, 0, OBC_UINT8, OBC_MAX, g_nranks - 1, g_comm, &req[1]), g_comm);
    OBCT_OK(obc_iallgather(NULL, NULL, 0, OBC_BFLOAT16, g_comm, &req[2]), g_comm);
    OBCT_OK(obc_ireduce_scatter(NULL, NULL, 0, OBC_FLOAT64, OBC_SUM, g_comm, &req[3]), g_comm);
    for (int i = 3; i >= 0; i--) {
        OBCT_ASSERT(req[i] != NULL);
        OBCT_OK(obc_wait(req[i]), g_comm);
    }
    OBCT_OK(obc_check_consistency(NULL, 0, g_nranks - 1, &nd, &fd, g_comm), g_comm);
    OBCT_CHECK_EQ_INT(nd, 0);
    OBCT_CHECK_EQ_INT(fd, -1);
}

/* A rejected call inside a group queues nothing; the group still runs. */
static void bad_call_in_group(void)
{
    struct obct_rcase c;
    struct obct_rdata d = {OBCT_RPAT_EXACT, OBC_FLOAT64, OBC_SUM, g_seed++, g_nranks};
    int64_t s[N] = {0};
    obct_rcase_setup(&c, OBCT_ALLREDUCE, &d, 333, 0, 0, 0, g_rank);
    OBCT_OK(obc_group_start(), NULL);
    if (g_rank % 2 == 0) {
        BAD(obc_allreduce(s, g_big, N, (obc_dtype_t)99, OBC_SUM, g_comm), g_comm, "dtype");
        BAD(obc_reduce(s, g_big, N, OBC_INT64, OBC_SUM, -1, g_comm), g_comm, "root");
        BAD(obc_allgather(NULL, g_big, N, OBC_INT64, g_comm), g_comm, "NULL");
    }
    OBCT_OK(obct_rcall_run(&c.call, g_comm, OBCT_SYNC), g_comm);
    OBCT_OK(obc_group_end(), g_comm);
    obct_rcase_check(&c);
    obct_rcase_free(&c);
}

int main(void)
{
    int64_t big[(64 + 2) * N];
    int64_t big2[(64 + 2) * N];
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    OBCT_ASSERT(g_nranks <= 64);
    memset(big, 0, sizeof(big));
    memset(big2, 0, sizeof(big2));
    g_big = big;
    g_big2 = big2;
    comm_still_works();
    all_bad_calls();
    comm_still_works();
    count_zero_is_valid();
    bad_call_in_group();
    all_bad_calls();
    comm_still_works();
    if (g_rank == 0) {
        printf("reduce_bad_args: nranks=%d done, %d failure(s)\n", g_nranks, obct_failures());
    }
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("reduce_bad_args");
}
