/* SPDX-License-Identifier: MIT */
/*
 * mpi_layer.h - the MPI drop-in layer's private interface (mpi/, a library of
 * its own: libobc_mpi.so for Open MPI, libobc_mpi_mpich.so for MPICH). Its
 * files include only obc.h, mpi.h, libc and this header (tools/check.sh).
 *
 * Every interposed MPI_<Coll> asks obc__mpi_comm_sized whether obc serves
 * the call; the answer depends only on what all ranks of the call agree on
 * (the communicator, the size the call names, and for reductions the op and
 * the basic element type), so either every rank serves or every rank passes
 * to PMPI (docs/mpi.md).
 */
#ifndef OBC_MPI_LAYER_H
#define OBC_MPI_LAYER_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "obc.h"

/* The interposed MPI_* entry points: the only symbols the layer exports
 * (it is built with -fvisibility=hidden; Open MPI's mpi.h marks its
 * prototypes visible, MPICH's does not). */
#define OBC_MPI_EXPORT __attribute__((visibility("default")))

/* The environment, read once (mpi_env.c is the layer's only getenv). */
struct obc__mpi_env {
    bool is_enabled; /* OBC_MPI, default 1; 0 passes every call to MPI */
    bool is_report; /* OBC_MPI_REPORT=1: the served/passed line at MPI_Finalize */
    bool has_timeout; /* OBC_TIMEOUT is set: keep obc's timeout, else wait forever */
    long long min_bytes; /* OBC_MPI_MIN_BYTES, or -1 (unset): mpi_size.c's table */
};
void obc__mpi_env_read(struct obc__mpi_env *env);

/* The interposed calls, for the size rule (mpi_size.c). */
enum obc__mpi_call {
    OBC__MPI_BARRIER,
    OBC__MPI_BCAST,
    OBC__MPI_ALLREDUCE,
    OBC__MPI_REDUCE,
    OBC__MPI_ALLGATHER,
    OBC__MPI_REDUCE_SCATTER_BLOCK,
    OBC__MPI_ALLTOALL,
    OBC__MPI_GATHER,
    OBC__MPI_SCATTER,
    OBC__MPI_ALLTOALLV, /* no size common to all ranks: asked with 0 bytes */
};

/* The obc communicator serving a call on comm that names nbytes bytes (its
 * count times its type's size, as OSU's size column counts them; a barrier
 * names 0), or NULL: the call is smaller than obc's minimum for it (where
 * MPI's own small-message path is faster), the layer is off, comm is an
 * inter-communicator, or its obc communicator could not be made on every
 * rank. Every input is the same on every rank, so every rank gets the same
 * answer. Collective at the first call for comm that is not too small
 * (comm's obc communicator is made then: PMPI_Bcast of the unique id). */
obc_comm_t *obc__mpi_comm_sized(MPI_Comm comm, enum obc__mpi_call call, long long nbytes);
/* The bytes that count items of type name (LLONG_MAX if MPI cannot say:
 * the call is then served, and the view reports the error). */
long long obc__mpi_bytes(long long count, MPI_Datatype type);
/* The smallest call obc serves: OBC_MPI_MIN_BYTES when set (env), else
 * the measured table, which differs when the communicator's ranks on a
 * host outnumber its CPUs (is_crowded, agreed by all ranks). */
long long obc__mpi_min_bytes(const struct obc__mpi_env *env, enum obc__mpi_call call,
                             bool is_crowded);
/* Whether the table differs between idle and crowded hosts (not under
 * MPICH, where it is all zeros): if not, nobody asks whether comm is
 * crowded. The same answer on every rank (the build decides it). */
bool obc__mpi_size_uses_crowding(void);

/* Counters for OBC_MPI_REPORT; thread-safe. */
void obc__mpi_count_served(void);
void obc__mpi_count_passed(void);

/* Report a failed obc call through comm's MPI error handler as MPI_ERR_OTHER
 * (a code whose string names the call, this rank and obc's message, which
 * names the rank at fault); returns the code for the MPI call to return. */
int obc__mpi_fail(MPI_Comm comm, const char *call, obc_comm_t *oc, obc_result_t r);

/* The obc dtype of a reduction's datatype: a predefined type obc has (by
 * kind and size; *elems_per_item is 1), else false. */
bool obc__mpi_reduce_dtype(MPI_Datatype type, obc_dtype_t *dtype, size_t *elems_per_item);
/* The obc op of a predefined MPI op obc has (SUM, PROD, MIN, MAX), else false. */
bool obc__mpi_reduce_op(MPI_Op op, obc_redop_t *out);

/*
 * A buffer as obc sees it: contiguous bytes. A predefined datatype whose
 * extent is its size is used where it lies; any other datatype is packed
 * into a temporary (PMPI_Pack, which on one machine is the bytes of the type
 * map in order) and unpacked after the call. So whether a rank packs is its
 * own business and never changes what the ranks agree on.
 */
struct obc__mpi_view {
    void *user; /* the caller's buffer */
    long long count; /* items of type at user (a count times nranks may pass INT_MAX) */
    MPI_Datatype type; /* the caller's datatype */
    void *bytes; /* what obc reads and writes: user itself, or the temporary */
    size_t nbytes; /* count * the size of type */
    bool is_packed; /* bytes is a temporary */
};
/* A predefined datatype with no gaps, whose items are used where they lie. */
bool obc__mpi_type_is_direct(MPI_Datatype t);
/* Set v up; with load, a packed view copies the caller's data in. Returns an
 * MPI error code (MPI_ERR_NO_MEM, MPI_ERR_COUNT) or MPI_SUCCESS. */
int obc__mpi_view_open(struct obc__mpi_view *v, const void *user, long long count,
                       MPI_Datatype type, bool load, MPI_Comm comm);
/* With store, copy the first `items` items back into the caller's buffer
 * (a packed view only); free the temporary either way. */
int obc__mpi_view_close(struct obc__mpi_view *v, bool store, long long items, MPI_Comm comm);

/* The end of a served call: close the sent view and the received one (which
 * stores `items` items back when r is OBC_SUCCESS); a failed r goes to
 * obc__mpi_fail. Returns what the MPI call returns. */
int obc__mpi_finish(MPI_Comm comm, const char *call, obc_comm_t *oc, obc_result_t r,
                    struct obc__mpi_view *in, struct obc__mpi_view *out, long long items);

#endif
