/* SPDX-License-Identifier: MIT */
/*
 * shm_full.c - a /dev/shm too small for the host's segment (a container's
 * default is 64 MiB) fails the init on every rank with OBC_ERR_NO_MEMORY
 * and a message that names /dev/shm, both sizes and --shm-size, instead of
 * a SIGBUS at the first write to a page the tmpfs cannot back. The test
 * mounts its own tmpfs over /dev/shm in a private mount namespace (root
 * only: exit 77, skipped, without CAP_SYS_ADMIN): 8 MiB for a 4-rank job,
 * which needs 28 MiB (43 with more ranks than CPUs); then 64 MiB, where a 2-rank
 * job initialises and broadcasts 4 MiB verified. Neither leaves a segment.
 */
/* obct: timeout=60 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "bcase.h"
#include "obct.h"
#include "spawn_ranks.h"

#define SKIPPED 77

static int port;

/* Every rank's init must fail, with the reason and the fix in its message. */
static int refused_rank(obc_comm_t *unused, int rank, int nranks, struct obct_report *self,
                        void *arg)
{
    obc_comm_t *comm = NULL;
    (void)unused;
    (void)self;
    (void)arg;
    obct_launch_env(rank, nranks, port, "shm-full-test");
    obc_result_t rc = obc_comm_init_env(&comm);
    const char *msg = obc_comm_last_error(NULL);
    printf("shm_full: rank %d: %s: %s\n", rank, obc_result_name(rc), msg);
    OBCT_CHECK_EQ_INT(rc, OBC_ERR_NO_MEMORY);
    OBCT_CHECK(comm == NULL);
    OBCT_CHECK(strstr(msg, "/dev/shm has 8.0 MiB free") != NULL);
    OBCT_CHECK(strstr(msg, "of 4 ranks on this host needs") != NULL);
    OBCT_CHECK(strstr(msg, "--shm-size") != NULL);
    return obct_failures() ? 1 : 0;
}

static int fitting_rank(obc_comm_t *unused, int rank, int nranks, struct obct_report *self,
                        void *arg)
{
    (void)unused;
    (void)self;
    (void)arg;
    obct_launch_env(rank, nranks, port, "shm-full-test");
    obc_comm_t *comm = obct_comm_from_env();
    obct_bcast_verified(comm, 1 << 20, OBC_FLOAT32, 0, 0x73686d66ull, OBCT_IN_PLACE);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_failures() ? 1 : 0;
}

/* A fresh tmpfs of `size` over /dev/shm, seen by this process and its children only. */
static int mount_shm(const char *size)
{
    char opts[32];
    snprintf(opts, sizeof(opts), "size=%s,mode=1777", size);
    return mount("tmpfs", "/dev/shm", "tmpfs", 0, opts);
}

static int shm_entries(void)
{
    int n = 0;
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    if (d != NULL) {
        closedir(d);
    }
    return n;
}

static void run_job(int nranks, obct_rank_fn fn, const char *what)
{
    struct obct_job job;
    port = obct_free_port();
    obct_scenario("shm_full: %s", what);
    obct_spawn(&job, nranks, fn, NULL, OBCT_SPAWN_NO_INIT);
    OBCT_ASSERT_MSG(obct_join(&job, 40) == 0, "ranks did not finish in 40 s");
    for (int r = 0; r < nranks; r++) {
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0); /* a SIGBUS shows here */
    }
    OBCT_CHECK_EQ_INT(shm_entries(), 0);
    obct_job_free(&job);
}

int main(void)
{
    obct_watchdog(55);
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount_shm("8m") != 0) {
        printf("shm_full: skipped: cannot mount a tmpfs in a private namespace (%s)\n",
               strerror(errno));
        return SKIPPED;
    }
    run_job(4, refused_rank, "4 ranks, /dev/shm of 8 MiB: every init refused");
    OBCT_ASSERT(umount("/dev/shm") == 0 && mount_shm("64m") == 0);
    run_job(2, fitting_rank, "2 ranks, /dev/shm of 64 MiB: a verified 4 MiB broadcast");
    return obct_finish("shm_full");
}
