/* SPDX-License-Identifier: MIT */
/*
 * init_twice.c - a job may call obc_comm_init_env more than once (a second
 * world communicator, a library and its caller each making one): rank 0
 * hosts both rendezvous on the same port, so the first must free it once
 * everyone joined. Rank 0 then leaves right after a broadcast it does not
 * wait for; the others must still have finished their rendezvous, which
 * holds only if the server answers its own process's rank last.
 */
/* obct: nranks=2,4,8 timeout=60 san=4 */
#include "obct.h"

int main(void)
{
    obc_comm_t *first = obct_comm_from_env();
    obc_comm_t *second = NULL;
    OBCT_OK(obc_comm_init_env(&second), NULL);
    int value = obc_comm_rank(second) == 0 ? 4242 : -1;
    OBCT_OK(obc_bcast(&value, 1, OBC_INT32, 0, second), second);
    OBCT_ASSERT(value == 4242);
    OBCT_OK(obc_comm_destroy(second), NULL);
    OBCT_OK(obc_comm_destroy(first), NULL);
    return obct_finish("init_twice");
}
