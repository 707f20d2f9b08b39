/* SPDX-License-Identifier: MIT */
/*
 * tcp_link_test.c - TCP links over real loopback sockets, two struct
 * obc__tcp in one process, each with its own progress thread:
 *  - 3000 frames of every size from 0 to a whole slot, both directions at
 *    once, arrive complete, in order, with their stamps, through rings far
 *    smaller than the traffic (so both rings wrap and fill); the same
 *    published by reference (part in the slot, part in the caller's
 *    buffer), and a frame detached before it left carries the bytes of
 *    the detach, not what the caller wrote afterwards, also when the
 *    progress thread sends it later from its slot;
 *  - a posted receive: a run of frames lands in the caller's buffer past
 *    its header, other frames stay in slots, and a post withdrawn in the
 *    middle of a frame gets no byte more;
 *  - a frame header with a wrong magic, and one announcing more than a
 *    slot, fail the link with OBC_ERR_PROTOCOL and wake the waiter;
 *  - a peer that goes away fails the link with OBC_ERR_PEER_LOST;
 *  - a failure notice fails the peer's link with its code and culprit, and
 *    the peer then sends nothing more (a failed link once sent a frame of
 *    zeros, which its peer took for a protocol error);
 *  - an abort tells the peer who aborted before the connection closes;
 *  - a send that meets a connection the peer reset after its failure
 *    notice still reports the notice's code and culprit, not a lost
 *    connection (the send used to be judged before the notice was read);
 *  - a root that sent its last frames and a goodbye, then closed, resets
 *    the connection at our next control frame while those frames still
 *    wait behind our full receive ring: every frame and the goodbye are
 *    still read, with no error (netlab_loss failed on that);
 *  - the same with our own data queued for that peer: no loss is called
 *    while its failure notice may wait behind the ring (its culprit wins
 *    once the ring is released), and a loss is called after a grace when
 *    nothing settles it;
 *  - a sender whose ring is full is woken when half of it is free, not
 *    at each slot, and at once when the link fails; one that waits for
 *    its frames by reference to leave, when the last one has.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "platform/platform.h"
#include "transport/tcp/tcp_impl.h"

#define SLOT 4096
#define NSLOTS 4
#define NFRAMES 3000

/* A connected pair of loopback TCP sockets. */
static void socket_pair(int *a, int *b)
{
    struct obc__sockaddr addr, bound;
    assert_int_equal(obc__sock_resolve("127.0.0.1", 0, &addr), 0);
    int lfd = obc__sock_listen(&addr, 4, &bound);
    assert_true(lfd >= 0);
    *a = obc__sock_connect(&bound, obc__now_ns() + 5000000000ll);
    assert_true(*a >= 0);
    *b = obc__sock_accept(lfd, obc__now_ns() + 5000000000ll);
    assert_true(*b >= 0);
    obc__fd_close(lfd);
}

static struct obc__tcp *one_link(int fd, struct obc__err *err)
{
    struct obc__tcp *t = NULL;
    assert_int_equal(obc__tcp_create(1, NSLOTS, SLOT, err, &t), OBC_SUCCESS);
    assert_int_equal(obc__tcp_attach(t, 0, fd), OBC_SUCCESS);
    assert_int_equal(obc__tcp_start(t), OBC_SUCCESS);
    return t;
}

static size_t frame_size(int i)
{
    return i % 7 == 0 ? SLOT : (size_t)(i * 37) % (SLOT + 1);
}

static unsigned char frame_byte(int i, size_t k)
{
    return (unsigned char)(i * 131 + k * 7 + 1);
}

struct side {
    struct obc__tcp *t;
    int sent, received;
    unsigned char *src; /* non-NULL: frames are published by reference, from here */
};

/* Every frame's bytes, at SLOT apart: where frames by reference come from. */
static unsigned char *frame_sources(void)
{
    unsigned char *src = malloc((size_t)NFRAMES * SLOT);
    assert_non_null(src);
    for (int i = 0; i < NFRAMES; i++) {
        for (size_t k = 0; k < SLOT; k++) {
            src[(size_t)i * SLOT + k] = frame_byte(i, k);
        }
    }
    return src;
}

/* Frame i's first `at` bytes in the slot (a header, as px.c writes one),
 * the rest read from the source by the progress thread. */
static void publish_by_ref(struct side *s, unsigned char *slot, size_t n)
{
    size_t at = s->sent % 3 == 0 ? 0 : n < 8 ? n : 8;
    const unsigned char *src = s->src + (size_t)s->sent * SLOT;
    memcpy(slot, src, at);
    obc__tcp_send_publish_ref(s->t, 0, at, src + at, n - at, 1000u + (uint64_t)s->sent);
}

/* One step of sending or receiving; false when neither could move. */
static bool step(struct side *s, struct obc__wait *w)
{
    bool moved = false;
    if (s->sent < NFRAMES) {
        unsigned char *slot = obc__tcp_send_acquire(s->t, 0, w);
        if (slot != NULL) {
            size_t n = frame_size(s->sent);
            if (s->src != NULL) {
                publish_by_ref(s, slot, n);
            } else {
                for (size_t k = 0; k < n; k++) {
                    slot[k] = frame_byte(s->sent, k);
                }
                obc__tcp_send_publish(s->t, 0, n, 1000u + (uint64_t)s->sent);
            }
            s->sent++;
            moved = true;
        }
    }
    size_t n = 0;
    uint64_t stamp = 0;
    const unsigned char *got = obc__tcp_recv_peek(s->t, 0, &n, &stamp, w);
    if (got != NULL) {
        assert_int_equal(n, frame_size(s->received));
        assert_int_equal(stamp, 1000u + (uint64_t)s->received);
        for (size_t k = 0; k < n; k++) {
            if (got[k] != frame_byte(s->received, k)) {
                fail_msg("frame %d byte %zu: %u", s->received, k, got[k]);
            }
        }
        obc__tcp_recv_release(s->t, 0);
        s->received++;
        moved = true;
    }
    return moved;
}

static void exchange_frames(bool by_ref)
{
    struct obc__err err;
    int fa, fb;
    obc__err_init(&err);
    socket_pair(&fa, &fb);
    struct side a = {one_link(fa, &err), 0, 0, by_ref ? frame_sources() : NULL};
    struct side b = {one_link(fb, &err), 0, 0, by_ref ? frame_sources() : NULL};
    int64_t deadline = obc__now_ns() + 60000000000ll;
    while (a.received < NFRAMES || b.received < NFRAMES) {
        struct obc__wait w = {.peer = -1};
        bool moved = step(&a, &w);
        moved = step(&b, &w) || moved;
        if (!moved) { /* sleep on the last word that would move */
            obc__futex_wait(w.word, w.seen, 1000000, false);
        }
        assert_true(obc__now_ns() < deadline);
    }
    assert_int_equal(obc__tcp_link_error(a.t, 0), OBC_SUCCESS);
    assert_int_equal(obc__tcp_link_error(b.t, 0), OBC_SUCCESS);
    struct obc__wait w = {.peer = -1};
    assert_true(obc__tcp_send_drained(a.t, 0, &w)); /* every frame arrived, so every one left */
    assert_true(obc__tcp_send_drained(b.t, 0, &w));
    obc__tcp_destroy(a.t, 1000000000);
    obc__tcp_destroy(b.t, 1000000000);
    free(a.src);
    free(b.src);
    obc__err_fini(&err);
}

static void frames_both_ways(void **state)
{
    (void)state;
    exchange_frames(false);
}

/* The same frames, published by reference (obc__tcp_send_publish_ref):
 * the bytes in the slot and those read from the caller's buffer arrive as
 * one payload, whatever the split. */
static void frames_by_reference(void **state)
{
    (void)state;
    exchange_frames(true);
}

/* Feed raw bytes to a link and wait for it to fail with `expect`. */
static void raw_bytes_fail(const void *bytes, size_t nbytes, obc_result_t expect)
{
    struct obc__err err;
    int raw, fd;
    obc__err_init(&err);
    socket_pair(&raw, &fd);
    struct obc__tcp *t = one_link(fd, &err);
    if (nbytes > 0) {
        assert_int_equal(obc__sock_send_all(raw, bytes, nbytes, obc__now_ns() + 1000000000ll), 0);
    } else {
        obc__fd_close(raw);
    }
    int64_t deadline = obc__now_ns() + 5000000000ll;
    for (;;) {
        struct obc__wait w = {.peer = -1};
        size_t n;
        uint64_t stamp;
        assert_null(obc__tcp_recv_peek(t, 0, &n, &stamp, &w));
        if (obc__tcp_link_error(t, 0) != OBC_SUCCESS) {
            break;
        }
        obc__futex_wait(w.word, w.seen, 100000000, false);
        assert_true(obc__now_ns() < deadline);
    }
    assert_int_equal(obc__tcp_link_error(t, 0), expect);
    obc__tcp_destroy(t, 0);
    if (nbytes > 0) {
        obc__fd_close(raw);
    }
    obc__err_fini(&err);
}

static void bad_magic(void **state)
{
    uint32_t hdr[4] = {0x12345678u, 8, 0, 0};
    (void)state;
    raw_bytes_fail(hdr, sizeof(hdr), OBC_ERR_PROTOCOL);
}

static void oversized_frame(void **state)
{
    uint32_t hdr[4] = {0x4f424354u, SLOT + 1, 0, 0};
    (void)state;
    raw_bytes_fail(hdr, sizeof(hdr), OBC_ERR_PROTOCOL);
}

static void peer_gone(void **state)
{
    (void)state;
    raw_bytes_fail(NULL, 0, OBC_ERR_PEER_LOST);
}

/* Wait until link 0 of t fails; its error. */
static obc_result_t wait_for_failure(struct obc__tcp *t)
{
    int64_t deadline = obc__now_ns() + 5000000000ll;
    while (obc__tcp_link_error(t, 0) == OBC_SUCCESS) {
        assert_true(obc__now_ns() < deadline);
        obc__sleep_ns(1000000);
    }
    return obc__tcp_link_error(t, 0);
}

/* Two linked struct obc__tcp, for the tests that break the link. */
struct pair {
    struct obc__err err;
    struct obc__tcp *a, *b;
};

static int pair_up(void **state)
{
    struct pair *p = calloc(1, sizeof(*p));
    int fa, fb;
    assert_non_null(p);
    obc__err_init(&p->err);
    socket_pair(&fa, &fb);
    p->a = one_link(fa, &p->err);
    p->b = one_link(fb, &p->err);
    *state = p;
    return 0;
}

static int pair_down(void **state)
{
    struct pair *p = *state;
    obc__tcp_destroy(p->b, 0);
    obc__tcp_destroy(p->a, 0);
    obc__err_fini(&p->err);
    free(p);
    return 0;
}

static void notice_then_silence(void **state)
{
    struct pair *p = *state;
    obc__tcp_tell_failure(p->a, OBC_ERR_PEER_LOST, 7);
    assert_int_equal(wait_for_failure(p->b), OBC_ERR_PEER_LOST);
    assert_int_equal(obc__verdict_rank(obc__tcp_link_verdict(p->b, 0)), 7);
    /* Long enough for b's thread to pump its failed link a few times. */
    obc__sleep_ns(300000000);
    assert_int_equal(obc__tcp_link_error(p->a, 0), OBC_SUCCESS);
    struct obc__wait w = {.peer = -1};
    size_t n;
    uint64_t stamp;
    assert_null(obc__tcp_recv_peek(p->a, 0, &n, &stamp, &w));
}

static void abort_names_aborter(void **state)
{
    struct pair *p = *state;
    obc__tcp_abort(p->a, 3);
    assert_int_equal(wait_for_failure(p->b), OBC_ERR_ABORTED);
    assert_int_equal(obc__verdict_rank(obc__tcp_link_verdict(p->b, 0)), 3);
    assert_false(obc__tcp_link_departed(p->b, 0));
    /* The aborting side's own socket is shut: its link fails too, as aborted. */
    assert_int_equal(wait_for_failure(p->a), OBC_ERR_ABORTED);
}

/* A mismatch's notice carries both ranks of the pair, so that ranks of
 * other hosts name the one whose call differs whichever of the two found it. */
static void mismatch_names_both(void **state)
{
    struct pair *p = *state;
    obc__tcp_tell_verdict(p->a, obc__verdict_pair(OBC_ERR_MISMATCH, 2, 3));
    assert_int_equal(wait_for_failure(p->b), OBC_ERR_MISMATCH);
    uint64_t verdict = obc__tcp_link_verdict(p->b, 0);
    assert_int_equal(obc__verdict_code(verdict), OBC_ERR_MISMATCH);
    assert_int_equal(obc__verdict_rank(verdict), 2);
    assert_int_equal(obc__verdict_other(verdict), 3);
}

/* A link driven by hand (no progress thread) on fd. */
static struct obc__tcp *manual_link(int fd, struct obc__err *err)
{
    struct obc__tcp *t = NULL;
    assert_int_equal(obc__tcp_create(1, NSLOTS, SLOT, err, &t), OBC_SUCCESS);
    assert_int_equal(obc__tcp_attach(t, 0, fd), OBC_SUCCESS);
    return t;
}

/* The raw peer resets the connection (no FIN); what it sent stays queued. */
static void reset_connection(int raw)
{
    struct linger reset = {1, 0};
    assert_int_equal(setsockopt(raw, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)), 0);
    obc__fd_close(raw);
    obc__sleep_ns(20000000); /* the reset arrives (loopback) */
}

/* The raw peer sends a failure notice: `culprit` was lost. */
static void send_notice(int raw, int culprit)
{
    struct obc__tcp_frame notice = {FRAME_FAIL, 0, obc__verdict_word(OBC_ERR_PEER_LOST, culprit)};
    assert_int_equal(obc__sock_send_all(raw, &notice, sizeof(notice), obc__now_ns() + 1000000000ll),
                     0);
}

/* The link's rank publishes one 64-byte data frame (stamp 1). */
static void publish_small_frame(struct obc__tcp *t)
{
    struct obc__wait w = {.peer = -1};
    unsigned char *slot = obc__tcp_send_acquire(t, 0, &w);
    assert_non_null(slot);
    memset(slot, 1, 64);
    obc__tcp_send_publish(t, 0, 64, 1);
}

/* The link failed with PEER_LOST naming `culprit` (a failure notice's,
 * not the peer's own); then close it. */
static void expect_culprit_then_close(struct obc__tcp *t, struct obc__err *err, int culprit)
{
    assert_int_equal(obc__tcp_link_error(t, 0), OBC_ERR_PEER_LOST);
    assert_int_equal(obc__verdict_rank(obc__tcp_link_verdict(t, 0)), culprit);
    obc__tcp_destroy(t, 0);
    obc__err_fini(err);
}

/* The peer sent its failure notice (rank 5 lost) and reset the connection
 * before this link read it; the link's next send fails. Driven by hand, no
 * progress thread, so that the send comes first: the bystander of a
 * broken job must still name the culprit, not the rank that told it. */
static void notice_before_reset_wins(void **state)
{
    struct obc__err err;
    struct obc__tcp *t = NULL;
    int raw, fd;
    (void)state;
    obc__err_init(&err);
    socket_pair(&raw, &fd);
    t = manual_link(fd, &err);
    send_notice(raw, 5);
    reset_connection(raw);
    publish_small_frame(t);
    obc__tcp_link_pump_send(t, 0);
    expect_culprit_then_close(t, &err, 5);
}

/* A frame published by reference and detached before it left (its
 * operation failed and returned): the bytes that go out are those the
 * buffer held at the detach, whatever the caller writes there after.
 * Driven by hand, so that the detach surely comes first. */
static void detach_keeps_the_bytes(void **state)
{
    struct obc__err err;
    int raw, fd;
    unsigned char buf[SLOT], frame[sizeof(struct obc__tcp_frame) + SLOT];
    (void)state;
    obc__err_init(&err);
    socket_pair(&raw, &fd);
    struct obc__tcp *t = manual_link(fd, &err);
    for (size_t k = 0; k < SLOT; k++) {
        buf[k] = frame_byte(7, k);
    }
    struct obc__wait w = {.peer = -1};
    unsigned char *slot = obc__tcp_send_acquire(t, 0, &w);
    assert_non_null(slot);
    memcpy(slot, buf, 8);
    obc__tcp_send_publish_ref(t, 0, 8, buf + 8, SLOT - 8, 77);
    assert_false(obc__tcp_send_drained(t, 0, &w)); /* not sent yet: the buffer is referenced */
    obc__tcp_detach_all(t);
    memset(buf, 0xee, sizeof(buf));
    obc__tcp_link_pump_send(t, 0);
    assert_true(obc__tcp_send_drained(t, 0, &w));
    assert_int_equal(obc__sock_recv_all(raw, frame, sizeof(frame), obc__now_ns() + 1000000000ll),
                     0);
    struct obc__tcp_frame h;
    memcpy(&h, frame, sizeof(h));
    assert_int_equal(h.magic, FRAME_DATA);
    assert_int_equal(h.nbytes, SLOT);
    assert_int_equal(h.stamp, 77);
    for (size_t k = 0; k < SLOT; k++) {
        if (frame[sizeof(h) + k] != frame_byte(7, k)) {
            fail_msg("byte %zu: %u", k, frame[sizeof(h) + k]);
        }
    }
    obc__tcp_destroy(t, 0);
    obc__fd_close(raw);
    obc__err_fini(&err);
}

/* The same with the progress thread running: three whole slots fill the
 * socket (the raw end reads nothing yet, its buffers made small), so the
 * frame published by reference behind them is still queued when it is
 * detached. The thread then sends it from its slot, without the lock: the
 * copy must happen before that read (TSan reported the race when the
 * detach's store and the thread's load were relaxed), and the bytes that
 * arrive are the detach's, not the scribble that follows it. */
#define BIG_SLOT (64 * 1024)
static void detach_while_queued(void **state)
{
    struct obc__err err;
    int raw, fd, small = 4096;
    struct obc__tcp *t = NULL;
    (void)state;
    obc__err_init(&err);
    socket_pair(&raw, &fd);
    assert_int_equal(setsockopt(raw, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
    assert_int_equal(obc__tcp_create(1, NSLOTS, BIG_SLOT, &err, &t), OBC_SUCCESS);
    assert_int_equal(obc__tcp_attach(t, 0, fd), OBC_SUCCESS);
    assert_int_equal(obc__tcp_start(t), OBC_SUCCESS);
    unsigned char *buf = malloc(BIG_SLOT), *got = malloc(BIG_SLOT);
    assert_non_null(buf);
    assert_non_null(got);
    struct obc__wait w = {.peer = -1};
    for (int i = 0; i < NSLOTS; i++) {
        bool last = i + 1 == NSLOTS; /* the one sent by reference, from buf */
        unsigned char *slot = obc__tcp_send_acquire(t, 0, &w);
        assert_non_null(slot);
        unsigned char *fill = last ? buf : slot;
        for (size_t k = 0; k < BIG_SLOT; k++) {
            fill[k] = frame_byte(i, k);
        }
        if (!last) {
            obc__tcp_send_publish(t, 0, BIG_SLOT, 500u + (uint64_t)i);
            continue;
        }
        memcpy(slot, buf, 8); /* a header in the slot, the rest named in buf */
        obc__tcp_send_publish_ref(t, 0, 8, buf + 8, BIG_SLOT - 8, 500u + (uint64_t)i);
    }
    assert_false(obc__tcp_send_drained(t, 0, &w)); /* behind 192 KiB the socket cannot hold */
    obc__tcp_detach_all(t);
    memset(buf, 0xee, BIG_SLOT);
    for (int i = 0; i < NSLOTS; i++) {
        struct obc__tcp_frame h;
        int64_t deadline = obc__now_ns() + 10000000000ll;
        assert_int_equal(obc__sock_recv_all(raw, &h, sizeof(h), deadline), 0);
        assert_int_equal(h.magic, FRAME_DATA);
        assert_int_equal(h.nbytes, BIG_SLOT);
        assert_int_equal(h.stamp, 500u + (uint64_t)i);
        assert_int_equal(obc__sock_recv_all(raw, got, BIG_SLOT, deadline), 0);
        for (size_t k = 0; k < BIG_SLOT; k++) {
            if (got[k] != frame_byte(i, k)) {
                fail_msg("frame %d byte %zu: %u", i, k, got[k]);
            }
        }
    }
    assert_true(obc__tcp_send_drained(t, 0, &w));
    obc__tcp_destroy(t, 0);
    obc__fd_close(raw);
    free(buf);
    free(got);
    obc__err_fini(&err);
}

/* Write one data frame of n bytes (byte k = frame_byte(id, k)) from the raw end. */
static void raw_frame(int raw, uint64_t stamp, int id, size_t n, size_t upto)
{
    unsigned char frame[sizeof(struct obc__tcp_frame) + SLOT];
    struct obc__tcp_frame h = {FRAME_DATA, (uint32_t)n, stamp};
    memcpy(frame, &h, sizeof(h));
    for (size_t k = 0; k < n; k++) {
        frame[sizeof(h) + k] = frame_byte(id, k);
    }
    assert_int_equal(obc__sock_send_all(raw, frame, upto, obc__now_ns() + 1000000000ll), 0);
}

/* Peek the next frame (pumping the link by hand until it is there). */
static const unsigned char *next_frame(struct obc__tcp *t, size_t *n, uint64_t *stamp)
{
    for (int64_t end = obc__now_ns() + 1000000000ll; obc__now_ns() < end;) {
        struct obc__wait w = {.peer = -1};
        obc__tcp_link_pump_recv(t, 0);
        const unsigned char *got = obc__tcp_recv_peek(t, 0, n, stamp, &w);
        if (got != NULL) {
            return got;
        }
        obc__sleep_ns(1000000);
    }
    fail_msg("no frame came");
    return NULL;
}

/* A posted receive: the frames of its stamp, as one run, land at the post
 * from the post's offset on (the 8 bytes before stay in the first slot);
 * a frame of another stamp, and one that would reach past the post, stay
 * in their slots; a frame half read when the post is withdrawn ends in its
 * slot, and nothing more is written to the buffer. */
static void posted_frames_land(void **state)
{
    struct obc__err err;
    int raw, fd;
    size_t n = 0;
    uint64_t stamp = 0;
    enum { LEAD = 8, POSTED = 3 * SLOT - LEAD };
    unsigned char dst[POSTED + 64];
    (void)state;
    obc__err_init(&err);
    socket_pair(&raw, &fd);
    struct obc__tcp *t = manual_link(fd, &err);
    memset(dst, 0xee, sizeof(dst));
    obc__tcp_recv_post(t, 0, 9, LEAD, dst, POSTED);
    raw_frame(raw, 5, 0, SLOT, sizeof(struct obc__tcp_frame) + SLOT); /* another operation's */
    const unsigned char *got = next_frame(t, &n, &stamp);
    assert_int_equal(stamp, 5);
    assert_false(obc__tcp_recv_landed(t, 0));
    assert_int_equal(got[SLOT - 1], frame_byte(0, SLOT - 1));
    obc__tcp_recv_release(t, 0);
    for (int i = 1; i <= 3; i++) { /* the run: 3 x SLOT = LEAD + POSTED */
        raw_frame(raw, 9, i, SLOT, sizeof(struct obc__tcp_frame) + SLOT);
        got = next_frame(t, &n, &stamp);
        assert_int_equal(n, SLOT);
        assert_true(obc__tcp_recv_landed(t, 0));
        size_t first = i == 1 ? LEAD : 0, at = (size_t)(i - 1) * SLOT + first - LEAD;
        for (size_t k = 0; k < first; k++) {
            assert_int_equal(got[k], frame_byte(i, k)); /* the lead, in the slot */
        }
        for (size_t k = first; k < SLOT; k++) {
            if (dst[at + k - first] != frame_byte(i, k)) {
                fail_msg("frame %d byte %zu: %u", i, k, dst[at + k - first]);
            }
        }
        obc__tcp_recv_release(t, 0);
    }
    assert_int_equal(dst[POSTED], 0xee); /* not a byte past the post */
    raw_frame(raw, 9, 4, 64, sizeof(struct obc__tcp_frame) + 64); /* past the post's end */
    got = next_frame(t, &n, &stamp);
    assert_false(obc__tcp_recv_landed(t, 0));
    assert_int_equal(got[63], frame_byte(4, 63));
    assert_int_equal(dst[POSTED], 0xee);
    obc__tcp_recv_release(t, 0);
    /* withdrawn mid-frame: a new run (stamp 11), half a frame read to the post */
    memset(dst, 0xee, sizeof(dst));
    obc__tcp_recv_post(t, 0, 11, 0, dst, SLOT);
    size_t half = sizeof(struct obc__tcp_frame) + SLOT / 2;
    raw_frame(raw, 11, 5, SLOT, half);
    for (int64_t end = obc__now_ns() + 1000000000ll;
         dst[SLOT / 2 - 1] == 0xee && obc__now_ns() < end;) {
        obc__tcp_link_pump_recv(t, 0);
    }
    assert_int_equal(dst[SLOT / 2 - 1], frame_byte(5, SLOT / 2 - 1));
    obc__tcp_recv_unpost(t, 0);
    unsigned char rest[SLOT];
    for (size_t k = 0; k < SLOT; k++) {
        rest[k] = frame_byte(5, k);
    }
    assert_int_equal(
        obc__sock_send_all(raw, rest + SLOT / 2, SLOT / 2, obc__now_ns() + 1000000000ll), 0);
    got = next_frame(t, &n, &stamp);
    assert_false(obc__tcp_recv_landed(t, 0));
    assert_int_equal(got[SLOT - 1], frame_byte(5, SLOT - 1)); /* the rest went to the slot */
    for (size_t k = SLOT / 2; k < SLOT; k++) {
        assert_int_equal(dst[k], 0xee);
    }
    obc__tcp_recv_release(t, 0);
    obc__tcp_destroy(t, 0);
    obc__fd_close(raw);
    obc__err_fini(&err);
}

#define TAIL_FRAMES (2 * NSLOTS)

/* The raw peer sends TAIL_FRAMES whole data frames: stamps 100, 101, ...,
 * frame i's payload all bytes i. */
static void send_tail_frames(int raw)
{
    unsigned char frame[sizeof(struct obc__tcp_frame) + SLOT];
    for (int i = 0; i < TAIL_FRAMES; i++) {
        struct obc__tcp_frame h = {FRAME_DATA, SLOT, 100u + (uint64_t)i};
        memcpy(frame, &h, sizeof(h));
        memset(frame + sizeof(h), i, SLOT);
        assert_int_equal(
            obc__sock_send_all(raw, frame, sizeof(frame), obc__now_ns() + 1000000000ll), 0);
    }
}

static void tail_behind_full_ring_is_read(void **state)
{
    struct obc__err err;
    struct obc__tcp *t;
    int raw, fd;
    (void)state;
    obc__err_init(&err);
    socket_pair(&raw, &fd);
    t = manual_link(fd, &err);
    send_tail_frames(raw);
    struct obc__tcp_frame bye = {FRAME_BYE, 0, 0};
    assert_int_equal(obc__sock_send_all(raw, &bye, sizeof(bye), obc__now_ns() + 1000000000ll), 0);
    obc__tcp_link_pump_recv(t, 0); /* fills the ring; the rest waits in the socket */
    reset_connection(raw);
    obc__tcp_link_queue_control(&t->links[0], FRAME_BEAT);
    obc__tcp_link_pump_send(t, 0); /* meets the reset */
    assert_true(atomic_load(&t->links[0].refused)); /* the send did meet it */
    assert_int_equal(obc__tcp_link_error(t, 0), OBC_SUCCESS);
    for (int i = 0; i < TAIL_FRAMES; i++) {
        struct obc__wait w = {.peer = -1};
        size_t n = 0;
        uint64_t stamp = 0;
        const unsigned char *got = obc__tcp_recv_peek(t, 0, &n, &stamp, &w);
        assert_non_null(got);
        assert_int_equal(n, SLOT);
        assert_int_equal(stamp, 100u + (uint64_t)i);
        assert_int_equal(got[0], i);
        assert_int_equal(got[SLOT - 1], i);
        obc__tcp_recv_release(t, 0);
        if (!obc__tcp_link_departed(t, 0)) { /* as the thread does */
            obc__tcp_link_pump_recv(t, 0);
        }
        obc__tcp_link_pump_send(t, 0);
    }
    assert_true(obc__tcp_link_departed(t, 0));
    assert_int_equal(obc__tcp_link_error(t, 0), OBC_SUCCESS);
    obc__tcp_destroy(t, 0);
    obc__err_fini(&err);
}

/* A bystander of a broken job: its peer sent TAIL_FRAMES data frames,
 * then (with_notice) its failure notice naming rank 5, and reset the
 * connection; the data filled this rank's receive ring, so the notice
 * waits unread when this rank's own data for the peer meets the reset.
 * The link must not yet call that a loss (it named the peer, not rank 5,
 * in personal_fault_tcp_kills). Returns the link, refused, not failed. */
static struct obc__tcp *refused_behind_full_ring(struct obc__err *err, bool with_notice)
{
    int raw, fd;
    socket_pair(&raw, &fd);
    struct obc__tcp *t = manual_link(fd, err);
    send_tail_frames(raw);
    if (with_notice) {
        send_notice(raw, 5);
    }
    obc__tcp_link_pump_recv(t, 0); /* fills the ring; the rest waits in the socket */
    reset_connection(raw);
    publish_small_frame(t);
    obc__tcp_link_pump_send(t, 0); /* meets the reset */
    assert_true(atomic_load(&t->links[0].refused));
    obc__tcp_link_pump_send(t, 0); /* as the thread does, again and again */
    assert_int_equal(obc__tcp_link_error(t, 0), OBC_SUCCESS);
    return t;
}

/* Once the rank releases its slots, the notice is read: its culprit wins. */
static void notice_behind_full_ring_wins(void **state)
{
    struct obc__err err;
    (void)state;
    obc__err_init(&err);
    struct obc__tcp *t = refused_behind_full_ring(&err, true);
    for (int i = 0; i < TAIL_FRAMES && obc__tcp_link_error(t, 0) == OBC_SUCCESS; i++) {
        struct obc__wait w = {.peer = -1};
        size_t n = 0;
        uint64_t stamp = 0;
        assert_non_null(obc__tcp_recv_peek(t, 0, &n, &stamp, &w));
        assert_int_equal(stamp, 100u + (uint64_t)i);
        obc__tcp_recv_release(t, 0);
        obc__tcp_link_pump_recv(t, 0);
        if (obc__tcp_link_error(t, 0) == OBC_SUCCESS) {
            obc__tcp_link_pump_send(t, 0);
        }
    }
    expect_culprit_then_close(t, &err, 5);
}

/* Nobody releases the ring: after the grace, the data that can never
 * arrive is a loss, and the waiter learns it (no hang). */
static void refused_send_fails_after_grace(void **state)
{
    struct obc__err err;
    (void)state;
    obc__err_init(&err);
    struct obc__tcp *t = refused_behind_full_ring(&err, false);
    int64_t deadline = obc__now_ns() + 5000000000ll;
    while (obc__tcp_link_error(t, 0) == OBC_SUCCESS) {
        assert_true(obc__now_ns() < deadline);
        obc__sleep_ns(20000000);
        obc__tcp_link_pump_send(t, 0);
    }
    assert_int_equal(obc__tcp_link_error(t, 0), OBC_ERR_PEER_LOST);
    obc__tcp_destroy(t, 0);
    obc__err_fini(&err);
}

/* A rank asleep on a wait, in its own thread: `returned` once it woke. */
struct sleeper {
    struct obc__wait w;
    _Atomic bool returned;
};

/* Sleeps as the engine's wait does (engine/wait.c, a layer above): the
 * sleepers count up, then a futex wait while the word is unchanged. */
static void *sleep_on(void *arg)
{
    struct sleeper *s = arg;
    atomic_fetch_add(s->w.sleepers, 1);
    while (atomic_load(s->w.word) == s->w.seen) {
        obc__futex_wait(s->w.word, s->w.seen, 10000000000ll, true);
    }
    atomic_fetch_sub(s->w.sleepers, 1);
    atomic_store(&s->returned, true);
    return NULL;
}

static bool returns_within(struct sleeper *s, int64_t ns)
{
    int64_t deadline = obc__now_ns() + ns;
    while (!atomic_load(&s->returned) && obc__now_ns() < deadline) {
        obc__sleep_ns(1000000);
    }
    return atomic_load(&s->returned);
}

/* Wait until the thread sleeps on the word (its sleepers count is up). */
static void asleep(struct obc__tcp_index *ix)
{
    int64_t deadline = obc__now_ns() + 5000000000ll;
    while (atomic_load(&ix->sleepers) == 0) {
        assert_true(obc__now_ns() < deadline);
        obc__sleep_ns(1000000);
    }
}

/* A link driven by hand and its raw peer, for the wake tests. */
struct manual {
    struct obc__err err;
    int raw;
    struct obc__tcp *t;
};

static struct obc__tcp_link *manual_open(struct manual *m)
{
    int fd;
    obc__err_init(&m->err);
    socket_pair(&m->raw, &fd);
    m->t = manual_link(fd, &m->err);
    return &m->t->links[0];
}

static void manual_close(struct manual *m)
{
    obc__tcp_destroy(m->t, 0);
    obc__fd_close(m->raw);
    obc__err_fini(&m->err);
}

/* A sender whose ring is full sleeps until half of it is free: the first
 * frame to leave wakes nobody, the second wakes it; a failed link wakes it
 * whatever it waits for. The tail is moved by hand (white box): what is
 * tested is who gets woken, not the socket. */
static void full_ring_wakes_at_half(void **state)
{
    struct manual m;
    (void)state;
    struct obc__tcp_link *l = manual_open(&m);
    struct obc__tcp *t = m.t;
    struct sleeper s = {.returned = false};
    for (int i = 0; i < NSLOTS; i++) {
        assert_non_null(obc__tcp_send_acquire(t, 0, &s.w));
        obc__tcp_send_publish(t, 0, 8, 1);
    }
    assert_null(obc__tcp_send_acquire(t, 0, &s.w));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sleep_on, &s), 0);
    asleep(&l->send.tail);
    obc__tcp_index_advance(&l->send.tail); /* one slot free */
    assert_false(returns_within(&s, 100000000));
    obc__tcp_index_advance(&l->send.tail); /* half the ring */
    assert_true(returns_within(&s, 5000000000ll));
    pthread_join(th, NULL);

    s.returned = false;
    for (int i = 0; i < NSLOTS / 2; i++) { /* the two free slots */
        assert_non_null(obc__tcp_send_acquire(t, 0, &s.w));
        obc__tcp_send_publish(t, 0, 8, 1);
    }
    assert_null(obc__tcp_send_acquire(t, 0, &s.w)); /* full again */
    assert_int_equal(pthread_create(&th, NULL, sleep_on, &s), 0);
    asleep(&l->send.tail);
    obc__tcp_link_fail(l, OBC_ERR_PEER_LOST);
    assert_true(returns_within(&s, 5000000000ll));
    pthread_join(th, NULL);
    manual_close(&m);
}

/* A rank that waits for its frames published by reference to leave
 * sleeps until the last one has: the frames before it wake nobody. */
static void drain_wakes_at_last_frame(void **state)
{
    struct manual m;
    unsigned char buf[3 * SLOT];
    (void)state;
    struct obc__tcp_link *l = manual_open(&m);
    struct obc__tcp *t = m.t;
    struct sleeper s = {.returned = false};
    memset(buf, 3, sizeof(buf));
    for (int i = 0; i < 3; i++) {
        assert_non_null(obc__tcp_send_acquire(t, 0, &s.w));
        obc__tcp_send_publish_ref(t, 0, 0, buf + (size_t)i * SLOT, SLOT, 9);
    }
    assert_false(obc__tcp_send_drained(t, 0, &s.w));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, sleep_on, &s), 0);
    asleep(&l->send.tail);
    obc__tcp_index_advance(&l->send.tail);
    obc__tcp_index_advance(&l->send.tail);
    assert_false(returns_within(&s, 100000000)); /* two of three frames out */
    obc__tcp_index_advance(&l->send.tail);
    assert_true(returns_within(&s, 5000000000ll));
    pthread_join(th, NULL);
    obc__tcp_detach_all(t);
    manual_close(&m);
}

/* Bytes on the raw end within a second (the link's own send, loopback). */
static bool arrives(int raw, void *buf, size_t nbytes)
{
    return obc__sock_recv_all(raw, buf, nbytes, obc__now_ns() + 1000000000ll) == 0;
}

/* Signals on the link's eventfd since the last look (0: none). */
static uint64_t thread_woken(struct obc__tcp *t)
{
    uint64_t n = 0;
    return read(t->wakeup, &n, sizeof(n)) == (ssize_t)sizeof(n) ? n : 0;
}

/* A rank writes a small frame it publishes itself while nobody pumps the
 * links and no other frame waits, without waking the thread; while
 * somebody pumps, or behind a frame still queued, it leaves the frame to
 * the thread and wakes it. Driven by hand: no thread will write what the
 * rank leaves, so those frames stay until the test pumps. */
static void publish_writes_when_nobody_pumps(void **state)
{
    struct manual m;
    struct obc__tcp_frame h;
    unsigned char payload[64];
    (void)state;
    manual_open(&m);
    struct obc__tcp *t = m.t;
    t->send_inline = true; /* as when a thread drives the link (and is idle) */
    publish_small_frame(t);
    assert_true(arrives(m.raw, &h, sizeof(h)));
    assert_int_equal(h.magic, FRAME_DATA);
    assert_int_equal(h.nbytes, 64);
    assert_true(arrives(m.raw, payload, sizeof(payload)));
    assert_int_equal(thread_woken(t), 0);

    pthread_mutex_lock(&t->pump_lock); /* somebody pumps */
    publish_small_frame(t);
    pthread_mutex_unlock(&t->pump_lock);
    assert_int_equal(thread_woken(t), 1);
    struct pollfd pfd = {.fd = m.raw, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 100), 0); /* not written */
    publish_small_frame(t); /* behind it, with the lock free */
    assert_int_equal(thread_woken(t), 1);
    assert_int_equal(poll(&pfd, 1, 100), 0);
    obc__tcp_link_pump_send(t, 0);
    for (int i = 0; i < 2; i++) {
        assert_true(arrives(m.raw, &h, sizeof(h)));
        assert_int_equal(h.stamp, 1);
        assert_true(arrives(m.raw, payload, sizeof(payload)));
    }
    manual_close(&m);
}

/* The word keeps every field apart: ranks 0 and -1 (none), large ranks. */
static void verdict_fields(void **state)
{
    (void)state;
    uint64_t w = obc__verdict_word(OBC_ERR_PEER_LOST, 0);
    assert_true(w != 0);
    assert_int_equal(obc__verdict_code(w), OBC_ERR_PEER_LOST);
    assert_int_equal(obc__verdict_rank(w), 0);
    assert_int_equal(obc__verdict_other(w), -1);
    w = obc__verdict_pair(OBC_ERR_MISMATCH, 1 << 30, 0);
    assert_int_equal(obc__verdict_rank(w), 1 << 30);
    assert_int_equal(obc__verdict_other(w), 0);
    w = obc__verdict_recode(obc__verdict_pair(OBC_ERR_MISMATCH, -1, 5), OBC_ERR_ABORTED);
    assert_int_equal(obc__verdict_code(w), OBC_ERR_ABORTED);
    assert_int_equal(obc__verdict_rank(w), -1);
    assert_int_equal(obc__verdict_other(w), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(frames_both_ways),
        cmocka_unit_test(frames_by_reference),
        cmocka_unit_test(detach_keeps_the_bytes),
        cmocka_unit_test(detach_while_queued),
        cmocka_unit_test(posted_frames_land),
        cmocka_unit_test(bad_magic),
        cmocka_unit_test(oversized_frame),
        cmocka_unit_test(peer_gone),
        cmocka_unit_test_setup_teardown(notice_then_silence, pair_up, pair_down),
        cmocka_unit_test_setup_teardown(abort_names_aborter, pair_up, pair_down),
        cmocka_unit_test_setup_teardown(mismatch_names_both, pair_up, pair_down),
        cmocka_unit_test(verdict_fields),
        cmocka_unit_test(notice_before_reset_wins),
        cmocka_unit_test(tail_behind_full_ring_is_read),
        cmocka_unit_test(notice_behind_full_ring_wins),
        cmocka_unit_test(refused_send_fails_after_grace),
        cmocka_unit_test(full_ring_wakes_at_half),
        cmocka_unit_test(drain_wakes_at_last_frame),
        cmocka_unit_test(publish_writes_when_nobody_pumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
