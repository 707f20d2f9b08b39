/* SPDX-License-Identifier: MIT */
/*
 * p2p_any_source.c - receives from any source (obc_recv_any, obc_irecv_any,
 * obc_recv/obc_irecv with OBC_ANY_SOURCE):
 *   fan_in     every rank in turn receives ROUNDS messages from each other
 *              rank with blocking and non-blocking receives from any source,
 *              at 8 bytes and at a size that takes many slots; each message is
 *              its sender's pattern and carries its sender's rank, so the
 *              reported source, the data and the count per sender all agree
 *   order      a receive from a named rank posted before a receive from any
 *              source keeps that rank's first message; the one from any
 *              source gets the second (the only other message)
 *   self       a send to self is found by a receive from any source
 *   ahead      senders go on to an allreduce at once: their collective's items
 *              may reach the receiver's streams while it still receives from
 *              any source, which must not take them for a mismatch
 * and bad arguments: a NULL source, OBC_ANY_SOURCE as a send's peer, and on
 * one rank a receive from any source with nothing sent to self, each
 * OBC_ERR_INVALID_ARG with the communicator left usable.
 */
/* clang-format off */
/* obct: nranks=1,2,4 timeout=120 */
/* obct: name=crowded nranks=8 timeout=180 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 label=variant san */
/* clang-format on */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "obct.h"

#define ROUNDS 3

static int g_rank, g_nranks;
static obc_comm_t *g_comm;

/* A message of nbytes (>= 4): the sender's rank, then its pattern. */
static void fill_msg(unsigned char *p, size_t nbytes, uint64_t seed, int from)
{
    obct_fill(p, nbytes, seed, from);
    memcpy(p, &from, sizeof(from));
}

static int check_msg(const unsigned char *p, size_t nbytes, uint64_t seed, int source)
{
    int from = -1;
    memcpy(&from, p, sizeof(from));
    OBCT_EQ_INT(from, source);
    for (size_t i = sizeof(from); i < nbytes; i++) {
        if (p[i] != obct_pattern_byte(seed, source, i)) {
            OBCT_FAIL("byte %zu of a message from rank %d: %u, want %u", i, source, p[i],
                      obct_pattern_byte(seed, source, i));
        }
    }
    return from;
}

static void fan_in(size_t nbytes, uint64_t seed)
{
    unsigned char *buf = malloc(nbytes);
    OBCT_ASSERT(buf != NULL);
    for (int receiver = 0; receiver < g_nranks; receiver++) {
        if (g_rank != receiver) {
            fill_msg(buf, nbytes, seed, g_rank);
            for (int i = 0; i < ROUNDS; i++) {
                OBCT_OK(obc_send(buf, nbytes, OBC_UINT8, receiver, g_comm), g_comm);
            }
            continue;
        }
        int *got = calloc((size_t)g_nranks, sizeof(int));
        OBCT_ASSERT(got != NULL);
        for (int i = 0; i < ROUNDS * (g_nranks - 1); i++) {
            int source = -1;
            memset(buf, 0xee, nbytes);
            if (i % 2 == 0) {
                OBCT_OK(obc_recv_any(buf, nbytes, OBC_UINT8, &source, g_comm), g_comm);
            } else {
                obc_request_t *req = NULL;
                OBCT_OK(obc_irecv_any(buf, nbytes, OBC_UINT8, &source, g_comm, &req), g_comm);
                OBCT_OK(obc_wait(req), g_comm);
            }
            OBCT_ASSERT_MSG(source >= 0 && source < g_nranks && source != g_rank,
                            "source %d is not another rank", source);
            got[check_msg(buf, nbytes, seed, source)]++;
        }
        for (int r = 0; r < g_nranks; r++) {
            OBCT_EQ_INT(got[r], r == g_rank ? 0 : ROUNDS);
        }
        free(got);
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
    free(buf);
}

/* Rank 1 sends two messages to rank 0; rank 0 posts a receive from 1, then
 * one from any source, and completes them in the other order. */
static void order(void)
{
    if (g_nranks < 2 || g_rank > 1) {
        OBCT_OK(obc_barrier(g_comm), g_comm);
        return;
    }
    int first = 0, second = 0, source = -1;
    if (g_rank == 1) {
        int a = 1001, b = 1002;
        OBCT_OK(obc_send(&a, 1, OBC_INT32, 0, g_comm), g_comm);
        OBCT_OK(obc_send(&b, 1, OBC_INT32, 0, g_comm), g_comm);
    } else {
        obc_request_t *named = NULL, *any = NULL;
        OBCT_OK(obc_irecv(&first, 1, OBC_INT32, 1, g_comm, &named), g_comm);
        OBCT_OK(obc_irecv_any(&second, 1, OBC_INT32, &source, g_comm, &any), g_comm);
        OBCT_OK(obc_wait(any), g_comm);
        OBCT_OK(obc_wait(named), g_comm);
        OBCT_EQ_INT(first, 1001);
        OBCT_EQ_INT(second, 1002);
        OBCT_EQ_INT(source, 1);
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

static void self(void)
{
    double out = 3.5 + g_rank, in = 0;
    int source = -1;
    OBCT_OK(obc_send(&out, 1, OBC_FLOAT64, g_rank, g_comm), g_comm);
    OBCT_OK(obc_recv_any(&in, 1, OBC_FLOAT64, &source, g_comm), g_comm);
    OBCT_EQ_INT(source, g_rank);
    OBCT_ASSERT(in == out);
    /* and with OBC_ANY_SOURCE as obc_recv's peer (no source reported) */
    in = 0;
    OBCT_OK(obc_send(&out, 1, OBC_FLOAT64, g_rank, g_comm), g_comm);
    OBCT_OK(obc_recv(&in, 1, OBC_FLOAT64, OBC_ANY_SOURCE, g_comm), g_comm);
    OBCT_ASSERT(in == out);
}

/* Rank 0 receives from any source, 200 ms after the senders went on to
 * an allreduce (whose items may be in its streams by then), then joins it. */
static void ahead(void)
{
    double v = 1.0;
    if (g_rank == 0) {
        int *got = calloc((size_t)g_nranks, sizeof(int));
        OBCT_ASSERT(got != NULL);
        obct_sleep(0.2);
        for (int i = 0; i < 2 * (g_nranks - 1); i++) {
            int in = -1, source = -1;
            if (i % 2 == 0) {
                obc_request_t *req = NULL;
                OBCT_OK(obc_irecv_any(&in, 1, OBC_INT32, &source, g_comm, &req), g_comm);
                OBCT_OK(obc_wait(req), g_comm);
            } else {
                OBCT_OK(obc_recv_any(&in, 1, OBC_INT32, &source, g_comm), g_comm);
            }
            OBCT_ASSERT(source >= 1 && source < g_nranks);
            OBCT_EQ_INT(in, got[source]++ == 0 ? source : 100 + source); /* a pair's order */
        }
        free(got);
    } else {
        int out = g_rank, second = 100 + g_rank;
        OBCT_OK(obc_send(&out, 1, OBC_INT32, 0, g_comm), g_comm);
        OBCT_OK(obc_send(&second, 1, OBC_INT32, 0, g_comm), g_comm);
    }
    OBCT_OK(obc_allreduce(&v, &v, 1, OBC_FLOAT64, OBC_SUM, g_comm), g_comm);
    OBCT_ASSERT(v == (double)g_nranks);
}

static void bad_args(void)
{
    unsigned char b[8] = {0};
    obc_request_t *req = NULL;
    OBCT_RC(obc_recv_any(b, 1, OBC_UINT8, NULL, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_ASSERT(strstr(obc_comm_last_error(g_comm), "source is NULL") != NULL);
    OBCT_RC(obc_irecv_any(b, 1, OBC_UINT8, NULL, g_comm, &req), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_ASSERT(req == NULL);
    OBCT_RC(obc_send(b, 1, OBC_UINT8, OBC_ANY_SOURCE, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_RC(obc_isend(b, 1, OBC_UINT8, OBC_ANY_SOURCE, g_comm, &req), OBC_ERR_INVALID_ARG, g_comm);
    if (g_nranks == 1) {
        int source = -1;
        OBCT_RC(obc_recv_any(b, 1, OBC_UINT8, &source, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    }
}

int main(void)
{
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    bad_args();
    fan_in(8, 0xa11);
    fan_in(((size_t)1 << 20) + 13, 0xa12);
    order();
    self();
    ahead();
    bad_args(); /* the communicator is still usable after all of it */
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("p2p_any_source");
}
