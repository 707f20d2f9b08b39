/* SPDX-License-Identifier: MIT */
/*
 * bootstrap_auth.c - the rendezvous admits exactly the job's ranks, from
 * outside (forked processes under obcrun's variables, OBC_TIMEOUT=2):
 *  - wrong secret: one of 3 ranks has another OBC_SECRET. It is refused with
 *    OBC_ERR_AUTH naming the wrong secret; the other two, one short, fail
 *    with OBC_ERR_TIMEOUT (or PEER_LOST once rank 0, the rendezvous' host,
 *    gave up) naming the rendezvous, within the timeout + 3 s.
 *  - duplicate: a fourth process claims rank 1 while rank 2 is still
 *    missing: one of the two claimants (normally the later one; under heavy
 *    load it may be the other) gets OBC_ERR_AUTH ("duplicate rank"), and
 *    the job forms with the other.
 *  - late: a process claiming rank 1 after the job formed finds no
 *    rendezvous (it closes once everyone joined): a clear error, not a hang.
 *  - garbage: while the ranks gather, the test sends random bytes, a
 *    truncated hello and a header announcing a 4 GiB payload to the
 *    rendezvous port. Each connection gets an error message (magic "OBCB",
 *    type ERROR, text "rendezvous rejected a connection: ...") and is
 *    closed; the job forms anyway and broadcasts verified data.
 * The wire bytes are written out here from src/bootstrap/boot_wire.h, as
 * an outsider would.
 */
/* obct: timeout=120 san waits */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bcase.h"
#include "obct.h"
#include "spawn_ranks.h"

#define TIMEOUT_S 2.0
#define SECRET "auth-test-secret"

enum scenario_kind { WRONG_SECRET, DUPLICATE, LATE, GARBAGE };

struct scenario {
    const char *name;
    enum scenario_kind kind;
    int nprocs; /* processes forked; the job has 3 ranks */
    int port;
};

/* Process i's rank: 0..2, and rank 1 again for the fourth process. */
static int rank_of(int i)
{
    return i < 3 ? i : 1;
}

/* Seconds process i waits before joining, so the scenario's order holds. */
static double delay_of(const struct scenario *sc, int i)
{
    switch (sc->kind) {
    case DUPLICATE:
        return i == 2 ? 1.5 : i == 3 ? 0.5 : 0;
    case LATE:
        return i == 3 ? 3.0 : 0;
    case GARBAGE:
        return i == 0 ? 0 : 1.0; /* the garbage goes first; under OBC_TIMEOUT */
    default:
        return 0;
    }
}

static int proc_main(obc_comm_t *unused, int i, int nprocs, struct obct_report *self, void *arg)
{
    const struct scenario *sc = arg;
    char v[64];
    obc_comm_t *comm = NULL;
    int failures0 = obct_failures(); /* inherited from the parent at fork */
    (void)unused;
    (void)nprocs;
    snprintf(v, sizeof(v), "%d", rank_of(i));
    setenv("OBC_RANK", v, 1);
    setenv("OBC_NRANKS", "3", 1);
    snprintf(v, sizeof(v), "127.0.0.1:%d", sc->port);
    setenv("OBC_BOOTSTRAP", v, 1);
    setenv("OBC_SECRET", sc->kind == WRONG_SECRET && i == 2 ? "not-the-secret" : SECRET, 1);
    snprintf(v, sizeof(v), "%g", TIMEOUT_S);
    setenv("OBC_TIMEOUT", v, 1);
    obct_sleep(delay_of(sc, i));
    double t = obct_now();
    self->rc = obc_comm_init_env(&comm);
    self->value = obct_now() - t;
    snprintf(self->msg, sizeof(self->msg), "%s", obc_comm_last_error(NULL));
    if (self->rc == OBC_SUCCESS) {
        struct obct_bcase c;
        obct_set_rank(obc_comm_rank(comm));
        obct_bcase_setup(&c, obc_comm_rank(comm), 4099, OBC_INT32, 0, 0x61757468ull, OBCT_IN_PLACE);
        self->rc_after = obc_bcast(obct_bcase_recvbuf(&c), c.count, c.dtype, c.root, comm);
        obct_bcase_check(&c);
        obct_bcase_free(&c);
        obc_comm_destroy(comm);
    }
    return obct_failures() > failures0 ? 1 : 0;
}

/* One connection to the rendezvous: send bytes, read the server's answer. */
static void send_garbage(int port, const void *bytes, size_t nbytes, const char *what)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = -1;
    for (int tries = 0; tries < 200 && fd < 0; tries++) { /* until rank 0 listens */
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            close(fd);
            fd = -1;
            obct_sleep(0.01);
        }
    }
    OBCT_ASSERT(fd >= 0);
    OBCT_ASSERT(send(fd, bytes, nbytes, MSG_NOSIGNAL) == (ssize_t)nbytes);
    shutdown(fd, SHUT_WR);
    unsigned char reply[600];
    size_t got = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (got < sizeof(reply) - 1 && poll(&p, 1, 3000) > 0) {
        ssize_t n = read(fd, reply + got, sizeof(reply) - 1 - got);
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    reply[got] = '\0';
    uint32_t magic = 0;
    uint16_t type = 0;
    if (got >= 24) {
        memcpy(&magic, reply, 4);
        memcpy(&type, reply + 6, 2);
    }
    const char *text = got > 24 ? (const char *)reply + 24 : "";
    printf("bootstrap_auth: %s: the server answered %zu bytes: \"%s\"\n", what, got, text);
    OBCT_CHECK(magic == 0x4f424342u && type == 5); /* OBCB, BOOT_ERROR */
    OBCT_CHECK(strstr(text, "rendezvous rejected a connection") != NULL);
}

static void send_all_garbage(int port)
{
    unsigned char noise[300];
    for (size_t i = 0; i < sizeof(noise); i++) {
        noise[i] = (unsigned char)(i * 131 + 7);
    }
    send_garbage(port, noise, sizeof(noise), "random bytes");
    /* A hello header announcing its 72-byte payload, then 10 bytes of it. */
    unsigned char hello[24 + 10] = {0};
    uint32_t w32[6] = {0x4f424342u, 1u | (1u << 16), 0, 3, 0, 72};
    memcpy(hello, w32, sizeof(w32));
    send_garbage(port, hello, sizeof(hello), "truncated hello");
    uint32_t huge[6] = {0x4f424342u, 1u | (1u << 16), 0, 3, 0, 0xffffffffu};
    send_garbage(port, huge, sizeof(huge), "hello announcing a 4 GiB payload");
}

/* Of the two processes claiming rank 1 (1 and 3), the one that failed;
 * the later one unless the earlier was slower to start. */
static int refused_claimant(const struct obct_job *job)
{
    return job->reports[1].rc != OBC_SUCCESS && job->reports[3].rc == OBC_SUCCESS ? 1 : 3;
}

static void run(struct scenario *sc)
{
    struct obct_job job;
    sc->port = obct_free_port();
    obct_scenario("bootstrap_auth: %s", sc->name);
    obct_spawn(&job, sc->nprocs, proc_main, sc, OBCT_SPAWN_NO_INIT);
    if (sc->kind == GARBAGE) {
        send_all_garbage(sc->port);
    }
    OBCT_ASSERT_MSG(obct_join(&job, 4 * TIMEOUT_S + 20) == 0, "%s: processes still running",
                    sc->name);
    for (int i = 0; i < sc->nprocs; i++) {
        const struct obct_report *rep = &job.reports[i];
        printf("bootstrap_auth: %s: process %d (rank %d) got %s after %.3f s: \"%s\"\n", sc->name,
               i, rank_of(i), obct_rc_name(rep->rc), rep->value, rep->msg);
        OBCT_CHECK_EQ_INT(obct_exit_code(&job, i), 0);
        bool refused = (sc->kind == WRONG_SECRET && i == 2) ||
            ((sc->kind == DUPLICATE || sc->kind == LATE) && i == refused_claimant(&job));
        if (refused && sc->kind == LATE) {
            OBCT_CHECK(rep->rc != OBC_SUCCESS);
            OBCT_CHECK(rep->msg[0] != '\0');
            OBCT_CHECK_LE_DBL(rep->value, TIMEOUT_S + 3 * obct_time_scale());
        } else if (refused) {
            OBCT_CHECK_EQ_INT(rep->rc, OBC_ERR_AUTH);
            OBCT_CHECK(
                strstr(rep->msg, sc->kind == WRONG_SECRET ? "wrong secret" : "duplicate rank") !=
                NULL);
        } else if (sc->kind == WRONG_SECRET) {
            /* The job stays one rank short: a timeout, or a lost rendezvous
             * once rank 0 (its host) gave up first. */
            OBCT_CHECK(rep->rc == OBC_ERR_TIMEOUT || rep->rc == OBC_ERR_PEER_LOST);
            OBCT_CHECK(strstr(rep->msg, "rendezvous") != NULL);
            OBCT_CHECK_LE_DBL(rep->value, TIMEOUT_S + 3 * obct_time_scale());
        } else {
            OBCT_CHECK_EQ_INT(rep->rc, OBC_SUCCESS);
            OBCT_CHECK_EQ_INT(rep->rc_after, OBC_SUCCESS);
        }
    }
    obct_job_check_shm(&job);
    obct_job_free(&job);
    fflush(stdout);
}

int main(void)
{
    struct scenario scenarios[] = {
        {"wrong secret", WRONG_SECRET, 3, 0},
        {"duplicate rank", DUPLICATE, 4, 0},
        {"late rank", LATE, 4, 0},
        {"garbage to the rendezvous port", GARBAGE, 3, 0},
    };
    obct_watchdog(110);
    for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
        run(&scenarios[i]);
    }
    return obct_finish("bootstrap_auth");
}
