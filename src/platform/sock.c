/* SPDX-License-Identifier: MIT */
/*
 * sock.c - TCP helpers with deadlines: every blocking step polls with the
 * time left, so no socket call can hang past its deadline. Sockets are
 * CLOEXEC, sends use MSG_NOSIGNAL (a broken peer is an error, not SIGPIPE).
 */
#include "platform/platform.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int poll_ms(int64_t deadline_ns)
{
    if (deadline_ns < 0) {
        return -1;
    }
    int64_t left = deadline_ns - obc__now_ns();
    if (left <= 0) {
        return 0;
    }
    return (int)((left + 999999) / 1000000);
}

/* Wait for `events` on fd until the deadline. 0 ready, -ETIMEDOUT, -errno. */
static int wait_fd(int fd, short events, int64_t deadline_ns)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int ms = poll_ms(deadline_ns);
        int n = poll(&p, 1, ms);
        if (n > 0) {
            return 0;
        }
        if (n == 0) {
            return -ETIMEDOUT;
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

int obc__sock_resolve(const char *host, int port, struct obc__sockaddr *out)
{
    struct addrinfo hints, *res = NULL;
    char service[16];
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%d", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0 || res == NULL) {
        return -EHOSTUNREACH;
    }
    struct addrinfo *pick = res;
    for (struct addrinfo *a = res; a != NULL; a = a->ai_next) {
        if (a->ai_family == AF_INET) {
            pick = a; /* prefer IPv4, which every launcher environment has */
            break;
        }
    }
    if (pick->ai_addrlen > sizeof(out->bytes)) {
        freeaddrinfo(res);
        return -EAFNOSUPPORT;
    }
    memcpy(out->bytes, pick->ai_addr, pick->ai_addrlen);
    out->len = (uint32_t)pick->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static int new_socket(const struct obc__sockaddr *addr)
{
    const struct sockaddr *sa = (const struct sockaddr *)addr->bytes;
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    return fd < 0 ? -errno : fd;
}

int obc__sock_listen(const struct obc__sockaddr *addr, int backlog, struct obc__sockaddr *bound)
{
    int one = 1;
    int fd = new_socket(addr);
    if (fd < 0) {
        return fd;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)addr->bytes, addr->len) != 0 ||
        listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    if (bound != NULL) {
        socklen_t len = sizeof(bound->bytes);
        getsockname(fd, (struct sockaddr *)bound->bytes, &len);
        bound->len = len;
    }
    return fd;
}

void obc__sock_shutdown(int fd)
{
    shutdown(fd, SHUT_RDWR);
}

void obc__sock_stop_sending(int fd)
{
    shutdown(fd, SHUT_WR);
}

int obc__sock_local_ip(int fd, char *out, size_t nbytes)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        return -errno;
    }
    const void *ip = ss.ss_family == AF_INET6
        ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
        : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
    return inet_ntop(ss.ss_family, ip, out, (socklen_t)nbytes) != NULL ? 0 : -errno;
}

int obc__sock_accept(int lfd, int64_t deadline_ns)
{
    for (;;) {
        int rc = wait_fd(lfd, POLLIN, deadline_ns);
        if (rc != 0) {
            return rc;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            return fd;
        }
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
            return -errno;
        }
    }
}

int obc__sock_connect(const struct obc__sockaddr *addr, int64_t deadline_ns)
{
    int one = 1, err = 0;
    socklen_t len = sizeof(err);
    int fd = new_socket(addr);
    if (fd < 0) {
        return fd;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (connect(fd, (const struct sockaddr *)addr->bytes, addr->len) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
        } else if ((err = -wait_fd(fd, POLLOUT, deadline_ns)) == 0) {
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        }
    }
    if (err != 0) {
        close(fd);
        return -err;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* Move all nbytes in one direction, waiting for readiness with the deadline. */
static int transfer_all(int fd, char *p, size_t nbytes, int64_t deadline_ns, bool sending)
{
    while (nbytes > 0) {
        int rc = wait_fd(fd, sending ? POLLOUT : POLLIN, deadline_ns);
        if (rc != 0) {
            return rc;
        }
        ssize_t n = sending ? send(fd, p, nbytes, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(fd, p, nbytes, MSG_DONTWAIT);
        if (n == 0 && !sending) {
            return -ECONNRESET; /* orderly close before everything arrived */
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            return -errno;
        }
        p += n;
        nbytes -= (size_t)n;
    }
    return 0;
}

int obc__sock_send_all(int fd, const void *buf, size_t nbytes, int64_t deadline_ns)
{
    return transfer_all(fd, (char *)(uintptr_t)buf, nbytes, deadline_ns, true);
}

int obc__sock_recv_all(int fd, void *buf, size_t nbytes, int64_t deadline_ns)
{
    return transfer_all(fd, buf, nbytes, deadline_ns, false);
}

void obc__sock_format(const struct obc__sockaddr *addr, char *out, size_t nbytes)
{
    char host[INET6_ADDRSTRLEN] = "?";
    const struct sockaddr *sa = (const struct sockaddr *)addr->bytes;
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)addr->bytes;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        port = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr->bytes;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        port = ntohs(in6->sin6_port);
    }
    snprintf(out, nbytes, "%s:%d", host, port);
}

static bool name_matches(const char *name, const char *filter)
{
    if (filter[0] == '\0') {
        return true;
    }
    if (filter[0] == '^') {
        return strncmp(name, filter + 1, strlen(filter + 1)) != 0;
    }
    return strncmp(name, filter, strlen(filter)) == 0;
}

int obc__sock_pick_ifaddr(const char *ifname_prefix, char *out, size_t nbytes)
{
    struct ifaddrs *list = NULL;
    int found = 0;
    bool named = ifname_prefix[0] != '\0' && ifname_prefix[0] != '^'; /* loopback only if asked */
    if (getifaddrs(&list) != 0) {
        return -errno;
    }
    for (struct ifaddrs *a = list; a != NULL && !found; a = a->ifa_next) {
        if (a->ifa_addr == NULL || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP) ||
            ((a->ifa_flags & IFF_LOOPBACK) && !named) ||
            !name_matches(a->ifa_name, ifname_prefix)) {
            continue;
        }
        const struct sockaddr_in *in = (const struct sockaddr_in *)a->ifa_addr;
        inet_ntop(AF_INET, &in->sin_addr, out, (socklen_t)nbytes);
        found = 1;
    }
    freeifaddrs(list);
    if (!found) {
        snprintf(out, nbytes, "127.0.0.1");
    }
    return 0;
}

void obc__sock_close_draining(int fd, int64_t max_ns)
{
    char sink[512];
    int64_t deadline = obc__now_ns() + max_ns;
    shutdown(fd, SHUT_WR);
    for (int64_t now = obc__now_ns(); now < deadline; now = obc__now_ns()) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0 ||
            read(fd, sink, sizeof(sink)) <= 0) {
            break; /* quiet, or the peer closed */
        }
    }
    close(fd);
}

bool obc__sock_delivered(int fd)
{
    char sink[4096];
    for (;;) {
        ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            return true; /* the connection is gone: nothing more can reach the peer */
        }
        if (n < 0 && errno != EINTR) {
            break;
        }
    }
    int unacked = 0;
    return ioctl(fd, SIOCOUTQ, &unacked) != 0 || unacked == 0;
}
