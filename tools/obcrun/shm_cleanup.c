/* SPDX-License-Identifier: MIT */
/*
 * shm_cleanup.c - removes the shared-memory files of this job. The library
 * names its segments /dev/shm/obc-<OBC_JOB_ID>-<random>; a rank that crashes
 * or is killed never unlinks its own, so obcrun removes whatever is left
 * once every rank is gone. Runs on every exit path after spawning.
 */
#include "obcrun.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm"

/* Returns how many files were removed. */
int obcrun_shm_cleanup(const char *job_id)
{
    char prefix[OBCRUN_JOB_ID_BYTES + 8];
    size_t prefix_len;
    struct dirent *entry;
    int nremoved = 0;
    DIR *dir = opendir(SHM_DIR);

    if (dir == NULL) {
        return 0; /* no /dev/shm: the library had nowhere to put segments either */
    }
    prefix_len = (size_t)snprintf(prefix, sizeof(prefix), "obc-%s-", job_id);
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, prefix, prefix_len) != 0) {
            continue;
        }
        if (unlinkat(dirfd(dir), entry->d_name, 0) == 0) {
            nremoved++;
        }
    }
    closedir(dir);
    return nremoved;
}
