/* SPDX-License-Identifier: MIT */
/*
 * comm_split.c - a child communicator from a parent (obc_comm_split), with
 * no rendezvous of its own: everything goes through the parent.
 *   allgather 0  every parent rank's (color, key): each rank works out its
 *                color's members, ordered by (key, parent rank), and its
 *                own child rank
 *   rounds 1-5   the child's setup rounds (comm_setup.c: host identities,
 *                the arena's name and attach status, the CMA probe, TCP
 *                contacts), each carried as one allgather over the whole
 *                parent of a fixed-size blob; every rank keeps its child's
 *                members' blobs. A rank whose setup needs fewer rounds (no
 *                TCP, a failure, no color) runs the rest with zeros, so the
 *                parent's calls stay the same on every rank.
 * The child gets the parent's config snapshot (timeout as set now) and its
 * view of where each member runs (machine identity, host). After round 5
 * the parent is not used: the child has its own arena, links, engine and
 * failure domain.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/log.h"
#include "engine/engine.h"
#include "platform/platform.h"
#include "setup/setup.h"
#include "setup/setup_impl.h"

/* One allgather over the parent, through its engine (in issue order with
 * the parent's other calls, like any blocking collective). */
static obc_result_t parent_allgather(struct obc_comm *p, const void *mine, void *all, size_t count,
                                     obc_dtype_t dtype)
{
    struct obc__op op;
    obc__op_clear(&op);
    obc__op_set_coll(&op, OBC_COLL_ALLGATHER, mine, all, count, dtype, OBC_SUM, 0);
    return obc__engine_run_blocking(p->engine, &op);
}

/* The members of `color` in child-rank order (by key, then parent rank),
 * into members[]; their count. A stable insertion sort over parent ranks:
 * ties in key keep the parent's order. */
static int color_members(const int32_t (*ck)[2], int nranks, int color, int *members)
{
    int n = 0;
    for (int r = 0; r < nranks; r++) {
        if (ck[r][0] != color) {
            continue;
        }
        int i = n++;
        while (i > 0 && ck[members[i - 1]][1] > ck[r][1]) {
            members[i] = members[i - 1];
            i--;
        }
        members[i] = r;
    }
    return n;
}

/* Rounds of the child's setup (comm_setup.c: 1 hello, 2-4 arena, 5 TCP)
 * and the blob each travels in: the largest, round 1's hello, fits. */
#define CHILD_ROUNDS 5
#define ROUND_BYTES 128
_Static_assert(sizeof(struct obc__setup_hello) <= ROUND_BYTES, "round 1 must fit");

/* The carrier's state: this rank's child members (parent ranks, in child
 * order) and how many rounds it has run. */
struct carried {
    struct obc_comm *parent;
    const int *members;
    int n;
    int rounds;
    obc_result_t failed; /* the first failure of a round run with zeros */
    unsigned char *all; /* [parent nranks][ROUND_BYTES] */
};

static obc_result_t carry_round(struct carried *k, const void *mine, size_t nbytes)
{
    unsigned char blob[ROUND_BYTES];
    memset(blob, 0, sizeof(blob));
    if (nbytes > 0) {
        memcpy(blob, mine, nbytes);
    }
    k->rounds++;
    return parent_allgather(k->parent, blob, k->all, ROUND_BYTES, OBC_UINT8);
}

static obc_result_t carried_allgather(void *ctx, const void *mine, size_t nbytes, void *all,
                                      struct obc__err *err)
{
    struct carried *k = ctx;
    if (k->rounds >= CHILD_ROUNDS || nbytes > ROUND_BYTES) {
        return obc__err_set(err, OBC_ERR_INTERNAL,
                            "split: setup round %d of %zu bytes does not fit the parent's "
                            "schedule (%d rounds of %d bytes)",
                            k->rounds + 1, nbytes, CHILD_ROUNDS, ROUND_BYTES);
    }
    obc_result_t res = carry_round(k, mine, nbytes);
    if (res != OBC_SUCCESS) {
        char msg[OBC_ERR_MSG_BYTES];
        obc__err_copy(&k->parent->err, msg, sizeof(msg));
        return obc__err_set(err, res, "setup round %d through the parent: %s", k->rounds, msg);
    }
    for (int i = 0; i < k->n; i++) {
        memcpy((unsigned char *)all + (size_t)i * nbytes,
               k->all + (size_t)k->members[i] * ROUND_BYTES, nbytes);
    }
    return OBC_SUCCESS;
}

/* The rounds this rank's setup did not need, with zeros. Once one fails
 * (the parent broke) the rest would fail at once: skip them. A child whose
 * own rounds were done is not hurt by that; a rank without a child reports
 * it (k->failed). */
static void carried_finish(void *ctx)
{
    struct carried *k = ctx;
    while (k->rounds < CHILD_ROUNDS && k->failed == OBC_SUCCESS) {
        k->failed = carry_round(k, NULL, 0);
    }
}

/* Build this rank's child, its rounds carried by the parent. The log keeps
 * the prefix it had (the parent's rank), since one process may hold many
 * communicators. */
static obc_result_t build_child(struct obc_comm *p, struct carried *k, int crank, int color,
                                struct obc_comm **out)
{
    struct obc__boot_carrier carrier = {carried_allgather, carried_finish, k, p->boot_ip};
    struct obc__setup_origin origin = {p->host_id, p->layout.host_of[p->rank]};
    int log_rank = obc__log_rank();
    obc_result_t res =
        obc__setup_comm_create_at(&p->config, NULL, &carrier, crank, k->n, &origin, out);
    obc__log_set_rank(log_rank);
    carried_finish(k); /* in case setup failed before its rendezvous existed */
    if (res != OBC_SUCCESS) {
        obc__err_set(&p->err, res, "obc_comm_split: color %d: %s", color, obc__err_thread_msg());
    }
    return res;
}

/* The child's messages name its own ranks: say once which parent rank each
 * one is (INFO). */
static void log_members(int color, int crank, const int *members, int n)
{
    char list[256];
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof(list) - 16; i++) {
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? " " : "", members[i]);
    }
    if (len >= sizeof(list) - 16) {
        snprintf(list + len, sizeof(list) - len, " ...");
    }
    OBC_INFO(OBC_LOG_INIT,
             "split: color %d: this rank is rank %d of %d; the child's ranks are parent ranks %s",
             color, crank, n, list);
}

obc_result_t obc__setup_comm_split(struct obc_comm *parent, int color, int key,
                                   struct obc_comm **out)
{
    int nranks = parent->nranks, crank = -1;
    int32_t mine[2] = {color, key};
    int32_t(*ck)[2] = malloc(sizeof(*ck) * (size_t)nranks);
    int *members = malloc(sizeof(int) * (size_t)nranks);
    struct carried k = {parent, members, 0, 0, OBC_SUCCESS, malloc((size_t)nranks * ROUND_BYTES)};
    obc_result_t res = ck && members && k.all
        ? OBC_SUCCESS
        : obc__err_set(&parent->err, OBC_ERR_NO_MEMORY, "split tables");
    *out = NULL;
    OBC_CHECK_GOTO(res, res, out);
    OBC_CHECK_GOTO(parent_allgather(parent, mine, ck, 2, OBC_INT32), res, out);
    if (color != OBC_UNDEFINED) {
        k.n = color_members((const int32_t(*)[2])ck, nranks, color, members);
        for (int i = 0; i < k.n; i++) {
            crank = members[i] == parent->rank ? i : crank;
        }
    }
    if (crank >= 0) {
        res = build_child(parent, &k, crank, color, out);
    } else {
        carried_finish(&k); /* no child here: take part in the others' rounds */
        res = k.failed;
    }
    if (res == OBC_SUCCESS && crank >= 0) {
        log_members(color, crank, members, k.n);
    }
out:
    free(ck);
    free(members);
    free(k.all);
    return res;
}
