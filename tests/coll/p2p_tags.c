/* SPDX-License-Identifier: MIT */
/*
 * p2p_tags.c - tagged point-to-point (obc_send_tag, obc_recv_tag,
 * obc_isend_tag, obc_irecv_tag); the mismatches are in
 * tests/fault/p2p_fault.c:
 *   in_order   every rank sends each other rank three messages of tags 1, 2
 *              and 3 (blocking and not, 8 B and 1 MiB + 13), received with the
 *              same tags; data, counts and the reported source all agree
 *   untagged   obc_send meets obc_recv_tag with tag 0, and obc_send_tag with
 *              tag 0 meets obc_recv: the untagged calls are tag 0
 *   by_tag     the last rank receives from any source with tag 7 while rank
 *              0's message of tag 5 already waits in its stream: the receive
 *              takes rank 1's message of tag 7, and a later receive from rank 0
 *              with tag 5 still gets rank 0's
 *   self       sends to self of tags 3 then 4; a receive from any source with
 *              tag 4 does not take the message of tag 3 (self's next), a
 *              receive from self with tag 3 does, then the first gets tag 4
 * and bad arguments: a negative tag on each call is OBC_ERR_INVALID_ARG and
 * leaves the communicator usable.
 */
/* clang-format off */
/* obct: nranks=1,2,4 timeout=120 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 label=variant san */
/* clang-format on */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "obct.h"

static int g_rank, g_nranks;
static obc_comm_t *g_comm;

static uint64_t seed_of(int from, int to, int tag)
{
    return 0x7a90000ull + (uint64_t)tag * 4096 + (uint64_t)from * 64 + (uint64_t)to;
}

/* Each rank sends tags 1..3 to every other rank (in a group, so that the
 * exchange cannot deadlock), then receives tags 1..3 from every other rank. */
static void in_order(size_t nbytes)
{
    enum { NTAGS = 3 };
    size_t n = (size_t)g_nranks * NTAGS;
    unsigned char **out = calloc(n, sizeof(*out)), **in = calloc(n, sizeof(*in));
    obc_request_t **reqs = calloc(2 * n, sizeof(*reqs));
    int *source = calloc(n, sizeof(int));
    OBCT_ASSERT(out != NULL && in != NULL && reqs != NULL && source != NULL);
    size_t nreq = 0;
    for (int peer = 0; peer < g_nranks; peer++) {
        for (int t = 0; t < NTAGS && peer != g_rank; t++) {
            size_t k = (size_t)peer * NTAGS + (size_t)t;
            out[k] = malloc(nbytes);
            in[k] = malloc(nbytes);
            OBCT_ASSERT(out[k] != NULL && in[k] != NULL);
            obct_fill(out[k], nbytes, seed_of(g_rank, peer, t + 1), g_rank);
            obct_poison(in[k], nbytes);
            source[k] = -1;
            OBCT_OK(obc_isend_tag(out[k], nbytes, OBC_UINT8, peer, t + 1, g_comm, &reqs[nreq++]),
                    g_comm);
            OBCT_OK(obc_irecv_tag(in[k], nbytes, OBC_UINT8, peer, t + 1, &source[k], g_comm,
                                  &reqs[nreq++]),
                    g_comm);
        }
    }
    for (size_t i = 0; i < nreq; i++) {
        OBCT_OK(obc_wait(reqs[i]), g_comm);
    }
    for (int peer = 0; peer < g_nranks; peer++) {
        for (int t = 0; t < NTAGS && peer != g_rank; t++) {
            size_t k = (size_t)peer * NTAGS + (size_t)t;
            OBCT_EQ_INT(source[k], peer);
            obct_verify("tagged message", in[k], nbytes, seed_of(peer, g_rank, t + 1), peer);
            free(out[k]);
            free(in[k]);
        }
    }
    free(out);
    free(in);
    free(reqs);
    free(source);
    /* blocking, between neighbours: even ranks send first */
    if (g_nranks > 1 && g_nranks % 2 == 0) {
        int peer = g_rank ^ 1;
        unsigned char *buf = malloc(nbytes);
        OBCT_ASSERT(buf != NULL);
        for (int step = 0; step < 2; step++) {
            int src = -1;
            if ((g_rank % 2 == 0) == (step == 0)) {
                obct_fill(buf, nbytes, seed_of(g_rank, peer, 9), g_rank);
                OBCT_OK(obc_send_tag(buf, nbytes, OBC_UINT8, peer, 9, g_comm), g_comm);
            } else {
                obct_poison(buf, nbytes);
                OBCT_OK(obc_recv_tag(buf, nbytes, OBC_UINT8, peer, 9, &src, g_comm), g_comm);
                OBCT_EQ_INT(src, peer);
                obct_verify("blocking tagged message", buf, nbytes, seed_of(peer, g_rank, 9), peer);
            }
        }
        free(buf);
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

static void untagged(void)
{
    if (g_nranks < 2 || g_rank > 1) {
        OBCT_OK(obc_barrier(g_comm), g_comm);
        return;
    }
    int a = 0, b = 0;
    if (g_rank == 0) {
        a = 41;
        b = 42;
        OBCT_OK(obc_send(&a, 1, OBC_INT32, 1, g_comm), g_comm);
        OBCT_OK(obc_send_tag(&b, 1, OBC_INT32, 1, 0, g_comm), g_comm);
    } else {
        OBCT_OK(obc_recv_tag(&a, 1, OBC_INT32, 0, 0, NULL, g_comm), g_comm);
        OBCT_OK(obc_recv(&b, 1, OBC_INT32, 0, g_comm), g_comm);
        OBCT_EQ_INT(a, 41);
        OBCT_EQ_INT(b, 42);
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

/* Rank 0 sends tag 5 to the last rank at once; rank 1 sends tag 7 100 ms
 * later. The last rank receives from any source with tag 7 first. */
static void by_tag(void)
{
    int last = g_nranks - 1;
    if (g_nranks < 3 || (g_rank > 1 && g_rank != last)) {
        OBCT_OK(obc_barrier(g_comm), g_comm);
        return;
    }
    if (g_rank == 0 || g_rank == 1) {
        int v = g_rank == 0 ? 500 : 700;
        if (g_rank == 1) {
            obct_sleep(0.1);
        }
        OBCT_OK(obc_send_tag(&v, 1, OBC_INT32, last, g_rank == 0 ? 5 : 7, g_comm), g_comm);
    } else {
        int seven = 0, five = 0, src7 = -1, src5 = -1;
        obc_request_t *any = NULL, *named = NULL;
        OBCT_OK(obc_irecv_tag(&seven, 1, OBC_INT32, OBC_ANY_SOURCE, 7, &src7, g_comm, &any),
                g_comm);
        OBCT_OK(obc_irecv_tag(&five, 1, OBC_INT32, 0, 5, &src5, g_comm, &named), g_comm);
        OBCT_OK(obc_wait(named), g_comm);
        OBCT_OK(obc_wait(any), g_comm);
        OBCT_EQ_INT(src7, 1);
        OBCT_EQ_INT(seven, 700);
        OBCT_EQ_INT(src5, 0);
        OBCT_EQ_INT(five, 500);
    }
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

static void self(void)
{
    int three = 300 + g_rank, four = 400 + g_rank, got3 = 0, got4 = 0, src = -1;
    obc_request_t *s3 = NULL, *s4 = NULL, *any = NULL, *named = NULL;
    OBCT_OK(obc_isend_tag(&three, 1, OBC_INT32, g_rank, 3, g_comm, &s3), g_comm);
    OBCT_OK(obc_isend_tag(&four, 1, OBC_INT32, g_rank, 4, g_comm, &s4), g_comm);
    OBCT_OK(obc_irecv_tag(&got4, 1, OBC_INT32, OBC_ANY_SOURCE, 4, &src, g_comm, &any), g_comm);
    OBCT_OK(obc_irecv_tag(&got3, 1, OBC_INT32, g_rank, 3, NULL, g_comm, &named), g_comm);
    OBCT_OK(obc_wait(s3), g_comm);
    OBCT_OK(obc_wait(s4), g_comm);
    OBCT_OK(obc_wait(named), g_comm);
    OBCT_OK(obc_wait(any), g_comm);
    OBCT_EQ_INT(got3, three);
    OBCT_EQ_INT(got4, four);
    OBCT_EQ_INT(src, g_rank);
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

static void bad_args(void)
{
    int b = 0;
    obc_request_t *req = NULL;
    int peer = (g_rank + 1) % g_nranks;
    OBCT_RC(obc_send_tag(&b, 1, OBC_INT32, peer, -1, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_ASSERT(strstr(obc_comm_last_error(g_comm), "tag -1 is negative") != NULL);
    OBCT_RC(obc_recv_tag(&b, 1, OBC_INT32, peer, -3, NULL, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_RC(obc_isend_tag(&b, 1, OBC_INT32, peer, -1, g_comm, &req), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_RC(obc_irecv_tag(&b, 1, OBC_INT32, OBC_ANY_SOURCE, -1, NULL, g_comm, &req),
            OBC_ERR_INVALID_ARG, g_comm);
    OBCT_ASSERT(req == NULL);
    OBCT_RC(obc_send_tag(&b, 1, OBC_INT32, OBC_ANY_SOURCE, 1, g_comm), OBC_ERR_INVALID_ARG, g_comm);
    OBCT_OK(obc_barrier(g_comm), g_comm);
}

int main(void)
{
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    bad_args();
    in_order(8);
    in_order(((size_t)1 << 20) + 13);
    untagged();
    by_tag();
    self();
    bad_args(); /* the communicator is still usable after all of it */
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("p2p_tags");
}
