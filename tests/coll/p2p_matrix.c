/* SPDX-License-Identifier: MIT */
/*
 * p2p_matrix.c - obc_send/obc_recv/obc_isend/obc_irecv over the matrix: sizes
 * 0, 1, odd (4099 elements), ~1 MiB + odd and 16 MiB + odd (4 MiB + odd with
 * OBCT_QUICK), every dtype at the small sizes, bytes and float32 at the large
 * ones (OBCT_QUICK: every dtype at 4099 only, bytes at the large sizes;
 * OBCT_P2P_SMALL=1, for the thread sanitizer's run: no large size), and
 * for each one every pattern:
 *   pingpong   blocking, pairs (r, r^1): the even rank sends first
 *   shift_wait isend right + irecv left outside a group, obc_wait (both ranks
 *              send first: the runner must take the two as one batch)
 *   shift_test the same, completed by obc_test polling
 *   ring_group blocking send right + recv left inside a group
 *   a2a_group  an all-to-all written as sends, to every rank and to self, in a
 *              group, the receives posted before the sends
 *   self       blocking send to self, then recv from self (buffered send)
 * Every message is the pattern (seed, sender) of data.h in a guarded buffer,
 * so a message from the wrong rank, a shifted or short one never passes;
 * a sender scribbles its buffer as soon as its send completed, so a send
 * that still read it afterwards would deliver the scribble.
 * Then bad arguments (peer out of range, NULL buffer with count > 0, a bad
 * dtype, no request) must be OBC_ERR_INVALID_ARG and leave the communicator
 * usable, and p2p calls interleaved with collectives keep both correct.
 */
/* clang-format off */
/* obct: nranks=1,2,4 timeout=240 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=3,8 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 env=OBCT_QUICK=1 nranks=4 label=variant asan */
/* obct: name=small_tcp env=OBC_HOST_ID=rank/2 env=OBCT_QUICK=1 env=OBCT_P2P_SMALL=1 nranks=3 label=variant san */
/* clang-format on */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcase.h"
#include "data.h"
#include "obct.h"

static int g_rank, g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_seed = 0x70327000;

enum pattern { PINGPONG, SHIFT_WAIT, SHIFT_TEST, RING_GROUP, A2A_GROUP, SELF, NPATTERNS };

struct msg {
    struct obct_buf buf;
    int peer;
};

static void msg_send_init(struct msg *m, size_t nbytes, int peer, uint64_t seed)
{
    obct_buf_alloc(&m->buf, nbytes, (size_t)(seed % 61));
    obct_fill(m->buf.data, nbytes, seed, g_rank);
    m->peer = peer;
}

static void msg_recv_init(struct msg *m, size_t nbytes, int peer, uint64_t seed)
{
    obct_buf_alloc(&m->buf, nbytes, (size_t)(seed % 53));
    obct_poison(m->buf.data, nbytes);
    m->peer = peer;
}

/* A received message must be the sender's pattern; a sent one unchanged. */
static void msg_check_free(struct msg *m, uint64_t seed, int from, const char *what)
{
    obct_verify(what, m->buf.data, m->buf.nbytes, seed, from);
    obct_buf_check(what, &m->buf);
    obct_buf_free(&m->buf);
}

/* A sent message, as soon as its send completed: unchanged, then
 * scribbled before its receiver checks it (a send that still read the
 * buffer after it completed would deliver the scribble), and freed. */
static void msg_sent(struct msg *m, uint64_t seed, const char *what)
{
    obct_verify(what, m->buf.data, m->buf.nbytes, seed, g_rank);
    obct_buf_check(what, &m->buf);
    obct_poison(m->buf.data, m->buf.nbytes);
    obct_buf_free(&m->buf);
}

static void wait_all(obc_request_t **reqs, int n, int poll)
{
    for (int i = 0; i < n; i++) {
        if (!poll) {
            OBCT_OK(obc_wait(reqs[i]), g_comm);
            continue;
        }
        int done = 0;
        while (!done) {
            obc_result_t rc = obc_test(reqs[i], &done);
            OBCT_ASSERT_MSG(rc == OBC_SUCCESS || rc == OBC_IN_PROGRESS, "obc_test: %s (%s)",
                            obct_rc_name(rc), obc_comm_last_error(g_comm));
        }
    }
}

static void run_pingpong(size_t count, obc_dtype_t dt, size_t nbytes, uint64_t seed)
{
    int peer = g_rank ^ 1;
    if (peer >= g_nranks) {
        return;
    }
    struct msg s, r;
    msg_send_init(&s, nbytes, peer, seed);
    msg_recv_init(&r, nbytes, peer, seed);
    if (g_rank % 2 == 0) {
        OBCT_OK(obc_send(s.buf.data, count, dt, peer, g_comm), g_comm);
        msg_sent(&s, seed, "pingpong send");
        OBCT_OK(obc_recv(r.buf.data, count, dt, peer, g_comm), g_comm);
    } else {
        OBCT_OK(obc_recv(r.buf.data, count, dt, peer, g_comm), g_comm);
        OBCT_OK(obc_send(s.buf.data, count, dt, peer, g_comm), g_comm);
        msg_sent(&s, seed, "pingpong send");
    }
    msg_check_free(&r, seed, peer, "pingpong recv");
}

static void run_shift(size_t count, obc_dtype_t dt, size_t nbytes, uint64_t seed, int poll,
                      int grouped)
{
    int right = (g_rank + 1) % g_nranks, left = (g_rank + g_nranks - 1) % g_nranks;
    struct msg s, r;
    msg_send_init(&s, nbytes, right, seed);
    msg_recv_init(&r, nbytes, left, seed);
    if (grouped) {
        OBCT_OK(obc_group_start(), NULL);
        OBCT_OK(obc_send(s.buf.data, count, dt, right, g_comm), g_comm);
        OBCT_OK(obc_recv(r.buf.data, count, dt, left, g_comm), g_comm);
        OBCT_OK(obc_group_end(), g_comm);
    } else {
        obc_request_t *reqs[2];
        OBCT_OK(obc_isend(s.buf.data, count, dt, right, g_comm, &reqs[0]), g_comm);
        OBCT_OK(obc_irecv(r.buf.data, count, dt, left, g_comm, &reqs[1]), g_comm);
        wait_all(reqs, 2, poll);
    }
    msg_sent(&s, seed, "shift send");
    msg_check_free(&r, seed, left, "shift recv");
}

static void run_a2a(size_t count, obc_dtype_t dt, size_t nbytes, uint64_t seed)
{
    struct msg *s = calloc((size_t)g_nranks, sizeof(*s));
    struct msg *r = calloc((size_t)g_nranks, sizeof(*r));
    obc_request_t **reqs = calloc((size_t)g_nranks, sizeof(*reqs));
    OBCT_ASSERT(s != NULL && r != NULL && reqs != NULL);
    OBCT_OK(obc_group_start(), NULL);
    for (int p = 0; p < g_nranks; p++) {
        msg_recv_init(&r[p], nbytes, p, seed);
        OBCT_OK(obc_irecv(r[p].buf.data, count, dt, p, g_comm, &reqs[p]), g_comm);
    }
    for (int k = 0; k < g_nranks; k++) {
        int p = (g_rank + k) % g_nranks; /* self first, then the others in turn */
        msg_send_init(&s[p], nbytes, p, seed + 1);
        OBCT_OK(obc_send(s[p].buf.data, count, dt, p, g_comm), g_comm);
    }
    OBCT_OK(obc_group_end(), g_comm);
    wait_all(reqs, g_nranks, 0);
    for (int p = 0; p < g_nranks; p++) {
        msg_sent(&s[p], seed + 1, "a2a send");
    }
    for (int p = 0; p < g_nranks; p++) {
        msg_check_free(&r[p], seed + 1, p, "a2a recv");
    }
    free(s);
    free(r);
    free(reqs);
}

static void run_self(size_t count, obc_dtype_t dt, size_t nbytes, uint64_t seed)
{
    struct msg s, r;
    msg_send_init(&s, nbytes, g_rank, seed);
    msg_recv_init(&r, nbytes, g_rank, seed);
    OBCT_OK(obc_send(s.buf.data, count, dt, g_rank, g_comm), g_comm);
    obct_poison(s.buf.data, nbytes); /* buffered: the send's buffer is free at once */
    OBCT_OK(obc_recv(r.buf.data, count, dt, g_rank, g_comm), g_comm);
    msg_check_free(&r, seed, g_rank, "self recv");
    obct_buf_free(&s.buf);
}

static void run_case(size_t count, obc_dtype_t dt, enum pattern p)
{
    size_t nbytes = count * obc_dtype_size(dt);
    uint64_t seed = g_seed++;
    switch (p) {
    case PINGPONG:
        run_pingpong(count, dt, nbytes, seed);
        break;
    case SHIFT_WAIT:
    case SHIFT_TEST:
        run_shift(count, dt, nbytes, seed, p == SHIFT_TEST, 0);
        break;
    case RING_GROUP:
        run_shift(count, dt, nbytes, seed, 0, 1);
        break;
    case A2A_GROUP:
        run_a2a(count, dt, nbytes, seed);
        break;
    default:
        run_self(count, dt, nbytes, seed);
        break;
    }
}

static void bad_args(void)
{
    unsigned char b[8] = {0};
    obc_request_t *req = NULL;
    OBCT_RC(obc_send(b, 1, OBC_UINT8, g_nranks, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_RC(obc_recv(b, 1, OBC_UINT8, -1, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_ASSERT(strstr(obc_comm_last_error(g_comm), "peer -1") != NULL);
    OBCT_RC(obc_send(NULL, 1, OBC_UINT8, 0, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_RC(obc_irecv(NULL, 3, OBC_FLOAT32, 0, g_comm, &req), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_ASSERT(req == NULL);
    OBCT_RC(obc_isend(b, 1, (obc_dtype_t)99, 0, g_comm, &req), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_RC(obc_isend(b, 1, OBC_UINT8, 0, g_comm, NULL), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_RC(obc_send(b, 1, OBC_UINT8, 0, NULL), OBC_ERR_INVALID_ARG, NULL);
    /* A receive from self with no send before it would wait forever. */
    OBCT_RC(obc_recv(b, 1, OBC_UINT8, g_rank, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_OK(obc_send(NULL, 0, OBC_UINT8, g_rank, g_comm), g_comm); /* count 0: NULL is fine */
    OBCT_OK(obc_recv(NULL, 0, OBC_UINT8, g_rank, g_comm), g_comm);
}

/* Sends and receives between collectives, in the same relative order on
 * every rank: neither disturbs the other's stream. */
static void interleaved(void)
{
    double v = 1.0;
    int right = (g_rank + 1) % g_nranks, left = (g_rank + g_nranks - 1) % g_nranks;
    for (int i = 0; i < 20; i++) {
        int out = g_rank * 100 + i, in = -1;
        obc_request_t *reqs[2];
        OBCT_OK(obc_isend(&out, 1, OBC_INT32, right, g_comm, &reqs[0]), g_comm);
        OBCT_OK(obc_irecv(&in, 1, OBC_INT32, left, g_comm, &reqs[1]), g_comm);
        OBCT_OK(obc_allreduce(&v, &v, 1, OBC_FLOAT64, OBC_SUM, g_comm), g_comm);
        wait_all(reqs, 2, 0);
        OBCT_EQ_INT(in, left * 100 + i);
        v = 1.0;
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

int main(void)
{
    const size_t mib = (size_t)1 << 20;
    size_t large = obct_quick() ? 4 * mib + 7 : 16 * mib + 7;
    const size_t small[] = {0, 1, 4099};
    double t0 = obct_now();
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    bad_args();
    for (size_t c = 0; c < sizeof(small) / sizeof(small[0]); c++) {
        for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
            if (obct_quick() && small[c] != 4099 && dt != OBC_UINT8 && dt != OBC_FLOAT64) {
                continue;
            }
            for (int p = 0; p < NPATTERNS; p++) {
                run_case(small[c], (obc_dtype_t)dt, (enum pattern)p);
            }
        }
    }
    if (g_rank == 0) {
        printf("p2p_matrix: nranks=%d small sizes, every dtype: %.2f s\n", g_nranks,
               obct_now() - t0);
    }
    const size_t big[] = {mib + 13, large};
    const char *small_only = getenv("OBCT_P2P_SMALL");
    for (size_t c = 0; c < 2 && !(small_only != NULL && small_only[0] == '1'); c++) {
        double t = obct_now();
        for (int p = 0; p < NPATTERNS; p++) {
            run_case(big[c], OBC_UINT8, (enum pattern)p);
            if (!obct_quick()) {
                run_case(big[c] / 4, OBC_FLOAT32, (enum pattern)p);
            }
        }
        if (g_rank == 0) {
            printf("p2p_matrix: nranks=%d %zu bytes: %.2f s\n", g_nranks, big[c], obct_now() - t);
        }
    }
    interleaved();
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("p2p_matrix");
}
