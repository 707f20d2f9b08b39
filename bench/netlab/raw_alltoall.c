/* SPDX-License-Identifier: MIT */
/*
 * raw_alltoall.c - what TCP itself reaches for an alltoall across netlab
 * hosts: the ceiling that obc's and Open MPI's figures in
 * bench/netlab/alltoall.sh are read against, besides the wire bound.
 *
 * One process per host, one thread, one connection per pair of hosts.
 * Every iteration sends its block to each peer straight from the send
 * buffer and receives each peer's block straight into the receive buffer
 * (no copy besides the kernel's), all peers at once under one poll(); the
 * sends are one call per block, so the kernel cuts the bursts. Between
 * iterations, as obc-perf and mpi_coll_bench do, the hosts meet: each sends
 * its own time to host 0, which keeps the slowest, and host 0 releases them.
 * Host 0 prints the median over iterations of the slowest host's time, in
 * the CSV form of obc-perf (impl raw, bytes = the whole send buffer).
 *
 * Usage (on host h of n, started on every host at about the same time):
 *   raw_alltoall H N BYTES_PER_PEER ITERS PORT IP_0 ... IP_N-1
 * The data is checked only by the first and last byte of each block: the
 * point is the time (obc-perf and the anchor check every byte of theirs).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_HOSTS 64

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* Blocking, whole buffer (the meeting between iterations). */
static void put(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EAGAIN) {
            struct pollfd pf = {fd, POLLOUT, 0};
            poll(&pf, 1, -1);
            continue;
        }
        if (k <= 0) {
            die("send");
        }
        p += k;
        n -= (size_t)k;
    }
}

static void get(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EAGAIN) {
            struct pollfd pf = {fd, POLLIN, 0};
            poll(&pf, 1, -1);
            continue;
        }
        if (k <= 0) {
            die("recv");
        }
        p += k;
        n -= (size_t)k;
    }
}

/* Host h accepts from every higher host and connects to every lower one;
 * a connecting host names itself in its first 4 bytes. */
static void connect_all(int h, int n, int port, char **ip, int *fd)
{
    int one = 1;
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    me.sin_addr.s_addr = htonl(INADDR_ANY);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(ls, (struct sockaddr *)&me, sizeof(me)) != 0 || listen(ls, MAX_HOSTS) != 0) {
        die("listen");
    }
    for (int p = 0; p < h; p++) {
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (inet_pton(AF_INET, ip[p], &to.sin_addr) != 1) {
            die("address");
        }
        for (int tries = 0;; tries++) { /* the peer may not listen yet */
            fd[p] = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(fd[p], (struct sockaddr *)&to, sizeof(to)) == 0) {
                break;
            }
            close(fd[p]);
            if (tries == 500) {
                die("connect");
            }
            usleep(20000);
        }
        put(fd[p], &h, sizeof(h));
    }
    for (int k = h + 1; k < n; k++) {
        int c = accept(ls, NULL, NULL), who = -1;
        if (c < 0) {
            die("accept");
        }
        get(c, &who, sizeof(who));
        if (who <= h || who >= n) {
            fprintf(stderr, "raw_alltoall: bad host index %d\n", who);
            exit(1);
        }
        fd[who] = c;
    }
    close(ls);
    for (int p = 0; p < n; p++) {
        if (p != h) {
            setsockopt(fd[p], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            fcntl(fd[p], F_SETFL, O_NONBLOCK);
        }
    }
}

/* One alltoall: every peer's block out and in, all peers under one poll. */
static void exchange(int h, int n, const int *fd, const char *sbuf, char *rbuf, size_t blk)
{
    size_t sent[MAX_HOSTS] = {0}, got[MAX_HOSTS] = {0};
    int left = 2 * (n - 1);
    memcpy(rbuf + (size_t)h * blk, sbuf + (size_t)h * blk, blk);
    while (left > 0) {
        struct pollfd pf[MAX_HOSTS];
        int peer[MAX_HOSTS], m = 0;
        for (int p = 0; p < n; p++) {
            if (p != h && (sent[p] < blk || got[p] < blk)) {
                pf[m] = (struct pollfd){
                    fd[p], (short)((sent[p] < blk ? POLLOUT : 0) | (got[p] < blk ? POLLIN : 0)), 0};
                peer[m++] = p;
            }
        }
        if (poll(pf, (nfds_t)m, -1) < 0) {
            die("poll");
        }
        for (int i = 0; i < m; i++) {
            int p = peer[i];
            if ((pf[i].revents & (POLLERR | POLLHUP)) != 0) {
                fprintf(stderr, "raw_alltoall: connection to host %d failed\n", p);
                exit(1);
            }
            if ((pf[i].revents & POLLOUT) != 0 && sent[p] < blk) {
                ssize_t k =
                    send(fd[p], sbuf + (size_t)p * blk + sent[p], blk - sent[p], MSG_NOSIGNAL);
                if (k > 0 && (sent[p] += (size_t)k) == blk) {
                    left--;
                }
            }
            if ((pf[i].revents & POLLIN) != 0 && got[p] < blk) {
                ssize_t k = recv(fd[p], rbuf + (size_t)p * blk + got[p], blk - got[p], 0);
                if (k == 0) {
                    fprintf(stderr, "raw_alltoall: host %d closed\n", p);
                    exit(1);
                }
                if (k > 0 && (got[p] += (size_t)k) == blk) {
                    left--;
                }
            }
        }
    }
}

/* Host 0 learns every host's time, keeps the slowest, releases them. */
static double meet(int h, int n, const int *fd, double mine)
{
    double slowest = mine, t;
    if (h != 0) {
        put(fd[0], &mine, sizeof(mine));
        get(fd[0], &t, sizeof(t));
        return t;
    }
    for (int p = 1; p < n; p++) {
        get(fd[p], &t, sizeof(t));
        slowest = t > slowest ? t : slowest;
    }
    for (int p = 1; p < n; p++) {
        put(fd[p], &slowest, sizeof(slowest));
    }
    return slowest;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: raw_alltoall H N BYTES_PER_PEER ITERS PORT IP_0 ... IP_N-1\n");
        return 2;
    }
    int h = atoi(argv[1]), n = atoi(argv[2]), iters = atoi(argv[4]), port = atoi(argv[5]);
    size_t blk = strtoull(argv[3], NULL, 0);
    if (n < 2 || n > MAX_HOSTS || h < 0 || h >= n || iters < 1 || argc != 6 + n || blk == 0) {
        fprintf(stderr, "raw_alltoall: bad arguments\n");
        return 2;
    }
    int fd[MAX_HOSTS];
    connect_all(h, n, port, argv + 6, fd);
    char *sbuf = malloc(blk * (size_t)n), *rbuf = malloc(blk * (size_t)n);
    double *slowest = malloc(sizeof(double) * (size_t)iters);
    if (sbuf == NULL || rbuf == NULL || slowest == NULL) {
        die("malloc");
    }
    memset(sbuf, h + 1, blk * (size_t)n);
    memset(rbuf, 0, blk * (size_t)n);
    for (int it = -1; it < iters; it++) { /* -1: warm-up, untimed */
        double t0 = now_s();
        exchange(h, n, fd, sbuf, rbuf, blk);
        double t = meet(h, n, fd, now_s() - t0);
        if (it >= 0) {
            slowest[it] = t;
        }
    }
    for (int p = 0; p < n; p++) { /* a cheap check that blocks came from their senders */
        if (rbuf[(size_t)p * blk] != (char)(p + 1) ||
            rbuf[(size_t)(p + 1) * blk - 1] != (char)(p + 1)) {
            fprintf(stderr, "raw_alltoall: block from host %d is wrong\n", p);
            return 1;
        }
    }
    if (h == 0) {
        qsort(slowest, (size_t)iters, sizeof(double), by_value);
        double med = slowest[iters / 2] * 1e6, bytes = (double)blk * n;
        printf("raw,%d,%zu,%.3f,%.6f,%.6f,0\n", n, blk * (size_t)n, med, bytes / med * 1e-3,
               bytes / med * 1e-3 * (n - 1) / n);
        printf("# impl=raw bytes=%zu iters=%d maxrank_median_usec=%.3f maxrank_min_usec=%.3f "
               "maxrank_max_usec=%.3f\n",
               blk * (size_t)n, iters, med, slowest[0] * 1e6, slowest[iters - 1] * 1e6);
    }
    return 0;
}
