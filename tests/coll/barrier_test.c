/* SPDX-License-Identifier: MIT */
/*
 * barrier_test.c - obc_barrier and obc_ibarrier order ranks: with staggered
 * arrivals (the latest rank rotating), no rank may leave before the last
 * one entered; entry and exit timestamps (CLOCK_MONOTONIC, one clock per
 * host) are exchanged with broadcasts. Also thousands of back-to-back
 * barriers interleaved with broadcasts, and ibarrier mixed with ibroadcast.
 */
/* obct: nranks=1,2,3,4,5,8,64 timeout=180 asan=3 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 san */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "bcase.h"
#include "obct.h"

#define REPEATS 2000

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;

/* Every rank's (enter, leave) pair, exchanged with one broadcast per rank. */
static void exchange(double enter, double leave, double (*all)[2])
{
    all[g_rank][0] = enter;
    all[g_rank][1] = leave;
    for (int r = 0; r < g_nranks; r++) {
        OBCT_OK(obc_bcast(all[r], 2, OBC_FLOAT64, r, g_comm), g_comm);
    }
}

static void check_order(const char *what, int iter, double (*all)[2])
{
    int last_in = 0;
    int first_out = 0;
    for (int r = 1; r < g_nranks; r++) {
        last_in = all[r][0] > all[last_in][0] ? r : last_in;
        first_out = all[r][1] < all[first_out][1] ? r : first_out;
    }
    if (all[first_out][1] < all[last_in][0]) {
        obct_soft_fail(__FILE__, __LINE__,
                       "%s iteration %d: rank %d left at %.6f before rank %d entered at %.6f", what,
                       iter, first_out, all[first_out][1], last_in, all[last_in][0]);
    }
}

static void ordering(void)
{
    double all[64][2];
    OBCT_ASSERT(g_nranks <= 64);
    for (int it = 0; it < 3 * (g_nranks < 3 ? g_nranks : 3); it++) {
        double enter;
        obct_sleep(((g_rank + it) % g_nranks) * 0.010);
        enter = obct_now();
        OBCT_OK(obc_barrier(g_comm), g_comm);
        exchange(enter, obct_now(), all);
        check_order("obc_barrier", it, all);
    }
}

static void repeated(void)
{
    double t0 = obct_now();
    for (int i = 0; i < REPEATS; i++) {
        OBCT_OK(obc_barrier(g_comm), g_comm);
        if (i % 100 == 0) {
            int v[2] = {g_rank == i % g_nranks ? i : -1, g_rank == i % g_nranks ? 7 * i : -1};
            OBCT_OK(obc_bcast(v, 2, OBC_INT32, i % g_nranks, g_comm), g_comm);
            OBCT_CHECK_EQ_INT(v[0], i);
            OBCT_CHECK_EQ_INT(v[1], 7 * i);
        }
    }
    if (g_rank == 0) {
        printf("barrier_test: nranks=%d %d barriers: %.2f us each\n", g_nranks, REPEATS,
               (obct_now() - t0) / REPEATS * 1e6);
    }
}

static void nonblocking(void)
{
    double all[64][2];
    for (int it = 0; it < g_nranks && it < 4; it++) {
        int late = (g_nranks - 1 + it) % g_nranks;
        obc_request_t *req = NULL;
        int done = 0;
        double enter;
        double deadline = obct_now() + 60 * obct_time_scale();
        if (g_rank == late) {
            obct_sleep(0.100);
        }
        enter = obct_now();
        OBCT_OK(obc_ibarrier(g_comm, &req), g_comm);
        OBCT_ASSERT(req != NULL);
        while (!done) {
            obc_result_t rc = obc_test(req, &done);
            OBCT_ASSERT_MSG(rc == (done ? OBC_SUCCESS : OBC_IN_PROGRESS),
                            "obc_test(ibarrier) gave %s done=%d", obct_rc_name(rc), done);
            OBCT_ASSERT_MSG(obct_now() < deadline, "ibarrier never completed");
            sched_yield();
        }
        exchange(enter, obct_now(), all);
        check_order("obc_ibarrier", it, all);
    }
}

/* ibarrier, ibroadcast, ibarrier in flight; waited in reverse order. */
static void mixed_with_broadcast(void)
{
    obc_request_t *req[3] = {NULL, NULL, NULL};
    struct obct_bcase c;
    obct_bcase_setup(&c, g_rank, 100003, OBC_UINT8, g_nranks - 1, 0x62617272ull, OBCT_IN_PLACE);
    OBCT_OK(obc_ibarrier(g_comm, &req[0]), g_comm);
    OBCT_OK(obc_ibroadcast(obct_bcase_sendbuf(&c), obct_bcase_recvbuf(&c), c.count, c.dtype, c.root,
                           g_comm, &req[1]),
            g_comm);
    OBCT_OK(obc_ibarrier(g_comm, &req[2]), g_comm);
    for (int i = 2; i >= 0; i--) {
        OBCT_OK(obc_wait(req[i]), g_comm);
    }
    obct_bcase_check(&c);
    obct_bcase_free(&c);
}

int main(void)
{
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    ordering();
    repeated();
    nonblocking();
    mixed_with_broadcast();
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("barrier_test");
}
