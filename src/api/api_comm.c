/* SPDX-License-Identifier: MIT */
/*
 * api_comm.c - the public communicator calls: where the rendezvous is
 * (obcrun's, torchrun's, Open MPI's, PMI's or Slurm's variables, or a unique
 * id) and who hosts it (rank 0, or the caller of obc_get_unique_id); the
 * communicator itself is assembled and taken apart by setup/. Thin:
 * validate, then delegate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "bootstrap/bootstrap.h"
#include "core/comm.h"
#include "core/log.h"
#include "engine/engine.h"
#include "platform/platform.h"
#include "setup/setup.h"

static obc_result_t load_config(struct obc__config *cfg)
{
    char msg[OBC_ERR_MSG_BYTES];
    if (obc__config_load(cfg, msg, sizeof(msg)) != 0) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "%s", msg);
    }
    return OBC_SUCCESS;
}

static obc_result_t parse_host_port(const char *text, struct obc__boot_endpoint *ep)
{
    const char *colon = strrchr(text, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (colon == NULL || colon == text || end == colon + 1 || *end != '\0' || port <= 0 ||
        port > 65535 || (size_t)(colon - text) >= sizeof(ep->host)) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "rendezvous address '%s' is not host:port",
                            text);
    }
    snprintf(ep->host, sizeof(ep->host), "%.*s", (int)(colon - text), text);
    ep->port = (int)port;
    return OBC_SUCCESS;
}

/* This rank's place in the job: obcrun's OBC_RANK and OBC_NRANKS win over every
 * other launcher's variables (obcrun may itself run inside one); then the first
 * launcher config.c found. env->launcher is NULL when obcrun's won. */
static obc_result_t place_from_env(const struct obc__config *cfg, struct obc__launch_env *env,
                                   int *rank, int *nranks)
{
    if (cfg->rank >= 0 && cfg->nranks > 0) {
        *rank = cfg->rank;
        *nranks = cfg->nranks;
        env->launcher = NULL;
        return OBC_SUCCESS;
    }
    if (env->launcher == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG,
                            "no launcher environment: run under obcrun (OBC_RANK, OBC_NRANKS, "
                            "OBC_BOOTSTRAP), torchrun (RANK, WORLD_SIZE, MASTER_ADDR, "
                            "MASTER_PORT), Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), "
                            "MPICH/PMI (PMI_RANK, PMI_SIZE) or Slurm (SLURM_PROCID, "
                            "SLURM_NTASKS); under the last three, set OBC_BOOTSTRAP=host:port "
                            "or MASTER_ADDR and MASTER_PORT");
    }
    *rank = env->rank;
    *nranks = env->world_size;
    OBC_INFO(OBC_LOG_BOOT, "launcher: %s (%s=%d, %s=%d, local rank %d)", env->launcher->name,
             env->launcher->rank_var, env->rank, env->launcher->size_var, env->world_size,
             env->local_rank);
    return OBC_SUCCESS;
}

/* OBC_BOOTSTRAP wherever it is set; else, under a launcher other than obcrun,
 * MASTER_ADDR and MASTER_PORT. */
static obc_result_t rendezvous_from_env(const struct obc__config *cfg,
                                        const struct obc__launch_env *env,
                                        struct obc__boot_endpoint *ep)
{
    if (cfg->bootstrap[0] != '\0') {
        return parse_host_port(cfg->bootstrap, ep);
    }
    if (env->launcher == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "OBC_BOOTSTRAP is not set");
    }
    if (env->master_addr[0] == '\0' || env->master_port <= 0) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG,
                            "launcher %s detected (%s and %s are set) but no rendezvous "
                            "address: set OBC_BOOTSTRAP=host:port, or MASTER_ADDR and MASTER_PORT",
                            env->launcher->name, env->launcher->rank_var, env->launcher->size_var);
    }
    if (strlen(env->master_addr) >= sizeof(ep->host)) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "MASTER_ADDR is too long");
    }
    snprintf(ep->host, sizeof(ep->host), "%.*s", (int)sizeof(ep->host) - 1, env->master_addr);
    /* torchrun's agent store already listens on MASTER_PORT. */
    ep->port = env->master_port + (env->agent_store ? 1 : 0);
    return OBC_SUCCESS;
}

/* Where the rendezvous is, and this rank's place, from the launcher's env. */
static obc_result_t endpoint_from_env(const struct obc__config *cfg, struct obc__boot_endpoint *ep,
                                      int *rank, int *nranks)
{
    struct obc__launch_env env;
    obc__config_launch_env(&env);
    memset(ep, 0, sizeof(*ep));
    if (strlen(cfg->secret) >= sizeof(ep->secret)) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "OBC_SECRET is too long");
    }
    snprintf(ep->secret, sizeof(ep->secret), "%.*s", (int)sizeof(ep->secret) - 1, cfg->secret);
    OBC_CHECK(place_from_env(cfg, &env, rank, nranks));
    OBC_CHECK(rendezvous_from_env(cfg, &env, ep));
    if (*rank < 0 || *rank >= *nranks) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "rank %d out of range for %d ranks", *rank,
                            *nranks);
    }
    return OBC_SUCCESS;
}

OBC_API obc_result_t obc_comm_init_env(obc_comm_t **comm)
{
    struct obc__config cfg;
    struct obc__boot_endpoint ep;
    int rank = -1, nranks = 0;
    if (comm == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "obc_comm_init_env: comm is NULL");
    }
    *comm = NULL;
    OBC_CHECK(load_config(&cfg));
    OBC_CHECK(endpoint_from_env(&cfg, &ep, &rank, &nranks));
    if (cfg.secret[0] == '\0') {
        OBC_INFO(OBC_LOG_BOOT, "OBC_SECRET is not set: the rendezvous is not authenticated");
    }
    if (rank == 0) {
        OBC_CHECK(obc__boot_serve(&ep, nranks, obc__config_timeout_ns(cfg.timeout_s), NULL));
    }
    return obc__setup_comm_create(&cfg, &ep, rank, nranks, comm);
}

OBC_API obc_result_t obc_get_unique_id(obc_unique_id_t *id)
{
    struct obc__config cfg;
    struct obc__boot_endpoint ep;
    unsigned char secret[16];
    if (id == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "obc_get_unique_id: id is NULL");
    }
    OBC_CHECK(load_config(&cfg));
    memset(&ep, 0, sizeof(ep));
    if (obc__sock_pick_ifaddr(cfg.socket_ifname, ep.host, sizeof(ep.host)) != 0 ||
        obc__random_bytes(secret, sizeof(secret)) != 0) {
        return obc__err_set(NULL, OBC_ERR_SYSTEM, "obc_get_unique_id: no address or randomness");
    }
    for (size_t i = 0; i < sizeof(secret); i++) {
        snprintf(ep.secret + 2 * i, 3, "%02x", secret[i]);
    }
    OBC_CHECK(obc__boot_serve(&ep, 0, obc__config_timeout_ns(cfg.timeout_s), NULL));
    obc__boot_encode_id(&ep, id);
    return OBC_SUCCESS;
}

OBC_API obc_result_t obc_comm_init_rank(obc_comm_t **comm, int nranks, const obc_unique_id_t *id,
                                        int rank)
{
    struct obc__config cfg;
    struct obc__boot_endpoint ep;
    if (comm == NULL || id == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "obc_comm_init_rank: %s is NULL",
                            comm == NULL ? "comm" : "id");
    }
    *comm = NULL;
    if (nranks < 1 || rank < 0 || rank >= nranks) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG,
                            "obc_comm_init_rank: rank %d of %d ranks is out of range", rank,
                            nranks);
    }
    if (obc__boot_decode_id(id, &ep) != OBC_SUCCESS) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG,
                            "obc_comm_init_rank: id was not made by obc_get_unique_id");
    }
    OBC_CHECK(load_config(&cfg));
    return obc__setup_comm_create(&cfg, &ep, rank, nranks, comm);
}

OBC_API obc_result_t obc_comm_destroy(obc_comm_t *comm)
{
    if (comm == NULL) {
        return OBC_SUCCESS;
    }
    return obc__setup_comm_destroy(comm);
}

OBC_API obc_result_t obc_comm_abort(obc_comm_t *comm)
{
    if (comm == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "obc_comm_abort: comm is NULL");
    }
    obc__err_set(&comm->err, OBC_ERR_ABORTED, "rank %d called obc_comm_abort", comm->rank);
    obc__engine_abort(comm->engine, OBC_ERR_ABORTED);
    return OBC_SUCCESS;
}

OBC_API int obc_comm_rank(const obc_comm_t *comm)
{
    return comm ? comm->rank : -1;
}

OBC_API int obc_comm_size(const obc_comm_t *comm)
{
    return comm ? comm->nranks : -1;
}

OBC_API obc_result_t obc_comm_machine_info(const obc_comm_t *comm, int *ranks, int *cpus)
{
    if (comm == NULL) {
        return obc__err_set(NULL, OBC_ERR_INVALID_ARG, "obc_comm_machine_info: comm is NULL");
    }
    if (ranks != NULL) {
        *ranks = comm->layout.local_nranks;
    }
    if (cpus != NULL) {
        *cpus = comm->layout.machine_cpus;
    }
    return OBC_SUCCESS;
}

OBC_API obc_result_t obc_comm_set_timeout(obc_comm_t *comm, double seconds)
{
    if (comm == NULL || isnan(seconds)) {
        return obc__err_set(comm ? &comm->err : NULL, OBC_ERR_INVALID_ARG,
                            "obc_comm_set_timeout: %s", comm ? "seconds is NaN" : "comm is NULL");
    }
    comm->config.timeout_s = seconds;
    obc__engine_set_timeout(comm->engine, seconds);
    return OBC_SUCCESS;
}

OBC_API const char *obc_comm_last_error(const obc_comm_t *comm)
{
    if (comm == NULL) {
        return obc__err_thread_msg();
    }
    struct obc_comm *c = (struct obc_comm *)comm; /* the snapshot is a cache */
    obc__err_copy(&c->err, c->last_error, sizeof(c->last_error));
    return c->last_error;
}

OBC_API const char *obc_version(void)
{
    return OBC_API_VERSION_STRING;
}
