/* SPDX-License-Identifier: MIT */
/*
 * multi_comm.c - several communicators in one process: the obcrun world,
 * one made with obc_get_unique_id + obc_comm_init_rank (the id made on world
 * rank 0 and broadcast), and one with ranks reversed (the id made on the
 * last world rank, so the rendezvous host is not the new rank 0). Rank and size are right on each;
 * broadcasts interleave across them without mixing data; then two threads
 * broadcast concurrently, each on its own communicator (allowed by obc.h).
 */
/* obct: nranks=1,3,4 timeout=120 san=3 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bcase.h"
#include "obct.h"

/* The id is made by world rank `maker`, which then hosts the rendezvous. */
static obc_comm_t *make_comm(obc_comm_t *world, int myrank, int maker)
{
    obc_unique_id_t id;
    obc_comm_t *comm = NULL;
    memset(&id, 0, sizeof(id));
    if (obc_comm_rank(world) == maker) {
        OBCT_OK(obc_get_unique_id(&id), NULL);
    }
    OBCT_OK(obc_bcast(&id, sizeof(id), OBC_UINT8, maker, world), world);
    OBCT_OK(obc_comm_init_rank(&comm, obc_comm_size(world), &id, myrank), NULL);
    OBCT_ASSERT(comm != NULL);
    OBCT_EQ_INT(obc_comm_rank(comm), myrank);
    OBCT_EQ_INT(obc_comm_size(comm), obc_comm_size(world));
    return comm;
}

static void verified(obc_comm_t *comm, size_t count, int root, uint64_t seed)
{
    obct_bcast_verified(comm, count, OBC_UINT32, root, seed, OBCT_OUT_OF_PLACE);
}

struct thread_arg {
    obc_comm_t *comm;
    uint64_t seed;
};

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    int n = obc_comm_size(a->comm);
    for (int i = 0; i < 20; i++) {
        verified(a->comm, (size_t)(i * 10007 % 300007), i % n, a->seed + (uint64_t)i);
    }
    return NULL;
}

int main(void)
{
    obc_comm_t *world = obct_comm_from_env();
    int rank = obc_comm_rank(world);
    int n = obc_comm_size(world);
    obc_comm_t *same = make_comm(world, rank, 0);
    obc_comm_t *reversed = make_comm(world, n - 1 - rank, n - 1);
    obc_comm_t *comms[3] = {world, same, reversed};
    struct thread_arg args[2] = {{same, 0x74687231ull}, {reversed, 0x74687232ull}};
    pthread_t th[2];

    for (int i = 0; i < 12; i++) {
        verified(comms[i % 3], 4099 + (size_t)i, (i / 3) % n, 0x6d756c74ull + (uint64_t)i);
    }
    for (int i = 0; i < 2; i++) {
        OBCT_ASSERT(pthread_create(&th[i], NULL, thread_main, &args[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    OBCT_OK(obc_barrier(world), world);
    OBCT_OK(obc_comm_destroy(reversed), NULL);
    OBCT_OK(obc_comm_destroy(same), NULL);
    verified(world, 1000, n - 1, 0x656e64ull);
    OBCT_OK(obc_comm_destroy(world), NULL);
    return obct_finish("multi_comm");
}
