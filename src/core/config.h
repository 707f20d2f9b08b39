/* SPDX-License-Identifier: MIT */
/*
 * config.h - the configuration snapshot. config.c is the only file that
 * reads the environment (a grep in `make check` enforces it): OBC_* from
 * params.def and the launchers' variables (torchrun, Open MPI, PMI, Slurm).
 * A communicator takes a snapshot at create time and passes it down; nothing
 * below reads env.
 */
#ifndef OBC_CORE_CONFIG_H
#define OBC_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define OBC_CFG_STR_BYTES 256

#define OBC_CFG_TYPE_STR char
#define OBC_CFG_TYPE_INT int
#define OBC_CFG_TYPE_DBL double
#define OBC_CFG_TYPE_SIZE size_t
#define OBC_CFG_DIM_STR [OBC_CFG_STR_BYTES]
#define OBC_CFG_DIM_INT
#define OBC_CFG_DIM_DBL
#define OBC_CFG_DIM_SIZE

struct obc__config {
#define OBC_PARAM(field, type, env, def, doc) OBC_CFG_TYPE_##type field OBC_CFG_DIM_##type;
#include "core/params.def"
#undef OBC_PARAM
};

/* A launcher other than obcrun, by the variables that place a process in its
 * job. local_rank_var is NULL where the launcher sets none. */
struct obc__launcher {
    const char *name;
    const char *rank_var;
    const char *size_var;
    const char *local_rank_var;
};

/* Launcher variables other than obc's own, read beside the snapshot.
 * -1 / "" / NULL when absent. */
struct obc__launch_env {
    const struct obc__launcher *launcher; /* the first by precedence with rank and size set */
    int rank;
    int world_size;
    int local_rank;
    char master_addr[OBC_CFG_STR_BYTES]; /* MASTER_ADDR */
    int master_port; /* MASTER_PORT */
    int agent_store; /* under torchrun, TORCHELASTIC_USE_AGENT_STORE: its store holds MASTER_PORT */
};

/* Fill cfg with params.def's defaults only (no environment): what a
 * parameter set to 0 ("the default") stands for, and the unit tests' base. */
void obc__config_defaults(struct obc__config *cfg);
/* Fill cfg from defaults and the environment. Returns 0, or -1 with a message
 * in err (at most errlen bytes) for a malformed value. */
int obc__config_load(struct obc__config *cfg, char *err, size_t errlen);
void obc__config_launch_env(struct obc__launch_env *env);

/* Seconds as the library's waits take them: nanoseconds, -1 for "never"
 * (seconds <= 0). */
int64_t obc__config_timeout_ns(double seconds);

#endif
