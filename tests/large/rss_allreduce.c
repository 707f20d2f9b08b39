/* SPDX-License-Identifier: MIT */
/*
 * rss_allreduce.c - the reductions' extra memory does not grow with the
 * message either: each of 4 ranks allocates and touches 1 GiB (float32, or
 * float16 for the variants whose partial sums need the float32 scratch),
 * reads its peak RSS (VmHWM) before obc_comm_init_env, then after init and
 * an in-place 1 GiB allreduce SUM; growth (init and shared segments
 * included) must stay <= 64 MiB (target 16 MiB). Every rank contributes
 * rank + 1 at every element, so every element must be exactly 10 after.
 */
/* clang-format off */
/* obct: nranks=4 timeout=600 lock=large_memory */
/* obct: name=shm env=OBC_ALGO=allreduce=shm nranks=4 timeout=600 lock=large_memory */
/* obct: name=f16_ring env=OBCT_RSS_F16=1 env=OBC_ALGO=allreduce=ring nranks=4 timeout=600 lock=large_memory */
/* obct: name=f16_hier env=OBCT_RSS_F16=1 env=OBC_ALGO=allreduce=hier env=OBC_HOST_SPLIT=2 nranks=4 timeout=600 lock=large_memory */
/* obct: name=f16_recdbl env=OBCT_RSS_F16=1 env=OBC_ALGO=allreduce=recdbl nranks=4 timeout=600 lock=large_memory */
/* obct: name=f16_cma env=OBCT_RSS_F16=1 env=OBC_ALGO=allreduce=cma nranks=4 timeout=600 lock=large_memory */
/* clang-format on */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "obct.h"

#define LIMIT_BYTES ((size_t)64 << 20)
#define TARGET_BYTES ((size_t)16 << 20)
#define BUF_BYTES ((size_t)1 << 30)

/* 1.0 .. 4.0 and their sum 10.0 in IEEE binary16. */
static uint16_t half_of(int v)
{
    static const uint16_t halves[] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4900};
    return v == 10 ? halves[5] : halves[v - 1];
}

int main(void)
{
    const char *f16 = getenv("OBCT_RSS_F16");
    bool half = f16 != NULL && f16[0] == '1';
    obc_dtype_t dtype = half ? OBC_FLOAT16 : OBC_FLOAT32;
    size_t esize = half ? 2 : 4, count = BUF_BYTES / esize;
    int rank = obct_rank(); /* from OBC_RANK: the comm does not exist yet */
    uint64_t growth[64];

    OBCT_ASSERT_MSG(rank >= 0 && rank < 4, "run me through obcrun -n 4");
    /* The harness's buffer: guard bytes, and huge pages where the kernel has them. */
    struct obct_buf guarded;
    obct_buf_alloc(&guarded, BUF_BYTES, 0);
    unsigned char *buf = guarded.data;
    for (size_t i = 0; i < count; i++) {
        if (half) {
            ((uint16_t *)buf)[i] = half_of(rank + 1);
        } else {
            ((float *)buf)[i] = (float)(rank + 1);
        }
    }
    size_t before = obct_peak_rss();
    obc_comm_t *comm = obct_comm_from_env();
    int nranks = obc_comm_size(comm);
    OBCT_ASSERT(nranks == 4);
    OBCT_OK(obc_allreduce(buf, buf, count, dtype, OBC_SUM, comm), comm);
    size_t after = obct_peak_rss();

    size_t wrong = 0;
    for (size_t i = 0; i < count; i++) {
        wrong += half ? ((uint16_t *)buf)[i] != half_of(10) : ((float *)buf)[i] != 10.0f;
    }
    OBCT_ASSERT_MSG(wrong == 0, "%zu of %zu elements are not 10", wrong, count);
    OBCT_ASSERT(obct_buf_check("allreduce buffer", &guarded) == 0);
    growth[rank] = after - before;
    for (int r = 0; r < nranks; r++) {
        OBCT_OK(obc_bcast(&growth[r], 1, OBC_UINT64, r, comm), comm);
    }
    if (rank == 0) {
        uint64_t max = 0;
        for (int r = 0; r < nranks; r++) {
            max = growth[r] > max ? growth[r] : max;
        }
        printf("rss_allreduce (%s): max peak RSS growth over 1 GiB %.2f MiB (limit %zu, target "
               "%zu MiB)\n",
               half ? "float16" : "float32", (double)max / (1 << 20), LIMIT_BYTES >> 20,
               TARGET_BYTES >> 20);
        fflush(stdout);
    }
    if (after - before > LIMIT_BYTES) {
        OBCT_FAIL("peak RSS grew by %.2f MiB > %zu MiB", (double)(after - before) / (1 << 20),
                  LIMIT_BYTES >> 20);
    }
    obct_buf_free(&guarded);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_finish("rss_allreduce");
}
