/* SPDX-License-Identifier: MIT */
/*
 * destroy_pending.c - obc_comm_destroy finishes every operation still
 * queued: ibroadcasts (one of them 4 MiB) that were never waited for have
 * delivered their data once destroy returns, and destroy returns
 * OBC_SUCCESS. Their requests belong to the caller and stay valid: obc_test
 * and obc_wait after destroy report the finished result at once and free
 * them (under ASan nothing leaks).
 */
/* obct: nranks=1,3,4 timeout=120 san=3 */
#include "bcase.h"
#include "obct.h"

int main(void)
{
    obc_comm_t *comm = obct_comm_from_env();
    int rank = obc_comm_rank(comm);
    int nranks = obc_comm_size(comm);
    struct obct_bcase c[3];
    obc_request_t *reqs[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        obc_request_t *req = NULL;
        obct_bcase_setup(&c[i], rank, (size_t)(i == 1 ? 1 << 19 : 1000 * i + 17), OBC_INT64,
                         i % nranks, 0x64657374ull + (uint64_t)i, OBCT_IN_PLACE);
        OBCT_OK(obc_ibroadcast(obct_bcase_sendbuf(&c[i]), obct_bcase_recvbuf(&c[i]), c[i].count,
                               c[i].dtype, c[i].root, comm, &req),
                comm);
        OBCT_ASSERT(req != NULL);
        reqs[i] = req;
    }
    OBCT_OK(obc_comm_destroy(comm), NULL);
    int done = 0;
    OBCT_OK(obc_test(reqs[0], &done), NULL); /* finished by destroy: frees the request */
    OBCT_ASSERT(done == 1);
    OBCT_OK(obc_wait(reqs[1]), NULL);
    OBCT_OK(obc_wait(reqs[2]), NULL);
    for (int i = 0; i < 3; i++) {
        obct_bcase_check(&c[i]);
        obct_bcase_free(&c[i]);
    }
    return obct_finish("destroy_pending");
}
