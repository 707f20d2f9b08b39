/* SPDX-License-Identifier: MIT */
/*
 * hostinfo.c - randomness and host identity. Two processes share memory
 * only if they run under the same kernel (boot id) and in the same network
 * namespace: netlab's simulated hosts are namespaces on one kernel, and
 * they must count as different hosts.
 */
#include "platform/platform.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

int obc__random_bytes(void *out, size_t nbytes)
{
    unsigned char *p = out;
    while (nbytes > 0) {
        ssize_t n = getrandom(p, nbytes, 0);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        p += n;
        nbytes -= (size_t)n;
    }
    return 0;
}

int obc__host_identity(char *out, size_t nbytes)
{
    char boot_id[64] = "";
    struct stat st;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f == NULL) {
        return -errno;
    }
    if (fgets(boot_id, sizeof(boot_id), f) == NULL) {
        fclose(f);
        return -EIO;
    }
    fclose(f);
    boot_id[strcspn(boot_id, "\n")] = '\0';
    if (stat("/proc/self/ns/net", &st) != 0) {
        return -errno;
    }
    snprintf(out, nbytes, "%s/net:%llu", boot_id, (unsigned long long)st.st_ino);
    return 0;
}
