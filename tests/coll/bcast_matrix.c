/* SPDX-License-Identifier: MIT */
/*
 * bcast_matrix.c - blocking broadcast over the matrix: every size class (0, 1,
 * 4099, ~1 MiB + odd, 64 MiB + odd), every dtype, roots first/middle/last, in
 * place (obc_bcast and obc_broadcast(buf, buf)) and out of place (non-roots
 * pass NULL, or a decoy sendbuf that must stay untouched). Guards, the
 * root's sendbuf and every received byte are checked after every call; in
 * some cases the root reuses its buffer as soon as its call returns.
 * Run through obcrun with any number of ranks (1..64); OBCT_QUICK=1 shrinks the
 * large class to 4 MiB + odd (sanitizer runs).
 */
/* obct: nranks=1,2,3,4,5,8 asan=3 */
/* obct: name=quick env=OBCT_QUICK=1 nranks=16,64 */
/* obct: name=eager env=OBC_ALGO=broadcast=eager nranks=2,4,8 asan=2 */
/* obct: name=arena env=OBC_ALGO=broadcast=arena nranks=2,4,8 asan=4 */
/* obct: name=cma env=OBC_ALGO=broadcast=cma nranks=2,4,8 asan=4 */
/* obct: name=chunk5003 env=OBC_ALGO=broadcast=arena env=OBC_CHUNK_BYTES=5003 nranks=3 asan */
/* obct: name=nocma env=OBC_CMA=0 nranks=4 */
/* obct: name=check2 env=OBC_CHECK=2 env=OBCT_QUICK=1 nranks=3,8 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 san */
/* obct: name=tcp_uneven env=OBC_HOST_ID=rank/3 env=OBCT_QUICK=1 nranks=5 */
/* obct: name=tcp1 env=OBC_HOST_ID=rank/1 env=OBCT_QUICK=1 nranks=3,17 label=variant */
/* obct: name=tchain env=OBC_ALGO=broadcast=chain env=OBC_HOST_ID=rank/2 nranks=4 label=variant */
/* obct: name=ttree env=OBC_HOST_ID=rank/2 env=OBC_ALGO=broadcast=tree nranks=5 label=variant san */
/* obct: name=hsplit env=OBC_HOST_SPLIT=2 env=OBC_ALGO=broadcast=hier nranks=4,5 label=variant */
/* obct: name=chain env=OBC_ALGO=broadcast=chain nranks=3 label=variant */
/* obct: name=tree env=OBC_ALGO=broadcast=tree nranks=5 label=variant */
/* obct: name=tcp5003 env=OBC_HOST_ID=rank/2 env=OBC_CHUNK_BYTES=5003 nranks=4 label=variant */
#include <stdio.h>

#include "bcase.h"
#include "obct.h"

#define SEED_BASE 0x6d617472ull /* differs per program, so no two runs share data */

static int g_rank;
static int g_nranks;
static obc_comm_t *g_comm;
static uint64_t g_case;

static int roots(int *out)
{
    int n = 0;
    int cand[3] = {0, g_nranks / 2, g_nranks - 1};
    for (int i = 0; i < 3; i++) {
        int dup = 0;
        for (int j = 0; j < n; j++) {
            dup |= out[j] == cand[i];
        }
        if (!dup) {
            out[n++] = cand[i];
        }
    }
    return n;
}

/* One case; variant alternates the in-place call and the out-of-place flavour. Every
 * third case the root overwrites its source as soon as the call returns (allowed: the
 * root's call returns when its sendbuf may be reused), so a root that returns while
 * others still read its buffer shows as wrong data elsewhere. */
static void run_case(size_t count, obc_dtype_t dtype, int root, enum obct_mode mode)
{
    struct obct_bcase c;
    char desc[200];
    uint64_t k = g_case++;
    uint64_t seed = SEED_BASE + k;
    int variant = (int)(k % 2);
    int reuse = k % 3 == 2;
    obc_result_t rc;
    if (mode == OBCT_OUT_OF_PLACE && variant == 1) {
        mode = OBCT_OUT_OF_PLACE_DECOY;
    }
    obct_bcase_setup(&c, g_rank, count, dtype, root, seed, mode);
    if (mode == OBCT_IN_PLACE && variant == 0) {
        rc = obc_bcast(obct_bcase_recvbuf(&c), count, dtype, root, g_comm);
    } else {
        rc = obc_broadcast(obct_bcase_sendbuf(&c), obct_bcase_recvbuf(&c), count, dtype, root,
                           g_comm);
    }
    if (rc != OBC_SUCCESS) {
        obct_bcase_describe(&c, desc, sizeof(desc));
        OBCT_FAIL("%s: returned %s: %s", desc, obct_rc_name(rc), obc_comm_last_error(g_comm));
    }
    if (reuse) {
        obct_bcase_reuse(&c);
    }
    obct_bcase_check(&c);
    obct_bcase_free(&c);
}

int main(void)
{
    int rts[3];
    int nroots;
    size_t counts[8];
    const char *names[8];
    int nclasses = obct_size_classes(OBC_INT8, counts, names);
    int large = obct_size_class_large();
    double t0;
    g_comm = obct_comm_from_env();
    g_rank = obc_comm_rank(g_comm);
    g_nranks = obc_comm_size(g_comm);
    nroots = roots(rts);

    for (int cls = 0; cls < nclasses; cls++) {
        unsigned long cases = 0;
        t0 = obct_now();
        if (cls == large) {
            /* The large class varies the dtype across cases instead of crossing all
             * ten with every root and mode: broadcast moves bytes, so the dtype only
             * changes the count, and 64 MiB x 10 dtypes x 3 roots x 2 modes on 8
             * ranks would cost minutes on 2 cores. */
            for (int r = 0; r < nroots; r++) {
                for (int m = 0; m < 2; m++) {
                    obc_dtype_t dt = (obc_dtype_t)((r * 2 + m) * 3 % OBCT_NDTYPES);
                    obct_size_classes(dt, counts, names);
                    run_case(counts[cls], dt, rts[r], m ? OBCT_OUT_OF_PLACE : OBCT_IN_PLACE);
                    cases++;
                }
            }
        } else {
            for (int dt = 0; dt < OBCT_NDTYPES; dt++) {
                obct_size_classes((obc_dtype_t)dt, counts, names);
                for (int r = 0; r < nroots; r++) {
                    run_case(counts[cls], (obc_dtype_t)dt, rts[r], OBCT_IN_PLACE);
                    run_case(counts[cls], (obc_dtype_t)dt, rts[r], OBCT_OUT_OF_PLACE);
                    cases += 2;
                }
            }
        }
        if (g_rank == 0) {
            printf("bcast_matrix: nranks=%d class=%s cases=%lu time=%.3f s\n", g_nranks, names[cls],
                   cases, obct_now() - t0);
            fflush(stdout);
        }
    }
    OBCT_OK(obc_comm_destroy(g_comm), NULL);
    return obct_finish("bcast_matrix");
}
