/* SPDX-License-Identifier: MIT */
/*
 * personal_fault.c - the personalised collectives when something is wrong.
 * 4 ranks forked by spawn_ranks.c (OBC_TIMEOUT=10), in separate jobs:
 *  - bad arguments: every rank makes each bad call of a list (NULL
 *    arrays, a root out of range, a bad dtype, overlapping buffers,
 *    alltoallv in place, an allgatherv whose sendcount is not its
 *    recvcounts entry, a NULL req) and must get OBC_ERR_INVALID_ARG at
 *    once, the communicator still usable: a verified alltoall follows;
 *  - mismatches: one rank (the odd one) calls with another count, dtype or
 *    call (an alltoallv whose sendcounts[j] differs from rank j's
 *    recvcounts[odd], an alltoall with a smaller count, an allgatherv
 *    against the others' alltoall, a gather of another dtype, a scatter
 *    with count 0 against the others' 1000; and alltoalls of 160 KB blocks,
 *    single-copy within a host, against a smaller count, a small alltoall
 *    (which goes through the channels) and an alltoallv; gathers and
 *    scatters of 160 KB blocks, single-copy, with another count on a rank
 *    or on the root, and against a small gather; alltoallv pairs of
 *    160 KB, read single copy by the receiver, where the odd rank sends
 *    more, or a small block to a rank that expects a large one, or the
 *    reverse; allgathervs, small and of 160 KB, where the odd rank's
 *    counts differ, and one against an alltoallv). Every rank must
 *    fail (MISMATCH
 *    or ABORTED; a rank that only sends may finish, and then its next call
 *    fails), within the timeout, at least one with OBC_ERR_MISMATCH, and
 *    every MISMATCH message of another rank names the odd one (for
 *    alltoallv, a bystander may instead point to the log of the rank that
 *    found it);
 *  - a rank that never calls a small alltoall (the pairwise exchange, all
 *    partners in flight, waiting in turns over its blocked transfers):
 *    with OBC_TIMEOUT=ABSENT_TIMEOUT_S every other rank gets
 *    OBC_ERR_TIMEOUT after about that long (the turns count towards it),
 *    naming the absent rank;
 *  - a rank SIGKILLed during 1 MiB-per-peer alltoalls, alltoallvs, gathers (a rank
 *    that writes into the root) and scatters (the root, which the others
 *    read) (killcheck.h): every survivor returns PEER_LOST or ABORTED
 *    within 2 s, naming it.
 * The tcp variant runs it all with ranks 0-1 and 2-3 on two fake hosts.
 * OBCT_KILL_ROUNDS=N runs only the kills, N times each: which rank finds
 * the victim gone, and how, is a race. With fake hosts, a victim's
 * host-mate that found it by a failed single-copy read and then left used
 * to look lost itself to the other host, which named it instead of the
 * victim (it told them nothing before its goodbye): about 1 kill in 40.
 */
/* obct: name=n4 timeout=180 san waits */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 timeout=180 */
/* obct: name=tcp_kills env=OBC_HOST_ID=rank/2 env=OBCT_KILL_ROUNDS=10 timeout=180 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "killcheck.h"
#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 4
#define TIMEOUT_S 10.0
#define LIMIT_S (TIMEOUT_S + 5.0)
#define COUNT 1000
#define BIG_COUNT 40000 /* int32 elements per peer: above OBC_ALLTOALL_CMA_MIN_BYTES */

enum call { ALLTOALL, ALLTOALLV, ALLGATHERV, GATHER, SCATTER };

struct scenario {
    const char *name;
    int odd;
    enum call call, odd_call;
    size_t count, odd_count; /* per peer; alltoallv: odd rank's sendcount to rank 2 */
    obc_dtype_t dtype, odd_dtype;
};

static obc_result_t personal(enum call call, size_t count, obc_dtype_t dt, int rank,
                             obc_comm_t *comm, struct obct_buf *send, struct obct_buf *recv,
                             size_t odd_to2)
{
    size_t es = obc_dtype_size(dt), sc[NRANKS], sd[NRANKS], rc[NRANKS], rd[NRANKS];
    size_t send_stride = (odd_to2 > count ? odd_to2 : count) + 8; /* room for the odd block */
    obct_buf_alloc(send, NRANKS * send_stride * es, 0);
    obct_buf_alloc(recv, NRANKS * (count + 8) * es, 0);
    obct_fill(send->data, send->nbytes, 7, rank);
    obct_poison(recv->data, recv->nbytes);
    for (int i = 0; i < NRANKS; i++) {
        sc[i] = rc[i] = count;
        sd[i] = (size_t)i * send_stride;
        rd[i] = (size_t)i * (count + 8);
    }
    if (odd_to2 != count) {
        sc[2] = odd_to2; /* only on the odd rank (1): rank 2 expects count */
    }
    switch (call) {
    case ALLTOALL:
        return obc_alltoall(send->data, recv->data, count, dt, comm);
    case ALLTOALLV:
        return obc_alltoallv(send->data, sc, sd, recv->data, rc, rd, dt, comm);
    case ALLGATHERV:
        return obc_allgatherv(send->data, count, recv->data, rc, rd, dt, comm);
    case GATHER:
        return obc_gather(send->data, recv->data, count, dt, 0, comm);
    default:
        return obc_scatter(send->data, recv->data, count, dt, 0, comm);
    }
}

static int mismatch_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self,
                         void *arg)
{
    const struct scenario *sc = arg;
    struct obct_buf send, recv;
    int small[4] = {1, 2, 3, 4};
    int failures0 = obct_failures();
    (void)nranks;
    OBCT_OK(obc_allreduce(small, small, 4, OBC_INT32, OBC_SUM, comm), comm);
    usleep(200000); /* every rank leaves the allreduce before anyone can break the comm */
    bool odd = rank == sc->odd;
    double t = obct_now();
    self->rc = personal(odd ? sc->odd_call : sc->call,
                        odd && sc->call != ALLTOALLV ? sc->odd_count : sc->count,
                        odd ? sc->odd_dtype : sc->dtype, rank, comm, &send, &recv,
                        odd && sc->call == ALLTOALLV ? sc->odd_count : sc->count);
    self->t_event = obct_now();
    self->value = self->t_event - t;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    t = obct_now();
    self->rc_after = obc_allreduce(small, small, 4, OBC_INT32, OBC_SUM, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    obct_buf_check("sendbuf", &send);
    obct_buf_check("recvbuf", &recv);
    obct_verify("sendbuf (must stay unchanged)", send.data, send.nbytes, 7, rank);
    obct_buf_free(&send);
    obct_buf_free(&recv);
    return obct_failures() > failures0 ? 1 : 0;
}

static void run_mismatch(const struct scenario *sc)
{
    struct obct_job job;
    int nmismatch = 0;
    obct_scenario("personal_fault: %s (rank %d differs)", sc->name, sc->odd);
    obct_spawn(&job, NRANKS, mismatch_main, (void *)sc, 0);
    if (obct_join(&job, LIMIT_S + 30) != 0) {
        OBCT_FAIL("%s: ranks did not exit within %.0f s", sc->name, LIMIT_S + 30);
    }
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        printf("personal_fault: %s: rank %d got %s after %.3f s, next %s; message: \"%s\"\n",
               sc->name, r, obct_rc_name(rep->rc), rep->value, obct_rc_name(rep->rc_after),
               rep->msg);
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        if (rep->rc == OBC_SUCCESS) { /* it only sent: its next call fails */
            OBCT_CHECK(rep->rc_after == OBC_ERR_MISMATCH || rep->rc_after == OBC_ERR_ABORTED);
            continue;
        }
        OBCT_CHECK(rep->rc == OBC_ERR_MISMATCH || rep->rc == OBC_ERR_ABORTED);
        OBCT_CHECK_LE_DBL(rep->value, LIMIT_S);
        OBCT_CHECK(rep->rc_after == OBC_ERR_ABORTED || rep->rc_after == rep->rc);
        if (rep->rc == OBC_ERR_MISMATCH) {
            nmismatch++;
            /* A bystander of an alltoallv pair hears only what the
             * receiver found (the boards hold no per-pair counts to
             * compare): the verdict names both ranks of the pair ("rank 2
             * found that rank 3 disagrees with it on a call"), so the odd
             * one too, within a host and across hosts. */
            if (r != sc->odd) {
                OBCT_CHECK(obct_msg_names_rank(rep->msg, sc->odd));
            }
        }
    }
    if (nmismatch == 0) {
        obct_soft_fail(__FILE__, __LINE__, "%s: no rank reported OBC_ERR_MISMATCH", sc->name);
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
}

/* Each bad call returns INVALID_ARG at once; then the comm still works. */
static int bad_args_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self,
                         void *arg)
{
    int failures0 = obct_failures();
    int32_t a[4 * NRANKS], b[4 * NRANKS];
    size_t c[NRANKS], d[NRANKS];
    obc_request_t *req = NULL;
    (void)self;
    (void)arg;
    for (int i = 0; i < NRANKS; i++) {
        c[i] = 4;
        d[i] = (size_t)i * 4;
    }
#define BAD(expr) OBCT_CHECK_RC(expr, OBC_ERR_INVALID_ARG, comm)
    BAD(obc_gather(a, b, 4, OBC_INT32, nranks, comm));
    BAD(obc_scatter(a, b, 4, OBC_INT32, -1, comm));
    BAD(obc_alltoall(a, b, 4, (obc_dtype_t)99, comm));
    BAD(obc_alltoall(NULL, b, 4, OBC_INT32, comm));
    BAD(obc_alltoall(a, a + 1, 4, OBC_INT32, comm)); /* overlap, not in place */
    BAD(obc_alltoall(a, b, SIZE_MAX / 2, OBC_INT32, comm));
    BAD(obc_alltoallv(a, NULL, d, b, c, d, OBC_INT32, comm));
    BAD(obc_alltoallv(a, c, d, b, c, NULL, OBC_INT32, comm));
    BAD(obc_alltoallv(a, c, d, a, c, d, OBC_INT32, comm)); /* no in-place form */
    BAD(obc_allgatherv(a, 3, b, c, d, OBC_INT32, comm)); /* 3 != recvcounts[rank] */
    BAD(obc_allgatherv(a, 4, b, NULL, d, OBC_INT32, comm));
    BAD(obc_ialltoall(a, b, 4, OBC_INT32, comm, NULL));
    BAD(obc_igather(a, b, 4, OBC_INT32, 0, NULL, &req));
    if (rank == 0) {
        BAD(obc_gather(a, NULL, 4, OBC_INT32, 0, comm)); /* the root needs recvbuf */
        BAD(obc_gather(a + 1, a, 4, OBC_INT32, 0, comm)); /* overlaps the root's recvbuf */
    }
    for (int i = 0; i < 4 * NRANKS; i++) {
        a[i] = rank * 1000 + i;
    }
    OBCT_OK(obc_alltoall(a, b, 4, OBC_INT32, comm), comm);
    for (int i = 0; i < 4 * NRANKS; i++) {
        OBCT_CHECK_EQ_INT(b[i], (i / 4) * 1000 + rank * 4 + i % 4);
    }
    obc_comm_destroy(comm);
    return obct_failures() > failures0 ? 1 : 0;
}

#define ABSENT_RANK 3
#define ABSENT_TIMEOUT_S 2.0

/* Every rank but ABSENT_RANK calls a small alltoall, which must time out. */
static int absent_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    struct obct_buf send, recv;
    int small[4] = {1, 2, 3, 4};
    int failures0 = obct_failures();
    (void)nranks;
    (void)arg;
    OBCT_OK(obc_allreduce(small, small, 4, OBC_INT32, OBC_SUM, comm), comm);
    double t = obct_now();
    if (rank == ABSENT_RANK) {
        usleep((useconds_t)((ABSENT_TIMEOUT_S + 2.0 * obct_time_scale()) * 1e6));
        self->rc = OBC_ERR_TIMEOUT; /* what it would have had */
    } else {
        self->rc = personal(ALLTOALL, COUNT, OBC_FLOAT32, rank, comm, &send, &recv, COUNT);
        snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
        obct_buf_check("sendbuf", &send);
        obct_buf_check("recvbuf", &recv);
        obct_buf_free(&send);
        obct_buf_free(&recv);
    }
    self->value = obct_now() - t;
    obc_comm_destroy(comm);
    return obct_failures() > failures0 ? 1 : 0;
}

static void run_absent(void)
{
    struct obct_job job;
    char timeout[16];
    /* Not scaled by the sanitizers' time scale: nothing is slow in waiting
     * for a rank that never comes, and scaled it cost CI 16 s. */
    double limit = ABSENT_TIMEOUT_S;
    obct_scenario("personal_fault: rank %d never calls the alltoall (OBC_TIMEOUT=%g)", ABSENT_RANK,
                  limit);
    snprintf(timeout, sizeof(timeout), "%g", limit);
    setenv("OBC_TIMEOUT", timeout, 1);
    obct_spawn(&job, NRANKS, absent_main, NULL, 0);
    if (obct_join(&job, limit + 30) != 0) {
        OBCT_FAIL("absent rank: ranks did not exit within %.0f s", limit + 30);
    }
    for (int r = 0; r < NRANKS; r++) {
        const struct obct_report *rep = &job.reports[r];
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        if (r == ABSENT_RANK) {
            continue;
        }
        printf("personal_fault: absent rank: rank %d got %s after %.3f s: \"%s\"\n", r,
               obct_rc_name(rep->rc), rep->value, rep->msg);
        OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_TIMEOUT);
        OBCT_CHECK(rep->value >= 0.9 * limit);
        OBCT_CHECK_LE_DBL(rep->value, limit + 5.0 * obct_time_scale());
        OBCT_CHECK(obct_msg_names_rank(rep->msg, ABSENT_RANK));
    }
    obct_job_free(&job);
}

#define KILL_COUNT (256 * 1024) /* float32 per peer: 1 MiB */

/* arg: the enum call to repeat (ALLTOALL, ALLTOALLV with every block
 * KILL_COUNT, GATHER or SCATTER, root 0). */
static int kill_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    struct obct_buf send, recv;
    float small[8] = {0};
    obc_result_t rc = OBC_SUCCESS;
    int failures0 = obct_failures();
    enum call call = *(const enum call *)arg;
    obct_buf_alloc(&send, (size_t)nranks * KILL_COUNT * 4, 0);
    obct_buf_alloc(&recv, (size_t)nranks * KILL_COUNT * 4, 0);
    size_t counts[NRANKS], displs[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
        counts[r] = KILL_COUNT;
        displs[r] = (size_t)(NRANKS - 1 - r) * KILL_COUNT; /* blocks in reverse order */
    }
    obct_fill(send.data, send.nbytes, 3, rank);
    for (double end = obct_now() + 30; rc == OBC_SUCCESS && obct_now() < end;) {
        obct_progress(self);
        rc = call == ALLTOALLV
            ? obc_alltoallv(send.data, counts, displs, recv.data, counts, displs, OBC_FLOAT32, comm)
            : call == GATHER  ? obc_gather(send.data, recv.data, KILL_COUNT, OBC_FLOAT32, 0, comm)
            : call == SCATTER ? obc_scatter(send.data, recv.data, KILL_COUNT, OBC_FLOAT32, 0, comm)
                              : obc_alltoall(send.data, recv.data, KILL_COUNT, OBC_FLOAT32, comm);
    }
    self->t_event = obct_now();
    self->rc = rc;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    double t = obct_now();
    self->rc_after = obc_allreduce(small, small, 8, OBC_FLOAT32, OBC_SUM, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    obct_buf_check("sendbuf", &send);
    obct_buf_check("recvbuf", &recv);
    obct_buf_free(&send);
    obct_buf_free(&recv);
    return obct_failures() > failures0 ? 1 : 0;
}

/* A rank SIGKILLed during each call, `rounds` times over. */
static void run_kills(int rounds)
{
    static const struct {
        enum call call;
        int victim;
        const char *what;
    } kills[] = {{ALLTOALL, 2, "alltoalls"},
                 {ALLTOALLV, 1, "alltoallvs"},
                 {GATHER, 2, "gathers"},
                 {SCATTER, 0, "scatters"}};
    struct obct_job job;
    for (int round = 0; round < rounds; round++) {
        for (size_t i = 0; i < sizeof(kills) / sizeof(kills[0]); i++) {
            obct_scenario("personal_fault: kill rank %d during 1 MiB-per-peer %s (root 0)",
                          kills[i].victim, kills[i].what);
            obct_spawn(&job, NRANKS, kill_main, (void *)&kills[i].call, 0);
            obct_kill_and_check(&job, "personal_fault", kills[i].what, kills[i].victim,
                                kills[i].what, 2.0 * obct_time_scale());
        }
    }
}

int main(void)
{
    static const struct scenario scenarios[] = {
        {"alltoallv, rank 1 sends rank 2 more than it expects", 1, ALLTOALLV, ALLTOALLV, COUNT,
         COUNT + 1, OBC_FLOAT32, OBC_FLOAT32},
        {"alltoallv, rank 1 sends rank 2 nothing", 1, ALLTOALLV, ALLTOALLV, COUNT, 0, OBC_INT8,
         OBC_INT8},
        {"alltoall, one rank's count smaller", 3, ALLTOALL, ALLTOALL, COUNT, COUNT - 10, OBC_INT32,
         OBC_INT32},
        {"alltoall against allgatherv", 1, ALLTOALL, ALLGATHERV, COUNT, COUNT, OBC_FLOAT32,
         OBC_FLOAT32},
        {"gather, another dtype of the same size", 2, GATHER, GATHER, COUNT, COUNT, OBC_FLOAT32,
         OBC_INT32},
        {"scatter, one rank's count 0", 2, SCATTER, SCATTER, COUNT, 0, OBC_UINT8, OBC_UINT8},
        /* blocks of 160 KB: single-copy (cma) within a host; the odd rank's
         * mailbox says another size, another call, or it is not there at
         * all because the odd rank went through the channels */
        {"alltoall single-copy, one rank's count smaller", 3, ALLTOALL, ALLTOALL, BIG_COUNT,
         BIG_COUNT - 10, OBC_INT32, OBC_INT32},
        {"alltoall single-copy against a small one", 1, ALLTOALL, ALLTOALL, BIG_COUNT, COUNT,
         OBC_INT32, OBC_INT32},
        {"alltoall single-copy against alltoallv", 2, ALLTOALL, ALLTOALLV, BIG_COUNT, BIG_COUNT,
         OBC_INT32, OBC_INT32},
        /* gather and scatter (root 0) of 160 KB blocks: single-copy; every
         * rank checks the root's post against its own call */
        {"gather single-copy, one rank's count smaller", 2, GATHER, GATHER, BIG_COUNT,
         BIG_COUNT - 10, OBC_INT32, OBC_INT32},
        {"scatter single-copy, the root's count larger", 0, SCATTER, SCATTER, BIG_COUNT,
         BIG_COUNT + 10, OBC_INT32, OBC_INT32},
        {"gather single-copy against a small one", 3, GATHER, GATHER, BIG_COUNT, COUNT, OBC_INT32,
         OBC_INT32},
        /* alltoallv pairs of 160 KB: the receiver reads the sender's block
         * single-copy (within a host the sender's posted table says where,
         * posted.c; between the tcp variant's host pairs px.c's pulled
         * messages); a count that differs changes whether the block is
         * deposited or read, or whether one end pulls */
        {"alltoallv single-copy pair, rank 1 sends rank 2 more than it expects", 1, ALLTOALLV,
         ALLTOALLV, BIG_COUNT, BIG_COUNT + 10, OBC_INT32, OBC_INT32},
        {"alltoallv, rank 1 sends rank 2 a single-copy block where a small one is expected", 1,
         ALLTOALLV, ALLTOALLV, COUNT, BIG_COUNT, OBC_INT32, OBC_INT32},
        {"alltoallv, rank 1 sends rank 2 a small block where a single-copy one is expected", 1,
         ALLTOALLV, ALLTOALLV, BIG_COUNT, COUNT, OBC_INT32, OBC_INT32},
        /* allgatherv: the odd rank's block and recvcounts differ from the
         * others'; small (deposited within a host) and 160 KB (read
         * single copy), and against an alltoallv (both post a table) */
        {"allgatherv, one rank's counts larger", 1, ALLGATHERV, ALLGATHERV, COUNT, COUNT + 5,
         OBC_INT32, OBC_INT32},
        {"allgatherv single-copy, one rank's counts smaller", 3, ALLGATHERV, ALLGATHERV, BIG_COUNT,
         BIG_COUNT - 10, OBC_INT32, OBC_INT32},
        {"allgatherv against alltoallv", 2, ALLGATHERV, ALLTOALLV, COUNT, COUNT, OBC_FLOAT32,
         OBC_FLOAT32},
    };
    struct obct_job job;
    char timeout[16];
    const char *kill_rounds = getenv("OBCT_KILL_ROUNDS");
    int rounds = kill_rounds != NULL ? atoi(kill_rounds) : 1;
    obct_watchdog(170);
    snprintf(timeout, sizeof(timeout), "%g", TIMEOUT_S * obct_time_scale());
    setenv("OBC_TIMEOUT", timeout, 1);
    if (kill_rounds != NULL) {
        run_kills(rounds);
        return obct_finish("personal_fault");
    }
    obct_scenario("personal_fault: bad arguments");
    obct_spawn(&job, NRANKS, bad_args_main, NULL, 0);
    if (obct_join(&job, 60) != 0) {
        OBCT_FAIL("bad arguments: ranks did not exit");
    }
    for (int r = 0; r < NRANKS; r++) {
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run_mismatch(&scenarios[i]);
    }
    run_absent();
    setenv("OBC_TIMEOUT", timeout, 1);
    run_kills(rounds);
    return obct_finish("personal_fault");
}
