/* SPDX-License-Identifier: MIT */
/*
 * proc.c - other processes on this host: liveness through pidfds (readable
 * once the process has exited, zombie or reaped) and single-copy transfers
 * through process_vm_readv/writev ("CMA"), which need ptrace permission
 * over the peer (same user, and Yama's ptrace_scope permitting), and the
 * scheduler state of a process, to say why a live peer makes no progress.
 */
#include "platform/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int obc__pidfd_open(pid_t pid)
{
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -errno : (int)fd;
}

bool obc__pidfd_exited(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (fd < 0) {
        return false;
    }
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)) != 0;
}

char obc__proc_state(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return '?';
    }
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0) {
        return '?';
    }
    text[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses; the state
     * follows the last ')'. */
    const char *paren = strrchr(text, ')');
    return paren != NULL && paren[1] == ' ' && paren[2] != '\0' ? paren[2] : '?';
}

void obc__fd_close(int fd)
{
    if (fd >= 0) {
        close(fd);
    }
}

/* The kernel may move fewer bytes than asked (it works in batches of
 * pinned pages); loop until all of it has moved. */
int obc__vm_read(pid_t pid, void *local, const void *remote, size_t nbytes)
{
    while (nbytes > 0) {
        struct iovec l = {.iov_base = local, .iov_len = nbytes};
        struct iovec r = {.iov_base = (void *)remote, .iov_len = nbytes};
        ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n <= 0) {
            return n == 0 ? -EIO : -errno;
        }
        local = (char *)local + n;
        remote = (const char *)remote + n;
        nbytes -= (size_t)n;
    }
    return 0;
}

int obc__vm_write(pid_t pid, const void *local, void *remote, size_t nbytes)
{
    while (nbytes > 0) {
        struct iovec l = {.iov_base = (void *)local, .iov_len = nbytes};
        struct iovec r = {.iov_base = remote, .iov_len = nbytes};
        ssize_t n = process_vm_writev(pid, &l, 1, &r, 1, 0);
        if (n <= 0) {
            return n == 0 ? -EIO : -errno;
        }
        local = (const char *)local + n;
        remote = (char *)remote + n;
        nbytes -= (size_t)n;
    }
    return 0;
}
