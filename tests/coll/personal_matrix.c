/* SPDX-License-Identifier: MIT */
/*
 * personal_matrix.c - obc_gather, obc_scatter, obc_alltoall, obc_alltoallv
 * and obc_allgatherv (and their obc_i* forms) over one matrix: sizes 0, 1,
 * 7, about 1 MiB + odd and 16 MiB + odd in all (4 MiB + odd with
 * OBCT_QUICK), the dtype rotating from case to case (every dtype at every
 * size class), in place and not where the call allows it, roots first,
 * middle and last, and every completion: blocking, obc_wait, obc_test
 * polling, and the blocking call inside a group.
 *
 * The block rank s sends to rank d is the byte pattern (seed of the case
 * and d, s) of data.h, so a block from the wrong rank, meant for another
 * rank, shifted or stale never passes. The v-forms' counts are uneven
 * (some 0) and their displacements leave gaps and run in reverse rank
 * order; every receive buffer starts poisoned, and after each call the
 * gaps must still be poison, the guards intact, and sendbuf unchanged
 * (then scribbled before the receives are checked: no send may read it
 * after its call returned).
 */
/* clang-format off */
/* obct: nranks=1,2,3,4,8 asan=3 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 env=OBCT_QUICK=1 nranks=4 label=variant san */
/* obct: name=tcp3 env=OBC_HOST_ID=rank/3 env=OBCT_QUICK=1 nranks=5 label=variant */
/* obct: name=chunk5003 env=OBC_CHUNK_BYTES=5003 env=OBC_PEERS_IN_FLIGHT=5 env=OBCT_QUICK=1 nranks=3 label=variant */
/* obct: name=channels env=OBC_ALGO=alltoall=pairwise,alltoallv=pairwise,allgatherv=pairwise,gather=direct,scatter=direct env=OBCT_QUICK=1 nranks=4 label=variant */
/* obct: name=posted env=OBC_ALGO=allgatherv=posted,alltoallv=posted env=OBCT_QUICK=1 nranks=2,5 label=variant san */
/* obct: name=cma1 env=OBC_GATHER_CMA_MIN_BYTES=1 env=OBC_ALLTOALL_CMA_MIN_BYTES=1 env=OBCT_QUICK=1 nranks=3 label=variant san */
/* clang-format on */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bcase.h"
#include "data.h"
#include "obct.h"
#include "rcall.h"

enum { GATHER, SCATTER, ALLTOALL, ALLTOALLV, ALLGATHERV, NCOLLS };
static const char *const coll_names[NCOLLS] = {"gather", "scatter", "alltoall", "alltoallv",
                                               "allgatherv"};
enum { HOW_SYNC, HOW_WAIT, HOW_TEST, HOW_GROUP, NHOWS };

static int g_rank, g_nranks;
static obc_comm_t *g_comm;
static unsigned long g_case;

/* Elements rank s sends to rank d in a v-form of base count c: uneven,
 * some zero, the same on every rank. */
static size_t vcount(size_t c, int s, int d)
{
    unsigned k = (unsigned)(s * 7 + d * 3) % 5;
    return k == 0 ? 0 : c / 2 + c * k / 3 + (size_t)k;
}

static uint64_t block_seed(uint64_t seed, int d)
{
    return seed * 131 + (uint64_t)d;
}

/* Block layout of one buffer: count and element offset of every rank's
 * block. Reverse order with 3-element gaps when gappy. */
struct layout {
    size_t counts[64], displs[64], total;
};

static void lay(struct layout *l, const size_t *counts, bool gappy)
{
    size_t at = 0;
    memset(l, 0, sizeof(*l));
    for (int i = 0; i < g_nranks; i++) {
        int r = gappy ? g_nranks - 1 - i : i;
        l->counts[r] = counts[r];
        l->displs[r] = at;
        at += counts[r] + (gappy ? 3 : 0);
    }
    l->total = at;
}

struct bufs {
    struct obct_buf send, recv;
    struct layout sl, rl;
};

static obc_result_t issue(int coll, const void *s, void *r, size_t count, obc_dtype_t dt, int root,
                          const struct bufs *b, obc_request_t **req)
{
    switch (coll) {
    case GATHER:
        return req ? obc_igather(s, r, count, dt, root, g_comm, req)
                   : obc_gather(s, r, count, dt, root, g_comm);
    case SCATTER:
        return req ? obc_iscatter(s, r, count, dt, root, g_comm, req)
                   : obc_scatter(s, r, count, dt, root, g_comm);
    case ALLTOALL:
        return req ? obc_ialltoall(s, r, count, dt, g_comm, req)
                   : obc_alltoall(s, r, count, dt, g_comm);
    case ALLTOALLV:
        return req ? obc_ialltoallv(s, b->sl.counts, b->sl.displs, r, b->rl.counts, b->rl.displs,
                                    dt, g_comm, req)
                   : obc_alltoallv(s, b->sl.counts, b->sl.displs, r, b->rl.counts, b->rl.displs, dt,
                                   g_comm);
    default:
        return req
            ? obc_iallgatherv(s, b->rl.counts[g_rank], r, b->rl.counts, b->rl.displs, dt, g_comm,
                              req)
            : obc_allgatherv(s, b->rl.counts[g_rank], r, b->rl.counts, b->rl.displs, dt, g_comm);
    }
}

static obc_result_t complete(int coll, const void *s, void *r, size_t count, obc_dtype_t dt,
                             int root, struct bufs *b, int how)
{
    obc_request_t *req = NULL;
    obc_result_t rc;
    int done = 0;
    switch (how) {
    case HOW_SYNC:
        return issue(coll, s, r, count, dt, root, b, NULL);
    case HOW_GROUP:
        OBCT_OK(obc_group_start(), g_comm);
        rc = issue(coll, s, r, count, dt, root, b, NULL);
        obc_result_t end = obc_group_end();
        return rc != OBC_SUCCESS ? rc : end;
    case HOW_WAIT:
        rc = issue(coll, s, r, count, dt, root, b, &req);
        return rc != OBC_SUCCESS ? rc : obc_wait(req);
    default:
        rc = issue(coll, s, r, count, dt, root, b, &req);
        while (rc == OBC_SUCCESS || rc == OBC_IN_PROGRESS) {
            rc = obc_test(req, &done);
            if (done) {
                return rc;
            }
        }
        return rc;
    }
}

/* Fill the block layout `l` of buffer p: block of rank i from `from(i)`. */
static void fill_blocks(unsigned char *p, const struct layout *l, size_t es, uint64_t seed,
                        bool by_dest, int fixed)
{
    for (int i = 0; i < g_nranks; i++) {
        int s = by_dest ? g_rank : i, d = by_dest ? i : fixed;
        obct_fill(p + l->displs[i] * es, l->counts[i] * es, block_seed(seed, d), s);
    }
}

/* Check p's blocks: block i holds what rank i sent to rank d (from_me:
 * what this rank sent to rank i); the 3-element gaps are still poison. */
static void verify_blocks(const char *what, const unsigned char *p, const struct layout *l,
                          size_t es, uint64_t seed, bool from_me, int d, bool gappy)
{
    for (int i = 0; i < g_nranks; i++) {
        int src = from_me ? g_rank : i, dst = from_me ? i : d;
        obct_verify(what, p + l->displs[i] * es, l->counts[i] * es, block_seed(seed, dst), src);
        if (gappy) {
            obct_verify_poison(what, p + (l->displs[i] + l->counts[i]) * es, 3 * es);
        }
    }
}

static void run_case(int coll, size_t count, obc_dtype_t dt, bool in_place, int root, int how)
{
    struct bufs b;
    size_t es = obc_dtype_size(dt), counts[64] = {0};
    uint64_t seed = 0x70657273ull + g_case++;
    int n = g_nranks, me = g_rank;
    bool v = coll == ALLTOALLV || coll == ALLGATHERV, is_root = me == root;
    for (int i = 0; i < n; i++) {
        counts[i] = coll == ALLTOALLV ? vcount(count, me, i)
            : coll == ALLGATHERV      ? vcount(count, i, 0)
                                      : count;
    }
    lay(&b.sl, counts, v);
    for (int i = 0; i < n; i++) {
        counts[i] = coll == ALLTOALLV ? vcount(count, i, me) : counts[i];
    }
    lay(&b.rl, counts, v);
    if (coll == GATHER || coll == ALLGATHERV) { /* one block out */
        struct layout one = {.total = coll == GATHER ? count : b.rl.counts[me]};
        b.sl = one;
    }
    if (coll == SCATTER) {
        struct layout one = {.total = count};
        b.rl = one;
    }
    obct_buf_alloc(&b.send, b.sl.total * es, g_case % 7);
    obct_buf_alloc(&b.recv, b.rl.total * es, g_case % 5);
    obct_poison(b.recv.data, b.recv.nbytes);
    /* What every rank sends: alltoall(v), scatter: block i meant for rank i;
     * gather, allgatherv: the rank's one block (to every destination). */
    if (coll == ALLTOALL || coll == ALLTOALLV || coll == SCATTER) {
        fill_blocks(b.send.data, &b.sl, es, seed, true, 0);
    } else {
        obct_fill(b.send.data, b.send.nbytes, block_seed(seed, 0), me);
    }
    const void *s = b.send.data;
    void *r = b.recv.data;
    if (in_place) {
        switch (coll) {
        case GATHER: /* the root's block already at its place in recvbuf */
            obct_fill(b.recv.data + (size_t)me * count * es, count * es, block_seed(seed, 0), me);
            s = r;
            break;
        case SCATTER: /* the root keeps its block in sendbuf */
            r = (void *)s;
            break;
        case ALLTOALL:
            memcpy(b.recv.data, b.send.data, b.send.nbytes);
            s = r;
            break;
        default: /* allgatherv: own block at displs[rank] */
            obct_fill(b.recv.data + b.rl.displs[me] * es, b.rl.counts[me] * es, block_seed(seed, 0),
                      me);
            s = r;
            break;
        }
    }
    obc_result_t rc = complete(coll, s, r, count, dt, root, &b, how);
    if (rc != OBC_SUCCESS) {
        OBCT_FAIL("%s count %zu %s in_place %d root %d how %d: %s (%s)", coll_names[coll], count,
                  obct_rc_name(rc), in_place, root, how, obc_comm_last_error(g_comm), "");
    }
    char what[128];
    snprintf(what, sizeof(what), "%s count %zu dtype %d in_place %d root %d how %d",
             coll_names[coll], count, (int)dt, in_place, root, how);
    /* sendbuf unchanged (a scatter root's in place too); then scribbled at
     * once, before any rank checks what it received: a send that still
     * read the buffer after its call returned (across hosts, a slot sent
     * by reference) would deliver the scribble. */
    if (coll == ALLTOALLV || (coll == SCATTER && is_root) || (coll == ALLTOALL && !in_place)) {
        verify_blocks(what, b.send.data, &b.sl, es, seed, true, 0, false);
    } else if ((coll == GATHER || coll == ALLGATHERV) && !in_place) {
        obct_verify(what, b.send.data, b.send.nbytes, block_seed(seed, 0), me);
    }
    if (!in_place || coll == SCATTER) { /* (in place, the others' sendbuf is also recvbuf) */
        obct_poison(b.send.data, b.send.nbytes);
    }
    switch (coll) {
    case GATHER:
        if (is_root) {
            verify_blocks(what, b.recv.data, &b.rl, es, seed, false, 0, false);
        }
        break;
    case SCATTER:
        if (!(in_place && is_root)) {
            obct_verify(what, b.recv.data, count * es, block_seed(seed, me), root);
        }
        break;
    case ALLTOALL:
    case ALLTOALLV:
        verify_blocks(what, b.recv.data, &b.rl, es, seed, false, me, v);
        break;
    default:
        verify_blocks(what, b.recv.data, &b.rl, es, seed, false, 0, v);
        break;
    }
    obct_buf_check(what, &b.send);
    obct_buf_check(what, &b.recv);
    obct_buf_free(&b.send);
    obct_buf_free(&b.recv);
}

static bool can_in_place(int coll, int root)
{
    return coll == ALLTOALL || coll == ALLGATHERV ||
        ((coll == GATHER || coll == SCATTER) && g_rank == root);
}

int main(void)
{
    double t0 = obct_now();
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    size_t big = (obct_quick() ? (size_t)4 << 20 : (size_t)16 << 20) + 4099;
    size_t bytes[] = {0, 1, 7, ((size_t)1 << 20) + 4099, big};
    int roots[3] = {0, g_nranks / 2, g_nranks - 1};
    for (int coll = 0; coll < NCOLLS; coll++) {
        double t = obct_now();
        unsigned long before = g_case;
        for (int cls = 0; cls < 5; cls++) {
            bool large = cls >= 3;
            for (int variant = 0; variant < (large ? 2 : 3 * NHOWS * 2); variant++) {
                obc_dtype_t dt = (obc_dtype_t)(g_case % 10);
                size_t es = obc_dtype_size(dt);
                /* big sizes are the whole buffer: per rank a share of it */
                size_t count = cls < 3 ? bytes[cls] : bytes[cls] / es / (size_t)g_nranks | 1;
                int root = roots[variant % 3];
                int how = large ? (variant ? HOW_WAIT : HOW_SYNC) : (variant / 3) % NHOWS;
                bool ip = (large ? variant == 1 : variant >= 3 * NHOWS) && can_in_place(coll, root);
                /* in place is per rank (the root's): every rank runs the same case */
                run_case(coll, count, dt, ip, root, how);
            }
        }
        OBCT_OK(obc_barrier(g_comm), g_comm);
        if (g_rank == 0) {
            printf("personal_matrix: nranks=%d %s cases=%lu time=%.3f s\n", g_nranks,
                   coll_names[coll], g_case - before, obct_now() - t);
            fflush(stdout);
        }
    }
    if (g_rank == 0) {
        printf("personal_matrix: nranks=%d total cases=%lu time=%.3f s\n", g_nranks, g_case,
               obct_now() - t0);
    }
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("personal_matrix");
}
