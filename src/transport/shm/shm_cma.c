/* SPDX-License-Identifier: MIT */
/*
 * shm_cma.c - single-copy transfers between local ranks' own buffers with
 * process_vm_readv/writev (Linux cross-memory attach). Whether they are
 * permitted (same user, Yama ptrace_scope) is probed once at init; when not,
 * the arena rings carry everything.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/copy.h"
#include "core/log.h"
#include "platform/platform.h"
#include "transport/shm/shm_arena.h"

bool obc__arena_probe_cma(struct obc__arena *a, int rank, const void *remote_addr)
{
    int peer = shm_local(a, rank);
    uint64_t word = 0;
    int rc = obc__vm_read(a->peers[peer].pid, &word, remote_addr, sizeof(word));
    if (rc != 0) {
        OBC_INFO(OBC_LOG_SHM, "single-copy reads from rank %d not permitted: %s",
                 a->peers[peer].rank, strerror(-rc));
    }
    return rc == 0;
}

void obc__arena_set_cma(struct obc__arena *a, bool usable)
{
    a->has_cma = usable;
}

bool obc__arena_has_cma(const struct obc__arena *a)
{
    return a->has_cma;
}

/* A copy fails when the peer is gone (ESRCH) or its buffer is (EFAULT):
 * usually because the operation already failed elsewhere and the peer
 * returned. Report the failure that caused it, when there is one. */
static obc_result_t cma_failed(struct obc__arena *a, int peer, const char *what, int rc)
{
    obc_result_t cause = obc__arena_health(a);
    if (cause != OBC_SUCCESS) {
        return cause;
    }
    if (rc == -ESRCH || rc == -EFAULT) {
        obc__arena_abort(a, rc == -ESRCH ? OBC_ERR_PEER_LOST : OBC_ERR_ABORTED,
                         a->peers[peer].rank);
        return obc__err_set(a->err, rc == -ESRCH ? OBC_ERR_PEER_LOST : OBC_ERR_ABORTED,
                            "%s rank %d (pid %d) failed: %s (the rank left the operation)", what,
                            a->peers[peer].rank, (int)a->peers[peer].pid, strerror(-rc));
    }
    return obc__err_set(a->err, OBC_ERR_SYSTEM, "%s rank %d (pid %d): %s", what,
                        a->peers[peer].rank, (int)a->peers[peer].pid, strerror(-rc));
}

/* One system call moves at most PEER_PIECE bytes, and the arena's health
 * is checked between them, so an abort or a dead rank elsewhere is noticed
 * within one piece of a large copy (8 MiB: a few milliseconds). */
#define PEER_PIECE (8u << 20)

static int vm_copy(pid_t pid, char *local, char *remote, size_t nbytes, bool write)
{
    return write ? obc__vm_write(pid, local, remote, nbytes)
                 : obc__vm_read(pid, local, remote, nbytes);
}

/*
 * The kernel copies with `rep movsb`, which on some CPUs runs 3-4x slower
 * when the destination lies just after the source modulo 4 KiB (core/copy.c;
 * here, 64 KiB read at 2.4 against 10 GB/s). The users' buffers decide that,
 * so such a copy goes through a bounce buffer placed at the remote buffer's
 * page offset: the kernel copies between equal offsets, and obc__copy's
 * loop moves the bytes between the bounce and the local buffer (64 KiB
 * pieces, which stay in cache: 7.6-8 GB/s to 1 MiB, 4-5 from 16 MiB, 2-2.4
 * direct).
 */
#define BOUNCE_PIECE (64u << 10)
#define BOUNCE_MIN_BYTES 4096

static bool wants_bounce(const char *local, const char *remote, size_t nbytes, bool write)
{
    return nbytes >= BOUNCE_MIN_BYTES &&
        (write ? obc__copy_distance_is_slow(remote, local)
               : obc__copy_distance_is_slow(local, remote));
}

/* Every piece of one call starts at the same page offset (pieces are whole
 * pages), so one bounce, allocated once per call, serves them all. */
static int vm_copy_bounced(pid_t pid, char *local, char *remote, size_t nbytes, bool write,
                           char *bounce)
{
    int rc = 0;
    for (size_t off = 0; off < nbytes && rc == 0; off += BOUNCE_PIECE) {
        size_t k = nbytes - off < BOUNCE_PIECE ? nbytes - off : BOUNCE_PIECE;
        if (write) {
            obc__copy(bounce, local + off, k, 0);
            rc = obc__vm_write(pid, bounce, remote + off, k);
        } else {
            rc = obc__vm_read(pid, bounce, remote + off, k);
            obc__copy(local + off, bounce, k, 0);
        }
    }
    return rc;
}

static obc_result_t peer_copy(struct obc__arena *a, int rank, char *local, char *remote,
                              size_t nbytes, bool write)
{
    int peer = shm_local(a, rank);
    pid_t pid = a->peers[peer].pid;
    void *page = NULL; /* the bounce's page; without it the copy is slow, but it moves */
    if (wants_bounce(local, remote, nbytes, write) &&
        posix_memalign(&page, 4096, (nbytes < BOUNCE_PIECE ? nbytes : BOUNCE_PIECE) + 4096) != 0) {
        page = NULL;
    }
    char *bounce = page != NULL ? (char *)page + ((uintptr_t)remote & 4095) : NULL;
    obc_result_t res = OBC_SUCCESS;
    for (size_t off = 0; off < nbytes && res == OBC_SUCCESS; off += PEER_PIECE) {
        size_t k = nbytes - off < PEER_PIECE ? nbytes - off : PEER_PIECE;
        if (off > 0 && (res = obc__arena_health(a)) != OBC_SUCCESS) {
            break;
        }
        int rc = bounce != NULL ? vm_copy_bounced(pid, local + off, remote + off, k, write, bounce)
                                : vm_copy(pid, local + off, remote + off, k, write);
        if (rc != 0) {
            res = cma_failed(a, peer, write ? "process_vm_writev to" : "process_vm_readv from", rc);
        }
    }
    free(page);
    return res;
}

obc_result_t obc__arena_peer_read(struct obc__arena *a, int rank, void *dst, const void *src,
                                  size_t nbytes)
{
    return peer_copy(a, rank, dst, (char *)(uintptr_t)src, nbytes, false);
}

obc_result_t obc__arena_peer_write(struct obc__arena *a, int rank, const void *src, void *dst,
                                   size_t nbytes)
{
    return peer_copy(a, rank, (char *)(uintptr_t)src, dst, nbytes, true);
}
