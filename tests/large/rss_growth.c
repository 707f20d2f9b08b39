/* SPDX-License-Identifier: MIT */
/*
 * rss_growth.c - extra memory does not grow with the message: each of 4
 * ranks allocates and touches a 2 GiB buffer, reads its peak RSS (VmHWM)
 * before obc_comm_init_env, then after init and a 2 GiB in-place broadcast;
 * the growth (init included, shared segments included) must be <= 64 MiB
 * (target 16 MiB). Every rank's growth is printed; the data is verified.
 * With more ranks than CPUs (4 ranks on a 2-core machine) the broadcast
 * goes through the deep ring, 64 x 256 KiB that every rank maps and
 * reads: the growth is then about 16.5 MiB, a fixed size (setup_arena.c).
 */
/* obct: nranks=4 timeout=600 lock=large_memory */
/* obct: name=arena env=OBC_ALGO=broadcast=arena nranks=4 timeout=600 lock=large_memory */
/* obct: name=eager env=OBC_ALGO=broadcast=eager nranks=4 timeout=600 lock=large_memory */
#include <stdint.h>
#include <stdio.h>

#include "bcase.h"
#include "obct.h"

#define LIMIT_BYTES ((size_t)64 << 20)
#define TARGET_BYTES ((size_t)16 << 20)

int main(void)
{
    struct obct_buf buf;
    size_t count = (size_t)1 << 31;
    size_t before;
    size_t after;
    uint64_t growth[64];
    uint64_t seed = 0x52535331ull;
    obc_comm_t *comm;
    int rank = obct_rank(); /* from OBC_RANK: the comm does not exist yet */
    int root = 0;
    int nranks;

    OBCT_ASSERT_MSG(rank >= 0, "run me through obcrun (OBC_RANK is not set)");
    obct_buf_alloc(&buf, count, 0);
    if (rank == root) {
        obct_fill(buf.data, count, seed, root);
    } else {
        obct_poison(buf.data, count);
    }
    before = obct_peak_rss();
    comm = obct_comm_from_env();
    nranks = obc_comm_size(comm);
    OBCT_ASSERT(nranks <= 64);
    OBCT_OK(obc_bcast(buf.data, count, OBC_UINT8, root, comm), comm);
    after = obct_peak_rss();

    growth[rank] = after - before;
    for (int r = 0; r < nranks; r++) {
        OBCT_OK(obc_bcast(&growth[r], 1, OBC_UINT64, r, comm), comm);
    }
    obct_verify("2 GiB broadcast", buf.data, count, seed, root);
    obct_buf_check("2 GiB broadcast", &buf);
    if (rank == 0) {
        uint64_t max = 0;
        for (int r = 0; r < nranks; r++) {
            printf("rss_growth: rank %d peak RSS grew by %.2f MiB over its 2 GiB buffer\n", r,
                   (double)growth[r] / (1 << 20));
            max = growth[r] > max ? growth[r] : max;
        }
        printf("rss_growth: max %.2f MiB (limit %zu MiB, target %zu MiB)%s\n",
               (double)max / (1 << 20), LIMIT_BYTES >> 20, TARGET_BYTES >> 20,
               max > TARGET_BYTES ? " - above target" : "");
        fflush(stdout);
    }
    if (after - before > LIMIT_BYTES) {
        OBCT_FAIL("peak RSS grew by %zu bytes (%.2f MiB) > %zu MiB: before %zu after %zu",
                  after - before, (double)(after - before) / (1 << 20), LIMIT_BYTES >> 20, before,
                  after);
    }
    obct_buf_free(&buf);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_finish("rss_growth");
}
