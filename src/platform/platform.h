/* SPDX-License-Identifier: MIT */
/*
 * platform.h - thin wrappers over the Linux calls obc needs: clocks, futexes,
 * shared-memory segments, process liveness and cross-process copies (CMA),
 * sockets, randomness and host identity. This folder is the home of OS
 * headers; callers above it see only these functions. errno is translated
 * here: failures return a negative errno value (-EPERM, ...) or -1 with the
 * message in the caller's error buffer, as each function says.
 */
#ifndef OBC_PLATFORM_H
#define OBC_PLATFORM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- time ---- */
int64_t obc__now_ns(void); /* CLOCK_MONOTONIC */
/* CLOCK_MONOTONIC_COARSE: a few ns to read, a few ms of resolution; for
 * records kept on every operation, where the precise clock would cost more
 * than the operation's bookkeeping. */
int64_t obc__coarse_now_ns(void);
void obc__sleep_ns(int64_t ns);

/* ---- CPU ---- */
static inline void obc__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}
void obc__yield(void);
int obc__ncpus(void); /* CPUs this process may run on */
int obc__bound_cpu(void); /* the CPU this process is bound to, -1 if it may use several */

/* ---- futex (process-shared when `shared`) ----
 * wait: sleeps while *word == expected, at most timeout_ns (< 0: forever).
 * Returns 0 when woken or the value differed, -ETIMEDOUT, or -EINTR. */
int obc__futex_wait(_Atomic uint32_t *word, uint32_t expected, int64_t timeout_ns, bool shared);
void obc__futex_wake(_Atomic uint32_t *word, bool shared);

/* ---- shared-memory segments (POSIX shm, mode 0600) ----
 * Return 0 or -errno. */
int obc__shm_create(const char *name, size_t nbytes, void **addr);
int obc__shm_attach(const char *name, size_t nbytes, void **addr);
int obc__shm_unlink(const char *name);
/* Unlink every /dev/shm/<prefix><pid>-* whose creator pid no longer exists;
 * returns how many. */
int obc__shm_sweep_dead(const char *prefix);
void obc__shm_detach(void *addr, size_t nbytes);
/* Bytes still free for POSIX shm segments (the tmpfs at /dev/shm), or
 * -errno. A segment is sparse: what its pages need beyond this space ends
 * in SIGBUS on the first write, not in an error. */
int64_t obc__shm_free_bytes(void);
/* An anonymous shared mapping backed by a memfd (no name in /dev/shm, gone
 * with its last mapping and fd): nbytes (> 0, a multiple of the page size)
 * mapped read-write, MAP_SHARED. Returns the fd (kept open, close-on-exec,
 * so a same-user peer may map it through /proc/<pid>/fd) or -errno. */
int obc__memfd_create(size_t nbytes, void **addr);
/* Map, shared, read-only or writable, with its page tables filled, the
 * first *nbytes (0: all, and *nbytes says how many) of the file that process
 * pid holds open as fd (a peer's obc__memfd_create block, through
 * /proc/<pid>/fd). 0, or -errno (EINVAL: the file is shorter, or empty). */
int obc__peer_fd_map(pid_t pid, int fd, bool writable, size_t *nbytes, void **addr);
/* The system's page size. */
size_t obc__page_bytes(void);

/* ---- processes ----
 * pidfd: a handle that becomes readable when the process exits. */
int obc__pidfd_open(pid_t pid); /* fd or -errno */
bool obc__pidfd_exited(int fd); /* false while alive (or when unknown) */
void obc__fd_close(int fd);
/* A process's scheduler state from /proc (R, S, D, T stopped, t traced,
 * Z zombie, ...); '?' when unknown. */
char obc__proc_state(pid_t pid);
/* Copy between this process and pid (Linux CMA). Return 0 or -errno; a copy
 * is complete when 0 is returned (partial transfers are retried). */
int obc__vm_read(pid_t pid, void *local, const void *remote, size_t nbytes);
int obc__vm_write(pid_t pid, const void *local, void *remote, size_t nbytes);

/* ---- randomness and identity ---- */
int obc__random_bytes(void *out, size_t nbytes); /* 0 or -errno */
/* A stable text identity of this host: kernel boot id + network namespace,
 * so namespaced "hosts" differ. Returns 0 or -errno. */
int obc__host_identity(char *out, size_t nbytes);

/* ---- TCP sockets (bootstrap now, tcp transport later) ----
 * All return an fd / 0 on success, -errno on failure. Deadlines are absolute
 * obc__now_ns() values; < 0 means none. */
struct obc__sockaddr {
    uint8_t bytes[28]; /* a sockaddr_in or sockaddr_in6 */
    uint32_t len;
};
int obc__sock_resolve(const char *host, int port, struct obc__sockaddr *out);
int obc__sock_listen(const struct obc__sockaddr *addr, int backlog, struct obc__sockaddr *bound);
int obc__sock_accept(int lfd, int64_t deadline_ns);
int obc__sock_connect(const struct obc__sockaddr *addr, int64_t deadline_ns);
int obc__sock_send_all(int fd, const void *buf, size_t nbytes, int64_t deadline_ns);
int obc__sock_recv_all(int fd, void *buf, size_t nbytes,
                       int64_t deadline_ns); /* -ECONNRESET at EOF */
void obc__sock_format(const struct obc__sockaddr *addr, char *out, size_t nbytes);
/* Stop both directions now; the fd stays open until closed. */
void obc__sock_shutdown(int fd);
/* Send nothing more (the peer reads our end after the last byte); reading goes on. */
void obc__sock_stop_sending(int fd);
/* The IP address (no port) this connected or bound socket uses. */
int obc__sock_local_ip(int fd, char *out, size_t nbytes);
/* Close fd after what was sent reached the peer: stop sending, discard
 * what the peer still sends until it closes or max_ns pass, then close.
 * (Closing with unread input resets the connection, which can destroy a
 * last message, such as an error, before the peer reads it.) */
void obc__sock_close_draining(int fd, int64_t max_ns);
/* One step of closing many sockets at once: discard what the peer sent,
 * then whether the peer has acknowledged every byte sent (or the
 * connection is gone), so that closing now loses nothing. */
bool obc__sock_delivered(int fd);

/* ---- event-driven sockets (poller.c) ----
 * A poller reports readiness of watched fds, each with a caller's tag; a
 * wakeup is an fd another thread signals to interrupt the wait. */
enum { OBC_POLL_IN = 1, OBC_POLL_OUT = 2 };
struct obc__poll_event {
    uint64_t tag;
    unsigned events; /* OBC_POLL_IN (also hang-up and errors), OBC_POLL_OUT */
};
int obc__poller_create(void); /* fd or -errno */
int obc__poller_watch(int ep, int fd, unsigned events, uint64_t tag, bool modify);
/* Stop watching fd (hang-ups are reported whatever the events asked). */
int obc__poller_forget(int ep, int fd);
int obc__poller_wait(int ep, struct obc__poll_event *out, int max, int timeout_ms); /* n, -errno */
int obc__wakeup_create(void); /* fd or -errno */
void obc__wakeup_signal(int fd);
void obc__wakeup_drain(int fd);
/* Non-blocking and no Nagle delay: what a streaming transport wants. */
int obc__sock_make_streaming(int fd);
/* Bytes moved, 0 when it would block, -EPIPE when the peer closed (recv), else -errno.
 * A send is never merged with the next one into a larger TSO burst (MSG_EOR), so the
 * caller bounds the bursts it puts on the wire by the size of its sends. */
ssize_t obc__sock_send_some(int fd, const void *buf, size_t nbytes);
ssize_t obc__sock_send_two(int fd, const void *a, size_t alen, const void *b, size_t blen);
ssize_t obc__sock_send_three(int fd, const void *a, size_t alen, const void *b, size_t blen,
                             const void *c, size_t clen);
ssize_t obc__sock_recv_some(int fd, void *buf, size_t nbytes);
/* Report fd readable only once nbytes are waiting (SO_RCVLOWAT). */
int obc__sock_set_rcvlowat(int fd, int nbytes);
/* The IPv4 address of the interface to use: the first up one whose name
 * starts with ifname_prefix ("" = any; "^x" excludes x), not loopback unless
 * the prefix names it; 127.0.0.1 when there is none. */
int obc__sock_pick_ifaddr(const char *ifname_prefix, char *out, size_t nbytes);

#endif
