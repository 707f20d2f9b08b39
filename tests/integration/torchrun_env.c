/* SPDX-License-Identifier: MIT */
/*
 * torchrun_env.c - obc_comm_init_env under torchrun's variables (RANK,
 * WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_RANK; no OBC_* set): 3 forked
 * ranks form a communicator with the right rank and size and broadcast
 * verified data. A second job sets TORCHELASTIC_USE_AGENT_STORE, where obc
 * must listen on MASTER_PORT + 1. Ports come from binding port 0.
 */
/* obct: timeout=90 san */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bcase.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 3

struct scenario {
    const char *name;
    int agent_store;
    int port; /* the port obc must use */
};

static int rank_main(obc_comm_t *unused, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    char v[32];
    obc_comm_t *comm = NULL;
    (void)unused;
    (void)self;
    for (const char *const *k = (const char *const[]){"OBC_RANK", "OBC_NRANKS", "OBC_BOOTSTRAP",
                                                      "OBC_SECRET", "OBC_JOB_ID", NULL};
         *k != NULL; k++) {
        unsetenv(*k);
    }
    snprintf(v, sizeof(v), "%d", rank);
    setenv("RANK", v, 1);
    setenv("LOCAL_RANK", v, 1);
    snprintf(v, sizeof(v), "%d", nranks);
    setenv("WORLD_SIZE", v, 1);
    setenv("LOCAL_WORLD_SIZE", v, 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    snprintf(v, sizeof(v), "%d", sc->agent_store ? sc->port - 1 : sc->port);
    setenv("MASTER_PORT", v, 1);
    if (sc->agent_store) {
        setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
    } else {
        unsetenv("TORCHELASTIC_USE_AGENT_STORE");
    }
    comm = obct_comm_from_env();
    OBCT_EQ_INT(obc_comm_rank(comm), rank);
    OBCT_EQ_INT(obc_comm_size(comm), nranks);
    obct_bcast_verified(comm, 12345, OBC_FLOAT16, nranks - 1, 0x746f7263ull, OBCT_IN_PLACE);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_failures() ? 1 : 0;
}

static void run(struct scenario *sc)
{
    struct obct_job job;
    sc->port = obct_free_port();
    obct_spawn(&job, NRANKS, rank_main, sc, OBCT_SPAWN_NO_INIT);
    OBCT_ASSERT_MSG(obct_join(&job, 40) == 0, "%s: ranks did not finish in 40 s", sc->name);
    for (int r = 0; r < NRANKS; r++) {
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
    }
    obct_job_free(&job); /* ends the job's quiet scope: the line below stays visible */
    printf("torchrun_env: %s (port %d): %s\n", sc->name, sc->port,
           obct_failures() ? "FAILED" : "ok");
}

int main(void)
{
    struct scenario scenarios[] = {
        {"RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT", 0, 0},
        {"TORCHELASTIC_USE_AGENT_STORE: MASTER_PORT + 1", 1, 0},
    };
    obct_watchdog(80);
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("torchrun_env");
}
