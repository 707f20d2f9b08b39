/* SPDX-License-Identifier: MIT */
/*
 * p2p_test.c - the p2p interface's dispatch through each peer's ops table,
 * three "ranks" in one process: ranks 0 and 1 share host A's arena (two
 * handles on one segment), rank 2 is alone on host B, reached over
 * loopback TCP:
 *  - rank 0's frames reach rank 1 through the channel and rank 2 through
 *    its link, complete, in order, with their stamps, over many wraps;
 *  - a wait names the peer by communicator rank, not by the transport's
 *    index of it (rank 2 is link 0 at rank 0);
 *  - a link's failure shows in obc__p2p_health through peer_error, naming
 *    the rank that aborted.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/platform.h"
#include "transport/arena.h"
#include "transport/transport.h"

#define N 3
#define SLOT 1024
#define DEPTH 4
#define ROUNDS 25
#define WAIT_NS 5000000000ll

static struct obc__err errs[N];
static struct obc__arena *arenas[N]; /* arenas[0], [1]: one segment; [2]: its own */
static struct obc__p2p *p2ps[N];
static const bool remote_of[N][N] = {
    {false, false, true}, {false, false, true}, {true, true, false}};
static struct obc__tcp_contact contacts[N];
static int lfds[N];

struct creator {
    int rank;
    obc_result_t res;
    pthread_t thread;
};

/* obc__p2p_create connects the mesh, which needs every rank at once. */
static void *create_main(void *arg)
{
    struct creator *c = arg;
    struct obc__p2p_setup s = {
        .arena = arenas[c->rank],
        .rank = c->rank,
        .nranks = N,
        .remote = remote_of[c->rank],
        .slot_bytes = SLOT,
        .tcp_nslots = DEPTH,
        .listen_fd = lfds[c->rank],
        .contacts = contacts,
        .timeout_ns = WAIT_NS,
    };
    c->res = obc__p2p_create(&s, &errs[c->rank], &p2ps[c->rank]);
    return NULL;
}

static int make_arenas(void)
{
    struct obc__arena_geometry geo = {{4, 2, 2}, {256, 1024, 1024}, 8192, DEPTH, SLOT};
    struct obc__wait_policy policy = {1000, 1000};
    struct obc__arena_peer host_a[2] = {{getpid(), 0}, {getpid(), 1}};
    struct obc__arena_peer host_b[1] = {{getpid(), 2}};
    char name_a[64], name_b[64];
    snprintf(name_a, sizeof(name_a), "/obc-unit-p2p-a-%d", (int)getpid());
    snprintf(name_b, sizeof(name_b), "/obc-unit-p2p-b-%d", (int)getpid());
    obc_result_t res = obc__arena_create(name_a, 0, 2, &geo, host_a, &policy, &errs[0], &arenas[0]);
    if (res == OBC_SUCCESS) {
        res = obc__arena_attach(name_a, 1, 2, host_a, &policy, &errs[1], &arenas[1]);
    }
    if (res == OBC_SUCCESS) {
        res = obc__arena_create(name_b, 0, 1, &geo, host_b, &policy, &errs[2], &arenas[2]);
    }
    obc__arena_unlink(name_a);
    obc__arena_unlink(name_b);
    return res == OBC_SUCCESS ? 0 : -1;
}

static int setup(void **state)
{
    struct creator c[N];
    (void)state;
    for (int i = 0; i < N; i++) {
        obc__err_init(&errs[i]);
    }
    if (make_arenas() != 0) {
        return -1;
    }
    for (int i = 0; i < N; i++) {
        if (obc__tcp_listen("127.0.0.1", N, &contacts[i], &lfds[i], &errs[i]) != OBC_SUCCESS) {
            return -1;
        }
    }
    for (int i = 0; i < N; i++) {
        c[i] = (struct creator){.rank = i};
        pthread_create(&c[i].thread, NULL, create_main, &c[i]);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(c[i].thread, NULL);
        bad += c[i].res != OBC_SUCCESS;
    }
    return bad == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < N; i++) {
        obc__p2p_destroy(p2ps[i], 100000000ll);
        obc__arena_destroy(arenas[i]);
        obc__err_fini(&errs[i]);
    }
    return 0;
}

/* Until w's word changes. The library's wait loop is the engine's
 * (engine/wait.c), above this layer: here a plain futex sleep in short
 * slices, with the arena's health check between them, as that loop does. */
static obc_result_t wait_word(struct obc__arena *a, const struct obc__wait *w)
{
    int64_t end = obc__now_ns() + WAIT_NS;
    while (atomic_load(w->word) == w->seen) {
        obc_result_t res = obc__arena_health(a);
        if (res != OBC_SUCCESS || obc__now_ns() >= end) {
            return res != OBC_SUCCESS ? res : OBC_ERR_TIMEOUT;
        }
        atomic_fetch_add(w->sleepers, 1);
        if (atomic_load(w->word) == w->seen) {
            obc__futex_wait(w->word, w->seen, 10000000, true);
        }
        atomic_fetch_sub(w->sleepers, 1);
    }
    return OBC_SUCCESS;
}

static size_t frame_size(int i)
{
    return i % 5 == 0 ? SLOT : (size_t)(i * 41) % (SLOT + 1);
}

static void send_one(int from, int to, int i)
{
    struct obc__wait w = {.peer = -1};
    unsigned char *slot;
    while ((slot = obc__p2p_send_acquire(p2ps[from], to, &w)) == NULL) {
        assert_int_equal(wait_word(arenas[from], &w), OBC_SUCCESS);
    }
    memset(slot, (i + to) & 0xff, frame_size(i));
    obc__p2p_send_publish(p2ps[from], to, frame_size(i), 1000u * (unsigned)to + (unsigned)i);
}

static void recv_one(int at, int from, int i)
{
    struct obc__wait w = {.peer = -1};
    size_t n = 0;
    uint64_t stamp = 0;
    const unsigned char *got;
    while ((got = obc__p2p_recv_peek(p2ps[at], from, &n, &stamp, &w)) == NULL) {
        assert_int_equal(wait_word(arenas[at], &w), OBC_SUCCESS);
    }
    assert_int_equal(n, frame_size(i));
    assert_true(stamp == 1000u * (unsigned)at + (unsigned)i);
    for (size_t k = 0; k < n; k++) {
        assert_int_equal(got[k], (unsigned char)((i + at) & 0xff));
    }
    obc__p2p_recv_release(p2ps[at], from);
}

static void frames_reach_both_transports(void **state)
{
    (void)state;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = r * DEPTH; i < (r + 1) * DEPTH; i++) {
            send_one(0, 1, i); /* shm channel */
            send_one(0, 2, i); /* tcp link */
        }
        for (int i = r * DEPTH; i < (r + 1) * DEPTH; i++) {
            recv_one(1, 0, i);
            recv_one(2, 0, i);
        }
    }
}

/* A tracked slot is seen once, and only once, the receiver released it:
 * through the channel's released count (shm) and a FRAME_SEEN (tcp). */
static void tracked_slots_are_seen_after_release(void **state)
{
    (void)state;
    for (int to = 1; to <= 2; to++) {
        struct obc__wait w = {.peer = -1};
        unsigned char *slot;
        while ((slot = obc__p2p_send_acquire(p2ps[0], to, &w)) == NULL) {
            assert_int_equal(wait_word(arenas[0], &w), OBC_SUCCESS);
        }
        memset(slot, 7, 16);
        uint64_t ticket = obc__p2p_send_publish_tracked(p2ps[0], to, 16, 77);
        size_t n = 0;
        uint64_t stamp = 0;
        while (obc__p2p_recv_peek(p2ps[to], 0, &n, &stamp, &w) == NULL) {
            assert_int_equal(wait_word(arenas[to], &w), OBC_SUCCESS);
        }
        assert_int_equal(n, 16);
        assert_true(stamp == 77);
        w.peer = -1;
        assert_false(obc__p2p_send_seen(p2ps[0], to, ticket, &w)); /* not released yet */
        assert_int_equal(w.peer, to);
        obc__p2p_recv_release(p2ps[to], 0);
        while (!obc__p2p_send_seen(p2ps[0], to, ticket, &w)) {
            assert_int_equal(wait_word(arenas[0], &w), OBC_SUCCESS);
        }
    }
}

static void waits_name_the_rank(void **state)
{
    struct obc__wait w = {.peer = -1};
    size_t n;
    uint64_t stamp;
    (void)state;
    assert_null(obc__p2p_recv_peek(p2ps[0], 2, &n, &stamp, &w)); /* link 0 */
    assert_int_equal(w.peer, 2);
    w.peer = -1;
    assert_null(obc__p2p_recv_peek(p2ps[0], 1, &n, &stamp, &w));
    assert_int_equal(w.peer, 1);
}

static void a_failed_link_is_named(void **state)
{
    uint64_t verdict = 0;
    (void)state;
    assert_int_equal(obc__p2p_health(p2ps[0], &verdict), OBC_SUCCESS);
    obc__p2p_abort(p2ps[2]);
    int64_t deadline = obc__now_ns() + WAIT_NS;
    obc_result_t res;
    while ((res = obc__p2p_health(p2ps[0], &verdict)) == OBC_SUCCESS && obc__now_ns() < deadline) {
        obc__sleep_ns(1000000);
    }
    assert_int_equal(res, OBC_ERR_ABORTED);
    assert_int_equal(obc__verdict_rank(verdict), 2);
    assert_int_equal(obc__verdict_code(verdict), OBC_ERR_ABORTED);
    assert_int_equal(obc__verdict_other(verdict), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_reach_both_transports),
        cmocka_unit_test(tracked_slots_are_seen_after_release),
        cmocka_unit_test(waits_name_the_rank),
        cmocka_unit_test(a_failed_link_is_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
