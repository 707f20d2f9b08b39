/* SPDX-License-Identifier: MIT */
/*
 * comm_split.c - a child communicator from a parent (obc_comm_split), in
 * two collectives over the parent and one ordinary assembly per child:
 *   allgather 1  every parent rank's (color, key): each rank works out its
 *                color's members, ordered by (key, parent rank), and its
 *                own child rank
 *   allgather 2  each color's child rank 0 has started a rendezvous server
 *                (as obc_get_unique_id does) and sends its id; the others
 *                send zeros
 *   assembly     the members join that rendezvous and build the child as any
 *                communicator (comm_setup.c), with the parent's config
 *                snapshot (timeout as set now) and the parent's view of
 *                where each member runs (its machine identity and its host)
 * Every parent rank takes part in both allgathers whatever its color, so the
 * parent's sequence stays the same on every rank. After them the parent is
 * not used: the child has its own arena, links, engine and failure domain.
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
    memset(&op, 0, sizeof(op));
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

/* Child rank 0's part: a rendezvous for the n members, as obc_get_unique_id
 * makes one (random secret). On loopback when every member shares this
 * machine, else on the interface OBC_SOCKET_IFNAME (or the default) names. */
static obc_result_t start_rendezvous(struct obc_comm *p, const int *members, int n,
                                     obc_unique_id_t *id)
{
    struct obc__boot_endpoint ep;
    unsigned char secret[16];
    bool one_machine = true;
    memset(&ep, 0, sizeof(ep));
    for (int i = 0; i < n; i++) {
        one_machine = one_machine && !p->layout.remote[members[i]];
    }
    if (one_machine) {
        snprintf(ep.host, sizeof(ep.host), "127.0.0.1");
    } else if (obc__sock_pick_ifaddr(p->config.socket_ifname, ep.host, sizeof(ep.host)) != 0) {
        return obc__err_set(&p->err, OBC_ERR_SYSTEM, "obc_comm_split: no address to listen on");
    }
    if (obc__random_bytes(secret, sizeof(secret)) != 0) {
        return obc__err_set(&p->err, OBC_ERR_SYSTEM, "obc_comm_split: no randomness");
    }
    for (size_t i = 0; i < sizeof(secret); i++) {
        snprintf(ep.secret + 2 * i, 3, "%02x", secret[i]);
    }
    OBC_CHECK(obc__boot_serve(&ep, n, obc__config_timeout_ns(p->config.timeout_s), &p->err));
    obc__boot_encode_id(&ep, id);
    return OBC_SUCCESS;
}

/* Build this rank's child at the rendezvous its rank 0 sent. The log keeps
 * the prefix it had (the parent's rank), since one process may hold many
 * communicators. */
static obc_result_t build_child(struct obc_comm *p, const obc_unique_id_t *id, int crank, int n,
                                int leader, int color, struct obc_comm **out)
{
    struct obc__boot_endpoint ep;
    if (obc__boot_decode_id(id, &ep) != OBC_SUCCESS) {
        return obc__err_set(&p->err, OBC_ERR_SYSTEM,
                            "obc_comm_split: rank %d (color %d's first) could not start the new "
                            "communicator's rendezvous",
                            leader, color);
    }
    struct obc__setup_origin origin = {p->host_id, p->layout.host_of[p->rank]};
    int log_rank = obc__log_rank();
    obc_result_t res = obc__setup_comm_create_at(&p->config, &ep, crank, n, &origin, out);
    obc__log_set_rank(log_rank);
    if (res != OBC_SUCCESS) {
        obc__err_set(&p->err, res, "obc_comm_split: color %d: %s", color, obc__err_thread_msg());
        return res;
    }
    return OBC_SUCCESS;
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
    int nranks = parent->nranks, n = 0, crank = -1;
    int32_t mine[2] = {color, key};
    int32_t(*ck)[2] = malloc(sizeof(*ck) * (size_t)nranks);
    int *members = malloc(sizeof(int) * (size_t)nranks);
    obc_unique_id_t id, *ids = malloc(sizeof(*ids) * (size_t)nranks);
    obc_result_t res = ck && members && ids
        ? OBC_SUCCESS
        : obc__err_set(&parent->err, OBC_ERR_NO_MEMORY, "split tables");
    *out = NULL;
    OBC_CHECK_GOTO(res, res, out);
    OBC_CHECK_GOTO(parent_allgather(parent, mine, ck, 2, OBC_INT32), res, out);
    memset(&id, 0, sizeof(id));
    if (color != OBC_UNDEFINED) {
        n = color_members((const int32_t(*)[2])ck, nranks, color, members);
        for (int i = 0; i < n; i++) {
            crank = members[i] == parent->rank ? i : crank;
        }
    }
    /* A leader that cannot serve still takes part in the exchange: its
     * zeros tell its members, and the parent stays in step. */
    obc_result_t served = crank == 0 ? start_rendezvous(parent, members, n, &id) : OBC_SUCCESS;
    OBC_CHECK_GOTO(parent_allgather(parent, &id, ids, sizeof(id), OBC_UINT8), res, out);
    OBC_CHECK_GOTO(served, res, out);
    if (crank >= 0) {
        res = build_child(parent, &ids[members[0]], crank, n, members[0], color, out);
    }
    if (res == OBC_SUCCESS && crank >= 0) {
        log_members(color, crank, members, n);
    }
out:
    free(ck);
    free(members);
    free(ids);
    return res;
}
