/* SPDX-License-Identifier: MIT */
/*
 * obc.h - the public C API of obc (ops-broadcast), a collective-communication
 * library for CPU processes: shared memory within a host, TCP between hosts.
 *
 * This is the only public header. Every name here is a contract (the design's
 * API.md, ../shared/design/API.md, lists them): names are only ever added,
 * never renamed.
 *
 * Conventions that hold for every call below:
 *  - Every function that can fail returns obc_result_t. OBC_SUCCESS is 0.
 *    The detail of a failure (which rank, which operation, errno text) is
 *    in obc_comm_last_error(comm) and in the log (OBC_DEBUG).
 *  - Argument order is (sendbuf, recvbuf, count, dtype, [op], [root], comm,
 *    [req]). count is in elements of dtype, as size_t: buffers over 4 GiB
 *    and over 2^31 elements work.
 *  - "Collective" means every rank of the communicator must make the same
 *    call, with matching arguments, in the same order as its other
 *    collective calls on that communicator.
 *  - Bad arguments are rejected before any communication with
 *    OBC_ERR_INVALID_ARG; the communicator stays usable.
 *  - After a fatal failure (timeout, lost peer, abort, protocol error) the
 *    communicator is broken: every pending and later collective fails
 *    promptly with OBC_ERR_ABORTED (or the original code). Only
 *    obc_comm_abort and obc_comm_destroy remain useful.
 *  - Thread-safety: a communicator may be used by one thread at a time
 *    (the library runs its own progress thread internally). Different
 *    communicators may be used concurrently from different threads.
 *  - The library is not fork-safe: a child of fork() must not use a
 *    communicator created by its parent.
 */
#ifndef OBC_H
#define OBC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(OBC_BUILDING_LIBRARY)
#define OBC_API __attribute__((visibility("default")))
#else
#define OBC_API
#endif

#define OBC_VERSION_MAJOR 0
#define OBC_VERSION_MINOR 1
#define OBC_VERSION_PATCH 0

/* Result codes. OBC_IN_PROGRESS is a status (from obc_test), not an error. */
typedef enum {
    OBC_SUCCESS = 0,
    OBC_ERR_INVALID_ARG, /* caller error: NULL buffer with count > 0, bad root, bad dtype/op, ... */
    OBC_ERR_NO_MEMORY,
    OBC_ERR_SYSTEM, /* an OS call failed; the message carries errno text */
    OBC_ERR_TIMEOUT, /* did not complete within the communicator's timeout */
    OBC_ERR_PEER_LOST, /* a peer died or its connection broke */
    OBC_ERR_MISMATCH, /* ranks disagree on the collective or its arguments */
    OBC_ERR_ABORTED, /* communicator aborted, locally or by a peer's failure */
    OBC_ERR_AUTH, /* a peer failed bootstrap authentication */
    OBC_ERR_PROTOCOL, /* malformed or unexpected message */
    OBC_ERR_INTERNAL,
    OBC_IN_PROGRESS /* from obc_test: not finished yet */
} obc_result_t;

/* Element types. float16 is IEEE binary16, bfloat16 the upper half of a
 * binary32. Broadcast moves bytes and never interprets them. */
typedef enum {
    OBC_INT8,
    OBC_UINT8,
    OBC_INT32,
    OBC_UINT32,
    OBC_INT64,
    OBC_UINT64,
    OBC_FLOAT16,
    OBC_BFLOAT16,
    OBC_FLOAT32,
    OBC_FLOAT64
} obc_dtype_t;

/* Reduction operators (for the reduction collectives). */
typedef enum { OBC_SUM, OBC_PROD, OBC_MIN, OBC_MAX, OBC_AVG } obc_redop_t;

/* The collectives, as obc_comm_algorithm names them (and OBC_ALGO spells
 * them: broadcast, barrier, allreduce, reduce, allgather, reduce_scatter,
 * gather, scatter, alltoall, alltoallv, allgatherv). Appended only. */
typedef enum {
    OBC_COLL_BROADCAST,
    OBC_COLL_BARRIER,
    OBC_COLL_ALLREDUCE,
    OBC_COLL_REDUCE,
    OBC_COLL_ALLGATHER,
    OBC_COLL_REDUCE_SCATTER,
    OBC_COLL_GATHER,
    OBC_COLL_SCATTER,
    OBC_COLL_ALLTOALL,
    OBC_COLL_ALLTOALLV,
    OBC_COLL_ALLGATHERV
} obc_coll_t;

typedef struct obc_comm obc_comm_t; /* opaque communicator */
typedef struct obc_request obc_request_t; /* opaque handle of a non-blocking call */

/* Opaque bootstrap identifier made by obc_get_unique_id; copy its bytes to
 * every process (file, socket, MPI, ...) before obc_comm_init_rank. */
typedef struct {
    unsigned char bytes[128];
} obc_unique_id_t;

/* ------------------------------------------------------------------------
 * Communicators
 * ------------------------------------------------------------------------ */

/*
 * obc_comm_init_env - create the communicator described by the environment.
 *
 * Reads, in this order of preference:
 *  - obcrun's variables: OBC_RANK, OBC_NRANKS, OBC_BOOTSTRAP (host:port of
 *    the rendezvous, hosted by rank 0), OBC_SECRET;
 *  - torchrun's: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (LOCAL_RANK is
 *    informational). Under torchrun (TORCHELASTIC_USE_AGENT_STORE set),
 *    torch's own store holds MASTER_PORT, so obc's rendezvous listens on
 *    MASTER_PORT + 1; OBC_BOOTSTRAP overrides the address in every case;
 *  - Open MPI's OMPI_COMM_WORLD_RANK/SIZE, then MPICH/PMI's PMI_RANK/SIZE,
 *    then Slurm's SLURM_PROCID/NTASKS, each with the rendezvous at
 *    OBC_BOOTSTRAP, else MASTER_ADDR:MASTER_PORT (docs/launchers.md).
 * Rank 0 hosts the rendezvous; the others connect to it, retrying until the
 * communicator's timeout (OBC_TIMEOUT).
 *
 * Collective over all ranks named by the environment; blocks until every
 * rank has joined. Thread-safe (creates an independent communicator).
 * Returns OBC_SUCCESS, OBC_ERR_INVALID_ARG (comm NULL, missing or malformed
 * variables), OBC_ERR_TIMEOUT (a rank never joined), OBC_ERR_AUTH (secret
 * mismatch), OBC_ERR_PROTOCOL, OBC_ERR_SYSTEM or OBC_ERR_NO_MEMORY.
 */
OBC_API obc_result_t obc_comm_init_env(obc_comm_t **comm);

/*
 * obc_get_unique_id - make a fresh identifier for one obc_comm_init_rank.
 *
 * Call it on one process only, then give the same bytes to all ranks. The
 * calling process hosts the rendezvous (a background thread) until the
 * ranks have joined; it must stay alive until then. The id carries the
 * rendezvous address (OBC_SOCKET_IFNAME picks the interface) and a random
 * secret. Not collective; does not block. Thread-safe.
 * Returns OBC_SUCCESS, OBC_ERR_INVALID_ARG (id NULL) or OBC_ERR_SYSTEM.
 */
OBC_API obc_result_t obc_get_unique_id(obc_unique_id_t *id);

/*
 * obc_comm_init_rank - create a communicator of nranks ranks; this process
 * is rank `rank` (0 <= rank < nranks). Every rank passes the same id.
 *
 * Collective over the nranks processes; blocks until all have joined or the
 * timeout (OBC_TIMEOUT) expires. Thread-safe.
 * Returns as obc_comm_init_env.
 */
OBC_API obc_result_t obc_comm_init_rank(obc_comm_t **comm, int nranks, const obc_unique_id_t *id,
                                        int rank);

/*
 * obc_comm_destroy - finish every operation still queued on comm, then free
 * it and every resource it holds (threads, sockets, shared memory).
 *
 * Local (not collective): peers are not waited for, but pending operations
 * of this rank are completed first (or fail if the communicator is broken).
 * Requests of those operations belong to the caller and stay valid after
 * destroy: release them with obc_wait or obc_test, which then return the
 * finished result at once. Must not be called while another thread uses
 * comm. NULL is accepted.
 * Returns OBC_SUCCESS, or the error of a pending operation that failed.
 */
OBC_API obc_result_t obc_comm_destroy(obc_comm_t *comm);

/*
 * obc_comm_abort - break comm here and on every peer: pending and later
 * collectives on all ranks fail promptly with OBC_ERR_ABORTED. Use it when a
 * rank decides to give up (an exception, a signal) so that no peer hangs.
 * The communicator must still be freed with obc_comm_destroy.
 *
 * Local, does not block; may be called from any thread, also while another
 * thread is blocked in a collective on comm.
 * Returns OBC_SUCCESS or OBC_ERR_INVALID_ARG (comm NULL).
 */
OBC_API obc_result_t obc_comm_abort(obc_comm_t *comm);

/* obc_comm_rank / obc_comm_size - this process's rank and the number of
 * ranks; -1 for a NULL comm. Local, thread-safe. */
OBC_API int obc_comm_rank(const obc_comm_t *comm);
OBC_API int obc_comm_size(const obc_comm_t *comm);

/*
 * obc_comm_machine_info - how this rank's machine looks to obc: *ranks, the
 * ranks of comm on it (this one included); *cpus, the CPUs they may run on
 * (one per rank when each is bound to a core of its own, as obcrun and
 * mpirun bind; else the most that one rank's affinity mask allows). When
 * *ranks > *cpus obc calls the machine crowded: its waits yield and sleep
 * instead of spinning, and some algorithm choices change (docs/algorithms.md).
 * Either pointer may be NULL. Local. OBC_ERR_INVALID_ARG for a NULL comm.
 */
OBC_API obc_result_t obc_comm_machine_info(const obc_comm_t *comm, int *ranks, int *cpus);

/*
 * obc_comm_set_timeout - set how long a collective may wait without any
 * progress before it fails with OBC_ERR_TIMEOUT (and breaks comm). Seconds;
 * <= 0 means wait forever. The default comes from OBC_TIMEOUT (300 s).
 * Applies to operations started after the call. Local; same thread rule as
 * the collectives. Returns OBC_SUCCESS or OBC_ERR_INVALID_ARG.
 */
OBC_API obc_result_t obc_comm_set_timeout(obc_comm_t *comm, double seconds);

/* ------------------------------------------------------------------------
 * Blocking collectives
 * ------------------------------------------------------------------------ */

/*
 * obc_broadcast - copy `count` elements of `dtype` from the root's sendbuf
 * into recvbuf on every rank.
 *
 * sendbuf is read only on the root; other ranks may pass NULL. On the root,
 * sendbuf == recvbuf is in place (nothing is copied locally); otherwise the
 * root's recvbuf receives a copy too, and the root's sendbuf is never
 * modified. Buffers must not overlap unless equal. Large messages stream
 * in chunks through a bounded staging area: extra memory does not grow
 * with count.
 *
 * Collective, blocking: returns when this rank's recvbuf holds the data
 * (the root: when its sendbuf may be reused).
 * Returns OBC_SUCCESS; OBC_ERR_INVALID_ARG (comm NULL, recvbuf NULL with
 * count > 0, root's sendbuf NULL with count > 0, root out of range, bad
 * dtype, or called inside a group with a request output missing);
 * OBC_ERR_TIMEOUT, OBC_ERR_PEER_LOST, OBC_ERR_ABORTED, OBC_ERR_MISMATCH,
 * OBC_ERR_SYSTEM.
 */
OBC_API obc_result_t obc_broadcast(const void *sendbuf, void *recvbuf, size_t count,
                                   obc_dtype_t dtype, int root, obc_comm_t *comm);

/*
 * obc_bcast - in-place broadcast: buf is the root's data and every other
 * rank's destination. Same as obc_broadcast(buf, buf, ...). Collective,
 * blocking; same codes as obc_broadcast.
 */
OBC_API obc_result_t obc_bcast(void *buf, size_t count, obc_dtype_t dtype, int root,
                               obc_comm_t *comm);

/*
 * obc_barrier - return only after every rank has entered the barrier.
 * Collective, blocking. Returns OBC_SUCCESS, OBC_ERR_INVALID_ARG (comm
 * NULL), OBC_ERR_TIMEOUT, OBC_ERR_PEER_LOST, OBC_ERR_ABORTED.
 */
OBC_API obc_result_t obc_barrier(obc_comm_t *comm);

/*
 * Reductions (obc_allreduce, obc_reduce, obc_reduce_scatter)
 *
 * Elementwise over ranks, with op:
 *  - OBC_SUM, OBC_PROD: integers wrap modulo 2^bits (two's complement for
 *    the signed types; never undefined behaviour);
 *  - OBC_MIN, OBC_MAX: for floats a NaN in any input gives NaN;
 *  - OBC_AVG: the SUM divided by the number of ranks. Floats divide in
 *    their accumulator type and round once; integers divide the wrapped
 *    SUM and truncate toward zero (-7 / 2 = -3), as C does.
 * float16 and bfloat16 are accumulated in float32 by every algorithm, also
 * across ranks (partial sums travel as float32), and rounded once to the
 * 16-bit type, to nearest even.
 *
 * Determinism: every element of the result is computed by one rank, in an
 * order fixed by the algorithm, the rank count and count alone (never by
 * timing), and then copied to the others. So every rank receives bitwise
 * identical bytes, and a rerun with the same inputs, ranks and algorithm
 * reproduces them. Different algorithms add in different orders (see
 * docs/algorithms.md), so float results may differ between them in the
 * last bits, as between NCCL's ring and tree.
 * ------------------------------------------------------------------------ */

/*
 * obc_allreduce - recvbuf = op over all ranks of sendbuf (count elements).
 * sendbuf == recvbuf is in place; otherwise the buffers must not overlap and
 * sendbuf is not modified. Collective, blocking: returns when recvbuf holds
 * the result. Returns OBC_SUCCESS; OBC_ERR_INVALID_ARG (comm NULL, a buffer
 * NULL with count > 0, bad dtype or op, overlapping buffers);
 * OBC_ERR_TIMEOUT, OBC_ERR_PEER_LOST, OBC_ERR_ABORTED, OBC_ERR_MISMATCH,
 * OBC_ERR_SYSTEM.
 */
OBC_API obc_result_t obc_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                   obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm);

/*
 * obc_reduce - the root's recvbuf = op over all ranks of sendbuf. recvbuf
 * is used on the root only (others may pass NULL); sendbuf == recvbuf on
 * the root is in place. Collective, blocking: returns when this rank's
 * part is done (the root: recvbuf holds the result). Codes as
 * obc_allreduce, plus OBC_ERR_INVALID_ARG for a root out of range.
 */
OBC_API obc_result_t obc_reduce(const void *sendbuf, void *recvbuf, size_t count, obc_dtype_t dtype,
                                obc_redop_t op, int root, obc_comm_t *comm);

/*
 * obc_allgather - recvbuf (nranks * sendcount elements) receives every
 * rank's sendbuf, rank r's at element r * sendcount. In place (as NCCL):
 * sendbuf == recvbuf + rank * sendcount elements, the rank's own block
 * already in recvbuf. Collective, blocking. Codes as obc_allreduce.
 */
OBC_API obc_result_t obc_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                   obc_dtype_t dtype, obc_comm_t *comm);

/*
 * obc_reduce_scatter - sendbuf holds nranks * recvcount elements; recvbuf
 * (recvcount elements) receives block `rank` of their reduction over
 * ranks: recvbuf[i] = op over ranks of sendbuf[rank * recvcount + i]. In
 * place (as NCCL): recvbuf == sendbuf + rank * recvcount elements.
 * Collective, blocking. Codes as obc_allreduce.
 */
OBC_API obc_result_t obc_reduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                        obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm);

/*
 * obc_check_consistency - do all ranks hold the same bytes as the root?
 * Every rank hashes its `bytes` bytes at buf (XXH3, 64 bits) and the hashes
 * are gathered: *ndiff receives the number of ranks whose hash differs
 * from the root's, *first_diff_rank the lowest such rank, or -1. The same
 * answer on every rank. Costs one pass over buf and one small collective;
 * a differing buffer is reported except with probability ~2^-64.
 * Collective, blocking. ndiff and first_diff_rank may be NULL. Codes as
 * obc_allreduce (bytes may differ between ranks: that is a difference, not
 * an error).
 */
OBC_API obc_result_t obc_check_consistency(const void *buf, size_t bytes, int root, int *ndiff,
                                           int *first_diff_rank, obc_comm_t *comm);

/*
 * obc_hash64 - the 64-bit hash obc_check_consistency compares (XXH3-64,
 * seed 0) of `bytes` bytes at buf. For callers that check many buffers
 * with one collective of their own (the Python binding hashes every tensor
 * of a model, then allgathers the hashes once). Local, thread-safe; buf
 * may be NULL when bytes is 0.
 */
OBC_API uint64_t obc_hash64(const void *buf, size_t bytes);

/* ------------------------------------------------------------------------
 * Non-blocking collectives
 *
 * Each obc_i* call checks its arguments, queues the operation and returns at
 * once with a request in *req. Operations on one communicator run in the
 * order they were issued, on the communicator's progress thread, so several
 * can be in flight; buffers must stay valid and untouched (except sendbuf
 * reads) until the request completes. Complete a request with obc_wait, or
 * poll it with obc_test; either frees it once finished.
 * ------------------------------------------------------------------------ */

/*
 * obc_ibroadcast - non-blocking obc_broadcast. Collective; does not block.
 * Returns OBC_SUCCESS (operation queued), OBC_ERR_INVALID_ARG (also for a
 * NULL req), OBC_ERR_ABORTED (communicator broken), OBC_ERR_NO_MEMORY.
 */
OBC_API obc_result_t obc_ibroadcast(const void *sendbuf, void *recvbuf, size_t count,
                                    obc_dtype_t dtype, int root, obc_comm_t *comm,
                                    obc_request_t **req);

/* obc_ibarrier - non-blocking obc_barrier; codes as obc_ibroadcast. */
OBC_API obc_result_t obc_ibarrier(obc_comm_t *comm, obc_request_t **req);

/* Non-blocking obc_allreduce, obc_reduce, obc_allgather and
 * obc_reduce_scatter; codes as obc_ibroadcast. */
OBC_API obc_result_t obc_iallreduce(const void *sendbuf, void *recvbuf, size_t count,
                                    obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm,
                                    obc_request_t **req);
OBC_API obc_result_t obc_ireduce(const void *sendbuf, void *recvbuf, size_t count,
                                 obc_dtype_t dtype, obc_redop_t op, int root, obc_comm_t *comm,
                                 obc_request_t **req);
OBC_API obc_result_t obc_iallgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                    obc_dtype_t dtype, obc_comm_t *comm, obc_request_t **req);
OBC_API obc_result_t obc_ireduce_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                         obc_dtype_t dtype, obc_redop_t op, obc_comm_t *comm,
                                         obc_request_t **req);

/*
 * obc_wait - block until req's operation completes, free req and return
 * the operation's result (OBC_SUCCESS or its error). NULL is
 * OBC_ERR_INVALID_ARG. Waits spin briefly, then sleep. Call it from one
 * thread per request.
 */
OBC_API obc_result_t obc_wait(obc_request_t *req);

/*
 * obc_test - check req without blocking. *done = 1 when it finished: req is
 * then freed and the operation's result returned. *done = 0: the request
 * is still running and OBC_IN_PROGRESS is returned. NULL arguments give
 * OBC_ERR_INVALID_ARG.
 */
OBC_API obc_result_t obc_test(obc_request_t *req, int *done);

/*
 * obc_comm_synchronize - block until every operation issued on comm so far
 * has completed. Requests stay valid (they still need obc_wait/obc_test,
 * which then return at once). Returns OBC_SUCCESS or the first error of
 * those operations. Local: waits only for this rank's own operations.
 */
OBC_API obc_result_t obc_comm_synchronize(obc_comm_t *comm);

/* ------------------------------------------------------------------------
 * Groups (coalescing)
 *
 * Between obc_group_start and obc_group_end, collective calls made by this
 * thread are queued, not run. obc_group_end launches them together: runs
 * of small broadcasts with the same root on one communicator are fused into
 * buckets of bounded size (OBC_GROUP_BUCKET_BYTES), each moved as one
 * transfer. Blocking calls inside a group return OBC_SUCCESS at once (after
 * the argument check); obc_group_end then blocks until they have finished
 * and returns the first error. Requests of non-blocking calls inside a
 * group complete as usual through obc_wait/obc_test. Groups nest; only the
 * outermost obc_group_end launches. Thread-local state: thread-safe.
 * ------------------------------------------------------------------------ */
OBC_API obc_result_t obc_group_start(void);
OBC_API obc_result_t obc_group_end(void);

/* ------------------------------------------------------------------------
 * Errors and information
 * ------------------------------------------------------------------------ */

/* obc_strerror - a static, constant English name of r ("invalid
 * argument", ...); never NULL. Thread-safe. */
OBC_API const char *obc_strerror(obc_result_t r);

/* obc_result_name - extension: the identifier of r as spelled in this header
 * ("OBC_ERR_TIMEOUT"), or NULL for a value that is no obc_result_t. The codes
 * are contiguous from OBC_SUCCESS, so calling it for 0, 1, ... until NULL lists
 * them all: bindings (obc's Python package) take names and values from here
 * rather than copying the enum. Thread-safe. */
OBC_API const char *obc_result_name(obc_result_t r);

/* obc_comm_last_error - detail of the last failure on comm (which rank,
 * which operation, errno text), or "" if none. With a NULL comm: the detail
 * of the last failure of this thread that had no communicator (an init or
 * an argument check). The string stays valid until the next call on comm. */
OBC_API const char *obc_comm_last_error(const obc_comm_t *comm);

/*
 * obc_comm_algorithm - the name of the algorithm that a collective `coll`
 * of `nbytes` would run on comm now ("ring", "hier", ...: the names
 * OBC_ALGO accepts, docs/algorithms.md), written NUL-terminated into
 * name[len]. nbytes is count times the datatype's size, count as the call
 * takes it (allgather, reduce_scatter, gather, scatter, alltoall: one
 * rank's block; alltoallv, allgatherv: the whole); barrier ignores it. The answer is the library's
 * own choice, with OBC_ALGO and the OBC_*_BYTES thresholds applied, so it is the same on every
 * rank, and it is what OBC_DEBUG=INFO logs with the reason. Local: no communication. Returns
 * OBC_SUCCESS, or OBC_ERR_INVALID_ARG for a NULL comm or name, an unknown coll, or a len too short
 * for the name (name then holds "").
 */
OBC_API obc_result_t obc_comm_algorithm(const obc_comm_t *comm, obc_coll_t coll, size_t nbytes,
                                        char *name, size_t len);

/*
 * obc_comm_algorithm_forced - the algorithm that OBC_ALGO forces for coll
 * on comm (as read when comm was created), or "" when it forces none,
 * written into name[len]. A forced algorithm that cannot run an operation
 * (obc_comm_algorithm says which runs instead) is still reported here.
 * Local. Returns OBC_SUCCESS or OBC_ERR_INVALID_ARG as obc_comm_algorithm.
 */
OBC_API obc_result_t obc_comm_algorithm_forced(const obc_comm_t *comm, obc_coll_t coll, char *name,
                                               size_t len);

/* ------------------------------------------------------------------------
 * Added in the second round (API.md): sub-communicators, point-to-point,
 * personalised collectives, mixed-precision broadcast, shared buffers.
 * Every call is valid with count 0 and with a single rank; a mismatched
 * (count, dtype) between ranks is OBC_ERR_MISMATCH, never a hang or a
 * silent truncation. Codes as the collectives above.
 * ------------------------------------------------------------------------ */

#define OBC_UNDEFINED (-1)

/*
 * obc_comm_split - collective over comm: ranks that pass the same color form
 * one new communicator, ordered by (key, rank in comm); color OBC_UNDEFINED
 * gives *newcomm = NULL. The child is independent of its parent: its own
 * sequence numbers, its timeout (comm's as set now), its host arena and
 * links, its failure domain (a timeout, mismatch or abort in the child
 * leaves comm usable; a rank that dies fails every communicator that next
 * needs it). Its hosts are comm's (OBC_HOST_ID=rank/K and OBC_HOST_SPLIT
 * speak of comm's ranks). Messages of the child name ranks by their rank
 * in the child (OBC_DEBUG=INFO logs which rank of comm each one is).
 * Destroy it with obc_comm_destroy, before or after comm; it may be split
 * again. Counts as six collectives on comm (the child's setup travels
 * through comm: it needs no rendezvous server of its own); blocks
 * until this rank's child is assembled, or comm's timeout, or comm breaks
 * (a rank that dies or stalls inside obc_comm_split is a failure of comm,
 * as in any collective on it). Thread safety as for the collectives.
 * Returns OBC_ERR_INVALID_ARG (NULL comm or newcomm, color < 0 other than
 * OBC_UNDEFINED, inside obc_group_start/end) before any communication;
 * OBC_ERR_ABORTED on a broken comm; else the code of the failure, with
 * comm's obc_comm_last_error saying what it was. docs/subcomm.md.
 */
OBC_API obc_result_t obc_comm_split(obc_comm_t *comm, int color, int key, obc_comm_t **newcomm);
/* obc_comm_dup - obc_comm_split with one color and key = rank: the same ranks
 * in the same order, as an independent communicator. */
OBC_API obc_result_t obc_comm_dup(obc_comm_t *comm, obc_comm_t **newcomm);

/*
 * obc_send / obc_recv - point-to-point, matched in order per (sender,
 * receiver) pair. Blocking: returns when buf may be reused (send) or holds
 * the data (recv). Inside obc_group_start/end, the sends and receives of the
 * group progress together, so exchange patterns written as sends (ring
 * shifts, all-to-all) never deadlock, as in NCCL. A (count, dtype) that
 * differs between the pair is OBC_ERR_MISMATCH on both sides.
 * Sends are synchronous: obc_send returns once the receiver has accepted the
 * message (checked its header), so two ranks that both send first wait for
 * each other outside a group; consecutive obc_isend/obc_irecv calls progress
 * together as in a group. A send to self is buffered and returns at once; a
 * blocking receive from self with no send to self before it is
 * OBC_ERR_INVALID_ARG. Sends and receives do not count in the collectives'
 * order, but between two ranks they must be issued in the same relative
 * order with the collectives (docs/p2p.md). Codes: OBC_ERR_INVALID_ARG (peer
 * out of range, NULL buf with count > 0, bad dtype, NULL req),
 * OBC_ERR_MISMATCH, OBC_ERR_PEER_LOST, OBC_ERR_TIMEOUT, OBC_ERR_ABORTED.
 */
OBC_API obc_result_t obc_send(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                              obc_comm_t *comm);
OBC_API obc_result_t obc_recv(void *buf, size_t count, obc_dtype_t dtype, int peer,
                              obc_comm_t *comm);
OBC_API obc_result_t obc_isend(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                               obc_comm_t *comm, obc_request_t **req);
OBC_API obc_result_t obc_irecv(void *buf, size_t count, obc_dtype_t dtype, int peer,
                               obc_comm_t *comm, obc_request_t **req);

/*
 * Receives from any source (MPI_ANY_SOURCE, torch's recv without src): the
 * receive takes the first message that any rank (this one included) sends
 * to this rank, and from then on is a receive from that rank, matched and
 * checked as above. An earlier receive from a named rank keeps that rank's
 * next message; a later one never overtakes the receive from any source.
 * obc_recv/obc_irecv accept OBC_ANY_SOURCE as the peer; obc_recv_any and
 * obc_irecv_any also store the sender's rank in *source (not NULL), valid
 * once the call (or the request) has completed. Which sender wins when
 * several have sent is not defined. Waiting on several senders costs more
 * wake-ups than a named receive (docs/p2p.md). Codes as obc_recv; on a
 * communicator of one rank, a blocking receive from any source with no
 * send to self before it is OBC_ERR_INVALID_ARG.
 */
#define OBC_ANY_SOURCE (-2)
OBC_API obc_result_t obc_recv_any(void *buf, size_t count, obc_dtype_t dtype, int *source,
                                  obc_comm_t *comm);
OBC_API obc_result_t obc_irecv_any(void *buf, size_t count, obc_dtype_t dtype, int *source,
                                   obc_comm_t *comm, obc_request_t **req);

/*
 * Tagged point-to-point (MPI's tag, torch's tag=): the calls above carry tag
 * 0. Tags are compared, not used to reorder: a pair's messages are received
 * in the order they were sent, and a named receive whose tag differs from
 * its sender's next message is OBC_ERR_MISMATCH on both sides, naming both
 * tags, never the wrong message's data. (Reordering would mean holding the
 * skipped messages' data: memory that grows with them.) A receive from any
 * source (peer OBC_ANY_SOURCE) takes the first message of its own tag; a
 * rank whose next message has another tag is left to later receives.
 * source may be NULL; if not, it receives the sender's rank (a named
 * receive: peer), valid once the call or request has completed. tag >= 0,
 * else OBC_ERR_INVALID_ARG. Otherwise as obc_send / obc_recv.
 */
OBC_API obc_result_t obc_send_tag(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                                  int tag, obc_comm_t *comm);
OBC_API obc_result_t obc_recv_tag(void *buf, size_t count, obc_dtype_t dtype, int peer, int tag,
                                  int *source, obc_comm_t *comm);
OBC_API obc_result_t obc_isend_tag(const void *buf, size_t count, obc_dtype_t dtype, int peer,
                                   int tag, obc_comm_t *comm, obc_request_t **req);
OBC_API obc_result_t obc_irecv_tag(void *buf, size_t count, obc_dtype_t dtype, int peer, int tag,
                                   int *source, obc_comm_t *comm, obc_request_t **req);

/*
 * Personalised collectives. Counts are in elements of dtype (size_t: 64
 * bits); buffers are laid out rank by rank as MPI lays them out; every
 * dtype; valid with count 0 and with one rank. Collective (every rank, same
 * order), blocking; thread-safety as the other collectives.
 *
 * In place (sendbuf == recvbuf) where MPI allows MPI_IN_PLACE:
 *  - obc_gather, on the root: its own block is already at its place in
 *    recvbuf (recvbuf + root * sendcount elements) and is not copied;
 *    sendbuf == that block is in place too;
 *  - obc_scatter, on the root: its own block stays where it is in sendbuf
 *    (recvbuf is not written); recvbuf == that block is in place too;
 *  - obc_alltoall: block j of the one buffer goes to rank j and is
 *    replaced by rank j's block for this rank;
 *  - obc_allgatherv: this rank's block is already at recvbuf + displs[rank]
 *    (sendcount is then ignored); sendbuf == that block is in place too.
 * obc_alltoallv has no in-place form. Otherwise the buffers must not
 * overlap, and sendbuf is never written.
 *
 * A count that differs between a sending and a receiving rank (alltoallv's
 * sendcounts[j] on rank i against recvcounts[i] on rank j; a gather's
 * sendcount against the root's), another dtype, root or call is
 * OBC_ERR_MISMATCH, naming the rank, on the rank that finds it (the others
 * fail with it or OBC_ERR_ABORTED; a rank that only sends may return first
 * and then fails its next call): never a hang or a truncation.
 * Returns OBC_SUCCESS; OBC_ERR_INVALID_ARG (comm NULL, a needed buffer or
 * array NULL with elements to move, root out of range, bad dtype, sizes
 * overflowing, overlapping buffers, alltoallv's sendcounts[rank] !=
 * recvcounts[rank], allgatherv's sendcount != recvcounts[rank] out of
 * place); OBC_ERR_MISMATCH, OBC_ERR_TIMEOUT, OBC_ERR_PEER_LOST,
 * OBC_ERR_ABORTED, OBC_ERR_NO_MEMORY.
 */
/* obc_gather - the root's recvbuf (nranks * sendcount elements) receives
 * every rank's sendbuf, rank r's at element r * sendcount; recvbuf is used
 * on the root only (others may pass NULL). */
OBC_API obc_result_t obc_gather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                obc_dtype_t dtype, int root, obc_comm_t *comm);
/* obc_scatter - rank r's recvbuf (recvcount elements) receives block r of
 * the root's sendbuf (nranks * recvcount elements, used on the root only). */
OBC_API obc_result_t obc_scatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                 obc_dtype_t dtype, int root, obc_comm_t *comm);
/* obc_alltoall - block j (count elements) of sendbuf goes to rank j, and
 * block j of recvbuf comes from rank j: count elements to and from each
 * rank, nranks * count in each buffer. */
OBC_API obc_result_t obc_alltoall(const void *sendbuf, void *recvbuf, size_t count,
                                  obc_dtype_t dtype, obc_comm_t *comm);
/* obc_alltoallv - sendcounts[j] elements at sendbuf + sdispls[j] go to
 * rank j; recvcounts[j] from rank j land at recvbuf + rdispls[j]. Arrays of
 * nranks entries, displacements in elements; blocks may leave gaps (never
 * written) but must not overlap. The arrays are copied: they may be freed
 * once the call returns, also for obc_ialltoallv and inside a group. */
OBC_API obc_result_t obc_alltoallv(const void *sendbuf, const size_t *sendcounts,
                                   const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                   const size_t *rdispls, obc_dtype_t dtype, obc_comm_t *comm);
/* obc_allgatherv - every rank's sendbuf (sendcount == recvcounts[rank]
 * elements) lands in every rank's recvbuf at displs[rank]; arrays as
 * obc_alltoallv, the same on every rank. */
OBC_API obc_result_t obc_allgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                    const size_t *recvcounts, const size_t *displs,
                                    obc_dtype_t dtype, obc_comm_t *comm);

/* Non-blocking forms of the five above; codes as obc_ibroadcast (and the
 * argument checks above). */
OBC_API obc_result_t obc_igather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                 obc_dtype_t dtype, int root, obc_comm_t *comm,
                                 obc_request_t **req);
OBC_API obc_result_t obc_iscatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                  obc_dtype_t dtype, int root, obc_comm_t *comm,
                                  obc_request_t **req);
OBC_API obc_result_t obc_ialltoall(const void *sendbuf, void *recvbuf, size_t count,
                                   obc_dtype_t dtype, obc_comm_t *comm, obc_request_t **req);
OBC_API obc_result_t obc_ialltoallv(const void *sendbuf, const size_t *sendcounts,
                                    const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                                    const size_t *rdispls, obc_dtype_t dtype, obc_comm_t *comm,
                                    obc_request_t **req);
OBC_API obc_result_t obc_iallgatherv(const void *sendbuf, size_t sendcount, void *recvbuf,
                                     const size_t *recvcounts, const size_t *displs,
                                     obc_dtype_t dtype, obc_comm_t *comm, obc_request_t **req);

/*
 * obc_broadcast_as - broadcast whose bytes travel as wire_dtype (float32
 * data as bfloat16 or float16: half the bytes). Every rank, the root
 * included, ends with the root's data rounded once to wire_dtype (round to
 * nearest even; NaN stays NaN, infinity stays infinity, a value beyond the
 * wire type's range becomes infinity, float16 subnormals are kept) and
 * widened back to dtype, bit-identical on every rank; out of place, the
 * root's sendbuf is unchanged. Converted chunk by chunk (OBC_CAST_CHUNK_BYTES
 * wire bytes per piece, OBC_CAST_DEPTH pieces in flight): no extra memory
 * that grows with count, and the conversion of one piece overlaps the
 * transfer of another (on the communicator's progress thread).
 * Pairs: dtype OBC_FLOAT32 with wire_dtype OBC_FLOAT16 or OBC_BFLOAT16;
 * wire_dtype == dtype (any dtype) is a plain obc_broadcast. Any other pair
 * is OBC_ERR_INVALID_ARG, as is a converting call inside a group.
 * Collective (all ranks, same order, same count, dtype and wire_dtype: a
 * rank whose wire_dtype or count differs gets OBC_ERR_MISMATCH). Blocking.
 * Thread-safety as obc_broadcast. Codes as obc_broadcast.
 */
OBC_API obc_result_t obc_broadcast_as(const void *sendbuf, void *recvbuf, size_t count,
                                      obc_dtype_t dtype, obc_dtype_t wire_dtype, int root,
                                      obc_comm_t *comm);

/*
 * obc_mem_alloc / obc_mem_free - memory that the other ranks of this host
 * can read and write directly: collectives whose buffers live there may
 * copy once instead of twice. Any obc call accepts ordinary memory too.
 * *ptr is page-aligned, zero-filled, at least bytes long; bytes == 0 gives
 * *ptr = NULL (and obc_mem_free(NULL, comm) is OBC_SUCCESS, as free(NULL)).
 * Each block is one anonymous shared mapping (a memfd: nothing appears in
 * /dev/shm) and holds one file descriptor until it is freed.
 * obc_comm_destroy frees every block of comm still allocated: no pointer
 * into them may be used after it.
 * Local (no communication); safe from any thread. obc_mem_free of a
 * pointer obc_mem_alloc did not return on comm (or freed already) is
 * OBC_ERR_INVALID_ARG; OBC_ERR_NO_MEMORY when the system refuses.
 */
OBC_API obc_result_t obc_mem_alloc(void **ptr, size_t bytes, obc_comm_t *comm);
OBC_API obc_result_t obc_mem_free(void *ptr, obc_comm_t *comm);

/* obc_dtype_size - bytes per element of t; 0 for an invalid dtype. */
OBC_API size_t obc_dtype_size(obc_dtype_t t);

/* obc_version - "MAJOR.MINOR.PATCH" of the library actually loaded. */
OBC_API const char *obc_version(void);

#ifdef __cplusplus
}
#endif

#endif /* OBC_H */
