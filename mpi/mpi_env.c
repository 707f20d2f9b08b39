/* SPDX-License-Identifier: MIT */
/*
 * mpi_env.c - the MPI layer's only reader of the environment (libobc reads
 * its own OBC_* variables in src/core/config.c; the layer is a separate
 * library and reads just the four that decide how it behaves). Read once,
 * at the first interposed call.
 */
#include "mpi_layer.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
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

/* A byte count, with an optional k, m or g (KiB, MiB, GiB); -1 when unset.
 * Anything else is reported once and read as unset. */
static long long bytes(const char *name)
{
    const char *v = getenv(name);
    char *end = NULL;
    if (v == NULL || v[0] == '\0') {
        return -1;
    }
    errno = 0;
    long long n = strtoll(v, &end, 10);
    int shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (errno != 0 || end == v || *end != '\0' || n < 0 || n > (LLONG_MAX >> shift)) {
        fprintf(stderr, "obc-mpi: %s=%s is not a byte count; using the default\n", name, v);
        return -1;
    }
    return n << shift;
}

void obc__mpi_env_read(struct obc__mpi_env *env)
{
    const char *t = getenv("OBC_TIMEOUT");
    env->is_enabled = flag("OBC_MPI", true);
    env->is_report = flag("OBC_MPI_REPORT", false);
    env->has_timeout = t != NULL && t[0] != '\0';
    env->min_bytes = bytes("OBC_MPI_MIN_BYTES");
}
