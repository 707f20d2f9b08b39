/* SPDX-License-Identifier: MIT */
/*
 * poller.c - readiness of many sockets at once (epoll), a wakeup a thread
 * can sleep on beside its sockets (eventfd), and non-blocking transfers
 * that say "would block" instead of waiting: what an event-driven
 * transport's progress thread needs, and nothing more.
 */
#include "platform/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int obc__poller_create(void)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    return ep < 0 ? -errno : ep;
}

static uint32_t epoll_events(unsigned events)
{
    return ((events & OBC_POLL_IN) ? EPOLLIN | EPOLLRDHUP : 0u) |
        ((events & OBC_POLL_OUT) ? EPOLLOUT : 0u);
}

int obc__poller_watch(int ep, int fd, unsigned events, uint64_t tag, bool modify)
{
    struct epoll_event e = {.events = epoll_events(events), .data.u64 = tag};
    return epoll_ctl(ep, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &e) == 0 ? 0 : -errno;
}

int obc__poller_forget(int ep, int fd)
{
    return epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL) == 0 ? 0 : -errno;
}

int obc__poller_wait(int ep, struct obc__poll_event *out, int max, int timeout_ms)
{
    struct epoll_event ev[64];
    int n = epoll_wait(ep, ev, max < 64 ? max : 64, timeout_ms);
    if (n < 0) {
        return errno == EINTR ? 0 : -errno;
    }
    for (int i = 0; i < n; i++) {
        out[i].tag = ev[i].data.u64;
        out[i].events =
            ((ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ? OBC_POLL_IN : 0u) |
            ((ev[i].events & EPOLLOUT) ? OBC_POLL_OUT : 0u);
    }
    return n;
}

int obc__wakeup_create(void)
{
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

void obc__wakeup_signal(int fd)
{
    uint64_t one = 1;
    ssize_t n = write(fd, &one, sizeof(one));
    (void)n; /* a full counter still wakes the reader */
}

void obc__wakeup_drain(int fd)
{
    uint64_t v;
    ssize_t n = read(fd, &v, sizeof(v));
    (void)n;
}

int obc__sock_make_streaming(int fd)
{
    int one = 1;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
        return -errno;
    }
    return 0;
}

ssize_t obc__sock_send_two(int fd, const void *a, size_t alen, const void *b, size_t blen)
{
    return obc__sock_send_three(fd, a, alen, b, blen, NULL, 0);
}

ssize_t obc__sock_send_three(int fd, const void *a, size_t alen, const void *b, size_t blen,
                             const void *c, size_t clen)
{
    struct iovec iov[3] = {{(void *)a, alen}, {(void *)b, blen}, {(void *)c, clen}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 3};
    /* MSG_EOR: each call ends its own segment run (see platform.h). */
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT | MSG_EOR);
    if (n >= 0) {
        return n;
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
}

ssize_t obc__sock_send_some(int fd, const void *buf, size_t nbytes)
{
    return obc__sock_send_two(fd, buf, nbytes, NULL, 0);
}

ssize_t obc__sock_recv_some(int fd, void *buf, size_t nbytes)
{
    ssize_t n = recv(fd, buf, nbytes, MSG_DONTWAIT);
    if (n > 0) {
        return n;
    }
    if (n == 0) {
        return -EPIPE; /* the peer closed: distinct from "nothing yet" */
    }
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
}

int obc__sock_set_rcvlowat(int fd, int nbytes)
{
    return setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &nbytes, sizeof(nbytes)) == 0 ? 0 : -errno;
}
