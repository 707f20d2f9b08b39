/* SPDX-License-Identifier: MIT */
/*
 * tcp_mesh_test.c - connecting the mesh over loopback, three "ranks" as
 * threads of this process, each on a host of its own:
 *  - every pair ends up with one connected socket, and bytes written on
 *    one end arrive on the other (the right peer behind every fd);
 *  - strangers at a rank's listener while the mesh forms (random bytes, a
 *    hello with a wrong cookie, one naming another rank, a truncated hello,
 *    a connection that says nothing) are refused and the mesh still forms;
 *  - a rank whose peer never calls fails at its deadline with
 *    OBC_ERR_TIMEOUT and a message naming that peer.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/platform.h"
#include "transport/tcp/tcp_mesh.h"

#define N 3

struct rank_thread {
    struct obc__tcp_mesh mesh;
    struct obc__err err;
    int fds[N];
    obc_result_t res;
    pthread_t thread;
};

static bool remote_all[N] = {true, true, true};
static struct obc__tcp_contact contacts[N];

static void *rank_main(void *arg)
{
    struct rank_thread *r = arg;
    r->res = obc__tcp_connect_mesh(&r->mesh, r->fds);
    return NULL;
}

static void start_ranks(struct rank_thread *ranks, int64_t timeout_ns)
{
    int lfd[N];
    for (int i = 0; i < N; i++) {
        obc__err_init(&ranks[i].err);
        assert_int_equal(obc__tcp_listen("127.0.0.1", 16, &contacts[i], &lfd[i], &ranks[i].err),
                         OBC_SUCCESS);
    }
    for (int i = 0; i < N; i++) {
        /* Every rank counts itself as remote too: tcp_mesh only looks at others. */
        ranks[i].mesh =
            (struct obc__tcp_mesh){i, N, remote_all, contacts, lfd[i], timeout_ns, &ranks[i].err};
    }
}

static void join_ranks(struct rank_thread *ranks)
{
    for (int i = 0; i < N; i++) {
        pthread_join(ranks[i].thread, NULL);
        obc__fd_close(ranks[i].mesh.listen_fd);
    }
}

static void close_all(struct rank_thread *ranks)
{
    for (int i = 0; i < N; i++) {
        for (int q = 0; q < N; q++) {
            if (ranks[i].fds[q] >= 0) {
                obc__fd_close(ranks[i].fds[q]);
            }
        }
        obc__err_fini(&ranks[i].err);
    }
}

/* A stranger calls rank `to` and sends `n` bytes of `what`, then hangs up. */
static void stranger(int to, const void *what, size_t n)
{
    struct obc__sockaddr addr;
    assert_int_equal(obc__sock_resolve(contacts[to].addr, contacts[to].port, &addr), 0);
    int fd = obc__sock_connect(&addr, obc__now_ns() + 2000000000ll);
    assert_true(fd >= 0);
    if (n > 0) {
        assert_int_equal(obc__sock_send_all(fd, what, n, obc__now_ns() + 2000000000ll), 0);
    }
    obc__sock_close_draining(fd, 50000000);
}

struct hello_copy { /* the wire layout tcp_mesh.c expects */
    uint32_t magic;
    int32_t from, to;
    uint32_t reserved;
    uint64_t cookie;
};

static void check_pairs(struct rank_thread *ranks)
{
    for (int i = 0; i < N; i++) {
        assert_int_equal(ranks[i].res, OBC_SUCCESS);
        for (int q = 0; q < N; q++) {
            if (q == i) {
                continue;
            }
            unsigned char b = (unsigned char)(16 * i + q), got = 0;
            assert_true(ranks[i].fds[q] >= 0);
            assert_int_equal(obc__sock_send_all(ranks[i].fds[q], &b, 1, -1), 0);
            assert_int_equal(
                obc__sock_recv_all(ranks[q].fds[i], &got, 1, obc__now_ns() + 2000000000ll), 0);
            assert_int_equal(got, b);
        }
    }
}

static void mesh_with_strangers(void **unused)
{
    struct rank_thread ranks[N];
    (void)unused;
    start_ranks(ranks, 10000000000ll);
    /* Rank 2 accepts from ranks 0 and 1: strangers come first. */
    unsigned char noise[64];
    obc__random_bytes(noise, sizeof(noise));
    struct hello_copy wrong_cookie = {0x4f424348u, 0, 2, 0, contacts[2].cookie ^ 1};
    struct hello_copy wrong_callee = {0x4f424348u, 0, 1, 0, contacts[2].cookie};
    struct hello_copy from_above = {0x4f424348u, 2, 2, 0, contacts[2].cookie};
    stranger(2, noise, sizeof(noise));
    stranger(2, &wrong_cookie, sizeof(wrong_cookie));
    stranger(2, &wrong_callee, sizeof(wrong_callee));
    stranger(2, &from_above, sizeof(from_above));
    stranger(2, &wrong_cookie, 7);
    stranger(2, NULL, 0);
    for (int i = N - 1; i >= 0; i--) {
        pthread_create(&ranks[i].thread, NULL, rank_main, &ranks[i]);
    }
    join_ranks(ranks);
    check_pairs(ranks);
    close_all(ranks);
}

static void missing_peer_times_out(void **unused)
{
    struct rank_thread ranks[N];
    (void)unused;
    start_ranks(ranks, 300000000ll);
    /* Only rank 1 runs: it connects to rank 2 (whose kernel backlog takes
     * it) and waits in vain for rank 0. */
    pthread_create(&ranks[1].thread, NULL, rank_main, &ranks[1]);
    pthread_join(ranks[1].thread, NULL);
    assert_int_equal(ranks[1].res, OBC_ERR_TIMEOUT);
    char msg[OBC_ERR_MSG_BYTES];
    obc__err_copy(&ranks[1].err, msg, sizeof(msg));
    assert_non_null(strstr(msg, "rank 0"));
    for (int i = 0; i < N; i++) {
        obc__fd_close(ranks[i].mesh.listen_fd);
        if (i == 1 && ranks[1].fds[2] >= 0) {
            obc__fd_close(ranks[1].fds[2]);
        }
        obc__err_fini(&ranks[i].err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mesh_with_strangers),
        cmocka_unit_test(missing_peer_times_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
