/* SPDX-License-Identifier: MIT */
/*
 * cma_interleave.c - the single-copy algorithms back to back and queued
 * together: broadcast (cma), gather and scatter (cma), alltoall (cma), with
 * the root moving every round. They share each rank's mailbox and piece
 * counts and the host's CMA counter; a gather's or scatter's ranks return
 * before its root, so a rank may start the next call while the root still
 * waits for the last one. Each round starts with small alltoallvs, whose
 * blocks are all deposited in the posting ranks' slots (posted.c, 3 ranks
 * or more): those ranks return before their readers have counted, so the
 * next call to count pieces must wait for those counts first. Every round posts them non-blocking,
 * then waits for all (so several are queued), and every byte is checked: a count that drifted
 * between two algorithms would hang (the test's timeout) or leave a block uncopied (a wrong byte).
 */
/* obct: nranks=2,3,4,8 timeout=120 san=3 */
#include <stdlib.h>
#include <string.h>

#include "obct.h"

#define ROUNDS 12
#define SMALL 200u /* alltoallv bytes per pair: deposited, below every pull limit */
#define BLOCK \
    (96u << 10) /* bytes: above OBC_GATHER_CMA_MIN_BYTES and OBC_ALLTOALL_CMA_MIN_BYTES \
                 */

/* The byte of rank src's block for rank dst at offset i, round r. */
static unsigned char pattern(int r, int src, int dst, size_t i)
{
    return (unsigned char)(r * 131 + src * 29 + dst * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *p, int r, int src, int dst)
{
    for (size_t i = 0; i < BLOCK; i++) {
        p[i] = pattern(r, src, dst, i);
    }
}

static void expect(const unsigned char *p, int r, int src, int dst, const char *what)
{
    for (size_t i = 0; i < BLOCK; i++) {
        if (p[i] != pattern(r, src, dst, i)) {
            OBCT_FAIL("round %d: %s: block from rank %d to rank %d wrong at byte %zu", r, what, src,
                      dst, i);
            return;
        }
    }
}

/* The small alltoallv's block from every rank, then poisoned for the next call. */
static void expect_small(unsigned char *vr, int r, int me, int n, const char *what)
{
    for (int s = 0; s < n; s++) {
        for (size_t i = 0; i < SMALL; i++) {
            if (vr[(size_t)s * SMALL + i] != pattern(r + 2, s, me, i)) {
                OBCT_FAIL("round %d: %s: block from rank %d wrong at byte %zu", r, what, s, i);
                break;
            }
        }
    }
    memset(vr, 0xa5, (size_t)n * SMALL);
}

int main(void)
{
    setenv("OBC_ALGO", "broadcast=cma", 1); /* single copy at every size and rank count */
    obc_comm_t *comm = obct_comm_from_env();
    int me = obc_comm_rank(comm), n = obc_comm_size(comm);
    size_t all = (size_t)n * BLOCK;
    unsigned char *bc = malloc(BLOCK), *gs = malloc(BLOCK), *gr = malloc(all);
    unsigned char *ss = malloc(all), *sr = malloc(BLOCK), *as = malloc(all), *ar = malloc(all);
    unsigned char *vs = malloc((size_t)n * SMALL), *vr = malloc((size_t)n * SMALL);
    size_t *counts = malloc(sizeof(size_t) * (size_t)n),
           *displs = malloc(sizeof(size_t) * (size_t)n);
    OBCT_ASSERT(bc && gs && gr && ss && sr && as && ar && vs && vr && counts && displs);
    for (int d = 0; d < n; d++) {
        counts[d] = SMALL;
        displs[d] = (size_t)d * SMALL;
    }
    for (int r = 0; r < ROUNDS; r++) {
        int root = r % n;
        obc_request_t *req[5];
        fill(bc, r, root, me); /* only the root's counts */
        fill(gs, r, me, root);
        memset(gr, 0xa5, all);
        for (int d = 0; d < n; d++) {
            fill(ss + (size_t)d * BLOCK, r, me, d);
            fill(as + (size_t)d * BLOCK, r + 1, me, d);
        }
        memset(sr, 0xa5, BLOCK);
        memset(ar, 0xa5, all);
        for (int d = 0; d < n; d++) {
            for (size_t i = 0; i < SMALL; i++) {
                vs[displs[d] + i] = pattern(r + 2, me, d, i);
            }
        }
        memset(vr, 0xa5, (size_t)n * SMALL);
        OBCT_OK(obc_alltoallv(vs, counts, displs, vr, counts, displs, OBC_UINT8, comm), comm);
        expect_small(vr, r, me, n, "alltoallv");
        OBCT_OK(obc_ialltoallv(vs, counts, displs, vr, counts, displs, OBC_UINT8, comm, &req[4]),
                comm);
        OBCT_OK(obc_ibroadcast(bc, bc, BLOCK, OBC_UINT8, root, comm, &req[0]), comm);
        OBCT_OK(obc_igather(gs, gr, BLOCK, OBC_UINT8, root, comm, &req[1]), comm);
        OBCT_OK(obc_iscatter(ss, sr, BLOCK, OBC_UINT8, (root + 1) % n, comm, &req[2]), comm);
        OBCT_OK(obc_ialltoall(as, ar, BLOCK, OBC_UINT8, comm, &req[3]), comm);
        for (int i = 0; i < 5; i++) {
            OBCT_OK(obc_wait(req[i]), comm);
        }
        expect_small(vr, r, me, n, "queued alltoallv");
        expect(bc, r, root, root, "broadcast");
        if (me == root) {
            for (int s = 0; s < n; s++) {
                expect(gr + (size_t)s * BLOCK, r, s, root, "gather");
            }
        }
        expect(sr, r, (root + 1) % n, me, "scatter");
        for (int s = 0; s < n; s++) {
            expect(ar + (size_t)s * BLOCK, r + 1, s, me, "alltoall");
        }
        if (r % 3 == 2) { /* and blocking, back to back, every rank its own pace */
            OBCT_OK(obc_gather(gs, gr, BLOCK, OBC_UINT8, root, comm), comm);
            OBCT_OK(obc_broadcast(bc, bc, BLOCK, OBC_UINT8, root, comm), comm);
            OBCT_OK(obc_scatter(ss, sr, BLOCK, OBC_UINT8, root, comm), comm);
            expect(sr, r, root, me, "blocking scatter");
            if (me == root) {
                expect(gr + (size_t)((me + 1) % n) * BLOCK, r, (me + 1) % n, root,
                       "blocking gather");
            }
        }
    }
    free(bc);
    free(gs);
    free(gr);
    free(ss);
    free(sr);
    free(as);
    free(ar);
    free(vs);
    free(vr);
    free(counts);
    free(displs);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_finish("cma_interleave");
}
