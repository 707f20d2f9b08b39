/* SPDX-License-Identifier: MIT */
/*
 * shm_cma.c - single-copy transfers between local ranks' own buffers with
 * process_vm_readv/writev (Linux cross-memory attach). Whether they are
 * permitted (same user, Yama ptrace_scope) is probed once at init; when not,
 * the arena rings carry everything.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

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

static obc_result_t peer_copy(struct obc__arena *a, int rank, char *local, char *remote,
                              size_t nbytes, bool write)
{
    int peer = shm_local(a, rank);
    for (size_t off = 0; off < nbytes; off += PEER_PIECE) {
        size_t k = nbytes - off < PEER_PIECE ? nbytes - off : PEER_PIECE;
        obc_result_t res = off > 0 ? obc__arena_health(a) : OBC_SUCCESS;
        if (res != OBC_SUCCESS) {
            return res;
        }
        int rc = write ? obc__vm_write(a->peers[peer].pid, local + off, remote + off, k)
                       : obc__vm_read(a->peers[peer].pid, local + off, remote + off, k);
        if (rc != 0) {
            return cma_failed(a, peer, write ? "process_vm_writev to" : "process_vm_readv from",
                              rc);
        }
    }
    return OBC_SUCCESS;
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
