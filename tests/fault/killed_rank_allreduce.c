/* SPDX-License-Identifier: MIT */
/*
 * killed_rank_allreduce.c - a rank SIGKILLed in the middle of an allreduce:
 * 4 ranks (forked by spawn_ranks.c) loop 32 MiB float32 allreduces; the
 * parent kills rank 2, then in further jobs rank 0, rank 1 under the forced
 * ring algorithm, rank 2 under the single-copy one (whose survivors may be
 * reading the dead rank's buffers; the default on a host with fewer CPUs
 * than ranks), rank 3 under the hierarchical one with two "hosts"
 * (OBC_HOST_SPLIT=2), and the last rank during a run of small allreduces.
 * Every survivor must return OBC_ERR_PEER_LOST or OBC_ERR_ABORTED within 10 s
 * of the kill (measured times printed), a PEER_LOST message must name the
 * lost rank and at least one survivor's must, the next call must fail at once
 * (the comm is broken), and no /dev/shm segment may be left behind. The same
 * assertions as killed_rank.c (broadcast).
 */
/* obct: timeout=240 asan */
/* obct: name=n2 env=OBCT_FAULT_NRANKS=2 timeout=120 */
/* obct: name=n8 env=OBCT_FAULT_NRANKS=8 timeout=180 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "data.h"
#include "obct.h"
#include "killcheck.h"
#include "spawn_ranks.h"

#define LIMIT_S 2.0 /* issue #5: a dead peer is reported within 2 s */

static int NRANKS = 4; /* OBCT_FAULT_NRANKS */
#define LOOP_S 30.0 /* loop until the kill, bounded in time (see killed_rank.c) */

struct scenario {
    const char *name;
    int victim;
    size_t count; /* float32 elements */
    const char *algo; /* OBC_ALGO, or NULL */
    const char *split; /* OBC_HOST_SPLIT, or NULL */
};

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    struct obct_buf send;
    struct obct_buf recv;
    float small[8] = {0};
    obc_result_t rc = OBC_SUCCESS;
    int failures0 = obct_failures(); /* inherited from the parent at fork */
    double t;
    (void)nranks;
    obct_buf_alloc(&send, sc->count * sizeof(float), 0);
    obct_buf_alloc(&recv, sc->count * sizeof(float), 0);
    for (size_t i = 0; i < sc->count; i++) {
        ((float *)send.data)[i] = (float)(i % 1000) + (float)rank;
    }
    for (double end = obct_now() + LOOP_S; rc == OBC_SUCCESS && obct_now() < end;) {
        obct_progress(self);
        rc = obc_allreduce(send.data, recv.data, sc->count, OBC_FLOAT32, OBC_SUM, comm);
    }
    self->t_event = obct_now();
    self->rc = rc;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_allreduce(small, small, 8, OBC_FLOAT32, OBC_SUM, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    obct_buf_check("sendbuf", &send);
    obct_buf_check("recvbuf", &recv);
    obct_buf_free(&send);
    obct_buf_free(&recv);
    (void)rank;
    return obct_failures() > failures0 ? 1 : 0;
}

static void set_env(const char *name, const char *value)
{
    if (value != NULL) {
        setenv(name, value, 1);
    } else {
        unsetenv(name);
    }
}

static void run(const struct scenario *sc)
{
    struct obct_job job;
    obct_scenario("killed_rank_allreduce: %s: kill rank %d of %d, %zu-element float32 allreduces "
                  "(OBC_ALGO=%s OBC_HOST_SPLIT=%s)",
                  sc->name, sc->victim, NRANKS, sc->count, sc->algo ? sc->algo : "-",
                  sc->split ? sc->split : "-");
    set_env("OBC_ALGO", sc->algo); /* the children inherit the environment */
    set_env("OBC_HOST_SPLIT", sc->split);
    obct_spawn(&job, NRANKS, rank_main, (void *)sc, 0);
    obct_kill_and_check(&job, "killed_rank_allreduce", sc->name, sc->victim, "allreduces",
                        LIMIT_S * obct_time_scale());
    set_env("OBC_ALGO", NULL);
    set_env("OBC_HOST_SPLIT", NULL);
    fflush(stdout);
}

int main(void)
{
    const char *n = getenv("OBCT_FAULT_NRANKS");
    NRANKS = n != NULL ? atoi(n) : 4;
    OBCT_ASSERT(NRANKS >= 2 && NRANKS <= OBCT_MAX_RANKS);
    /* Other rank counts: the root, a middle rank and the last one. */
    const struct scenario others[] = {
        {"rank 0, large", 0, (size_t)8 << 20, NULL, NULL},
        {"middle rank, large", NRANKS / 2, (size_t)8 << 20, NULL, NULL},
        {"last rank, small", NRANKS - 1, 2, NULL, NULL},
    };
    static const struct scenario scenarios[] = {
        {"rank 2, large", 2, (size_t)8 << 20, NULL, NULL},
        {"rank 0, large", 0, (size_t)8 << 20, NULL, NULL},
        {"rank 1, large, ring", 1, (size_t)8 << 20, "allreduce=ring", NULL},
        {"rank 2, large, cma", 2, (size_t)8 << 20, "allreduce=cma", NULL},
        {"rank 3, large, hier on 2 hosts", 3, (size_t)8 << 20, "allreduce=hier", "2"},
        {"last rank, small", 3, 2, NULL, NULL},
    };
    obct_watchdog(220);
    setenv("OBC_TIMEOUT", "20", 1); /* a hang shows as a failure, not a 300 s wait */
    if (NRANKS != 4) {
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
            run(&others[i]);
        }
        return obct_finish("killed_rank_allreduce");
    }
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("killed_rank_allreduce");
}
