/* SPDX-License-Identifier: MIT */
/*
 * comm_algorithm.c - obc_comm_algorithm and obc_comm_algorithm_forced from
 * outside: without OBC_ALGO nothing is forced and the small allreduce is
 * not the ring; every rank gets the same answer; a communicator created
 * after OBC_ALGO=allreduce=ring,broadcast=arena answers ring and arena
 * (and says they are forced), and runs them; NULL or unknown arguments and
 * a buffer too short give OBC_ERR_INVALID_ARG with an empty name.
 * obc_comm_machine_info: every rank of the job is on this machine, the
 * CPUs are between 1 and those online, the same on every rank, and more
 * ranks than CPUs online is crowded.
 */
/* obct: nranks=2,4 timeout=120 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "obct.h"

static const obc_coll_t all_colls[] = {
    OBC_COLL_BROADCAST, OBC_COLL_BARRIER,        OBC_COLL_ALLREDUCE, OBC_COLL_REDUCE,
    OBC_COLL_ALLGATHER, OBC_COLL_REDUCE_SCATTER, OBC_COLL_GATHER,    OBC_COLL_SCATTER,
    OBC_COLL_ALLTOALL,  OBC_COLL_ALLTOALLV,      OBC_COLL_ALLGATHERV};

static void expect_name(obc_comm_t *comm, obc_coll_t coll, size_t nbytes, const char *want,
                        int equal)
{
    char name[32];
    OBCT_OK(obc_comm_algorithm(comm, coll, nbytes, name, sizeof(name)), comm);
    if ((strcmp(name, want) == 0) != equal) {
        OBCT_FAIL("collective %d, %zu bytes: algorithm '%s', expected %s'%s'", (int)coll, nbytes,
                  name, equal ? "" : "anything but ", want);
    }
}

static void expect_forced(obc_comm_t *comm, obc_coll_t coll, const char *want)
{
    char name[32];
    OBCT_OK(obc_comm_algorithm_forced(comm, coll, name, sizeof(name)), comm);
    if (strcmp(name, want) != 0) {
        OBCT_FAIL("collective %d: forced '%s', expected '%s'", (int)coll, name, want);
    }
}

/* Every rank's answer is rank 0's: the choice depends only on what all share. */
static void same_everywhere(obc_comm_t *comm)
{
    char mine[32], root[32];
    for (size_t i = 0; i < sizeof(all_colls) / sizeof(all_colls[0]); i++) {
        for (size_t nbytes = 8; nbytes <= (64u << 20); nbytes *= 16) {
            OBCT_OK(obc_comm_algorithm(comm, all_colls[i], nbytes, mine, sizeof(mine)), comm);
            memcpy(root, mine, sizeof(root));
            OBCT_OK(obc_bcast(root, sizeof(root), OBC_UINT8, 0, comm), comm);
            if (strcmp(mine, root) != 0) {
                OBCT_FAIL("collective %d, %zu bytes: '%s' here, '%s' on rank 0", (int)all_colls[i],
                          nbytes, mine, root);
            }
        }
    }
}

static void bad_arguments(obc_comm_t *comm)
{
    char name[32] = "x";
    OBCT_RC(obc_comm_algorithm(NULL, OBC_COLL_ALLREDUCE, 8, name, sizeof(name)),
            OBC_ERR_INVALID_ARG, NULL);
    OBCT_EQ_INT(name[0], '\0');
    OBCT_RC(obc_comm_algorithm(comm, OBC_COLL_ALLREDUCE, 8, NULL, sizeof(name)),
            OBC_ERR_INVALID_ARG, comm);
    OBCT_RC(obc_comm_algorithm(comm, OBC_COLL_ALLREDUCE, 8, name, 0), OBC_ERR_INVALID_ARG, comm);
    OBCT_RC(obc_comm_algorithm(comm, (obc_coll_t)99, 8, name, sizeof(name)), OBC_ERR_INVALID_ARG,
            comm);
    OBCT_RC(obc_comm_algorithm(comm, (obc_coll_t)-1, 8, name, sizeof(name)), OBC_ERR_INVALID_ARG,
            comm);
    OBCT_CHECK(strstr(obc_comm_last_error(comm), "obc_comm_algorithm") != NULL);
    /* "ring" needs 5 bytes */
    OBCT_RC(obc_comm_algorithm(comm, OBC_COLL_ALLREDUCE, 8, name, 4), OBC_ERR_INVALID_ARG, comm);
    OBCT_EQ_INT(name[0], '\0');
    OBCT_RC(obc_comm_algorithm_forced(NULL, OBC_COLL_ALLREDUCE, name, sizeof(name)),
            OBC_ERR_INVALID_ARG, NULL);
    OBCT_RC(
        obc_comm_algorithm_forced(comm, (obc_coll_t)(OBC_COLL_ALLGATHERV + 1), name, sizeof(name)),
        OBC_ERR_INVALID_ARG, comm);
    /* the communicator stays usable */
    OBCT_OK(obc_barrier(comm), comm);
}

static obc_comm_t *comm_like(obc_comm_t *world)
{
    obc_unique_id_t id;
    obc_comm_t *comm = NULL;
    memset(&id, 0, sizeof(id));
    if (obc_comm_rank(world) == 0) {
        OBCT_OK(obc_get_unique_id(&id), NULL);
    }
    OBCT_OK(obc_bcast(&id, sizeof(id), OBC_UINT8, 0, world), world);
    OBCT_OK(obc_comm_init_rank(&comm, obc_comm_size(world), &id, obc_comm_rank(world)), NULL);
    return comm;
}

static void forced_runs(obc_comm_t *comm)
{
    char name[32];
    float v[2] = {1.0f, (float)obc_comm_rank(comm)};
    int n = obc_comm_size(comm);
    expect_name(comm, OBC_COLL_ALLREDUCE, 8, "ring", 1);
    expect_name(comm, OBC_COLL_BROADCAST, 8, "arena", 1);
    expect_forced(comm, OBC_COLL_ALLREDUCE, "ring");
    expect_forced(comm, OBC_COLL_BROADCAST, "arena");
    expect_forced(comm, OBC_COLL_BARRIER, "");
    OBCT_RC(obc_comm_algorithm_forced(comm, OBC_COLL_ALLREDUCE, name, 4), OBC_ERR_INVALID_ARG,
            comm);
    OBCT_EQ_INT(name[0], '\0');
    OBCT_OK(obc_allreduce(v, v, 2, OBC_FLOAT32, OBC_SUM, comm), comm);
    OBCT_CHECK_EQ_INT((int)v[0], n);
    OBCT_CHECK_EQ_INT((int)v[1], n * (n - 1) / 2);
}

static void machine_info(obc_comm_t *comm)
{
    int ranks = -1, cpus = -1, n = obc_comm_size(comm);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    OBCT_OK(obc_comm_machine_info(comm, &ranks, &cpus), comm);
    OBCT_EQ_INT(ranks, n);
    OBCT_ASSERT_MSG(cpus >= 1 && cpus <= online, "cpus %d, %ld online", cpus, online);
    if (n > online) {
        OBCT_ASSERT_MSG(ranks > cpus, "%d ranks on %ld CPUs online: %d CPUs", n, online, cpus);
    }
    int mine[2] = {cpus, -cpus}, all[2];
    OBCT_OK(obc_allreduce(mine, all, 2, OBC_INT32, OBC_MIN, comm), comm);
    OBCT_EQ_INT(all[0], -all[1]); /* the same on every rank */
    OBCT_OK(obc_comm_machine_info(comm, NULL, NULL), comm);
    OBCT_RC(obc_comm_machine_info(NULL, &ranks, &cpus), OBC_ERR_INVALID_ARG, NULL);
}

int main(void)
{
    unsetenv("OBC_ALGO"); /* read at creation: the world forces nothing */
    obc_comm_t *world = obct_comm_from_env();
    for (size_t i = 0; i < sizeof(all_colls) / sizeof(all_colls[0]); i++) {
        expect_forced(world, all_colls[i], "");
    }
    expect_name(world, OBC_COLL_ALLREDUCE, 8, "ring", 0);
    expect_name(world, OBC_COLL_BROADCAST, 8, "eager", 1);
    same_everywhere(world);
    bad_arguments(world);
    machine_info(world);

    setenv("OBC_ALGO", "allreduce=ring,broadcast=arena", 1);
    obc_comm_t *forced = comm_like(world);
    unsetenv("OBC_ALGO");
    forced_runs(forced);
    same_everywhere(forced);
    expect_name(world, OBC_COLL_ALLREDUCE, 8, "ring", 0); /* the world is unchanged */

    OBCT_OK(obc_comm_destroy(forced), NULL);
    OBCT_OK(obc_comm_destroy(world), NULL);
    return obct_finish("comm_algorithm");
}
