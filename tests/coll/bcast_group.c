/* SPDX-License-Identifier: MIT */
/*
 * bcast_group.c - broadcasts coalesced between obc_group_start and
 * obc_group_end: many small ones of varied sizes, roots, dtypes and call
 * kinds (obc_bcast, obc_broadcast, obc_ibroadcast) around a large one; a
 * long same-root run that must span several buckets; nested groups; an
 * empty group; count 0 with NULL buffers; blocking calls that return at
 * once inside a group while their root is late; and plain calls right
 * after a group. Every buffer is checked (payload and guards) after
 * obc_group_end.
 */
/* obct: nranks=1,2,3,4,5,8 san=4 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=64 */
/* obct: name=eager env=OBC_ALGO=broadcast=eager nranks=2,4,8 */
/* obct: name=arena env=OBC_ALGO=broadcast=arena nranks=2,4,8 */
/* obct: name=cma env=OBC_ALGO=broadcast=cma nranks=2,4,8 */
/* obct: name=check2 env=OBC_CHECK=2 nranks=2,5 san=2 */
/* obct: name=bucket64k env=OBC_GROUP_BUCKET_BYTES=65536 nranks=3,4 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 san */
/* obct: name=tcp1 env=OBC_HOST_ID=rank/1 nranks=3 label=variant */
/* obct: name=check2_tcp env=OBC_CHECK=2 env=OBC_HOST_ID=rank/2 nranks=4 */
#include <stdio.h>
#include <stdlib.h>

#include "bcase.h"
#include "obct.h"

#define SEED_BASE 0x67727075ull
#define MAXCASES 400

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_seed = SEED_BASE;
static struct obct_bcase g_case[MAXCASES];
static obc_request_t *g_req[MAXCASES];
static int g_ncases;
static double g_call_s; /* how long the last obc call made by add() took */

enum kind { KIND_BCAST, KIND_BROADCAST, KIND_IBROADCAST };

/* Queue one broadcast (inside a group the blocking kinds return at once). */
static void add(size_t count, obc_dtype_t dt, int root, enum kind k)
{
    struct obct_bcase *c = &g_case[g_ncases];
    obc_request_t **req = &g_req[g_ncases];
    OBCT_ASSERT(g_ncases < MAXCASES);
    g_ncases++;
    *req = NULL;
    if (k == KIND_BCAST) {
        obct_bcase_setup(c, g_rank, count, dt, root, g_seed++, OBCT_IN_PLACE);
        g_call_s = obct_now();
        OBCT_OK(obc_bcast(obct_bcase_recvbuf(c), count, dt, root, g_comm), g_comm);
        g_call_s = obct_now() - g_call_s;
        return;
    }
    obct_bcase_setup(c, g_rank, count, dt, root, g_seed,
                     g_seed % 2 ? OBCT_OUT_OF_PLACE : OBCT_OUT_OF_PLACE_DECOY);
    g_seed++;
    g_call_s = obct_now();
    if (k == KIND_BROADCAST) {
        OBCT_OK(
            obc_broadcast(obct_bcase_sendbuf(c), obct_bcase_recvbuf(c), count, dt, root, g_comm),
            g_comm);
    } else {
        OBCT_OK(obc_ibroadcast(obct_bcase_sendbuf(c), obct_bcase_recvbuf(c), count, dt, root,
                               g_comm, req),
                g_comm);
        OBCT_ASSERT(*req != NULL);
    }
    g_call_s = obct_now() - g_call_s;
}

/* Wait for the requests, check and free every case queued so far. */
static void finish_cases(const char *phase, double t0)
{
    for (int i = 0; i < g_ncases; i++) {
        if (g_req[i] != NULL) {
            OBCT_OK(obc_wait(g_req[i]), g_comm);
        }
    }
    for (int i = 0; i < g_ncases; i++) {
        obct_bcase_check(&g_case[i]);
        obct_bcase_free(&g_case[i]);
    }
    if (g_rank == 0) {
        printf("bcast_group: nranks=%d %s: %d broadcasts, %.3f s\n", g_nranks, phase, g_ncases,
               obct_now() - t0);
    }
    g_ncases = 0;
}

static void mixed_group(int salt)
{
    size_t counts[8];
    const char *names[8];
    double t0 = obct_now();
    OBCT_OK(obc_group_start(), NULL);
    for (int i = 0; i < 40; i++) {
        obc_dtype_t dt = (obc_dtype_t)((i + salt) % OBCT_NDTYPES);
        if (i == 20) {
            obct_size_classes(dt, counts, names);
            add(counts[obct_size_class_large()], dt, salt % g_nranks, KIND_BROADCAST);
        }
        add((size_t)((i * 131 + salt) % 3000), dt, (i * 7 + salt) % g_nranks,
            (enum kind)((i + salt) % 3));
    }
    OBCT_OK(obc_group_end(), g_comm);
    finish_cases("mixed group", t0);
}

/* About 9 MiB from one root in 300 calls: more than one bucket (4 MiB by default, 64 KiB
 * in the bucket64k variant), so the fusion must split. */
static void same_root_run(void)
{
    double t0 = obct_now();
    int root = g_nranks - 1;
    OBCT_OK(obc_group_start(), NULL);
    for (int i = 0; i < 300; i++) {
        add((size_t)(1 + i * 137 % 40009), i % 2 ? OBC_UINT8 : OBC_FLOAT16, root,
            i % 5 == 4 ? KIND_IBROADCAST : KIND_BCAST);
    }
    OBCT_OK(obc_group_end(), g_comm);
    finish_cases("same-root run", t0);
}

static void nested_groups(void)
{
    double t0 = obct_now();
    OBCT_OK(obc_group_start(), NULL);
    for (int i = 0; i < 5; i++) {
        add((size_t)(i * 100 + 1), OBC_INT32, i % g_nranks, KIND_BCAST);
    }
    OBCT_OK(obc_group_start(), NULL);
    for (int i = 0; i < 10; i++) {
        add((size_t)(i * 33 + 1), OBC_INT64, (i + 1) % g_nranks, (enum kind)(i % 3));
    }
    OBCT_OK(obc_group_end(), g_comm); /* inner: launches nothing yet */
    for (int i = 0; i < 5; i++) {
        add((size_t)(i * 999 + 1), OBC_BFLOAT16, 0, KIND_BROADCAST);
    }
    OBCT_OK(obc_group_end(), g_comm);
    finish_cases("nested groups", t0);
}

static void empty_and_zero(void)
{
    obc_request_t *req = NULL;
    double t0 = obct_now();
    OBCT_OK(obc_group_start(), NULL);
    OBCT_OK(obc_group_end(), g_comm);
    OBCT_OK(obc_group_start(), NULL);
    for (int r = 0; r < g_nranks; r++) {
        OBCT_OK(obc_bcast(NULL, 0, OBC_FLOAT64, r, g_comm), g_comm);
        OBCT_OK(obc_broadcast(NULL, NULL, 0, OBC_INT8, r, g_comm), g_comm);
    }
    OBCT_OK(obc_ibroadcast(NULL, NULL, 0, OBC_UINT32, 0, g_comm, &req), g_comm);
    add(7, OBC_UINT64, g_nranks / 2, KIND_BCAST);
    OBCT_OK(obc_group_end(), g_comm);
    OBCT_ASSERT(req != NULL);
    OBCT_OK(obc_wait(req), g_comm);
    finish_cases("empty group, count 0", t0);
}

/* Inside a group a blocking call only queues: with the root 1 s late, a non-root's
 * obc_bcast must still return at once (0.5 s allows for 64 ranks on 2 cores under
 * TSan); the data moves at obc_group_end. */
static void calls_return_at_once(void)
{
    double t0 = obct_now();
    int root = g_nranks / 2;
    OBCT_OK(obc_barrier(g_comm), g_comm);
    if (g_rank == root) {
        obct_sleep(1.0);
    }
    OBCT_OK(obc_group_start(), NULL);
    for (int i = 0; i < 3; i++) {
        add((size_t)(1 << 20) + (size_t)i, OBC_UINT8, root, i == 1 ? KIND_BROADCAST : KIND_BCAST);
        if (g_rank != root && g_call_s > 0.5) {
            obct_soft_fail(__FILE__, __LINE__,
                           "a broadcast inside a group took %.3f s to return (root late)",
                           g_call_s);
        }
    }
    OBCT_OK(obc_group_end(), g_comm);
    finish_cases("group calls return at once", t0);
}

/* Ungrouped calls right after a group must run normally (group state reset). */
static void after_group(void)
{
    double t0 = obct_now();
    add(4099, OBC_FLOAT32, 0, KIND_BCAST);
    add(3, OBC_INT8, g_nranks - 1, KIND_IBROADCAST);
    add(1000, OBC_UINT32, g_nranks / 2, KIND_BROADCAST);
    finish_cases("plain calls after groups", t0);
}

int main(void)
{
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    for (int salt = 0; salt < 3; salt++) {
        mixed_group(salt);
    }
    same_root_run();
    nested_groups();
    empty_and_zero();
    calls_return_at_once();
    after_group();
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("bcast_group");
}
