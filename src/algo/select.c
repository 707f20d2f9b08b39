/* SPDX-License-Identifier: MIT */
/*
 * select.c - the one place where obc decides which algorithm runs, and
 * with which plan (chunk size, relay shape, leaders' algorithm, streaming
 * stores), from (collective, bytes, ranks, transport capabilities), and
 * where OBC_ALGO overrides are parsed. Every threshold is a parameter of
 * src/core/params.def (defaults measured on the development machine,
 * docs/algorithms.md has the tables behind them); none is written here.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "algo/algo.h"
#include "core/config.h"

static const struct obc__algo *const registry[] = {
    &obc__bcast_self,          &obc__bcast_eager,         &obc__bcast_arena,
    &obc__bcast_cma,           &obc__bcast_chain,         &obc__bcast_tree,
    &obc__bcast_hier,          &obc__barrier_self,        &obc__barrier_counter,
    &obc__barrier_dissem,      &obc__allreduce_self,      &obc__allreduce_shm,
    &obc__allreduce_ring,      &obc__allreduce_recdbl,    &obc__allreduce_hier,
    &obc__reduce_self,         &obc__reduce_shm,          &obc__reduce_ring,
    &obc__allgather_self,      &obc__allgather_shm,       &obc__allgather_ring,
    &obc__reduce_scatter_self, &obc__reduce_scatter_shm,  &obc__reduce_scatter_ring,
    &obc__gather_self,         &obc__gather_direct,       &obc__scatter_self,
    &obc__scatter_direct,      &obc__gather_cma,          &obc__scatter_cma,
    &obc__alltoall_self,       &obc__alltoall_pairwise,   &obc__alltoall_cma,
    &obc__alltoallv_self,      &obc__alltoallv_pairwise,  &obc__alltoallv_posted,
    &obc__allgatherv_self,     &obc__allgatherv_pairwise, &obc__allgatherv_posted,
    &obc__allreduce_cma,       &obc__reduce_cma,          &obc__reduce_scatter_cma,
};

static const char *const coll_names[OBC_COLL_COUNT] = {
    [OBC_COLL_BROADCAST] = "broadcast",   [OBC_COLL_BARRIER] = "barrier",
    [OBC_COLL_ALLREDUCE] = "allreduce",   [OBC_COLL_REDUCE] = "reduce",
    [OBC_COLL_ALLGATHER] = "allgather",   [OBC_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [OBC_COLL_GATHER] = "gather",         [OBC_COLL_SCATTER] = "scatter",
    [OBC_COLL_ALLTOALL] = "alltoall",     [OBC_COLL_ALLTOALLV] = "alltoallv",
    [OBC_COLL_ALLGATHERV] = "allgatherv",
};

bool obc__algo_on_one_arena(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->arena_has_all && ctx->world.n <= 512;
}

bool obc__algo_host_on_arena(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->arena != NULL && ctx->host.n <= 512;
}

bool obc__algo_more_than_one(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks > 1;
}

const char *obc__coll_name(obc_coll_t coll)
{
    return (unsigned)coll < OBC_COLL_COUNT ? coll_names[coll] : "?";
}

bool obc__coll_rooted(obc_coll_t coll)
{
    return coll == OBC_COLL_BROADCAST || coll == OBC_COLL_REDUCE || coll == OBC_COLL_GATHER ||
        coll == OBC_COLL_SCATTER;
}

static int coll_by_name(const char *name, size_t len)
{
    for (int c = 0; c < OBC_COLL_COUNT; c++) {
        if (strlen(coll_names[c]) == len && strncmp(coll_names[c], name, len) == 0) {
            return c;
        }
    }
    return -1;
}

static const struct obc__algo *algo_by_name(int coll, const char *name)
{
    for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++) {
        if ((int)registry[i]->coll == coll && strcmp(registry[i]->name, name) == 0) {
            return registry[i];
        }
    }
    return NULL;
}

obc_result_t obc__algo_parse_forced(const char *spec, struct obc__algo_tuning *tuning,
                                    struct obc__err *err)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int coll = eq != NULL ? coll_by_name(tok, (size_t)(eq - tok)) : -1;
        const struct obc__algo *a = coll >= 0 ? algo_by_name(coll, eq + 1) : NULL;
        if (a == NULL) {
            return obc__err_set(
                err, OBC_ERR_INVALID_ARG,
                "OBC_ALGO entry '%s' is not COLLECTIVE=ALGORITHM with a known "
                "name (broadcast: eager, arena, cma, chain, tree, hier; barrier: counter, "
                "dissemination; allreduce: shm, ring, recdbl, hier; reduce: shm, "
                "ring; allgather, reduce_scatter: shm, ring; gather, scatter: direct, cma; "
                "alltoall: pairwise, cma; alltoallv, allgatherv: pairwise, posted)",
                tok);
        }
        tuning->forced[coll] = a;
    }
    return OBC_SUCCESS;
}

/* A parameter at 0 stands for its default in params.def. */
static size_t or_default(size_t value, size_t def)
{
    return value != 0 ? value : def;
}

/*
 * The defaults' reasons (measured with obc-perf on the 2-core development
 * VM at 2, 4 and 8 ranks, 8 B .. 256 MiB; docs/algorithms.md):
 *  - the eager ring and the arena are the same pipeline; the eager ring's
 *    64 small slots let a root run ahead of many small messages;
 *  - single-copy (CMA, claimed pieces) from 64 KiB while every rank has a
 *    CPU: the arena's chunk-by-chunk hand-offs need producer and consumers
 *    running at once. At 2 ranks its time swung 2x between runs (64 MiB:
 *    9.8 or 18-19 ms; three rounds beside Open MPI: arena 714 us / 18.0 ms
 *    at 4 / 64 MiB, CMA 513 us / 12.4 ms, Open MPI 689 us / 13.7 ms,
 *    bench/results/2026-12-01-bcast-cma); below 4 MiB, five alternating
 *    rounds at 2 ranks (bench/results/2026-12-02-bcast-cma-min): 512 KiB
 *    arena 53.8 us, CMA 33.0, Open MPI 41.3; 1 MiB 105 / 66 / 82; 2 MiB
 *    213 / 116 / 159; 256 KiB level then (26 / 22 / 22), but six
 *    alternating rounds later, idle and beside a busy process alike
 *    (bench/results/2026-12-04-bcast-cma-256k), CMA led there: 21.8 us
 *    against the arena's 24.9 and Open MPI's 23.7 (medians, max over
 *    ranks; span the same), while at 128 KiB the arena stayed level or
 *    ahead (13.1 / 13.4 / 15.0), so single-copy started at 256 KiB.
 *    Since single-copy cuts every message in at least two pieces (so the
 *    root and a reader copy side by side) it leads from 64 KiB: six
 *    alternating rounds at 2 ranks (bench/results/2026-12-05-cma-from-64k),
 *    medians, max over ranks, idle / beside a busy process, in place:
 *    64 KiB arena 8.0 / 8.6 us, CMA 5.3 / 4.6, Open MPI 7.6-8.2 / 7.0-7.6;
 *    128 KiB 11.1 / 13.5, CMA 7.6 / 7.1, Open MPI 12.3-14.3 / 11.9-13.7;
 *    out of place 64 KiB 8.7 / 8.2, CMA 7.7 / 5.7; at 32 KiB the eager
 *    ring leads (in place 2.9 against 3.8 idle, 3.4 against 3.4 busy), so
 *    single-copy starts at 64 KiB;
 *  - never by default when ranks outnumber CPUs. It was from 4 MiB there,
 *    chosen for the GPT-like initialisation (148 tensors back to back,
 *    bench/model_init), where the arena once took 370-430 ms at 4 ranks
 *    and 770-900 at 8 against CMA's 180-230 and 370-410. Measured again
 *    on the arena as it is now (bench/results/2026-12-04-crowded-arena),
 *    the arena leads there: 4 ranks 110 ms against CMA's 152-164 and
 *    Open MPI's 232-238, 8 ranks 211-232 against 297-310 and 358-370;
 *    obc-perf has it level at 4 MiB and ahead from 16 MiB (8 ranks,
 *    256 MiB: 111 against 191 ms), and OSU's 8-rank osu_bcast (each
 *    rank's own time, averaged) 979 against 1373 us at 4 MiB;
 *  - streaming stores pay once the destination would not stay in the
 *    32 MiB L3 anyway: at 2 ranks, 4 MiB ran at 17.5 GB/s streamed and
 *    30.8 cached, 64 MiB at 13.2 streamed and 10.6 cached.
 */
#define CMA_MIN_BYTES (64u << 10)
#define CMA_MIN_BYTES_CROWDED SIZE_MAX /* never: the arena */
/* alltoall blocks read single-copy from: with a CPU per rank the reads win
 * from 8 KiB (2 ranks, 16 KiB in all: 4.1-4.5 us against 5.4-6.0 through
 * the channels; 64 KiB: 8.0-9.2 against 21-29, Open MPI 13.5; at 8 KiB in
 * all the channels were ahead, 2.7-3.0 against 3.4-3.6). With 4 and 8
 * ranks on 2 cores neither won clearly below 64 KiB blocks. */
#define ALLTOALL_CMA_MIN_BYTES (8u << 10)
#define ALLTOALL_CMA_MIN_BYTES_CROWDED (64u << 10)
/* gather and scatter blocks moved single-copy from: with a CPU per rank
 * from 8 KiB (2 ranks, 16 KiB gathered, three rounds: 3.8-4.2 us against
 * 5.2-6.3 through the channels, Open MPI 4.1-6.1; scattered 3.3-4.2
 * against 3.5-5.5; at 4 KiB blocks the channels were ahead); with ranks
 * outnumbering cores from 16 KiB (below it the channels were level or
 * ahead at 4 and 8 ranks on 2 cores). */
#define GATHER_CMA_MIN_BYTES (8u << 10)
#define GATHER_CMA_MIN_BYTES_CROWDED (16u << 10)
/* allreduces go single-copy, their pieces shared by whoever runs
 * (reduce_cma.c), from 4 MiB when ranks outnumber CPUs. The ring hands
 * every chunk from rank to rank, and when ranks run out of step (work
 * between calls, a busy process beside them) each hand-off may wait for a
 * time slice: obc-perf (which touches the data between calls), 4 and 8
 * ranks on the 2 CPUs and one spinning process, max over ranks, ms,
 * single-copy / ring / Open MPI: 4 ranks 8 MiB 18.1 / 32.0 / 19.8, 8 ranks
 * 16 MiB 46.8 / 87.6 / 58.4; single-copy ahead of Open MPI at every size
 * from 2 MiB (0.61-0.91x its time), the ring up to 1.61x behind
 * (bench/results/2026-12-07-crowded-allreduce-cma). Below 4 MiB the
 * kernel's copies cost more than the hand-offs save when the ranks wait
 * in step: osu_allreduce through the MPI layer (back to back, data not
 * touched), medians of three rounds, single-copy / ring / Open MPI, us:
 * idle 4 ranks 1 MiB 679 / 257 / 659, 2 MiB 1471 / 835 / 1414, 4 MiB
 * 3372 / 1710 / 3858; 8 ranks 1 MiB 1703 / 885 / 1429; beside a busy
 * process the ring led too, and single-copy stayed ahead of Open MPI
 * (bench/results/2026-12-07-osu-crowded-allreduce). So from 4 MiB, where
 * single-copy is ahead of Open MPI in both. Idle in obc-perf the three are
 * level at 1-4 MiB and the ring's user-space copies lead from 16 MiB. */
#define ALLREDUCE_CMA_MIN_BYTES_CROWDED (4u << 20)

obc_result_t obc__algo_tuning_init(struct obc__algo_tuning *tuning, const struct obc__config *cfg,
                                   int ncpus, struct obc__err *err)
{
    struct obc__config def;
    obc__config_defaults(&def);
    memset(tuning, 0, sizeof(*tuning));
    tuning->eager_max_bytes = or_default(cfg->eager_max_bytes, def.eager_max_bytes);
    tuning->cma_min_bytes = or_default(cfg->cma_min_bytes, CMA_MIN_BYTES);
    tuning->cma_min_bytes_crowded = or_default(cfg->cma_min_bytes, CMA_MIN_BYTES_CROWDED);
    tuning->alltoall_cma_min_bytes =
        or_default(cfg->alltoall_cma_min_bytes, ALLTOALL_CMA_MIN_BYTES);
    tuning->alltoall_cma_min_bytes_crowded =
        or_default(cfg->alltoall_cma_min_bytes, ALLTOALL_CMA_MIN_BYTES_CROWDED);
    tuning->gather_cma_min_bytes = or_default(cfg->gather_cma_min_bytes, GATHER_CMA_MIN_BYTES);
    tuning->gather_cma_min_bytes_crowded =
        or_default(cfg->gather_cma_min_bytes, GATHER_CMA_MIN_BYTES_CROWDED);
    tuning->mapped_min_bytes = or_default(cfg->mapped_min_bytes, def.mapped_min_bytes);
    tuning->stream_min_bytes = or_default(cfg->stream_min_bytes, def.stream_min_bytes);
    tuning->recdbl_max_bytes = or_default(cfg->recdbl_max_bytes, def.recdbl_max_bytes);
    tuning->shm_below_bytes = or_default(cfg->shm_below_bytes, def.shm_below_bytes);
    tuning->win_whole_max_bytes = or_default(cfg->win_whole_max_bytes, def.win_whole_max_bytes);
    tuning->hier_flat_max_bytes = or_default(cfg->hier_flat_max_bytes, def.hier_flat_max_bytes);
    tuning->chain_min_chunk_bytes =
        or_default(cfg->chain_min_chunk_bytes, def.chain_min_chunk_bytes);
    tuning->chain_chunks_per_hop =
        cfg->chain_chunks_per_hop != 0 ? cfg->chain_chunks_per_hop : def.chain_chunks_per_hop;
    tuning->ncpus = ncpus;
    tuning->peers_in_flight =
        cfg->peers_in_flight != 0 ? cfg->peers_in_flight : def.peers_in_flight;
    if (tuning->peers_in_flight < 1 || tuning->peers_in_flight > 8) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "OBC_PEERS_IN_FLIGHT=%d is not a count of peers (1 .. 8)",
                            cfg->peers_in_flight);
    }
    tuning->partners_in_flight = cfg->partners_in_flight;
    if (tuning->partners_in_flight < 0 || tuning->partners_in_flight > 8) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "OBC_PARTNERS_IN_FLIGHT=%d is not a count of partners (1 .. 8)",
                            cfg->partners_in_flight);
    }
    if (tuning->chain_chunks_per_hop < 1) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "OBC_CHAIN_CHUNKS_PER_HOP=%d is not a count of chunks (>= 1)",
                            cfg->chain_chunks_per_hop);
    }
    return obc__algo_parse_forced(cfg->algo, tuning, err);
}

/* Write the reason for a choice, unless nobody will read it (why == NULL):
 * formatting costs more than a small broadcast itself, and so would the
 * call to a variadic function that returns at once. */
#define SAY(why, why_bytes, ...) \
    ((why) != NULL ? (void)snprintf((why), (why_bytes), __VA_ARGS__) : (void)0)

/* The host's CPUs (ones the ranks may use), at least 1. */
static int host_cpus(const struct obc__algo_tuning *tuning)
{
    return tuning->ncpus > 0 ? tuning->ncpus : 1;
}

/* Ranks outnumber the host's CPUs: waits for a peer cost a time slice,
 * and every single-copy limit takes its crowded value. */
static bool is_crowded(const struct obc__algo_ctx *ctx, const struct obc__algo_tuning *tuning)
{
    return ctx->nranks > host_cpus(tuning);
}

/*
 * Across machines (the ranks do not share one arena) a broadcast relays
 * chunks between one head per host, then hands them on inside each host
 * (bcast_relay.c): only one copy of the data crosses each host's link. The
 * heads form a binomial tree for a message of one chunk (latency:
 * log2(hosts) hops) and a pipelined chain above (bandwidth: every link
 * busy, the root sends each byte once).
 */
static const struct obc__algo *broadcast_choice(const struct obc__algo_ctx *ctx,
                                                const struct obc__algo_tuning *tuning,
                                                const struct obc__coll_args *args, char *why,
                                                size_t why_bytes)
{
    if (!ctx->arena_has_all) {
        SAY(why, why_bytes, "%d hosts: host heads relay, then shared memory in each host",
            ctx->leaders.n);
        return &obc__bcast_hier;
    }
    if (args->nbytes <= tuning->eager_max_bytes) {
        SAY(why, why_bytes, "%zu bytes <= eager limit %zu", args->nbytes, tuning->eager_max_bytes);
        return &obc__bcast_eager;
    }
    bool crowded = is_crowded(ctx, tuning);
    size_t cma_min = crowded ? tuning->cma_min_bytes_crowded : tuning->cma_min_bytes;
    if (args->nbytes >= cma_min && obc__bcast_cma.supports(ctx, args)) {
        SAY(why, why_bytes, "%zu bytes >= single-copy limit %zu (%d ranks, %d CPUs)", args->nbytes,
            cma_min, ctx->nranks, tuning->ncpus);
        return &obc__bcast_cma;
    }
    SAY(why, why_bytes, "%zu bytes, staged through the arena%s", args->nbytes,
        ctx->cma ? "" : " (single-copy reads not permitted)");
    return &obc__bcast_arena;
}

/*
 * Reductions and gathers within one host, measured with obc-perf at 2, 4
 * and 8 ranks on the 2-core VM (docs/algorithms.md has the table):
 *  - with a core per rank the p2p algorithms win everywhere: recursive
 *    doubling for small allreduces (0.49 us at 8 B, 2 ranks), the ring
 *    above (it touches each byte fewer times than the window reduction:
 *    64 MiB at 2 ranks 6.3 ms against 7.0);
 *  - when ranks outnumber cores, every extra pairwise step costs a trip
 *    through the scheduler, and the window algorithms (one or two
 *    all-rank synchronisations per chunk) win below 1 MiB: allreduce at
 *    8 ranks 23 us (shm) against 30 (recdbl) and 61 (ring) at 8 B; the
 *    allgather at 8 ranks at every size. Recursive doubling still wins the
 *    small allreduce at 2 ranks per core (4 ranks: 8.0 us against 11.3).
 *    "Below 1 MiB" is OBC_SHM_BELOW_BYTES. From 4 MiB the allreduce there
 *    is single-copy, pieces shared by whoever runs: it needs no rank to
 *    wait for another chunk by chunk (ALLREDUCE_CMA_MIN_BYTES_CROWDED).
 */
static const struct obc__algo *within_host(const struct obc__algo_ctx *ctx,
                                           const struct obc__algo_tuning *tuning,
                                           const struct obc__coll_args *args, char *why,
                                           size_t why_bytes)
{
    bool gathers = args->coll == OBC_COLL_ALLGATHER || args->coll == OBC_COLL_REDUCE_SCATTER;
    size_t total = gathers ? args->nbytes * (size_t)ctx->nranks : args->nbytes;
    int cpus = host_cpus(tuning);
    bool crowded = is_crowded(ctx, tuning), very_crowded = ctx->nranks > 2 * cpus;
    switch (args->coll) {
    case OBC_COLL_BARRIER:
        SAY(why, why_bytes, "one host: shared counter");
        return &obc__barrier_counter;
    case OBC_COLL_ALLREDUCE:
        if (total <= tuning->recdbl_max_bytes && !very_crowded) {
            SAY(why, why_bytes, "one host, %zu bytes <= %zu, %d ranks on %d cpus", total,
                tuning->recdbl_max_bytes, ctx->nranks, cpus);
            return &obc__allreduce_recdbl;
        }
        if (total < tuning->shm_below_bytes && very_crowded) {
            SAY(why, why_bytes, "one host, %zu bytes, %d ranks on %d cpus", total, ctx->nranks,
                cpus);
            return &obc__allreduce_shm;
        }
        if (crowded && total >= ALLREDUCE_CMA_MIN_BYTES_CROWDED &&
            obc__allreduce_cma.supports(ctx, args)) {
            SAY(why, why_bytes,
                "one host, %zu bytes >= %u, %d ranks on %d cpus: pieces shared by whoever runs",
                total, ALLREDUCE_CMA_MIN_BYTES_CROWDED, ctx->nranks, cpus);
            return &obc__allreduce_cma;
        }
        SAY(why, why_bytes, "one host, %zu bytes", total);
        return &obc__allreduce_ring;
    case OBC_COLL_ALLGATHER:
        SAY(why, why_bytes, "one host, %d ranks on %d cpus", ctx->nranks, cpus);
        return crowded ? &obc__allgather_shm : &obc__allgather_ring;
    default: {
        bool shm = crowded && total < tuning->shm_below_bytes;
        SAY(why, why_bytes, "one host, %zu bytes, %d ranks on %d cpus", total, ctx->nranks, cpus);
        if (args->coll == OBC_COLL_REDUCE) {
            return shm ? &obc__reduce_shm : &obc__reduce_ring;
        }
        return shm ? &obc__reduce_scatter_shm : &obc__reduce_scatter_ring;
    }
    }
}

/*
 * Across hosts: allreduce is hierarchical (the host stages in shared
 * memory, only leaders on the network; its leader stage picks recursive
 * doubling up to recdbl_max_bytes, the ring above), the others use the
 * ring, the barrier dissemination.
 */
static const struct obc__algo *reduction_choice(const struct obc__algo_ctx *ctx,
                                                const struct obc__algo_tuning *tuning,
                                                const struct obc__coll_args *args, char *why,
                                                size_t why_bytes)
{
    static const struct obc__algo *const across[OBC_COLL_COUNT] = {
        [OBC_COLL_BARRIER] = &obc__barrier_dissem,
        [OBC_COLL_ALLREDUCE] = &obc__allreduce_hier,
        [OBC_COLL_REDUCE] = &obc__reduce_ring,
        [OBC_COLL_ALLGATHER] = &obc__allgather_ring,
        [OBC_COLL_REDUCE_SCATTER] = &obc__reduce_scatter_ring,
    };
    const struct obc__algo *a = within_host(ctx, tuning, args, why, why_bytes);
    if (ctx->nhosts == 1 && a->supports(ctx, args)) {
        return a;
    }
    a = across[args->coll];
    if (a->supports(ctx, args)) {
        SAY(why, why_bytes, "%d hosts", ctx->nhosts);
        return a;
    }
    SAY(why, why_bytes, "%d hosts, %s not possible here: ring", ctx->nhosts, a->name);
    return args->coll == OBC_COLL_ALLREDUCE ? &obc__allreduce_ring : across[args->coll];
}

static bool is_personal(obc_coll_t coll)
{
    return coll == OBC_COLL_GATHER || coll == OBC_COLL_SCATTER || coll == OBC_COLL_ALLTOALL ||
        coll == OBC_COLL_ALLTOALLV || coll == OBC_COLL_ALLGATHERV;
}

/*
 * The personalised collectives have one p2p algorithm each, within a host
 * (the arena's channels) and across hosts (TCP): every byte must travel
 * from its sender to its one receiver anyway, so an exchange straight
 * between the two moves each byte once on each side (a ring or tree would
 * forward it). gather and scatter: the root deals with its peers itself
 * ("direct"); alltoall(v) and allgatherv: the pairwise exchange. Within a
 * host an out-of-place alltoall with blocks of OBC_ALLTOALL_CMA_MIN_BYTES
 * or more (8 KiB while every rank has a CPU, 64 KiB when ranks outnumber
 * them) reads them single-copy ("cma"): the channels copy every byte
 * twice, into a slot and out of it, and keep one partner in flight, while
 * the reads copy once, all peers' blocks back to back (docs/algorithms.md).
 * An out-of-place alltoallv of 3 or more ranks within a host posts its
 * blocks ("posted") at every size: its table of where each block is goes in
 * the window slot, blocks under the same limit deposited beside it, larger
 * ones read single-copy; the sender decides per block and the receiver
 * follows its table, so blocks that differ between pairs need no agreement
 * (medians of three runs against the pairwise exchange, 1 KiB-16 MiB: 4
 * ranks 0.81-1.02x its time, 8 ranks 0.77-1.07x). Two ranks have one
 * partner, so there are no turns to save: posting cost 1.14-1.32x at
 * 1-4 KiB there and was level within the noise above.
 * allgatherv posts the same way from ALLGATHERV_POSTED_MIN_BYTES gathered
 * in all (a size every rank knows alike): below it the pairwise exchange,
 * whose every message is the rank's one block, was level or ahead.
 * Gather and scatter with blocks of OBC_GATHER_CMA_MIN_BYTES or more (8 KiB
 * while every rank has a CPU, 16 KiB when ranks outnumber them) go
 * single-copy too ("cma"): each rank moves its own block straight to or
 * from the root's buffer, all at once, where "direct" has the root handle
 * every block twice over the channels (2 ranks, 512 KiB gathered: 25.8 us
 * against 152.5, Open MPI 50.6; below 16 KiB blocks direct was level or
 * ahead at 4 and 8 ranks on 2 cores).
 * Every rank chooses alike: block size and in place are the same on all
 * (a count that is not is a mismatch, which a stalled wait's board
 * comparison names).
 */
/* allgatherv posts its blocks from this many bytes gathered, 3 ranks or
 * more: against the pairwise exchange 0.81-0.85x its time at 4 ranks and
 * 0.88-0.98x at 8 with 14-15 MiB and 56-60 MiB gathered (medians of four
 * and two runs, both metrics), but 0.70-1.01x at 3.5-3.75 MiB and
 * 0.88-1.22x at 0.9 MiB (2026-12-05). */
#define ALLGATHERV_POSTED_MIN_BYTES (8u << 20)

static const struct obc__algo *personal_choice(const struct obc__algo_ctx *ctx,
                                               const struct obc__algo_tuning *tuning,
                                               const struct obc__coll_args *args, char *why,
                                               size_t why_bytes)
{
    bool crowded = is_crowded(ctx, tuning);
    size_t a2a_min =
        crowded ? tuning->alltoall_cma_min_bytes_crowded : tuning->alltoall_cma_min_bytes;
    if (args->coll == OBC_COLL_ALLTOALL && args->nbytes >= a2a_min &&
        obc__alltoall_cma.supports(ctx, args)) {
        SAY(why, why_bytes,
            "one host, %zu-byte blocks >= single-copy limit %zu (%d ranks, %d CPUs)", args->nbytes,
            a2a_min, ctx->nranks, tuning->ncpus);
        return &obc__alltoall_cma;
    }
    if (args->coll == OBC_COLL_ALLTOALLV && ctx->nranks > 2 &&
        obc__alltoallv_posted.supports(ctx, args)) {
        SAY(why, why_bytes,
            "one host: posted blocks, below %zu bytes deposited, larger read single-copy (%d "
            "ranks, %d CPUs)",
            a2a_min, ctx->nranks, tuning->ncpus);
        return &obc__alltoallv_posted;
    }
    if (args->coll == OBC_COLL_ALLGATHERV && ctx->nranks > 2 &&
        args->nbytes >= ALLGATHERV_POSTED_MIN_BYTES && obc__allgatherv_posted.supports(ctx, args)) {
        SAY(why, why_bytes,
            "one host, %zu bytes gathered >= %u: posted blocks, below %zu bytes deposited, "
            "larger read single-copy (%d ranks, %d CPUs)",
            args->nbytes, ALLGATHERV_POSTED_MIN_BYTES, a2a_min, ctx->nranks, tuning->ncpus);
        return &obc__allgatherv_posted;
    }
    const struct obc__algo *rooted_cma =
        args->coll == OBC_COLL_GATHER ? &obc__gather_cma : &obc__scatter_cma;
    size_t rooted_min =
        crowded ? tuning->gather_cma_min_bytes_crowded : tuning->gather_cma_min_bytes;
    if ((args->coll == OBC_COLL_GATHER || args->coll == OBC_COLL_SCATTER) &&
        args->nbytes >= rooted_min && rooted_cma->supports(ctx, args)) {
        SAY(why, why_bytes,
            "one host, %zu-byte blocks >= single-copy limit %zu (%d ranks, %d CPUs)", args->nbytes,
            rooted_min, ctx->nranks, tuning->ncpus);
        return rooted_cma;
    }
    SAY(why, why_bytes, "%d ranks on %d hosts: straight between the ranks", ctx->nranks,
        ctx->nhosts);
    switch (args->coll) {
    case OBC_COLL_GATHER:
        return &obc__gather_direct;
    case OBC_COLL_SCATTER:
        return &obc__scatter_direct;
    case OBC_COLL_ALLTOALL:
        return &obc__alltoall_pairwise;
    case OBC_COLL_ALLTOALLV:
        return &obc__alltoallv_pairwise;
    default:
        return &obc__allgatherv_pairwise;
    }
}

static const struct obc__algo *default_choice(const struct obc__algo_ctx *ctx,
                                              const struct obc__algo_tuning *tuning,
                                              const struct obc__coll_args *args, char *why,
                                              size_t why_bytes)
{
    static const struct obc__algo *const single[OBC_COLL_COUNT] = {
        [OBC_COLL_BROADCAST] = &obc__bcast_self,
        [OBC_COLL_BARRIER] = &obc__barrier_self,
        [OBC_COLL_ALLREDUCE] = &obc__allreduce_self,
        [OBC_COLL_REDUCE] = &obc__reduce_self,
        [OBC_COLL_ALLGATHER] = &obc__allgather_self,
        [OBC_COLL_REDUCE_SCATTER] = &obc__reduce_scatter_self,
        [OBC_COLL_GATHER] = &obc__gather_self,
        [OBC_COLL_SCATTER] = &obc__scatter_self,
        [OBC_COLL_ALLTOALL] = &obc__alltoall_self,
        [OBC_COLL_ALLTOALLV] = &obc__alltoallv_self,
        [OBC_COLL_ALLGATHERV] = &obc__allgatherv_self,
    };
    if (ctx->nranks == 1) {
        SAY(why, why_bytes, "single rank");
        return single[args->coll];
    }
    if (args->coll == OBC_COLL_BROADCAST) {
        return broadcast_choice(ctx, tuning, args, why, why_bytes);
    }
    if (is_personal(args->coll)) {
        return personal_choice(ctx, tuning, args, why, why_bytes);
    }
    return reduction_choice(ctx, tuning, args, why, why_bytes);
}

/* A chain of n members takes (chunks + n - 2) chunk times: a message of a
 * few slots spends most of them filling the pipe (1 MiB in 256 KiB slots
 * to 8 hosts: 4 chunks and 6 of fill, 45% of the link on netlab; 85% cut
 * this way). So a chain cuts a message into at least
 * OBC_CHAIN_CHUNKS_PER_HOP chunks per hop, none larger than a slot and none
 * smaller than OBC_CHAIN_MIN_CHUNK_BYTES: each chunk costs a frame and
 * thread wake-ups on every hop (a 16 KiB floor made 1 MiB 31% slower over
 * loopback). Measured in docs/perf/multihost.md. A chain of two has no pipe
 * to fill. */
static size_t chain_chunk(const struct obc__algo_tuning *tuning, size_t slot, size_t nbytes,
                          int members)
{
    size_t floor = tuning->chain_min_chunk_bytes;
    if (members <= 2 || slot <= floor) {
        return slot;
    }
    size_t hops = (size_t)tuning->chain_chunks_per_hop * (size_t)(members - 1);
    size_t want = nbytes / hops & ~(size_t)4095;
    return want < floor ? floor : want < slot ? want : slot;
}

/* Relays: chain and tree link every rank; hier's host heads relay by a
 * tree of radix 8 up to OBC_HIER_FLAT_MAX_BYTES (flat up to 8 hosts, 2
 * levels up to 64: a hop between hosts, kernel, wire, the receiving thread
 * and the rank, costs 50-300 us, far more than a few extra small sends from
 * one thread; on netlab at 0.2 ms delay, 8 B to 8 hosts took 1.14 ms as a
 * binomial tree's 3 hops), by a binomial tree while the message fits in
 * one slot (latency bound), by a chain above (bandwidth bound). */
static void relay_plan(const struct obc__algo_ctx *ctx, const struct obc__algo_tuning *tuning,
                       const struct obc__coll_args *args, struct obc__plan *plan)
{
    size_t slot = ctx->p2p_slot_bytes;
    int members = ctx->nranks;
    plan->chunk_bytes = slot;
    plan->shape = OBC_RELAY_CHAIN;
    if (plan->algo == &obc__bcast_tree) {
        plan->shape = OBC_RELAY_TREE;
    } else if (plan->algo == &obc__bcast_hier) {
        members = ctx->leaders.n;
        plan->shape = args->nbytes <= tuning->hier_flat_max_bytes ? OBC_RELAY_FLAT
            : args->nbytes <= slot                                ? OBC_RELAY_TREE
                                                                  : OBC_RELAY_CHAIN;
    }
    if (plan->shape == OBC_RELAY_CHAIN) {
        plan->chunk_bytes = chain_chunk(tuning, slot, args->nbytes, members);
    }
}

static bool is_relay(const struct obc__algo *a)
{
    return a == &obc__bcast_chain || a == &obc__bcast_tree || a == &obc__bcast_hier;
}

static bool is_pairwise(const struct obc__algo *a)
{
    return a == &obc__alltoall_pairwise || a == &obc__alltoallv_pairwise ||
        a == &obc__allgatherv_pairwise;
}

/* A pairwise exchange works on all its units at once (8 at most; a rank's
 * own unit is one of them), so that a slow partner holds up only its own
 * messages. One unit at a time, half the ranks idle in every other step (a
 * rank then pairs with itself): at 4 netlab hosts the links carried 46% of
 * their rate, against 67-91% (4-256 MiB per rank) with every unit in
 * flight; at 8 ranks on 2 cores a 1 KiB-per-peer alltoall took 140-167 us
 * against 61-72. */
static int partners_in_flight(const struct obc__algo_ctx *ctx,
                              const struct obc__algo_tuning *tuning)
{
    if (tuning->partners_in_flight > 0) {
        return tuning->partners_in_flight;
    }
    return ctx->nranks < 8 ? ctx->nranks : 8;
}

static void fill_plan(const struct obc__algo_ctx *ctx, const struct obc__algo_tuning *tuning,
                      const struct obc__coll_args *args, const struct obc__algo *a,
                      struct obc__plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->algo = a;
    plan->streaming = args->nbytes >= tuning->stream_min_bytes;
    plan->mapped = args->nbytes >= tuning->mapped_min_bytes && ctx->cma;
    plan->deep =
        a == &obc__bcast_arena && ctx->deep_min_bytes > 0 && args->nbytes > ctx->deep_min_bytes;
    /* hier allreduce: chosen once from the whole size, the same on every leader */
    plan->recdbl = args->nbytes <= tuning->recdbl_max_bytes;
    plan->whole_max_bytes = tuning->win_whole_max_bytes;
    plan->peers_in_flight =
        is_pairwise(a) ? partners_in_flight(ctx, tuning) : tuning->peers_in_flight;
    /* The v-forms move a block single-copy from alltoall's limit per
     * block: in the pairwise exchange a pair pulls it (both ends know the
     * pair's sizes, px.c); posted, a smaller one is deposited in the slot
     * and a larger one read (the sender alone decides, posted.c). */
    if (ctx->cma &&
        (a == &obc__alltoallv_pairwise || a == &obc__allgatherv_pairwise ||
         a == &obc__alltoallv_posted || a == &obc__allgatherv_posted)) {
        plan->pull_min_bytes = is_crowded(ctx, tuning) ? tuning->alltoall_cma_min_bytes_crowded
                                                       : tuning->alltoall_cma_min_bytes;
    }
    if (is_relay(a)) {
        relay_plan(ctx, tuning, args, plan);
    }
}

/* Appends to a reason already said (why may be NULL: nobody listens). */
static void say_more(char *why, size_t why_bytes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say_more(char *why, size_t why_bytes, const char *fmt, ...)
{
    size_t used = why != NULL ? strlen(why) : 0;
    if (why == NULL || used >= why_bytes) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + used, why_bytes - used, fmt, ap);
    va_end(ap);
}

/* The relays' reason also names their shape and chunk. */
static void say_relay(const struct obc__plan *plan, char *why, size_t why_bytes)
{
    static const char *const shapes[] = {"chain", "binomial tree", "radix-8 tree"};
    say_more(why, why_bytes, "; %s of %zu-byte chunks", shapes[plan->shape], plan->chunk_bytes);
}

static const struct obc__algo *choose(const struct obc__algo_ctx *ctx,
                                      const struct obc__algo_tuning *tuning,
                                      const struct obc__coll_args *args, char *why,
                                      size_t why_bytes)
{
    const struct obc__algo *forced = tuning->forced[args->coll];
    if (forced != NULL && ctx->nranks > 1) {
        if (forced->supports(ctx, args)) {
            SAY(why, why_bytes, "forced by OBC_ALGO");
            return forced;
        }
        char reason[160];
        const struct obc__algo *a = default_choice(ctx, tuning, args, reason, sizeof(reason));
        SAY(why, why_bytes, "OBC_ALGO's %s cannot run this operation; %s", forced->name, reason);
        return a;
    }
    return default_choice(ctx, tuning, args, why, why_bytes);
}

const struct obc__algo *obc__algo_select(const struct obc__algo_ctx *ctx,
                                         const struct obc__algo_tuning *tuning,
                                         const struct obc__coll_args *args, struct obc__plan *plan,
                                         char *why, size_t why_bytes)
{
    const struct obc__algo *a = choose(ctx, tuning, args, why, why_bytes);
    fill_plan(ctx, tuning, args, a, plan);
    if (is_relay(a)) {
        say_relay(plan, why, why_bytes);
    }
    if (plan->deep) {
        say_more(why, why_bytes, "; deep ring: larger than the %zu-byte staging ring",
                 ctx->deep_min_bytes);
    }
    return a;
}

/* One value into the hash: a multiply and a fold of the high half into
 * the low one (the stamp keeps the low 32 bits), so every bit of v moves
 * the result. Eight byte-wise FNV rounds per value cost a root about 5% of
 * a small broadcast (perf, 2 ranks, 8 B back to back). */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

/* A hash of the fields every rank must agree on, under the sequence number. */
uint64_t obc__algo_stamp(const struct obc__coll_args *args)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix(h, (uint64_t)args->coll);
    h = mix(h, (uint64_t)(int64_t)args->root);
    /* The personal collectives' sizes differ between pairs (alltoallv) and
     * travel in each message's header instead (algo/personal/px.h), which
     * names both counts when they differ. */
    h = mix(h, is_personal(args->coll) ? 0 : (uint64_t)args->nbytes);
    if (args->coll != OBC_COLL_BROADCAST) { /* fused broadcasts mix dtypes */
        h = mix(h, (uint64_t)args->dtype);
        h = mix(h, (uint64_t)args->redop);
    }
    if (args->salt != 0) {
        h = mix(h, args->salt);
    }
    return (args->seq << 32) ^ (h & 0xffffffffull);
}
