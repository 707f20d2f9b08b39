/* SPDX-License-Identifier: MIT */
/*
 * shm_ring_test.c - the arena's lock-free protocol, driven by two handles
 * on one real segment in one process (rank 0 writes, rank 1 reads): a slot
 * is readable only once published, reusable only once every reader
 * released it (also across many wraps of the ring, and with the writer's
 * look-ahead over half a ring; small payloads in the header line), counters and
 * mailboxes, and an abort that every local rank's health check sees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/platform.h"
#include "transport/arena.h"

static struct obc__err err;
static struct obc__arena *writer, *reader;
static char name[64];

static int setup(void **state)
{
    struct obc__arena_geometry geo = {{4, 2, 2}, {256, 1024, 1024}, 8192, 4, 512};
    struct obc__wait_policy policy = {1000, 1000};
    struct obc__arena_peer peers[2] = {{getpid(), 0}, {getpid(), 1}};
    (void)state;
    snprintf(name, sizeof(name), "/obc-unit-%d", (int)getpid());
    obc__err_init(&err);
    if (obc__arena_create(name, 0, 2, &geo, peers, &policy, &err, &writer) != OBC_SUCCESS ||
        obc__arena_attach(name, 1, 2, peers, &policy, &err, &reader) != OBC_SUCCESS) {
        return -1;
    }
    obc__arena_unlink(name);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    obc__arena_destroy(reader);
    obc__arena_destroy(writer);
    return 0;
}

/* Every third message is small enough to ride in the slot's header line. */
static size_t size_of(uint64_t i)
{
    return i % 3 == 0 ? 8 : 100;
}

static void write_slot(uint64_t pos, uint64_t i)
{
    struct obc__wait w = {.peer = -1};
    unsigned char *slot = obc__arena_slot_acquire(writer, OBC_RING_EAGER, pos, size_of(i), &w);
    assert_non_null(slot);
    memset(slot, (int)(i & 0xff), size_of(i));
    assert_true(obc__arena_slot_publish(writer, OBC_RING_EAGER, pos, size_of(i), 1000 + i));
}

static void read_slot(uint64_t pos, uint64_t i)
{
    struct obc__wait w = {.peer = -1};
    size_t n = 0;
    uint64_t stamp = 0;
    const unsigned char *got = obc__arena_slot_peek(reader, OBC_RING_EAGER, pos, &n, &stamp, &w);
    assert_non_null(got);
    assert_int_equal(n, size_of(i));
    assert_true(stamp == 1000 + i);
    assert_int_equal(got[0], (unsigned char)(i & 0xff));
    assert_int_equal(got[n - 1], (unsigned char)(i & 0xff));
    obc__arena_slot_release(reader, OBC_RING_EAGER, pos);
}

static void slots_gate_both_ways(void **state)
{
    struct obc__wait w = {.peer = -1};
    size_t n;
    uint64_t stamp, depth = 4, total = 40;
    (void)state;
    assert_int_equal(obc__arena_ring_nslots(writer, OBC_RING_EAGER), depth);
    uint64_t wpos = obc__arena_ring_reserve(writer, OBC_RING_EAGER, total);
    uint64_t rpos = obc__arena_ring_reserve(reader, OBC_RING_EAGER, total);
    assert_true(wpos == rpos);
    /* nothing to read before it is published */
    assert_null(obc__arena_slot_peek(reader, OBC_RING_EAGER, rpos, &n, &stamp, &w));
    for (uint64_t i = 0; i < depth; i++) {
        write_slot(wpos + i, i);
    }
    for (uint64_t i = depth; i < total; i++) {
        /* the ring is full until the reader frees the oldest slot, over many wraps */
        assert_null(obc__arena_slot_acquire(writer, OBC_RING_EAGER, wpos + i, 100, &w));
        assert_null(obc__arena_slot_peek(reader, OBC_RING_EAGER, rpos + i, &n, &stamp, &w));
        read_slot(rpos + i - depth, i - depth);
        write_slot(wpos + i, i);
    }
    for (uint64_t i = total - depth; i < total; i++) {
        read_slot(rpos + i, i);
    }
}

/* Two ranks that both believe they are the root of one broadcast: the
 * second to publish the position is told so (bcast_ring.c fails there). */
static void second_root_is_told(void **state)
{
    struct obc__wait w = {.peer = -1};
    size_t n;
    uint64_t stamp;
    (void)state;
    uint64_t pos = obc__arena_ring_reserve(writer, OBC_RING_EAGER, 1);
    assert_true(obc__arena_ring_reserve(reader, OBC_RING_EAGER, 1) == pos);
    assert_non_null(obc__arena_slot_acquire(writer, OBC_RING_EAGER, pos, 8, &w));
    assert_true(obc__arena_slot_publish(writer, OBC_RING_EAGER, pos, 8, 1));
    assert_non_null(obc__arena_slot_acquire(reader, OBC_RING_EAGER, pos, 8, &w));
    assert_false(obc__arena_slot_publish(reader, OBC_RING_EAGER, pos, 8, 2));
    assert_non_null(obc__arena_slot_peek(reader, OBC_RING_EAGER, pos, &n, &stamp, &w));
    obc__arena_slot_release(reader, OBC_RING_EAGER, pos);
}

static void counters_and_mailboxes(void **state)
{
    struct obc__wait w = {.peer = -1};
    uint64_t msg = 0, got = 0;
    (void)state;
    assert_false(obc__arena_counter_reached(reader, OBC_CTR_BARRIER, 2, &w));
    obc__arena_counter_add(writer, OBC_CTR_BARRIER, 1);
    obc__arena_counter_add(reader, OBC_CTR_BARRIER, 1);
    assert_true(obc__arena_counter_reached(reader, OBC_CTR_BARRIER, 2, &w));
    assert_false(obc__arena_mailbox_read(reader, 0, 7, &got, sizeof(got), &w));
    msg = 0x1234;
    obc__arena_mailbox_post(writer, 7, &msg, sizeof(msg));
    assert_true(obc__arena_mailbox_read(reader, 0, 7, &got, sizeof(got), &w));
    assert_true(got == 0x1234);
}

/* The wait loop itself is the engine's (engine/wait_test.c); the arena
 * says whether waiting is still worth it. */
static void abort_ends_health(void **state)
{
    (void)state;
    assert_int_equal(obc__arena_health(reader), OBC_SUCCESS);
    obc__arena_abort(writer, OBC_ERR_ABORTED, 0);
    assert_int_equal(obc__arena_health(reader), OBC_ERR_ABORTED);
    assert_int_equal(obc__verdict_rank(obc__arena_verdict(reader)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slots_gate_both_ways),
        cmocka_unit_test(second_root_is_told),
        cmocka_unit_test(counters_and_mailboxes),
        cmocka_unit_test(abort_ends_health),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
