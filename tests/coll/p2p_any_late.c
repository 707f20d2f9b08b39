/* SPDX-License-Identifier: MIT */
/*
 * p2p_any_late.c - a receive from any source whose message comes late, from
 * the last rank, while the other ranks send nothing: rank 0 receives LATE
 * messages, each sent DELAY_MS after the rank-0 receive was posted (the
 * sender sleeps after a barrier both pass), and checks the data and the
 * reported source. Run as it is, it checks that the late message is found
 * at all; tests/coll/any_source_wakeups.sh runs it at OBC_DEBUG=TRACE and
 * counts how often rank 0's receive woke up while it waited (bounded: it
 * sleeps on its doorbell, which the late message rings, not in turns over
 * the streams).
 */
/* clang-format off */
/* obct: nranks=3,4 timeout=120 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 label=variant */
/* clang-format on */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "data.h"
#include "obct.h"

#define LATE 3
#define DELAY_MS 200
#define NBYTES 4096

int main(void)
{
    obc_comm_t *comm = obct_comm_from_env();
    int rank = obc_comm_rank(comm), n = obc_comm_size(comm);
    unsigned char buf[NBYTES];
    for (int k = 0; k < LATE; k++) {
        uint64_t seed = 0x1a7e00ull + (uint64_t)k;
        OBCT_OK(obc_barrier(comm), comm);
        if (rank == n - 1) {
            struct timespec pause = {0, DELAY_MS * 1000000L};
            nanosleep(&pause, NULL);
            obct_fill(buf, NBYTES, seed, rank);
            OBCT_OK(obc_send(buf, NBYTES, OBC_UINT8, 0, comm), comm);
        } else if (rank == 0) {
            int source = -1;
            memset(buf, 0, sizeof(buf));
            OBCT_OK(obc_recv_tag(buf, NBYTES, OBC_UINT8, OBC_ANY_SOURCE, 0, &source, comm), comm);
            OBCT_EQ_INT(source, n - 1);
            OBCT_CHECK(obct_verify("late message", buf, NBYTES, seed, n - 1) == 0);
        }
    }
    OBCT_OK(obc_comm_destroy(comm), NULL);
    return obct_finish("p2p_any_late");
}
