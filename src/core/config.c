/* SPDX-License-Identifier: MIT */
/*
 * config.c - reads the environment into a struct obc__config snapshot, from
 * the one table in params.def. The only file in libobc that calls getenv.
 * Malformed values are errors (reported at init), never silently ignored.
 */
#include "core/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The message of a malformed value, cut to errlen. (Through vsnprintf:
 * an optimising gcc proves that snprintf may cut a long value's message
 * and -Werror=format-truncation stops the build, while cutting it is
 * what we want.) */
static int bad_value(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad_value(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_str(const char *text, char *out, char *err, size_t errlen, const char *env)
{
    if (strlen(text) >= OBC_CFG_STR_BYTES) {
        return bad_value(err, errlen, "%s is longer than %d characters", env,
                         OBC_CFG_STR_BYTES - 1);
    }
    strcpy(out, text);
    return 0;
}

static int parse_int(const char *text, int *out, char *err, size_t errlen, const char *env)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < -2147483647L || v > 2147483647L) {
        return bad_value(err, errlen, "%s='%s' is not an integer", env, text);
    }
    *out = (int)v;
    return 0;
}

static int parse_dbl(const char *text, double *out, char *err, size_t errlen, const char *env)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || v != v) {
        return bad_value(err, errlen, "%s='%s' is not a number", env, text);
    }
    *out = v;
    return 0;
}

/* Sizes accept K, M and G suffixes (powers of 1024). */
static int parse_size(const char *text, size_t *out, char *err, size_t errlen, const char *env)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned long long mult = 1;
    if (errno == 0 && end != text && text[0] != '-') {
        switch (*end) {
        case 'k':
        case 'K':
            mult = 1ull << 10;
            end++;
            break;
        case 'm':
        case 'M':
            mult = 1ull << 20;
            end++;
            break;
        case 'g':
        case 'G':
            mult = 1ull << 30;
            end++;
            break;
        default:
            break;
        }
        if (*end == '\0' && v <= (~0ull) / mult) {
            *out = (size_t)(v * mult);
            return 0;
        }
    }
    return bad_value(err, errlen, "%s='%s' is not a size (bytes, optional K/M/G)", env, text);
}

static void set_default_STR(char *field, const char *def)
{
    strcpy(field, def);
}

#define OBC_CFG_SET_DEFAULT_STR(field, def) set_default_STR(field, def)
#define OBC_CFG_SET_DEFAULT_INT(field, def) (field) = (def)
#define OBC_CFG_SET_DEFAULT_DBL(field, def) (field) = (def)
#define OBC_CFG_SET_DEFAULT_SIZE(field, def) (field) = (def)
#define OBC_CFG_PARSE_STR(text, field, err, errlen, env) parse_str(text, field, err, errlen, env)
#define OBC_CFG_PARSE_INT(text, field, err, errlen, env) parse_int(text, &(field), err, errlen, env)
#define OBC_CFG_PARSE_DBL(text, field, err, errlen, env) parse_dbl(text, &(field), err, errlen, env)
#define OBC_CFG_PARSE_SIZE(text, field, err, errlen, env) \
    parse_size(text, &(field), err, errlen, env)

void obc__config_defaults(struct obc__config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
#define OBC_PARAM(field, type, env, def, doc) OBC_CFG_SET_DEFAULT_##type(cfg->field, def);
#include "core/params.def"
#undef OBC_PARAM
}

int obc__config_load(struct obc__config *cfg, char *err, size_t errlen)
{
    const char *text;
    obc__config_defaults(cfg);
#define OBC_PARAM(field, type, env, def, doc) \
    text = getenv(env); \
    if (text != NULL && text[0] != '\0' && \
        OBC_CFG_PARSE_##type(text, cfg->field, err, errlen, env) != 0) { \
        return -1; \
    }
#include "core/params.def"
#undef OBC_PARAM
    return 0;
}

static int env_int(const char *name)
{
    const char *text = getenv(name);
    int v = -1;
    char ignored[8];
    if (text == NULL || parse_int(text, &v, ignored, sizeof(ignored), name) != 0) {
        return -1;
    }
    return v;
}

static const struct obc__launcher torchrun = {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"};
static const struct obc__launcher open_mpi = {"Open MPI", "OMPI_COMM_WORLD_RANK",
                                              "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"};
static const struct obc__launcher pmi = {"MPICH/PMI", "PMI_RANK", "PMI_SIZE", NULL};
static const struct obc__launcher slurm = {"Slurm", "SLURM_PROCID", "SLURM_NTASKS",
                                           "SLURM_LOCALID"};

/* The launcher closest to the process first: mpirun or torchrun inside a Slurm
 * allocation leave Slurm's variables set beside their own. */
static const struct obc__launcher *const launchers[] = {&torchrun, &open_mpi, &pmi, &slurm};

static void find_launcher(struct obc__launch_env *env)
{
    env->launcher = NULL;
    env->rank = -1;
    env->world_size = -1;
    env->local_rank = -1;
    for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
        const struct obc__launcher *l = launchers[i];
        int rank = env_int(l->rank_var);
        int size = env_int(l->size_var);
        if (rank >= 0 && size > 0) {
            env->launcher = l;
            env->rank = rank;
            env->world_size = size;
            env->local_rank = l->local_rank_var != NULL ? env_int(l->local_rank_var) : -1;
            return;
        }
    }
}

void obc__config_launch_env(struct obc__launch_env *env)
{
    const char *addr = getenv("MASTER_ADDR");
    find_launcher(env);
    env->master_port = env_int("MASTER_PORT");
    env->master_addr[0] = '\0';
    if (addr != NULL && strlen(addr) < sizeof(env->master_addr)) {
        strcpy(env->master_addr, addr);
    }
    env->agent_store = env->launcher == &torchrun && getenv("TORCHELASTIC_USE_AGENT_STORE") != NULL;
}

int64_t obc__config_timeout_ns(double seconds)
{
    return seconds > 0 ? (int64_t)(seconds * 1e9) : -1;
}
