/* SPDX-License-Identifier: MIT */
/*
 * count_over_2g.c - a broadcast of more than 2^31 elements (int8, 2^31 + 13
 * bytes) on 2 ranks, out of place from rank 0 and then in place from rank 1:
 * every byte of the position-dependent pattern is verified (word-wise), as
 * are the guards and the root's unchanged sendbuf. Catches 32-bit counts
 * and offsets anywhere on the path.
 */
/* obct: nranks=2 timeout=600 lock=large_memory */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"

static void one(obc_comm_t *comm, int root, enum obct_mode mode, uint64_t seed)
{
    struct obct_bcase c;
    size_t count = ((size_t)1 << 31) + 13;
    double t0;
    double t1;
    obct_bcase_setup(&c, obc_comm_rank(comm), count, OBC_INT8, root, seed, mode);
    t0 = obct_now();
    OBCT_OK(
        obc_broadcast(obct_bcase_sendbuf(&c), obct_bcase_recvbuf(&c), count, OBC_INT8, root, comm),
        comm);
    t1 = obct_now();
    obct_bcase_check(&c);
    printf("count_over_2g: rank %d root %d %s: %zu elements in %.3f s (%.2f GB/s), verified\n",
           obc_comm_rank(comm), root, obct_mode_name(mode), count, t1 - t0,
           (double)count / (t1 - t0) / 1e9);
    fflush(stdout);
    obct_bcase_free(&c);
}

int main(void)
{
    obc_comm_t *comm = obct_comm_from_env();
    one(comm, 0, OBCT_OUT_OF_PLACE, 0x32474231ull);
    one(comm, obc_comm_size(comm) - 1, OBCT_IN_PLACE, 0x32474232ull);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_finish("count_over_2g");
}
