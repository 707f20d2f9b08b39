/* SPDX-License-Identifier: MIT */
/*
 * mpi_env.c - the MPI layer's only reader of the environment (libobc reads
 * its own OBC_* variables in src/core/config.c; the layer is a separate
 * library and reads just the three that decide how it behaves). Read once,
 * at the first interposed call.
 */
#include "mpi_layer.h"

#include <stdlib.h>
#include <string.h>

/* "0", "no", "off", "false" are off; unset is the default; anything else on. */
static bool flag(const char *name, bool dflt)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0') {
        return dflt;
    }
    return !(strcmp(v, "0") == 0 || strcmp(v, "no") == 0 || strcmp(v, "off") == 0 ||
             strcmp(v, "false") == 0);
}

void obc__mpi_env_read(struct obc__mpi_env *env)
{
    const char *t = getenv("OBC_TIMEOUT");
    env->is_enabled = flag("OBC_MPI", true);
    env->is_report = flag("OBC_MPI_REPORT", false);
    env->has_timeout = t != NULL && t[0] != '\0';
}
