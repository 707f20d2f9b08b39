/* SPDX-License-Identifier: MIT */
/*
 * obcrun_helper.c - the rank program obcrun_test.c runs under obcrun. Each
 * rank records its pid in $OBCT_DIR/rank<R>.pid once set up (rank 0 also
 * the job id), then behaves as MODE says: hello (a verified 64 KiB
 * broadcast, print and exit 0; also used by debug_log.c),
 * selfkill K (rank K SIGKILLs itself), exit K CODE (rank K exits CODE),
 * early K CODE (rank K exits before init), hang (everyone waits to be
 * stopped). A rank about to die first writes the time to $OBCT_DIR/stamp.
 */
/* obct: helper */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "obct.h"

static const char *g_dir;

static void write_file(const char *name, const char *fmt, double v)
{
    char path[4096];
    char tmp[4200];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    OBCT_ASSERT_MSG(f != NULL, "cannot write %s", tmp);
    fprintf(f, fmt, v);
    fclose(f);
    OBCT_ASSERT(rename(tmp, path) == 0);
}

static void write_pid(int rank)
{
    char name[64];
    snprintf(name, sizeof(name), "rank%d.pid", rank);
    write_file(name, "%.0f\n", (double)getpid());
}

static void stamp(void)
{
    write_file("stamp", "%.9f\n", obct_now());
}

static void wait_forever(void)
{
    for (;;) {
        pause();
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int who = argc > 2 ? atoi(argv[2]) : -1;
    int code = argc > 3 ? atoi(argv[3]) : 0;
    int rank = obct_rank();
    obc_comm_t *comm;
    g_dir = getenv("OBCT_DIR");
    OBCT_ASSERT_MSG(g_dir != NULL, "OBCT_DIR is not set");
    OBCT_ASSERT_MSG(rank >= 0 && getenv("OBC_NRANKS") && getenv("OBC_BOOTSTRAP") &&
                        getenv("OBC_SECRET") && getenv("OBC_JOB_ID"),
                    "obcrun did not set OBC_RANK, OBC_NRANKS, OBC_BOOTSTRAP, OBC_SECRET, "
                    "OBC_JOB_ID");
    if (strcmp(mode, "early") == 0) {
        write_pid(rank);
        if (rank == who) {
            stamp();
            exit(code);
        }
    }
    comm = obct_comm_from_env();
    if (rank == 0) {
        FILE *f;
        char path[4096];
        snprintf(path, sizeof(path), "%s/job_id", g_dir);
        f = fopen(path, "w");
        OBCT_ASSERT(f != NULL);
        fprintf(f, "%s\n", getenv("OBC_JOB_ID"));
        fclose(f);
    }
    OBCT_OK(obc_barrier(comm), comm);
    if (strcmp(mode, "hello") == 0) {
        unsigned char buf[65536];
        obct_fill(buf, sizeof(buf), 0x68656c6cull, 0);
        if (rank != 0) {
            obct_poison(buf, sizeof(buf));
        }
        OBCT_OK(obc_bcast(buf, sizeof(buf), OBC_UINT8, 0, comm), comm);
        if (obct_verify("hello broadcast", buf, sizeof(buf), 0x68656c6cull, 0) != 0) {
            return 1;
        }
        printf("hello from rank %d of %d\n", rank, obc_comm_size(comm));
        OBCT_OK(obc_comm_destroy(comm), NULL);
        return 0;
    }
    write_pid(rank);
    if (strcmp(mode, "selfkill") == 0 && rank == who) {
        stamp();
        raise(SIGKILL);
    }
    if (strcmp(mode, "exit") == 0 && rank == who) {
        stamp();
        exit(code);
    }
    wait_forever();
}
