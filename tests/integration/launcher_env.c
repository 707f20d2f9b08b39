/* SPDX-License-Identifier: MIT */
/*
 * launcher_env.c - obc_comm_init_env under Open MPI's, PMI's (MPICH/Hydra)
 * and Slurm's variables, with nothing else set: 3 forked ranks form a
 * communicator with the right rank and size and broadcast verified data,
 * the rendezvous given by OBC_BOOTSTRAP or by MASTER_ADDR/MASTER_PORT.
 *
 * Every job uses the same address on every rank, so a wrong choice of port
 * would still meet; a decoy socket listening where a wrong rule would point
 * (MASTER_PORT + 1, or MASTER_PORT when OBC_BOOTSTRAP is set) makes such a
 * choice fail instead. Precedence jobs also set a losing launcher's variables
 * with the ranks reversed and another size, which could not form the job.
 * Then, in this process: a launcher without an address, and no launcher at
 * all, fail with OBC_ERR_INVALID_ARG and a message saying what to set.
 */
/* obct: timeout=120 san */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bcase.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 3

struct launcher {
    const char *name; /* as obc's messages name it */
    const char *rank_var;
    const char *size_var;
    const char *local_rank_var; /* NULL: the launcher sets none */
};

static const struct launcher obcrun = {"obcrun", "OBC_RANK", "OBC_NRANKS", NULL};
static const struct launcher torchrun = {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"};
static const struct launcher open_mpi = {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                         "OMPI_COMM_WORLD_LOCAL_RANK"};
static const struct launcher pmi = {"MPICH/PMI", "PMI_RANK", "PMI_SIZE", NULL};
static const struct launcher slurm = {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"};

static const char *const every_launcher_var[] = {"OBC_RANK",
                                                 "OBC_NRANKS",
                                                 "OBC_BOOTSTRAP",
                                                 "OBC_SECRET",
                                                 "OBC_JOB_ID",
                                                 "RANK",
                                                 "WORLD_SIZE",
                                                 "LOCAL_RANK",
                                                 "LOCAL_WORLD_SIZE",
                                                 "MASTER_ADDR",
                                                 "MASTER_PORT",
                                                 "TORCHELASTIC_USE_AGENT_STORE",
                                                 "OMPI_COMM_WORLD_RANK",
                                                 "OMPI_COMM_WORLD_SIZE",
                                                 "OMPI_COMM_WORLD_LOCAL_RANK",
                                                 "PMI_RANK",
                                                 "PMI_SIZE",
                                                 "SLURM_PROCID",
                                                 "SLURM_NTASKS",
                                                 "SLURM_LOCALID",
                                                 NULL};

enum address {
    BOOTSTRAP, /* OBC_BOOTSTRAP only */
    MASTER, /* MASTER_ADDR and MASTER_PORT only; the decoy on MASTER_PORT + 1 */
    BOOTSTRAP_OVER_MASTER /* both; MASTER_PORT is the decoy */
};

struct scenario {
    const char *name;
    const struct launcher *winner;
    const struct launcher *loser; /* NULL: none */
    enum address address;
    int port; /* the port obc must use */
    int decoy_port;
};

static void clear_launcher_env(void)
{
    for (const char *const *k = every_launcher_var; *k != NULL; k++) {
        unsetenv(*k);
    }
}

static void setenv_int(const char *name, int value)
{
    char text[16];
    snprintf(text, sizeof(text), "%d", value);
    setenv(name, text, 1);
}

static void place(const struct launcher *l, int rank, int nranks)
{
    setenv_int(l->rank_var, rank);
    setenv_int(l->size_var, nranks);
    if (l->local_rank_var != NULL) {
        setenv_int(l->local_rank_var, rank);
    }
}

static void set_address(const struct scenario *sc)
{
    char text[32];
    if (sc->address != MASTER) {
        snprintf(text, sizeof(text), "127.0.0.1:%d", sc->port);
        setenv("OBC_BOOTSTRAP", text, 1);
    }
    if (sc->address != BOOTSTRAP) {
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv_int("MASTER_PORT", sc->address == MASTER ? sc->port : sc->decoy_port);
    }
}

/* A socket listening on 127.0.0.1:*port (0: any free port, written back), or -1
 * if the port is taken. */
static int listen_on(int *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    OBCT_ASSERT(fd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)*port);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 8) != 0) {
        close(fd);
        return -1;
    }
    OBCT_ASSERT(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static int free_port(void)
{
    int port = 0;
    int fd = listen_on(&port);
    OBCT_ASSERT(fd >= 0);
    close(fd);
    return port;
}

/* Picks sc's ports; returns the decoy's socket (-1 when the scenario has none). */
static int pick_ports(struct scenario *sc)
{
    int fd = -1;
    sc->port = free_port();
    sc->decoy_port = 0;
    if (sc->address == BOOTSTRAP_OVER_MASTER) {
        fd = listen_on(&sc->decoy_port);
    } else if (sc->address == MASTER) {
        for (int tries = 0; fd < 0 && tries < 50; tries++) {
            sc->port = free_port();
            sc->decoy_port = sc->port + 1;
            fd = sc->decoy_port <= 65535 ? listen_on(&sc->decoy_port) : -1;
        }
    }
    OBCT_ASSERT_MSG(sc->address == BOOTSTRAP || fd >= 0, "%s: no decoy port", sc->name);
    return fd;
}

static int rank_main(obc_comm_t *unused, int rank, int nranks, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    /* A child inherits the parent's count of failures from earlier jobs. */
    int failures_before = obct_failures();
    obc_comm_t *comm = NULL;
    (void)unused;
    (void)self;
    clear_launcher_env();
    place(sc->winner, rank, nranks);
    if (sc->loser != NULL) {
        place(sc->loser, nranks - 1 - rank, nranks + 2);
    }
    set_address(sc);
    /* A wrong port or launcher leaves ranks waiting for peers that never come. */
    setenv("OBC_TIMEOUT", "15", 1);
    comm = obct_comm_from_env();
    OBCT_EQ_INT(obc_comm_rank(comm), rank);
    OBCT_EQ_INT(obc_comm_size(comm), nranks);
    obct_bcast_verified(comm, 4099, OBC_INT32, 1, 0x6c61756eull, OBCT_IN_PLACE);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_failures() > failures_before ? 1 : 0;
}

static void run(struct scenario *sc)
{
    struct obct_job job;
    int failures_before = obct_failures();
    int decoy = pick_ports(sc);
    obct_spawn(&job, NRANKS, rank_main, sc, OBCT_SPAWN_NO_INIT);
    OBCT_ASSERT_MSG(obct_join(&job, 40) == 0, "%s: ranks did not finish in 40 s", sc->name);
    for (int r = 0; r < NRANKS; r++) {
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
    }
    if (decoy >= 0) {
        close(decoy);
    }
    obct_job_free(&job); /* ends the job's quiet scope: the line below stays visible */
    printf("launcher_env: %s (port %d, decoy %d): %s\n", sc->name, sc->port, sc->decoy_port,
           obct_failures() > failures_before ? "FAILED" : "ok");
}

static void expect_init_fails(const char *what, const char *const *wanted_in_message)
{
    obc_comm_t *comm = NULL;
    const char *msg;
    setenv("OBC_TIMEOUT", "5", 1);
    OBCT_CHECK_RC(obc_comm_init_env(&comm), OBC_ERR_INVALID_ARG, NULL);
    OBCT_CHECK(comm == NULL);
    msg = obc_comm_last_error(NULL);
    for (const char *const *w = wanted_in_message; *w != NULL; w++) {
        if (strstr(msg, *w) == NULL) {
            obct_soft_fail(__FILE__, __LINE__, "%s: '%s' is not in the message: %s", what, *w, msg);
        }
    }
    printf("launcher_env: %s fails: %s\n", what, msg);
}

/* Rank 0 would host the rendezvous: obc must refuse before guessing an address. */
static void no_address(const struct launcher *l, int with_master_addr)
{
    const char *wanted[] = {l->name, "OBC_BOOTSTRAP=host:port", "MASTER_ADDR", "MASTER_PORT", NULL};
    char what[96];
    clear_launcher_env();
    place(l, 0, NRANKS);
    if (with_master_addr) {
        setenv("MASTER_ADDR", "127.0.0.1", 1);
    }
    snprintf(what, sizeof(what), "%s without an address%s", l->name,
             with_master_addr ? " (MASTER_ADDR but no MASTER_PORT)" : "");
    expect_init_fails(what, wanted);
}

static void no_launcher(void)
{
    const char *wanted[] = {"OBC_RANK", "RANK",         "OMPI_COMM_WORLD_RANK",
                            "PMI_RANK", "SLURM_PROCID", NULL};
    clear_launcher_env();
    expect_init_fails("no launcher", wanted);
}

int main(void)
{
    struct scenario scenarios[] = {
        {"Open MPI, OBC_BOOTSTRAP", &open_mpi, NULL, BOOTSTRAP, 0, 0},
        {"Open MPI, MASTER_ADDR/MASTER_PORT", &open_mpi, NULL, MASTER, 0, 0},
        {"PMI, OBC_BOOTSTRAP", &pmi, NULL, BOOTSTRAP, 0, 0},
        {"PMI, MASTER_ADDR/MASTER_PORT", &pmi, NULL, MASTER, 0, 0},
        {"Slurm, OBC_BOOTSTRAP", &slurm, NULL, BOOTSTRAP, 0, 0},
        {"Slurm, MASTER_ADDR/MASTER_PORT", &slurm, NULL, MASTER, 0, 0},
        {"Slurm, OBC_BOOTSTRAP beats MASTER_PORT", &slurm, NULL, BOOTSTRAP_OVER_MASTER, 0, 0},
        {"OBC_RANK beats OMPI_COMM_WORLD_RANK", &obcrun, &open_mpi, BOOTSTRAP, 0, 0},
        {"RANK beats OMPI_COMM_WORLD_RANK", &torchrun, &open_mpi, MASTER, 0, 0},
        {"OMPI_COMM_WORLD_RANK beats PMI_RANK", &open_mpi, &pmi, BOOTSTRAP, 0, 0},
        {"OMPI_COMM_WORLD_RANK beats SLURM_PROCID", &open_mpi, &slurm, MASTER, 0, 0},
        {"PMI_RANK beats SLURM_PROCID", &pmi, &slurm, BOOTSTRAP, 0, 0},
    };
    obct_watchdog(110);
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    no_address(&open_mpi, 0);
    no_address(&pmi, 0);
    no_address(&slurm, 1);
    no_launcher();
    return obct_finish("launcher_env");
}
