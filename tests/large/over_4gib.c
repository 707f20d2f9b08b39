/* SPDX-License-Identifier: MIT */
/*
 * over_4gib.c - a buffer over 4 GiB (float32, 2^30 + 7 elements = 4 GiB + 28
 * bytes) broadcast in place from the last rank on 2 ranks; every byte
 * verified word-wise, guards checked. Catches 32-bit byte sizes and
 * offsets even where element counts fit in 31 bits.
 */
/* obct: nranks=2 timeout=600 lock=large_memory */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"

int main(void)
{
    obc_comm_t *comm = obct_comm_from_env();
    struct obct_bcase c;
    size_t count = ((size_t)1 << 30) + 7;
    int root = obc_comm_size(comm) - 1;
    double t0;
    double t1;
    obct_bcase_setup(&c, obc_comm_rank(comm), count, OBC_FLOAT32, root, 0x34474942ull,
                     OBCT_IN_PLACE);
    t0 = obct_now();
    OBCT_OK(obc_bcast(obct_bcase_recvbuf(&c), count, OBC_FLOAT32, root, comm), comm);
    t1 = obct_now();
    obct_bcase_check(&c);
    printf("over_4gib: rank %d: %zu bytes in %.3f s (%.2f GB/s), verified\n", obc_comm_rank(comm),
           count * 4, t1 - t0, (double)count * 4 / (t1 - t0) / 1e9);
    obct_bcase_free(&c);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_finish("over_4gib");
}
