/* SPDX-License-Identifier: MIT */
/*
 * timeout_skip.c - OBC_TIMEOUT: with OBC_TIMEOUT=3 and 3 ranks, a root that is
 * 1.5 s late is still waited for (no early timeout), and a root that skips a
 * broadcast (staying alive, so no peer is lost) makes the others fail with
 * OBC_ERR_TIMEOUT after 3 s plus a little: between 2.5 s and 6 s, measured
 * and printed. The next call fails at once. A second job sets the timeout
 * with obc_comm_set_timeout(comm, 2) instead of the environment; a third
 * checks that OBC_TIMEOUT=0 means "never" (a root 1.5 s late is waited for).
 * The timeout names the culprit: every waiting rank's message says that
 * rank 0 has not arrived at broadcast #2 and last completed broadcast #1,
 * and the first job's flight recorder (OBC_DEBUG_DUMP) holds, per waiting
 * rank, its own recent operations and rank 0's.
 */
/* obct: timeout=120 asan waits */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bcase.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 3
#define ROOT 0

struct scenario {
    const char *name;
    const char *env; /* OBC_TIMEOUT, or NULL for unset */
    bool dump; /* OBC_DEBUG_DUMP into a temporary directory */
    double api_timeout; /* > 0: obc_comm_set_timeout */
    double expect_s; /* the timeout; 0: never (the root is late, then joins) */
};

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    int buf[16] = {0};
    double t;
    (void)nranks;
    if (sc->api_timeout > 0) {
        OBCT_OK(obc_comm_set_timeout(comm, sc->api_timeout), comm);
    }
    obct_bcast_verified(comm, 4099, OBC_INT32, ROOT, 1, OBCT_IN_PLACE);
    /* A late root, well inside the timeout, must be waited for. */
    if (rank == ROOT) {
        obct_sleep(sc->expect_s > 0 ? sc->expect_s / 2 : 1.5);
    }
    obct_bcast_verified(comm, 4099, OBC_INT32, ROOT, 2, OBCT_IN_PLACE);
    if (sc->expect_s == 0) {
        OBCT_OK(obc_comm_destroy(comm), NULL);
        return obct_failures() ? 1 : 0;
    }
    if (rank == ROOT) {
        /* Skip the next broadcast; stay alive past the others' timeout so that
         * they see a timeout, not a lost peer. */
        obct_sleep(2 * sc->expect_s);
        obc_comm_destroy(comm);
        return obct_failures() ? 1 : 0;
    }
    t = obct_now();
    self->rc = obc_bcast(buf, 16, OBC_INT32, ROOT, comm);
    self->t_event = obct_now();
    self->value = self->t_event - t;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_bcast(buf, 16, OBC_INT32, ROOT, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    return obct_failures() ? 1 : 0;
}

/* The flight recorder rank r wrote: its own operations and the late root's. */
static void check_dump(const char *dir, int r)
{
    char path[256], text[8192];
    snprintf(path, sizeof(path), "%s/fr.%d", dir, r);
    FILE *f = fopen(path, "r");
    OBCT_CHECK(f != NULL);
    if (f == NULL) {
        return;
    }
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    char own[64];
    snprintf(own, sizeof(own), "flight recorder: rank %d (seen by rank %d)", r, r);
    OBCT_CHECK(strstr(text, own) != NULL);
    snprintf(own, sizeof(own), "flight recorder: rank 0 (seen by rank %d)", r);
    OBCT_CHECK(strstr(text, own) != NULL);
    OBCT_CHECK(strstr(text, "#2 broadcast (count 16, int32, root 0) 64 bytes: running") != NULL);
    OBCT_CHECK(strstr(text, "#1 broadcast (count 4099, int32, root 0) 16396 bytes: done") != NULL);
    unlink(path);
}

static void run(const struct scenario *sc)
{
    struct obct_job job;
    char dir[] = "/tmp/obct-dump-XXXXXX", dump[64];
    if (sc->dump) {
        OBCT_ASSERT(mkdtemp(dir) != NULL);
        snprintf(dump, sizeof(dump), "%s/fr", dir);
        setenv("OBC_DEBUG_DUMP", dump, 1);
    } else {
        unsetenv("OBC_DEBUG_DUMP");
    }
    if (sc->env != NULL) {
        setenv("OBC_TIMEOUT", sc->env, 1);
    } else {
        unsetenv("OBC_TIMEOUT");
    }
    obct_scenario("timeout_skip: %s", sc->name);
    obct_spawn(&job, NRANKS, rank_main, (void *)sc, 0);
    if (obct_join(&job, 4 * sc->expect_s + 20) != 0) {
        OBCT_FAIL("%s: ranks still running %.0f s after the start", sc->name,
                  4 * sc->expect_s + 20);
    }
    if (sc->expect_s == 0) {
        printf("timeout_skip: %s: a root 1.5 s late was waited for\n", sc->name);
    }
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        if (r == ROOT || sc->expect_s == 0) {
            continue;
        }
        printf("timeout_skip: %s: rank %d got %s after %.3f s (timeout %.1f s), next call %s in "
               "%.3f s; message: \"%s\"\n",
               sc->name, r, obct_rc_name(rep->rc), rep->value, sc->expect_s,
               obct_rc_name(rep->rc_after), rep->after_s, rep->msg);
        OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_TIMEOUT);
        OBCT_CHECK(rep->value >= sc->expect_s - 0.5);
        OBCT_CHECK(rep->value < 2 * sc->expect_s);
        OBCT_CHECK(strstr(rep->msg,
                          "rank 0 has not arrived at broadcast #2 (last completed "
                          "broadcast #1)") != NULL);
        if (sc->dump) {
            check_dump(dir, r);
        }
        OBCT_CHECK(rep->rc_after == OBC_ERR_ABORTED || rep->rc_after == OBC_ERR_TIMEOUT);
        OBCT_CHECK_LE_DBL(rep->after_s, 0.5);
    }
    if (sc->dump) {
        rmdir(dir);
        unsetenv("OBC_DEBUG_DUMP");
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
    fflush(stdout);
}

int main(void)
{
    static const struct scenario scenarios[] = {
        {"OBC_TIMEOUT=3", "3", true, 0, 3.0},
        {"obc_comm_set_timeout(2)", NULL, false, 2.0, 2.0},
        {"OBC_TIMEOUT=0 (never)", "0", false, 0, 0},
    };
    obct_watchdog(110);
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("timeout_skip");
}
