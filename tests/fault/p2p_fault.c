/* SPDX-License-Identifier: MIT */
/*
 * p2p_fault.c - point-to-point calls that cannot succeed, each in its own
 * forked job (spawn_ranks.c), first with every rank on one host (shm
 * channels), then on fake hosts (OBC_HOST_ID, TCP links):
 *  - a count mismatch (100 vs 99 int32), a dtype mismatch of the same bytes
 *    (100 float32 vs 100 int32), a large one (4 MiB + 1 vs 4 MiB + 2 bytes),
 *    a tag mismatch of the same message (obc_send_tag with tag 1 against
 *    obc_recv_tag with tag 2; the receiver's message names both tags) and
 *    an untagged send against a receive of tag 3: both ranks of the pair get
 *    OBC_ERR_MISMATCH (never success, never truncation: the receive buffer
 *    and its guards are untouched), each message naming the other rank,
 *    within 5 s, and the next call fails at once;
 *  - a rank SIGKILLed while 4 ranks loop a ring exchange of 1 MiB messages in
 *    groups: every survivor gets PEER_LOST or ABORTED within 2 s, naming it
 *    (killcheck.h);
 *  - a receive whose sender never sends, under OBC_TIMEOUT=1: OBC_ERR_TIMEOUT
 *    within 4 s, the message naming the rank it waited for.
 */
/* obct: timeout=200 san waits */
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "data.h"
#include "killcheck.h"
#include "obct.h"
#include "spawn_ranks.h"

#define LIMIT_S 5.0

struct mm {
    const char *name;
    size_t send_count, recv_count;
    obc_dtype_t send_dtype, recv_dtype;
    int send_tag, recv_tag; /* -1: the untagged call */
};

static int mismatch_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self,
                         void *arg)
{
    const struct mm *m = arg;
    struct obct_buf buf;
    size_t nbytes = rank == 0 ? m->send_count * obc_dtype_size(m->send_dtype)
                              : m->recv_count * obc_dtype_size(m->recv_dtype);
    (void)nranks;
    obct_buf_alloc(&buf, nbytes, 3);
    if (rank == 0) {
        obct_fill(buf.data, nbytes, 7, 0);
    } else {
        obct_poison(buf.data, nbytes);
    }
    double t = obct_now();
    if (rank == 0 && m->send_tag < 0) {
        self->rc = obc_send(buf.data, m->send_count, m->send_dtype, 1, comm);
    } else if (rank == 0) {
        self->rc = obc_send_tag(buf.data, m->send_count, m->send_dtype, 1, m->send_tag, comm);
    } else if (m->recv_tag < 0) {
        self->rc = obc_recv(buf.data, m->recv_count, m->recv_dtype, 0, comm);
    } else {
        self->rc = obc_recv_tag(buf.data, m->recv_count, m->recv_dtype, 0, m->recv_tag, NULL, comm);
    }
    self->value = obct_now() - t;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    /* Nothing written into the receive buffer, nothing around it. */
    if (rank == 0) {
        obct_verify("send buffer", buf.data, nbytes, 7, 0);
    } else {
        obct_verify_poison("recv buffer", buf.data, nbytes);
    }
    obct_buf_check("guards", &buf);
    t = obct_now();
    self->rc_after = obc_barrier(comm);
    self->after_s = obct_now() - t;
    /* Across hosts, a receiver that closes its sockets with the sender's
     * unread data in them makes the kernel reset the connection, which can
     * overtake its failure notice (the sender then reads PEER_LOST): give
     * the notice time to land, as a program that reports its error does. */
    obct_sleep(0.3);
    obc_comm_destroy(comm);
    obct_buf_free(&buf);
    return obct_failures() == 0 ? 0 : 1;
}

static void run_mismatch(const struct mm *m, const char *where)
{
    struct obct_job job;
    obct_scenario("p2p_fault: %s, %s mismatch", where, m->name);
    obct_spawn(&job, 2, mismatch_main, (void *)m, 0);
    OBCT_EQ_INT(obct_join(&job, 30 * obct_time_scale()), 0);
    for (int r = 0; r < 2; r++) {
        const struct obct_report *rep = &job.reports[r];
        printf("p2p_fault: %s, %s: rank %d: %s after %.3f s: %s\n", where, m->name, r,
               obct_rc_name(rep->rc), rep->value, rep->msg);
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, r), 0);
        OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_MISMATCH);
        OBCT_CHECK(obct_msg_names_rank(rep->msg, 1 - r));
        OBCT_CHECK_LE_DBL(rep->value, LIMIT_S * obct_time_scale());
        OBCT_CHECK(rep->rc_after != OBC_SUCCESS);
        OBCT_CHECK_LE_DBL(rep->after_s, 0.5 * obct_time_scale());
    }
    if (m->send_tag != m->recv_tag) {
        char want[2][32];
        snprintf(want[0], sizeof(want[0]), "tag %d", m->send_tag < 0 ? 0 : m->send_tag);
        snprintf(want[1], sizeof(want[1]), "tag %d", m->recv_tag < 0 ? 0 : m->recv_tag);
        for (int i = 0; i < 2; i++) {
            if (strstr(job.reports[1].msg, want[i]) == NULL) {
                OBCT_FAIL("the receiver's message does not name %s: %s", want[i],
                          job.reports[1].msg);
            }
        }
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
}

/* The killed-rank scenario: a ring exchange in groups until the kill. */
static int exchange_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self,
                         void *arg)
{
    size_t nbytes = (size_t)1 << 20;
    unsigned char *out = malloc(nbytes), *in = malloc(nbytes);
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    obc_result_t rc = OBC_SUCCESS;
    (void)arg;
    OBCT_ASSERT(out != NULL && in != NULL);
    memset(out, rank, nbytes);
    for (double end = obct_now() + 30; rc == OBC_SUCCESS && obct_now() < end;) {
        obct_progress(self);
        obc_group_start();
        obc_send(out, nbytes, OBC_UINT8, right, comm);
        obc_recv(in, nbytes, OBC_UINT8, left, comm);
        rc = obc_group_end();
    }
    self->t_event = obct_now();
    self->rc = rc;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
    double t = obct_now();
    self->rc_after = obc_send(out, 8, OBC_UINT8, right, comm);
    self->after_s = obct_now() - t;
    obc_comm_destroy(comm);
    free(out);
    free(in);
    return 0;
}

/* Rank 0 never sends; it stays (without leaving the communicator, which
 * would be a departure, not silence) until rank 1's receive has returned. */
static int timeout_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    atomic_int *received = arg;
    int v = 0;
    (void)nranks;
    if (rank == 1) {
        double t = obct_now();
        self->rc = obc_recv(&v, 1, OBC_INT32, 0, comm);
        self->value = obct_now() - t;
        snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(comm));
        atomic_store(received, 1);
    } else {
        for (double end = obct_now() + 20 * obct_time_scale();
             !atomic_load(received) && obct_now() < end;) {
            obct_sleep(0.01);
        }
    }
    obc_comm_destroy(comm);
    return 0;
}

static void run_timeout(const char *where)
{
    struct obct_job job;
    atomic_int *received =
        mmap(NULL, sizeof(*received), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    OBCT_ASSERT(received != MAP_FAILED);
    atomic_init(received, 0);
    setenv("OBC_TIMEOUT", "1", 1);
    obct_scenario("p2p_fault: %s, a receive whose sender never sends", where);
    obct_spawn(&job, 2, timeout_main, received, 0);
    OBCT_EQ_INT(obct_join(&job, 30 * obct_time_scale()), 0);
    const struct obct_report *rep = &job.reports[1];
    printf("p2p_fault: %s, timeout: rank 1: %s after %.3f s: %s\n", where, obct_rc_name(rep->rc),
           rep->value, rep->msg);
    OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_TIMEOUT);
    OBCT_CHECK(obct_msg_names_rank(rep->msg, 0));
    OBCT_CHECK_LE_DBL(rep->value, 4.0 * obct_time_scale());
    obct_job_check_shm(&job);
    obct_job_free(&job);
    munmap(received, sizeof(*received));
    setenv("OBC_TIMEOUT", "20", 1);
}

int main(void)
{
    const struct mm cases[] = {
        {"count", 100, 99, OBC_INT32, OBC_INT32, -1, -1},
        {"dtype", 100, 100, OBC_FLOAT32, OBC_INT32, -1, -1},
        {"large", ((size_t)4 << 20) + 1, ((size_t)4 << 20) + 2, OBC_UINT8, OBC_UINT8, -1, -1},
        {"tag", 100, 100, OBC_INT32, OBC_INT32, 1, 2},
        {"untagged against tag 3", 100, 100, OBC_INT32, OBC_INT32, -1, 3},
    };
    obct_watchdog(190);
    setenv("OBC_TIMEOUT", "20", 1); /* detection must not wait for the timeout */
    for (int cross = 0; cross < 2; cross++) {
        const char *where = cross ? "fake hosts" : "one host";
        if (cross) {
            setenv("OBC_HOST_ID", "rank/1", 1); /* two ranks, two hosts */
        }
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            run_mismatch(&cases[i], where);
        }
        run_timeout(where);
        if (cross) {
            setenv("OBC_HOST_ID", "rank/2", 1);
        }
        struct obct_job job;
        obct_scenario("p2p_fault: %s: kill rank 2 of 4 during a ring exchange", where);
        obct_spawn(&job, 4, exchange_main, NULL, 0);
        obct_kill_and_check(&job, "p2p_fault", where, 2, "exchanges", 2.0 * obct_time_scale());
        fflush(stdout);
    }
    return obct_finish("p2p_fault");
}
