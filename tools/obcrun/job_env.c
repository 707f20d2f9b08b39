/* SPDX-License-Identifier: MIT */
/*
 * job_env.c - the environment obcrun gives each rank: the contract with the
 * library's obc_comm_init_env. Names here must not change:
 *   OBC_RANK, OBC_NRANKS,
 *   OBC_BOOTSTRAP=127.0.0.1:PORT (rank 0 hosts the rendezvous there),
 *   OBC_SECRET (32 hex chars, or passed through if already set),
 *   OBC_JOB_ID (unique per launch; prefixes the library's /dev/shm names).
 * Besides, what torchrun sets, so torch.distributed programs (env://) run
 * unchanged: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (every rank is
 * on this host), MASTER_ADDR=127.0.0.1 and MASTER_PORT (a second free port,
 * for torch's store on rank 0). obc_comm_init_env prefers OBC_* to these, so
 * obc's own programs are unaffected.
 * Variables are set in obcrun's own environment, which fork passes on.
 */
#include "obcrun.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* Fills out with 2*nbytes lowercase hex chars of kernel randomness + NUL. */
static int random_hex(char *out, size_t nbytes)
{
    unsigned char raw[32];
    size_t got = 0;

    if (nbytes > sizeof(raw)) {
        return -1;
    }
    while (got < nbytes) {
        ssize_t n = getrandom(raw + got, nbytes - got, 0);
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "obcrun: getrandom: %s\n", strerror(errno));
            return -1;
        }
        got += n > 0 ? (size_t)n : 0;
    }
    for (size_t i = 0; i < nbytes; i++) {
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    }
    return 0;
}

/* Binds 127.0.0.1:0 so the kernel picks a free port. The socket stays open
 * (never listening, so no TIME_WAIT) until just before spawning, which keeps
 * other processes off the port meanwhile; rank 0 then binds it. */
static int reserve_port(int *port_fd, int *port)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        fprintf(stderr, "obcrun: socket: %s\n", strerror(errno));
        return -1;
    }
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
        fprintf(stderr, "obcrun: cannot reserve a port on 127.0.0.1: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    *port_fd = fd;
    *port = ntohs(addr.sin_port);
    return 0;
}

static int set_int(const char *name, int value)
{
    char text[16];

    snprintf(text, sizeof(text), "%d", value);
    if (setenv(name, text, 1) != 0) {
        fprintf(stderr, "obcrun: setenv %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

static int set_str(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, "obcrun: setenv %s: %s\n", name, strerror(errno));
        return -1;
    }
    return 0;
}

int obcrun_env_setup(struct obcrun_job *job)
{
    char secret[33];
    char tail[9];
    char bootstrap[32];
    int port;
    int store_port;

    if (random_hex(tail, 4) != 0 || reserve_port(&job->port_fd, &port) != 0 ||
        reserve_port(&job->store_port_fd, &store_port) != 0) {
        return -1;
    }
    snprintf(job->job_id, sizeof(job->job_id), "%x-%s", (unsigned)getpid(), tail);
    snprintf(bootstrap, sizeof(bootstrap), "127.0.0.1:%d", port);
    if (set_int("OBC_NRANKS", job->opts.nranks) != 0 || set_str("OBC_BOOTSTRAP", bootstrap) != 0 ||
        set_str("OBC_JOB_ID", job->job_id) != 0) {
        return -1;
    }
    if (set_int("WORLD_SIZE", job->opts.nranks) != 0 ||
        set_int("LOCAL_WORLD_SIZE", job->opts.nranks) != 0 ||
        set_str("MASTER_ADDR", "127.0.0.1") != 0 || set_int("MASTER_PORT", store_port) != 0) {
        return -1;
    }
    /* A secret the user chose (e.g. shared with ranks started elsewhere) wins. */
    if (getenv("OBC_SECRET") == NULL) {
        if (random_hex(secret, 16) != 0 || set_str("OBC_SECRET", secret) != 0) {
            return -1;
        }
    }
    return 0;
}

int obcrun_env_set_rank(int rank)
{
    if (set_int("OBC_RANK", rank) != 0 || set_int("RANK", rank) != 0 ||
        set_int("LOCAL_RANK", rank) != 0) {
        return -1;
    }
    return 0;
}

void obcrun_env_release_port(struct obcrun_job *job)
{
    if (job->port_fd >= 0) {
        close(job->port_fd);
        job->port_fd = -1;
    }
    if (job->store_port_fd >= 0) {
        close(job->store_port_fd);
        job->store_port_fd = -1;
    }
}
