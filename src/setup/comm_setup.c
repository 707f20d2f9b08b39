/* SPDX-License-Identifier: MIT */
/*
 * comm_setup.c - assembling a communicator, in order, and taking it apart:
 *   join the rendezvous (bootstrap)
 *   round 1  every rank: host identity, pid -> the host layout (host_layout.c)
 *   rounds 2-4  the host arena (setup_arena.c)
 *   round 5  (several machines) TCP addresses, then the p2p links (setup_p2p.c)
 *   close the bootstrap connection: it is setup-time only
 *   start the engine over the transports, with the layout's teams
 * Destruction runs the other way. Nothing here runs after creation but the
 * teardown.
 */
#include "setup/setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "core/log.h"
#include "engine/engine.h"
#include "platform/platform.h"
#include "setup/setup_impl.h"
#include "transport/arena.h"
#include "transport/transport.h"

/* Destroying a communicator lets remote peers receive what it sent last
 * for at most this long (or OBC_TIMEOUT, when shorter). */
#define P2P_DRAIN_MAX_NS 10000000000ll

/* Round 1, the layout it gives, and the transports built on it. */
static obc_result_t assemble(struct obc_comm *c, struct obc__boot *boot,
                             const struct obc__setup_origin *origin)
{
    obc_result_t res;
    struct obc__setup_hello me, *hello = calloc((size_t)c->nranks, sizeof(*hello));
    memset(&me, 0, sizeof(me));
    me.pid = (int32_t)getpid();
    me.ncpus = obc__ncpus();
    me.bound_cpu = obc__bound_cpu();
    res = hello != NULL ? OBC_SUCCESS : obc__err_set(&c->err, OBC_ERR_NO_MEMORY, "host table");
    OBC_CHECK_GOTO(res, res, out);
    if (origin != NULL) {
        snprintf(me.host_id, sizeof(me.host_id), "%s", origin->host_id);
        me.parent_host = origin->host_hint + 1;
    } else {
        res = obc__host_layout_identity(&c->config, c->rank, me.host_id, &c->err);
        OBC_CHECK_GOTO(res, res, out);
    }
    memcpy(c->host_id, me.host_id, sizeof(c->host_id));
    OBC_CHECK_GOTO(obc__boot_allgather(boot, &me, sizeof(me), hello, &c->err), res, out);
    OBC_CHECK_GOTO(obc__host_layout_build(&c->layout, hello, c->rank, c->nranks,
                                          c->config.host_split, &c->err),
                   res, out);
    OBC_CHECK_GOTO(obc__setup_arena(c, boot, hello), res, out);
    OBC_CHECK_GOTO(obc__setup_p2p(c, boot), res, out);
out:
    free(hello);
    return res;
}

/* The engine over the transports: its teams come from the layout, its
 * thresholds and forced choices from the config snapshot. */
static obc_result_t start_engine(struct obc_comm *c)
{
    struct obc__engine_params p;
    memset(&p, 0, sizeof(p));
    p.arena = c->arena;
    p.p2p = c->p2p;
    p.rank = c->rank;
    p.nranks = c->nranks;
    p.layout = &c->layout;
    p.err = &c->err;
    p.timeout_s = c->config.timeout_s;
    p.arena_has_all = c->layout.one_arena;
    p.mem = &c->mem;
    p.check = c->config.check;
    p.dump_path = c->config.debug_dump;
    obc_result_t res =
        obc__algo_tuning_init(&p.tuning, &c->config, c->layout.machine_cpus, &c->err);
    if (res == OBC_SUCCESS) {
        res = obc__engine_create(&p, &c->engine);
    }
    return res;
}

/* Everything but the engine, newest first. */
static void take_apart(struct obc_comm *c)
{
    int64_t drain = c->closing_broken ? 0 : obc__config_timeout_ns(c->config.timeout_s);
    obc__p2p_destroy(c->p2p, drain < 0 || drain > P2P_DRAIN_MAX_NS ? P2P_DRAIN_MAX_NS : drain);
    obc__arena_destroy(c->arena);
    obc__host_layout_fini(&c->layout);
    obc__comm_release(c);
}

/* Give up on a communicator being created: keep its error message as the
 * thread's (obc_comm_last_error(NULL)), free it, return res. */
static obc_result_t fail(struct obc_comm *c, obc_result_t res)
{
    char msg[OBC_ERR_MSG_BYTES];
    obc__err_copy(&c->err, msg, sizeof(msg));
    take_apart(c);
    obc__err_thread_set(msg);
    return res;
}

obc_result_t obc__setup_comm_create(const struct obc__config *cfg,
                                    const struct obc__boot_endpoint *ep, int rank, int nranks,
                                    struct obc_comm **out)
{
    return obc__setup_comm_create_at(cfg, ep, NULL, rank, nranks, NULL, out);
}

obc_result_t obc__setup_comm_create_at(const struct obc__config *cfg,
                                       const struct obc__boot_endpoint *ep,
                                       const struct obc__boot_carrier *carrier, int rank,
                                       int nranks, const struct obc__setup_origin *origin,
                                       struct obc_comm **out)
{
    struct obc__boot *boot = NULL;
    struct obc_comm *c = NULL;
    *out = NULL;
    OBC_CHECK(obc__comm_alloc(cfg, rank, nranks, &c));
    obc_result_t res = carrier != NULL
        ? obc__boot_join_carried(carrier, rank, nranks, &boot, &c->err)
        : obc__boot_join(ep, rank, nranks, obc__config_timeout_ns(cfg->timeout_s), &boot, &c->err);
    if (res == OBC_SUCCESS) {
        if (obc__boot_local_ip(boot, c->boot_ip, sizeof(c->boot_ip)) != 0) {
            c->boot_ip[0] = '\0';
        }
        res = assemble(c, boot, origin);
    }
    obc__boot_close(boot);
    if (res == OBC_SUCCESS) {
        res = start_engine(c);
    }
    if (res != OBC_SUCCESS) {
        return fail(c, res);
    }
    OBC_INFO(OBC_LOG_INIT, "communicator ready: rank %d of %d, %d on this host", rank, nranks,
             c->layout.local_nranks);
    *out = c;
    return OBC_SUCCESS;
}

obc_result_t obc__setup_comm_destroy(struct obc_comm *comm)
{
    if (comm == NULL) {
        return OBC_SUCCESS;
    }
    /* A broken communicator has nothing worth delivering: close at once. */
    comm->closing_broken = obc__engine_broken(comm->engine) != OBC_SUCCESS;
    obc_result_t res = obc__engine_destroy(comm->engine);
    take_apart(comm);
    return res;
}
