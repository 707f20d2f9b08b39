/* SPDX-License-Identifier: MIT */
/*
 * tcp_setup.c - a communicator whose ranks are on different hosts (every
 * rank its own host: OBC_HOST_ID=rank/1), so every pair talks TCP:
 *  - with OBC_SOCKET_IFNAME=lo the ranks connect over loopback and a
 *    verified broadcast from every root and an allreduce go through;
 *  - with an interface that does not exist, every rank's creation fails
 *    with OBC_ERR_SYSTEM and a message naming the variable, at once.
 */
/* obct: name=lo env=OBC_HOST_ID=rank/1 env=OBC_SOCKET_IFNAME=lo nranks=3 san */
/* obct: name=badif env=OBC_HOST_ID=rank/1 env=OBC_SOCKET_IFNAME=no0 env=OBCT_NO_IF=1 nranks=3 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcase.h"
#include "obct.h"

static void expect_no_interface(void)
{
    obc_comm_t *comm = NULL;
    double t0 = obct_now();
    OBCT_CHECK_RC(obc_comm_init_env(&comm), OBC_ERR_SYSTEM, NULL);
    OBCT_CHECK(comm == NULL);
    const char *msg = obc_comm_last_error(NULL);
    if (strstr(msg, "OBC_SOCKET_IFNAME=no0") == NULL) {
        obct_soft_fail(__FILE__, __LINE__, "the message does not name the variable: %s", msg);
    }
    printf("tcp_setup: no such interface fails in %.3f s: %s\n", obct_now() - t0, msg);
}

static void talk(void)
{
    obc_comm_t *comm = obct_comm_from_env();
    int rank = obc_comm_rank(comm), n = obc_comm_size(comm);
    for (int root = 0; root < n; root++) {
        obct_bcast_verified(comm, 1000003, OBC_INT32, root, 0x74637073ull + (uint64_t)root,
                            OBCT_OUT_OF_PLACE);
    }
    double x = rank + 1.0, sum = 0;
    OBCT_OK(obc_allreduce(&x, &sum, 1, OBC_FLOAT64, OBC_SUM, comm), comm);
    OBCT_CHECK(sum == n * (n + 1) / 2.0);
    OBCT_OK(obc_comm_destroy(comm), NULL);
}

int main(void)
{
    if (getenv("OBCT_NO_IF") != NULL) {
        expect_no_interface();
    } else {
        talk();
    }
    return obct_finish("tcp_setup");
}
