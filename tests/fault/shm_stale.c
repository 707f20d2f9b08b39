/* SPDX-License-Identifier: MIT */
/*
 * shm_stale.c - no /dev/shm segment outlives its job, also without obcrun
 * (which sweeps its own job's names): a job without OBC_JOB_ID names its
 * segment after the creator's pid, and the next creator on the host
 * removes segments whose creator is dead. Here a segment is planted under
 * the name a dead process would have used, and another under this (live)
 * process's pid; a 3-rank job started with obcrun's variables but no job id
 * must remove the first, keep the second, leave none of its own, and
 * broadcast verified data.
 */
/* obct: timeout=60 san */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bcase.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 3

static int port;

static void plant(const char *name)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    OBCT_ASSERT(fd >= 0);
    OBCT_ASSERT(ftruncate(fd, 4096) == 0);
    close(fd);
}

static bool exists(const char *name)
{
    char path[128];
    snprintf(path, sizeof(path), "/dev/shm%s", name);
    return access(path, F_OK) == 0;
}

static int rank_main(obc_comm_t *unused, int rank, int nranks, struct obct_report *self, void *arg)
{
    obc_comm_t *comm = NULL;
    (void)unused;
    (void)self;
    (void)arg;
    unsetenv("OBC_JOB_ID");
    obct_launch_env(rank, nranks, port, "shm-stale-test");
    comm = obct_comm_from_env();
    obct_bcast_verified(comm, 100003, OBC_FLOAT32, 1, 0x7374616cull, OBCT_IN_PLACE);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_failures() ? 1 : 0;
}

int main(void)
{
    struct obct_job job;
    char dead[64], live[64];
    obct_watchdog(50);
    pid_t child = fork();
    OBCT_ASSERT(child >= 0);
    if (child == 0) {
        _exit(0);
    }
    OBCT_ASSERT(waitpid(child, NULL, 0) == child); /* its pid is now free */
    snprintf(dead, sizeof(dead), "/obc-p%d-00000000deadbeef", (int)child);
    snprintf(live, sizeof(live), "/obc-p%d-00000000cafecafe", (int)getpid());
    plant(dead);
    plant(live);
    port = obct_free_port();
    obct_scenario("shm_stale: a %d-rank job without a job id, beside a dead and a live segment",
                  NRANKS);
    obct_spawn(&job, NRANKS, rank_main, NULL, OBCT_SPAWN_NO_INIT);
    OBCT_ASSERT_MSG(obct_join(&job, 40) == 0, "ranks did not finish in 40 s");
    for (int r = 0; r < NRANKS; r++) {
        char own[64];
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        snprintf(own, sizeof(own), "/obc-p%d-", (int)job.pid[r]);
        /* The job's own segment was unlinked once everyone attached. */
        DIR *d = opendir("/dev/shm");
        for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
            OBCT_CHECK(strncmp(e->d_name, own + 1, strlen(own) - 1) != 0);
        }
        if (d != NULL) {
            closedir(d);
        }
    }
    printf("shm_stale: dead creator's segment %s: %s; live creator's %s: %s\n", dead,
           exists(dead) ? "still there" : "removed", live, exists(live) ? "kept" : "removed");
    OBCT_CHECK(!exists(dead));
    OBCT_CHECK(exists(live));
    shm_unlink(dead);
    shm_unlink(live);
    obct_job_free(&job);
    return obct_finish("shm_stale");
}
