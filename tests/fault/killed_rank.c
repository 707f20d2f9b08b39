/* SPDX-License-Identifier: MIT */
/*
 * killed_rank.c - a rank SIGKILLed in the middle of a broadcast: 4 ranks
 * (forked by spawn_ranks.c) loop broadcasts; the parent kills a non-root, then in
 * a second job the root, then a rank during a run of small broadcasts. Every
 * survivor must return OBC_ERR_PEER_LOST or OBC_ERR_ABORTED within 10 s of
 * the kill (measured times printed), the survivors' messages must name the
 * lost rank, and the next call must fail at once (the comm is broken).
 */
/* obct: timeout=180 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "obct.h"
#include "killcheck.h"
#include "spawn_ranks.h"

#define NRANKS 4
#define LIMIT_S 10.0
/* Loop until the kill breaks the communicator: a bound in time, not in calls,
 * because small broadcasts can outrun any fixed count (100000 took < 40 ms). */
#define LOOP_S 30.0

struct scenario {
    const char *name;
    int victim;
    int root;
    size_t nbytes;
};

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    struct obct_buf buf;
    unsigned char small[8] = {0};
    obc_result_t rc = OBC_SUCCESS;
    double t;
    (void)nranks;
    obct_buf_alloc(&buf, sc->nbytes, 0);
    obct_fill(buf.data, sc->nbytes, 1, sc->root);
    for (double end = obct_now() + LOOP_S; rc == OBC_SUCCESS && obct_now() < end;) {
        obct_progress(self);
        rc = obc_bcast(buf.data, sc->nbytes, OBC_UINT8, sc->root, comm);
    }
    self->t_event = obct_now();
    self->rc = rc;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_bcast(small, sizeof(small), OBC_UINT8, sc->root, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    obct_buf_free(&buf);
    (void)rank;
    return 0;
}

static void run(const struct scenario *sc)
{
    struct obct_job job;
    printf("killed_rank: %s: kill rank %d of %d, root %d, %zu-byte broadcasts\n", sc->name,
           sc->victim, NRANKS, sc->root, sc->nbytes);
    obct_spawn(&job, NRANKS, rank_main, (void *)sc, 0);
    obct_kill_and_check(&job, "killed_rank", sc->name, sc->victim, "broadcasts", LIMIT_S);
    fflush(stdout);
}

int main(void)
{
    static const struct scenario scenarios[] = {
        {"non-root, large", 2, 0, (size_t)32 << 20},
        {"root, large", 0, 0, (size_t)32 << 20},
        {"last rank, small", 3, 1, 8},
    };
    obct_watchdog(150);
    setenv("OBC_TIMEOUT", "20", 1); /* a hang shows as a failure, not a 300 s wait */
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("killed_rank");
}
