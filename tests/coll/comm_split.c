/* SPDX-License-Identifier: MIT */
/*
 * comm_split.c - obc_comm_split and obc_comm_dup: every pattern (parity,
 * blocks of 2 and 3 with equal keys, reversed keys, negative keys, all
 * undefined but one, dup) is split from the world and checked from inside
 * the children: size and rank as (key, parent rank) order says, an
 * allgather of world ranks that must list exactly the members in that
 * order, an allreduce and a broadcast whose values only those members
 * produce, barriers; between them the parent runs its own collectives, and
 * once a child broadcast and a parent allreduce are in flight together.
 * Each child is split again (split of a split). A child outlives the
 * communicator it came from, and under fake hosts (OBC_HOST_ID=rank/2, or
 * OBC_HOST_SPLIT=2 on one machine) a child's hosts are its parent's: a child whose members sit on
 * several parent hosts chooses the algorithm of several hosts. Bad arguments are INVALID_ARG on
 * every rank, and the parent stays usable.
 */
/* obct: nranks=1,2,3,4,5,8 timeout=120 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4,8 timeout=120 san=4 */
/* obct: name=hsplit env=OBC_HOST_SPLIT=2 nranks=4 timeout=120 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obct.h"

#define MAXR 64
#define BCAST_COUNT 4099

static int g_rank;
static int g_nranks;
/* OBC_HOST_ID=rank/2 or OBC_HOST_SPLIT=2: world rank r is on host r / 2 */
static bool g_fake_hosts;
static obc_coll_t g_host_coll; /* the collective whose choice shows the host count */

typedef void (*pattern_fn)(int r, int n, int *color, int *key);

static void parity(int r, int n, int *color, int *key)
{
    (void)n;
    *color = r % 2;
    *key = r;
}
static void blocks2(int r, int n, int *color, int *key)
{
    (void)n;
    *color = r / 2;
    *key = 0; /* ties: parent order */
}
static void blocks3(int r, int n, int *color, int *key)
{
    (void)n;
    *color = 10 + r / 3;
    *key = 7;
}
static void reversed(int r, int n, int *color, int *key)
{
    *color = 0;
    *key = n - r;
}
static void parity_negative(int r, int n, int *color, int *key)
{
    (void)n;
    *color = r % 2;
    *key = -r; /* reversed within each parity */
}
static void only_last(int r, int n, int *color, int *key)
{
    *color = r == n - 1 ? 5 : OBC_UNDEFINED;
    *key = 0;
}

static const struct {
    const char *name;
    pattern_fn fn;
} patterns[] = {
    {"parity", parity},     {"blocks of 2", blocks2},           {"blocks of 3", blocks3},
    {"reversed", reversed}, {"negative keys", parity_negative}, {"only the last", only_last},
};
#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

/* The members of this rank's color, in child order, as world ranks (from
 * ids, the world rank of each rank of the comm being split); -1 if
 * undefined. Also the child rank this rank must get. */
static int expect_members(pattern_fn fn, int n, int me, const int *ids, int *out, int *crank)
{
    int color[MAXR] = {0}, key[MAXR] = {0}, order[MAXR] = {0}, m = 0;
    for (int r = 0; r < n; r++) {
        fn(r, n, &color[r], &key[r]);
    }
    *crank = -1;
    if (color[me] == OBC_UNDEFINED) {
        return -1;
    }
    for (int r = 0; r < n; r++) {
        if (color[r] != color[me]) {
            continue;
        }
        int i = m++;
        while (i > 0 && key[order[i - 1]] > key[r]) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = r;
    }
    for (int i = 0; i < m; i++) {
        out[i] = ids[order[i]];
        *crank = order[i] == me ? i : *crank;
    }
    return m;
}

/* One parent collective, to interleave with the child's (NULL: not every
 * parent rank has a child, so the parent cannot join in). */
static void parent_step(obc_comm_t *parent, int psize)
{
    int64_t one = 1;
    if (parent == NULL) {
        return;
    }
    OBCT_OK(obc_allreduce(&one, &one, 1, OBC_INT64, OBC_SUM, parent), parent);
    OBCT_EQ_INT(one, psize);
}

/* Collectives inside child whose results prove membership and order. */
static void verify_child(const char *what, obc_comm_t *child, const int *ids, int n, int crank,
                         obc_comm_t *parent, int psize)
{
    int32_t me = ids[crank], got[MAXR];
    OBCT_EQ_INT(obc_comm_size(child), n);
    OBCT_EQ_INT(obc_comm_rank(child), crank);
    OBCT_OK(obc_allgather(&me, got, 1, OBC_INT32, child), child);
    for (int i = 0; i < n; i++) {
        if (got[i] != ids[i]) {
            OBCT_FAIL("%s: child rank %d is world rank %d, expected %d", what, i, got[i], ids[i]);
        }
    }
    parent_step(parent, psize);
    int64_t sum = me + 1, want = 0;
    for (int i = 0; i < n; i++) {
        want += ids[i] + 1;
    }
    OBCT_OK(obc_allreduce(&sum, &sum, 1, OBC_INT64, OBC_SUM, child), child);
    OBCT_EQ_INT(sum, want);
    /* The last child rank broadcasts a vector only it can make, while the
     * parent runs an allreduce: both communicators have an op in flight. */
    int32_t *v = malloc(sizeof(int32_t) * BCAST_COUNT);
    int64_t one = 1;
    obc_request_t *rb = NULL, *ra = NULL;
    OBCT_ASSERT(v != NULL);
    for (int i = 0; i < BCAST_COUNT; i++) {
        v[i] = crank == n - 1 ? me * 100003 + i : -1;
    }
    OBCT_OK(obc_ibroadcast(v, v, BCAST_COUNT, OBC_INT32, n - 1, child, &rb), child);
    if (parent != NULL) {
        OBCT_OK(obc_iallreduce(&one, &one, 1, OBC_INT64, OBC_SUM, parent, &ra), parent);
    }
    if (g_rank % 2 == 0 && parent != NULL) {
        OBCT_OK(obc_wait(rb), child);
        OBCT_OK(obc_wait(ra), parent);
    } else if (parent != NULL) {
        OBCT_OK(obc_wait(ra), parent);
        OBCT_OK(obc_wait(rb), child);
        OBCT_EQ_INT(one, psize);
    } else {
        OBCT_OK(obc_wait(rb), child);
    }
    for (int i = 0; i < BCAST_COUNT; i++) {
        if (v[i] != ids[n - 1] * 100003 + i) {
            OBCT_FAIL("%s: broadcast element %d is %d", what, i, v[i]);
        }
    }
    free(v);
    OBCT_OK(obc_barrier(child), child);
}

/* Fake hosts: does the child's choice for 1 MiB (g_host_coll) say "several
 * hosts" exactly when its members sit on several of the parent's hosts? A
 * host count recomputed from child ranks would get {1,3} (world hosts 0
 * and 1) wrong. */
static void check_hosts(const char *what, obc_comm_t *child, const int *ids, int n,
                        const char *multi_algo)
{
    char name[64];
    bool several = false;
    for (int i = 1; i < n; i++) {
        several = several || ids[i] / 2 != ids[0] / 2;
    }
    OBCT_OK(obc_comm_algorithm(child, g_host_coll, 1 << 20, name, sizeof(name)), child);
    if (several != (strcmp(name, multi_algo) == 0)) {
        OBCT_FAIL("%s: members span %s host, but the child chose %s (several hosts: %s)", what,
                  several ? "more than one" : "one", name, multi_algo);
    }
}

/* Split comm (whose ranks are world ranks ids[]) by pattern p; check the
 * child; split it again by every pattern when depth allows. */
static void split_and_check(obc_comm_t *comm, const int *ids, int n, size_t p, int depth,
                            const char *multi_algo)
{
    int members[MAXR], crank;
    char what[128];
    obc_comm_t *child = NULL;
    int me = obc_comm_rank(comm);
    int m = expect_members(patterns[p].fn, n, me, ids, members, &crank);
    int color, key;
    patterns[p].fn(me, n, &color, &key);
    snprintf(what, sizeof(what), "%s (depth %d)", patterns[p].name, depth);
    OBCT_OK(obc_comm_split(comm, color, key, &child), comm);
    if (m < 0) {
        OBCT_ASSERT_MSG(child == NULL, "%s: undefined color gave a communicator", what);
        return;
    }
    OBCT_ASSERT_MSG(child != NULL, "%s: no communicator", what);
    bool all_defined = true;
    for (int r = 0; r < n; r++) {
        int cr, kr;
        patterns[p].fn(r, n, &cr, &kr);
        all_defined = all_defined && cr != OBC_UNDEFINED;
    }
    verify_child(what, child, members, m, crank, all_defined ? comm : NULL, n);
    if (g_fake_hosts) {
        check_hosts(what, child, members, m, multi_algo);
    }
    if (depth == 0) {
        for (size_t q = 0; q < NPATTERNS; q += 2) {
            split_and_check(child, members, m, q, 1, multi_algo);
        }
    }
    OBCT_OK(obc_comm_destroy(child), NULL);
}

/* dup (behind a pending parent op), and a child that outlives the
 * communicator it was split from. */
static void dup_and_outlive(obc_comm_t *world, const int *ids)
{
    obc_comm_t *d = NULL, *c = NULL;
    int members[MAXR], crank;
    /* A dup issued behind a pending parent op runs after it, on every rank. */
    int64_t one = 1;
    obc_request_t *req = NULL;
    OBCT_OK(obc_iallreduce(&one, &one, 1, OBC_INT64, OBC_SUM, world, &req), world);
    OBCT_OK(obc_comm_dup(world, &d), world);
    OBCT_OK(obc_wait(req), world);
    OBCT_EQ_INT(one, g_nranks);
    verify_child("dup", d, ids, g_nranks, g_rank, world, g_nranks);
    OBCT_OK(obc_comm_split(d, g_rank % 2, -g_rank, &c), d);
    int m = expect_members(parity_negative, g_nranks, g_rank, ids, members, &crank);
    OBCT_OK(obc_comm_destroy(d), NULL);
    verify_child("split of a destroyed dup", c, members, m, crank, world, g_nranks);
    OBCT_OK(obc_comm_destroy(c), NULL);
}

static void bad_args(obc_comm_t *world)
{
    obc_comm_t *c = (obc_comm_t *)&c;
    OBCT_RC(obc_comm_split(NULL, 0, 0, &c), OBC_ERR_INVALID_ARG, NULL);
    OBCT_ASSERT(c == (obc_comm_t *)&c); /* nothing to say it was touched without a comm */
    OBCT_RC(obc_comm_split(world, 0, 0, NULL), OBC_ERR_INVALID_ARG, world);
    OBCT_RC(obc_comm_split(world, -2, 0, &c), OBC_ERR_INVALID_ARG, world);
    OBCT_ASSERT(c == NULL);
    OBCT_ASSERT(strstr(obc_comm_last_error(world), "color -2") != NULL);
    OBCT_RC(obc_comm_dup(NULL, &c), OBC_ERR_INVALID_ARG, NULL);
    OBCT_RC(obc_comm_dup(world, NULL), OBC_ERR_INVALID_ARG, world);
    OBCT_OK(obc_group_start(), NULL);
    OBCT_RC(obc_comm_dup(world, &c), OBC_ERR_INVALID_ARG, world);
    OBCT_OK(obc_group_end(), NULL);
    parent_step(world, g_nranks);
}

int main(void)
{
    obc_comm_t *world = obct_comm_from_env();
    int ids[MAXR];
    char multi_algo[64] = "";
    const char *host_id = getenv("OBC_HOST_ID"), *host_split = getenv("OBC_HOST_SPLIT");
    g_rank = obc_comm_rank(world);
    g_nranks = obc_comm_size(world);
    OBCT_ASSERT(g_nranks <= MAXR);
    g_fake_hosts = (host_id != NULL && strcmp(host_id, "rank/2") == 0) ||
        (host_split != NULL && strcmp(host_split, "2") == 0);
    /* Host cuts of one machine change the reductions' choice (hier across
     * hosts), not the broadcast's. */
    g_host_coll = host_split != NULL ? OBC_COLL_ALLREDUCE : OBC_COLL_BROADCAST;
    for (int r = 0; r < g_nranks; r++) {
        ids[r] = r;
    }
    if (g_fake_hosts) {
        OBCT_OK(obc_comm_algorithm(world, g_host_coll, 1 << 20, multi_algo, sizeof(multi_algo)),
                world);
        printf("comm_split: the world (%d hosts) chooses %s for 1 MiB\n", (g_nranks + 1) / 2,
               multi_algo);
    }
    bad_args(world);
    for (size_t p = 0; p < NPATTERNS; p++) {
        double t = obct_now();
        split_and_check(world, ids, g_nranks, p, 0, multi_algo);
        if (g_rank == 0) {
            printf("comm_split: %s and its splits: %.3f s\n", patterns[p].name, obct_now() - t);
        }
    }
    dup_and_outlive(world, ids);
    parent_step(world, g_nranks);
    OBCT_OK(obc_comm_destroy(world), NULL);
    return obct_finish("comm_split");
}
