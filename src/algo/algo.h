/* SPDX-License-Identifier: MIT */
/*
 * algo.h - the algorithm layer's one header: the descriptor every
 * collective algorithm implements, the arguments it receives, and the
 * single place that chooses among them (select.c).
 *
 * An algorithm is a resumable step function (UCC's idea): init() prepares
 * its private state, step() advances as far as it can without blocking and
 * returns OBC_SUCCESS (finished), OBC_IN_PROGRESS (with *w saying which
 * shared word to wait on) or an error. The same body serves blocking calls
 * (start + wait in the caller's thread) and async ones (the progress
 * thread). Algorithms talk only to transport.h (p2p) and arena.h (the
 * host's shared memory); they never read the environment, create threads,
 * or block.
 */
#ifndef OBC_ALGO_H
#define OBC_ALGO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obc.h"
#include "core/status.h"
#include "transport/arena.h"
#include "transport/transport.h"

/* The collectives are obc.h's obc_coll_t; this counts them. */
#define OBC_COLL_COUNT (OBC_COLL_ALLGATHERV + 1)

/* One contiguous piece of a (possibly fused) operation. For broadcast,
 * `send` is read on the root only, `recv` is written on every rank (the
 * root copies send to recv itself when they differ). The other collectives
 * have one segment: the user's two buffers as given (send == recv in place;
 * for allgather and reduce_scatter the NCCL in-place conventions). */
struct obc__seg {
    const void *send;
    void *recv;
    size_t nbytes;
};

/* How the members of a relay broadcast are linked (bcast_relay.c). */
enum obc__relay_shape {
    OBC_RELAY_CHAIN, /* pipelined chain: bandwidth */
    OBC_RELAY_TREE, /* binomial tree: latency, a message of one chunk */
    OBC_RELAY_FLAT /* tree of radix 8: a few KiB */
};

/* Everything select decided for one operation besides the algorithm: the
 * sizes and shapes an algorithm would otherwise decide inside. Filled by
 * obc__algo_select from the arguments and the tuning alone, so every rank
 * gets the same plan; the algorithm reads it from args->plan. */
struct obc__plan {
    const struct obc__algo *algo;
    size_t chunk_bytes; /* relays: bytes per chunk, at most one p2p slot */
    enum obc__relay_shape shape; /* relays: how members are linked */
    bool streaming; /* eager/arena broadcast: non-temporal stores into the readers' buffers */
    bool mapped; /* arena broadcast: a root whose buffers lie in obc_mem_alloc blocks may
                  * describe them instead of staging (bcast_mapped.c) */
    bool deep; /* arena broadcast: through the deep ring, not the staging ring */
    bool recdbl; /* hierarchical allreduce: leaders by recursive doubling, else the ring */
    size_t whole_max_bytes; /* window reductions: a vector up to this is reduced whole by
                             * each consumer, not slice by slice */
    int peers_in_flight; /* gather, scatter: peers a root serves at once; alltoall(v),
                          * allgatherv: partners a rank exchanges with at once */
    size_t pull_min_bytes; /* alltoallv, allgatherv: a message of at least this many bytes
                            * to a rank of this host is read by its receiver straight from
                            * the sender's buffer (px.c); 0: never */
};

/* A point-to-point call (engine/p2p_batch.c) is an op too, but never an
 * algorithm's: no collective sequence number, no board, no selection. */
enum obc__p2p_kind { OBC__P2P_NONE = 0, OBC__P2P_SEND, OBC__P2P_RECV };

struct obc__coll_args {
    obc_coll_t coll;
    uint8_t p2p; /* enum obc__p2p_kind; for SEND and RECV, root is the peer */
    int root; /* a RECV from any source: OBC_ANY_SOURCE until it finds its sender */
    int *source; /* a RECV from any source: where the sender's rank goes (NULL: nowhere) */
    int tag; /* SEND and RECV: the message's tag (>= 0; 0 for the untagged calls) */
    obc_dtype_t dtype;
    obc_redop_t redop; /* reductions only */
    size_t count; /* elements, as the user gave them (summed when fused): per
                   * rank's block for allgather and reduce_scatter */
    size_t nbytes; /* count * dtype size (total over segs) */
    const struct obc__seg *segs;
    size_t nsegs;
    /* alltoallv: sendcounts, sdispls, recvcounts, rdispls; allgatherv:
     * recvcounts, displs; nranks entries each, in elements. Owned by the op
     * (a copy of the caller's arrays), so it outlives the call. */
    const size_t *vec;
    uint64_t seq; /* position of this operation on the communicator */
    /* 0 for a call that is one op; a call made of several ops (obc_broadcast_as's
     * pieces) puts here a hash of what the ranks must agree on beyond each piece's
     * bytes (dtypes, whole count), so the stamp tells two such calls apart */
    uint64_t salt;
    struct obc__plan plan; /* set by the engine from obc__algo_select before init() */
};

/* State that lives as long as the communicator and advances identically on
 * every rank (epochs of shared counters). Owned by the engine. */
struct obc__algo_persist {
    uint32_t barrier_epoch;
    uint32_t cma_epoch;
    uint32_t window_chunks; /* chunks moved through the arena's windows so far */
};

/* An ordered set of ranks an algorithm runs over: the whole communicator,
 * the ranks of this rank's host (ascending), or the host leaders (the lowest
 * rank of each host; leaders.ranks[h] heads host h). me is this rank's index
 * in it, -1 when not a member. All from the communicator's host layout. */
struct obc__team {
    int n;
    int me;
    const int *ranks;
};

struct obc__mem_list; /* core/mem.h */

/* Everything an algorithm may use. */
struct obc__algo_ctx {
    struct obc__arena *arena;
    struct obc__p2p *p2p;
    int rank;
    int nranks;
    int nhosts;
    const int *host_of; /* [nranks]: host index of every rank (hosts numbered by lowest rank) */
    const int *host_index; /* [nranks]: every rank's index in its host's team */
    struct obc__team world, host, leaders;
    bool arena_has_all; /* every rank shares this host's arena */
    bool cma; /* single-copy access between this host's ranks is permitted (the arena's
               * probe at creation) */
    struct obc__mem_list *mem; /* the communicator's obc_mem_alloc blocks */
    struct obc__err *err;
    struct obc__algo_persist *persist;
    size_t p2p_slot_bytes; /* payload of one p2p slot (obc__p2p_slot_bytes: the same for
                            * every peer); 0 without p2p */
    size_t deep_min_bytes; /* arena broadcasts larger than this take the deep ring (larger
                            * than the staging ring, on a host that has a deeper one); 0:
                            * no deep ring */
    /* Bounded scratch for partial results in the accumulator type (16-bit
     * floats accumulate in float32): algorithms that need it work in
     * segments of at most scratch_bytes. Owned by the engine. */
    void *scratch;
    size_t scratch_bytes;
};

#define OBC_ALGO_STATE_BYTES 1024

struct obc__algo {
    obc_coll_t coll;
    const char *name;
    /* Can this algorithm run these arguments here? (e.g. CMA permitted) */
    bool (*supports)(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args);
    void (*init)(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args);
    obc_result_t (*step)(void *state, struct obc__wait *w);
};

/* Does the algorithm's root fail by itself when another rank acts as the
 * root too (bcast_ring.c: the second root's publish)? Then check mode's
 * look at the peers' calls after a root's call (check_mode.c) is not
 * needed. */
bool obc__algo_finds_second_root(const struct obc__algo *a);

/* Thresholds and forced choices, decided once at communicator creation
 * (obc__algo_tuning_init) from the configuration: every value comes from
 * src/core/params.def, none is written here. */
struct obc__algo_tuning {
    size_t eager_max_bytes; /* broadcasts up to this go through the eager ring */
    size_t cma_min_bytes; /* broadcasts from this size read the root's buffer directly, */
    size_t cma_min_bytes_crowded; /* ... and from this one when ranks outnumber CPUs */
    size_t mapped_min_bytes; /* arena broadcasts from this size: readers copy straight out of
                              * the root's obc_mem_alloc blocks */
    size_t stream_min_bytes; /* from this size, destinations get streaming stores */
    size_t recdbl_max_bytes; /* allreduces up to this: recursive doubling */
    size_t shm_below_bytes; /* crowded host: reductions below this in the windows */
    size_t win_whole_max_bytes; /* window reductions reduced whole up to this */
    size_t hier_flat_max_bytes; /* hier broadcast: radix-8 tree up to this */
    size_t chain_min_chunk_bytes; /* relay chains cut no chunk smaller */
    int chain_chunks_per_hop; /* relay chains cut at least this many chunks per hop */
    int ncpus; /* CPUs of this host: are ranks crowding them? */
    int peers_in_flight; /* gather, scatter: peers a root serves at once */
    int partners_in_flight; /* pairwise exchanges; 0: select.c decides per call */
    size_t alltoall_cma_min_bytes; /* alltoall blocks from this size: single-copy reads */
    size_t alltoall_cma_min_bytes_crowded; /* ... when ranks outnumber CPUs */
    size_t gather_cma_min_bytes; /* gather, scatter blocks from this size: single copy */
    size_t gather_cma_min_bytes_crowded; /* ... when ranks outnumber CPUs */
    const struct obc__algo *forced[OBC_COLL_COUNT];
};

struct obc__config;

/* Fill tuning from cfg (a parameter at 0 takes params.def's default or
 * select.c's choice for the host), parse OBC_ALGO into
 * tuning->forced. ncpus: CPUs of this host. Returns OBC_ERR_INVALID_ARG
 * with a message naming a bad OBC_ALGO entry or value. */
obc_result_t obc__algo_tuning_init(struct obc__algo_tuning *tuning, const struct obc__config *cfg,
                                   int ncpus, struct obc__err *err);
/* Parse OBC_ALGO ("broadcast=cma,barrier=counter") into tuning->forced.
 * Returns OBC_ERR_INVALID_ARG with a message naming the bad entry. */
obc_result_t obc__algo_parse_forced(const char *spec, struct obc__algo_tuning *tuning,
                                    struct obc__err *err);

/* The one place where an algorithm and its plan are chosen: fills *plan
 * (plan->algo is also returned). `why` receives the reason (pass NULL when
 * it will not be logged). */
const struct obc__algo *obc__algo_select(const struct obc__algo_ctx *ctx,
                                         const struct obc__algo_tuning *tuning,
                                         const struct obc__coll_args *args, struct obc__plan *plan,
                                         char *why, size_t why_bytes);

const char *obc__coll_name(obc_coll_t coll);
/* Whether the collective has a root (broadcast, reduce, gather, scatter). */
bool obc__coll_rooted(obc_coll_t coll);

/* supports() of the shared-memory algorithms: every rank is in the host
 * arena (and teams are small enough for their stack tables). */
bool obc__algo_on_one_arena(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args);
/* supports() of the hierarchical algorithms: the ranks of this host share
 * its arena (always, when there is an arena). */
bool obc__algo_host_on_arena(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args);
/* supports() of the p2p algorithms: there is someone to talk to. */
bool obc__algo_more_than_one(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args);

/* A stamp that identifies one operation: its sequence number and a hash of
 * what every rank must agree on. Carried in staged data, compared on read. */
uint64_t obc__algo_stamp(const struct obc__coll_args *args);

/* The algorithms (each defined in its own file; the registry is in select.c). */
extern const struct obc__algo obc__bcast_self, obc__bcast_eager, obc__bcast_arena, obc__bcast_cma,
    obc__bcast_chain, obc__bcast_tree, obc__bcast_hier;
extern const struct obc__algo obc__barrier_self, obc__barrier_counter, obc__barrier_dissem;
extern const struct obc__algo obc__allreduce_self, obc__allreduce_shm, obc__allreduce_ring,
    obc__allreduce_recdbl, obc__allreduce_hier, obc__allreduce_cma;
extern const struct obc__algo obc__reduce_self, obc__reduce_shm, obc__reduce_ring, obc__reduce_cma;
extern const struct obc__algo obc__allgather_self, obc__allgather_shm, obc__allgather_ring;
extern const struct obc__algo obc__reduce_scatter_self, obc__reduce_scatter_shm,
    obc__reduce_scatter_ring, obc__reduce_scatter_cma;
extern const struct obc__algo obc__gather_self, obc__gather_direct, obc__scatter_self,
    obc__scatter_direct, obc__gather_cma, obc__scatter_cma, obc__alltoall_self,
    obc__alltoall_pairwise, obc__alltoall_cma, obc__alltoallv_self, obc__alltoallv_pairwise,
    obc__alltoallv_posted, obc__allgatherv_self, obc__allgatherv_pairwise, obc__allgatherv_posted;

#endif
