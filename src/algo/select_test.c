/* SPDX-License-Identifier: MIT */
/*
 * select_test.c - algorithm choice: OBC_ALGO parsing (good and bad
 * entries), the size thresholds, the single-rank case, a forced algorithm
 * that cannot run falling back, ranks on several machines (no shared arena),
 * the plan (relay shapes and chunks, streaming, recursive doubling between
 * leaders, whole-vector window reductions), the tuning read from params.def
 * defaults and overrides, and the stamp separating operations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "algo/algo.h"
#include "core/config.h"

static struct obc__err err;

static void parse_forced(void **state)
{
    struct obc__algo_tuning t;
    (void)state;
    memset(&t, 0, sizeof(t));
    assert_int_equal(obc__algo_parse_forced("broadcast=cma,barrier=counter", &t, &err),
                     OBC_SUCCESS);
    assert_ptr_equal(t.forced[OBC_COLL_BROADCAST], &obc__bcast_cma);
    assert_ptr_equal(t.forced[OBC_COLL_BARRIER], &obc__barrier_counter);
    assert_int_equal(obc__algo_parse_forced("broadcast=nope", &t, &err), OBC_ERR_INVALID_ARG);
    assert_int_equal(obc__algo_parse_forced("allreduce=hier,reduce_scatter=shm", &t, &err),
                     OBC_SUCCESS);
    assert_ptr_equal(t.forced[OBC_COLL_ALLREDUCE], &obc__allreduce_hier);
    assert_ptr_equal(t.forced[OBC_COLL_REDUCE_SCATTER], &obc__reduce_scatter_shm);
    assert_int_equal(obc__algo_parse_forced("allgather=nope", &t, &err), OBC_ERR_INVALID_ARG);
    assert_int_equal(obc__algo_parse_forced("allgather=eager", &t, &err), OBC_ERR_INVALID_ARG);
    assert_int_equal(obc__algo_parse_forced("broadcast", &t, &err), OBC_ERR_INVALID_ARG);
    assert_int_equal(obc__algo_parse_forced("", &t, &err), OBC_SUCCESS);
}

#define SLOT_BYTES (256u << 10) /* the p2p slot of the default OBC_CHUNK_BYTES */

static struct obc__plan last_plan; /* of the latest pick */
static bool cma_permitted; /* the host's probe, as the next picks see it */
static const struct obc__seg *pick_segs; /* the next picks' buffers; NULL: none */
static size_t deep_min; /* the next picks' ctx.deep_min_bytes (0: the arena has no deep ring) */
static char last_why[200]; /* the latest pick's reason */

/* nhosts hosts as algorithms see them; machines > 1: each has its own arena. */
static const struct obc__algo *pick_on(obc_coll_t coll, int nranks, int nhosts, int machines,
                                       size_t nbytes, size_t nsegs,
                                       const struct obc__algo_tuning *t)
{
    struct obc__algo_ctx ctx;
    struct obc__coll_args args;
    char *why = last_why;
    size_t why_bytes = sizeof(last_why);
    memset(&ctx, 0, sizeof(ctx));
    memset(&args, 0, sizeof(args));
    ctx.nranks = nranks;
    ctx.nhosts = nhosts;
    ctx.arena = (struct obc__arena *)&ctx; /* non-NULL: the windows exist */
    ctx.arena_has_all = machines == 1;
    ctx.cma = cma_permitted && machines == 1;
    ctx.world.n = nranks;
    ctx.host.n = nranks / nhosts;
    ctx.leaders.n = nhosts;
    ctx.scratch_bytes = 1 << 20;
    ctx.p2p_slot_bytes = SLOT_BYTES;
    ctx.deep_min_bytes = deep_min;
    args.coll = coll;
    args.nbytes = nbytes;
    args.segs = pick_segs;
    args.nsegs = nsegs;
    const struct obc__algo *a = obc__algo_select(&ctx, t, &args, &last_plan, why, why_bytes);
    assert_true(strlen(why) > 0); /* every choice says why */
    assert_ptr_equal(last_plan.algo, a);
    return a;
}

static const struct obc__algo *pick_coll(obc_coll_t coll, int nranks, int nhosts, size_t nbytes,
                                         size_t nsegs, const struct obc__algo_tuning *t)
{
    return pick_on(coll, nranks, nhosts, 1, nbytes, nsegs, t);
}

static const struct obc__algo *pick(int nranks, size_t nbytes, size_t nsegs,
                                    const struct obc__algo_tuning *t)
{
    return pick_coll(OBC_COLL_BROADCAST, nranks, 1, nbytes, nsegs, t);
}

/* Default tuning, as a host of `ncpus` CPUs gets it with no environment. */
static struct obc__algo_tuning tuning_for(int ncpus)
{
    struct obc__algo_tuning t;
    struct obc__config cfg;
    obc__config_defaults(&cfg);
    assert_int_equal(obc__algo_tuning_init(&t, &cfg, ncpus, &err), OBC_SUCCESS);
    return t;
}

/* The measured rules of select.c's within_host(), on a 2-CPU host. */
static void reductions(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 1, 1, 8, 1, &t), &obc__allreduce_self);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 2, 1, 8, 1, &t), &obc__allreduce_recdbl);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 4, 1, 8, 1, &t), &obc__allreduce_recdbl);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 8, 1, &t), &obc__allreduce_shm);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 4 << 20, 1, &t), &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 2, 1, 4 << 20, 1, &t), &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 4, 8, 1, &t), &obc__allreduce_hier);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLGATHER, 2, 1, 8, 1, &t), &obc__allgather_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLGATHER, 4, 1, 8, 1, &t), &obc__allgather_shm);
    assert_ptr_equal(pick_coll(OBC_COLL_REDUCE, 4, 1, 8, 1, &t), &obc__reduce_shm);
    assert_ptr_equal(pick_coll(OBC_COLL_REDUCE, 4, 1, 8 << 20, 1, &t), &obc__reduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_REDUCE_SCATTER, 4, 2, 8, 1, &t), &obc__reduce_scatter_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_BARRIER, 4, 1, 0, 0, &t), &obc__barrier_counter);
    assert_ptr_equal(pick_coll(OBC_COLL_BARRIER, 4, 2, 0, 0, &t), &obc__barrier_dissem);
}

static void thresholds(void **state)
{
    struct obc__algo_tuning t = tuning_for(4);
    (void)state;
    assert_ptr_equal(pick(1, 1 << 20, 1, &t), &obc__bcast_self);
    assert_ptr_equal(pick(4, 8, 1, &t), &obc__bcast_eager);
    assert_ptr_equal(pick(4, t.eager_max_bytes, 1, &t), &obc__bcast_eager);
    /* a forced algorithm wins wherever it can run; on one rank "self" always runs */
    t.forced[OBC_COLL_BROADCAST] = &obc__bcast_arena;
    assert_ptr_equal(pick(4, 8, 1, &t), &obc__bcast_arena);
    assert_ptr_equal(pick(1, 8, 1, &t), &obc__bcast_self);
}

/* Single copy, one segment, where the probe passed: from 64 KiB while
 * every rank has a CPU (2 ranks on 2), never by default when they
 * outnumber the CPUs (unless OBC_CMA_MIN_BYTES says so); the arena
 * otherwise, for fused groups and without permission. The arena plans its
 * one-copy mode from OBC_MAPPED_MIN_BYTES where permitted. */
static void single_copy(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    struct obc__config cfg;
    (void)state;
    cma_permitted = true;
    assert_ptr_equal(pick(2, (64u << 10) - 1, 1, &t), &obc__bcast_arena);
    assert_ptr_equal(pick(2, 64u << 10, 1, &t), &obc__bcast_cma);
    assert_ptr_equal(pick(4, 4u << 20, 1, &t), &obc__bcast_arena);
    assert_true(last_plan.mapped);
    assert_ptr_equal(pick(8, 256u << 20, 1, &t), &obc__bcast_arena); /* crowded */
    assert_ptr_equal(pick(4, 64u << 20, 2, &t), &obc__bcast_arena);
    obc__config_defaults(&cfg);
    cfg.cma_min_bytes = 1u << 20; /* the environment's value, crowded or not */
    assert_int_equal(obc__algo_tuning_init(&t, &cfg, 2, &err), OBC_SUCCESS);
    assert_ptr_equal(pick(8, 1u << 20, 1, &t), &obc__bcast_cma);
    assert_ptr_equal(pick(2, (1u << 20) - 1, 1, &t), &obc__bcast_arena);
    t = tuning_for(2);
    pick(4, (1u << 20) - 1, 1, &t);
    assert_false(last_plan.mapped);
    cma_permitted = false;
    assert_ptr_equal(pick(4, 64u << 20, 1, &t), &obc__bcast_arena);
    assert_false(last_plan.mapped);
    assert_ptr_equal(pick_on(OBC_COLL_BROADCAST, 8, 2, 2, 64u << 20, 1, &t), &obc__bcast_hier);
}

/* alltoall reads its blocks single-copy from 8 KiB while every rank has a
 * CPU, from 64 KiB when ranks outnumber CPUs; OBC_ALLTOALL_CMA_MIN_BYTES
 * replaces both; in place and without permission it stays pairwise. */
static const struct obc__algo *pick_alltoall(int nranks, size_t block, bool in_place,
                                             const struct obc__algo_tuning *t)
{
    static char a, b;
    struct obc__seg seg = {.send = &a, .recv = in_place ? (void *)&a : (void *)&b};
    pick_segs = &seg;
    const struct obc__algo *algo = pick_coll(OBC_COLL_ALLTOALL, nranks, 1, block, 1, t);
    pick_segs = NULL;
    return algo;
}

static void alltoall_single_copy(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    cma_permitted = true;
    assert_ptr_equal(pick_alltoall(2, (8u << 10) - 1, false, &t), &obc__alltoall_pairwise);
    assert_ptr_equal(pick_alltoall(2, 8u << 10, false, &t), &obc__alltoall_cma);
    assert_ptr_equal(pick_alltoall(2, 1u << 20, true, &t), &obc__alltoall_pairwise);
    assert_ptr_equal(pick_alltoall(4, (64u << 10) - 1, false, &t), &obc__alltoall_pairwise);
    assert_ptr_equal(pick_alltoall(4, 64u << 10, false, &t), &obc__alltoall_cma);
    struct obc__algo_tuning wide = tuning_for(8); /* 4 ranks on 8 CPUs: not crowded */
    assert_ptr_equal(pick_alltoall(4, 8u << 10, false, &wide), &obc__alltoall_cma);
    struct obc__config cfg;
    obc__config_defaults(&cfg);
    cfg.alltoall_cma_min_bytes = 1u << 20; /* the environment's value, crowded or not */
    assert_int_equal(obc__algo_tuning_init(&t, &cfg, 2, &err), OBC_SUCCESS);
    assert_ptr_equal(pick_alltoall(2, (1u << 20) - 1, false, &t), &obc__alltoall_pairwise);
    assert_ptr_equal(pick_alltoall(4, 1u << 20, false, &t), &obc__alltoall_cma);
    cma_permitted = false;
    assert_ptr_equal(pick_alltoall(2, 1u << 20, false, &t), &obc__alltoall_pairwise);
}

/* An out-of-place alltoallv of 3 or more ranks within a host posts its
 * blocks at every size, an allgatherv (in place too) from 8 MiB gathered (the sender decides per
 * block whether it is deposited or read single-copy, so no size needs agreeing on); with 2 ranks,
 * in place, without permission, across machines or with a table too large for the smallest window
 * slot it is the pairwise exchange. */
static void alltoallv_posted(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    static char a, b;
    struct obc__seg out = {.send = &a, .recv = &b}, in = {.send = &a, .recv = &a};
    (void)state;
    cma_permitted = true;
    pick_segs = &out;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLTOALLV, 2, 1, 1u << 30, 1, &t),
                     &obc__alltoallv_pairwise);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLTOALLV, 3, 1, 8, 1, &t), &obc__alltoallv_posted);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLTOALLV, 8, 1, 1u << 30, 1, &t), &obc__alltoallv_posted);
    assert_int_equal(last_plan.pull_min_bytes, 64u << 10); /* 8 ranks on 2 CPUs */
    assert_ptr_equal(pick_coll(OBC_COLL_ALLTOALLV, 246, 1, 8, 1, &t), &obc__alltoallv_posted);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLTOALLV, 247, 1, 8, 1, &t), &obc__alltoallv_pairwise);
    assert_ptr_equal(pick_on(OBC_COLL_ALLTOALLV, 4, 2, 2, 8, 1, &t), &obc__alltoallv_pairwise);
    pick_segs = &in;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLTOALLV, 4, 1, 8, 1, &t), &obc__alltoallv_pairwise);
    pick_segs = &out;
    cma_permitted = false;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLTOALLV, 4, 1, 1u << 20, 1, &t),
                     &obc__alltoallv_pairwise);
    cma_permitted = true;
    /* allgatherv: from 8 MiB gathered, 3 ranks or more, in place too */
    assert_ptr_equal(pick_coll(OBC_COLL_ALLGATHERV, 4, 1, (8u << 20) - 1, 1, &t),
                     &obc__allgatherv_pairwise);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLGATHERV, 4, 1, 8u << 20, 1, &t),
                     &obc__allgatherv_posted);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLGATHERV, 2, 1, 64u << 20, 1, &t),
                     &obc__allgatherv_pairwise);
    pick_segs = &in;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLGATHERV, 8, 1, 64u << 20, 1, &t),
                     &obc__allgatherv_posted);
    pick_segs = NULL;
}

/* On a crowded host an allreduce from 4 MiB goes single-copy, its pieces
 * shared by whoever runs; not with a CPU per rank, not above the algorithm's
 * 8 ranks, not for a fused group, not without permission, not across
 * machines. */
static void crowded_allreduce_single_copy(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    cma_permitted = true;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 4, 1, (4u << 20) - 4, 1, &t),
                     &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 4, 1, 4u << 20, 1, &t), &obc__allreduce_cma);
    assert_non_null(strstr(last_why, "whoever runs"));
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 3, 1, 4u << 20, 1, &t), &obc__allreduce_cma);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 2u << 20, 1, &t), &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 256u << 20, 1, &t), &obc__allreduce_cma);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 512u << 10, 1, &t), &obc__allreduce_shm);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 2, 1, 64u << 20, 1, &t), &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 9, 1, 64u << 20, 1, &t), &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 4, 1, 64u << 20, 2, &t), &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_REDUCE, 4, 1, 64u << 20, 1, &t), &obc__reduce_ring);
    assert_ptr_equal(pick_on(OBC_COLL_ALLREDUCE, 8, 2, 2, 64u << 20, 1, &t), &obc__allreduce_hier);
    struct obc__algo_tuning wide = tuning_for(8); /* 4 ranks on 8 CPUs: not crowded */
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 4, 1, 64u << 20, 1, &wide),
                     &obc__allreduce_ring);
    cma_permitted = false;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 4, 1, 64u << 20, 1, &t), &obc__allreduce_ring);
}

/* gather and scatter go single-copy from 8 KiB blocks while every rank has
 * a CPU, from 16 KiB when ranks outnumber CPUs. */
static void rooted_single_copy(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    cma_permitted = true;
    assert_ptr_equal(pick_coll(OBC_COLL_GATHER, 2, 1, (8u << 10) - 1, 1, &t), &obc__gather_direct);
    assert_ptr_equal(pick_coll(OBC_COLL_GATHER, 2, 1, 8u << 10, 1, &t), &obc__gather_cma);
    assert_ptr_equal(pick_coll(OBC_COLL_SCATTER, 2, 1, 8u << 10, 1, &t), &obc__scatter_cma);
    assert_ptr_equal(pick_coll(OBC_COLL_SCATTER, 4, 1, (16u << 10) - 1, 1, &t),
                     &obc__scatter_direct);
    assert_ptr_equal(pick_coll(OBC_COLL_GATHER, 4, 1, 16u << 10, 1, &t), &obc__gather_cma);
    cma_permitted = false;
    assert_ptr_equal(pick_coll(OBC_COLL_SCATTER, 2, 1, 1u << 20, 1, &t), &obc__scatter_direct);
}

/* Ranks on 4 machines: nothing that needs every rank in one arena runs. */
static void across_machines(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    assert_ptr_equal(pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 8, 1, &t), &obc__bcast_hier);
    assert_ptr_equal(pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 64 << 20, 3, &t), &obc__bcast_hier);
    assert_ptr_equal(pick_on(OBC_COLL_ALLREDUCE, 8, 4, 4, 8, 1, &t), &obc__allreduce_hier);
    assert_ptr_equal(pick_on(OBC_COLL_ALLGATHER, 8, 4, 4, 8, 1, &t), &obc__allgather_ring);
    assert_ptr_equal(pick_on(OBC_COLL_REDUCE, 8, 4, 4, 8, 1, &t), &obc__reduce_ring);
    assert_ptr_equal(pick_on(OBC_COLL_REDUCE_SCATTER, 8, 4, 4, 8, 1, &t),
                     &obc__reduce_scatter_ring);
    assert_ptr_equal(pick_on(OBC_COLL_BARRIER, 8, 4, 4, 0, 0, &t), &obc__barrier_dissem);
    /* forced shared-memory algorithms cannot run there and fall back */
    t.forced[OBC_COLL_BROADCAST] = &obc__bcast_arena;
    t.forced[OBC_COLL_ALLREDUCE] = &obc__allreduce_shm;
    assert_ptr_equal(pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 8, 1, &t), &obc__bcast_hier);
    assert_ptr_equal(pick_on(OBC_COLL_ALLREDUCE, 8, 4, 4, 8, 1, &t), &obc__allreduce_hier);
    /* the relays run on one machine too when forced */
    t.forced[OBC_COLL_BROADCAST] = &obc__bcast_chain;
    assert_ptr_equal(pick_on(OBC_COLL_BROADCAST, 8, 1, 1, 8, 1, &t), &obc__bcast_chain);
}

/* The defaults are params.def's (the values select.c and the algorithms
 * had written in them before); 0 stands for the default. */
static void tuning_from_config(void **state)
{
    struct obc__config cfg;
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    assert_int_equal(t.eager_max_bytes, 32 * 1024);
    assert_int_equal(t.cma_min_bytes, 64u << 10);
    assert_int_equal(t.cma_min_bytes_crowded, SIZE_MAX);
    assert_int_equal(t.stream_min_bytes, 16u << 20);
    assert_int_equal(t.recdbl_max_bytes, 64 * 1024);
    assert_int_equal(t.shm_below_bytes, 1u << 20);
    assert_int_equal(t.win_whole_max_bytes, 16u << 10);
    assert_int_equal(t.hier_flat_max_bytes, 4096);
    assert_int_equal(t.chain_min_chunk_bytes, 64 * 1024);
    assert_int_equal(t.chain_chunks_per_hop, 8);
    assert_int_equal(t.ncpus, 2);
    obc__config_defaults(&cfg);
    cfg.eager_max_bytes = 0;
    cfg.shm_below_bytes = 0;
    cfg.chain_chunks_per_hop = 0;
    assert_int_equal(obc__algo_tuning_init(&t, &cfg, 2, &err), OBC_SUCCESS);
    assert_int_equal(t.eager_max_bytes, 32 * 1024);
    assert_int_equal(t.shm_below_bytes, 1u << 20);
    assert_int_equal(t.chain_chunks_per_hop, 8);
    cfg.cma_min_bytes = 1u << 20;
    cfg.hier_flat_max_bytes = 100;
    snprintf(cfg.algo, sizeof(cfg.algo), "allreduce=ring");
    assert_int_equal(obc__algo_tuning_init(&t, &cfg, 2, &err), OBC_SUCCESS);
    assert_int_equal(t.cma_min_bytes, 1u << 20);
    assert_int_equal(t.cma_min_bytes_crowded, 1u << 20); /* one value set: both */
    assert_int_equal(t.hier_flat_max_bytes, 100);
    assert_ptr_equal(t.forced[OBC_COLL_ALLREDUCE], &obc__allreduce_ring);
    snprintf(cfg.algo, sizeof(cfg.algo), "allreduce=nope");
    assert_int_equal(obc__algo_tuning_init(&t, &cfg, 2, &err), OBC_ERR_INVALID_ARG);
    cfg.algo[0] = '\0';
    cfg.chain_chunks_per_hop = -1;
    assert_int_equal(obc__algo_tuning_init(&t, &cfg, 2, &err), OBC_ERR_INVALID_ARG);
}

/* OBC_SHM_BELOW_BYTES moves the crowded host's switch to the ring. */
static void shm_below_is_tunable(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 512 << 10, 1, &t), &obc__allreduce_shm);
    assert_ptr_equal(pick_coll(OBC_COLL_REDUCE, 4, 1, 512 << 10, 1, &t), &obc__reduce_shm);
    t.shm_below_bytes = 256 << 10;
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 512 << 10, 1, &t), &obc__allreduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_REDUCE, 4, 1, 512 << 10, 1, &t), &obc__reduce_ring);
    assert_ptr_equal(pick_coll(OBC_COLL_REDUCE, 4, 1, 8, 1, &t), &obc__reduce_shm);
}

/* Relays: the shapes and chunks bcast_relay.c used to choose itself, for
 * 4 hosts (heads) and for chains over every rank. */
static void relay_plans(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 8, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_FLAT);
    assert_int_equal(last_plan.chunk_bytes, SLOT_BYTES);
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 4096, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_FLAT);
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 4097, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_TREE);
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, SLOT_BYTES, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_TREE);
    assert_int_equal(last_plan.chunk_bytes, SLOT_BYTES);
    /* 1 MiB over 4 heads: 1 MiB / (8 x 3) is under the 64 KiB floor */
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 1 << 20, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_CHAIN);
    assert_int_equal(last_plan.chunk_bytes, 64 << 10);
    /* 16 MiB: 16 MiB / 24 = 699050, rounded down to 4 KiB, above a slot */
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 16 << 20, 1, &t);
    assert_int_equal(last_plan.chunk_bytes, SLOT_BYTES);
    /* 4 MiB: 4 MiB / 24 = 174762 -> 172032 */
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 4 << 20, 1, &t);
    assert_int_equal(last_plan.chunk_bytes, 172032);
    /* a chain of two heads has no pipe to fill */
    pick_on(OBC_COLL_BROADCAST, 4, 2, 2, 4 << 20, 1, &t);
    assert_int_equal(last_plan.chunk_bytes, SLOT_BYTES);
    /* forced chain and tree over every rank of one machine */
    t.forced[OBC_COLL_BROADCAST] = &obc__bcast_chain;
    pick_on(OBC_COLL_BROADCAST, 8, 1, 1, 8 << 20, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_CHAIN);
    assert_int_equal(last_plan.chunk_bytes, (8u << 20) / 56 & ~4095u);
    t.forced[OBC_COLL_BROADCAST] = &obc__bcast_tree;
    pick_on(OBC_COLL_BROADCAST, 8, 1, 1, 8 << 20, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_TREE);
    assert_int_equal(last_plan.chunk_bytes, SLOT_BYTES);
    /* the tuning moves them */
    t.forced[OBC_COLL_BROADCAST] = NULL;
    t.hier_flat_max_bytes = 100;
    t.chain_min_chunk_bytes = 16 << 10;
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 4096, 1, &t);
    assert_int_equal(last_plan.shape, OBC_RELAY_TREE);
    pick_on(OBC_COLL_BROADCAST, 8, 4, 4, 1 << 20, 1, &t);
    assert_int_equal(last_plan.chunk_bytes, (1u << 20) / 24 & ~4095u);
}

/* The flags the other algorithms read from the plan. */
static void plan_flags(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    pick(4, 8, 1, &t);
    assert_false(last_plan.streaming);
    assert_int_equal(last_plan.chunk_bytes, 0);
    pick(4, (16u << 20) - 1, 1, &t);
    assert_false(last_plan.streaming);
    pick(4, 16u << 20, 1, &t);
    assert_true(last_plan.streaming);
    assert_ptr_equal(pick_on(OBC_COLL_ALLREDUCE, 8, 4, 4, 64 << 10, 1, &t), &obc__allreduce_hier);
    assert_true(last_plan.recdbl);
    pick_on(OBC_COLL_ALLREDUCE, 8, 4, 4, (64 << 10) + 1, 1, &t);
    assert_false(last_plan.recdbl);
    assert_ptr_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 8, 1, &t), &obc__allreduce_shm);
    assert_int_equal(last_plan.whole_max_bytes, 16u << 10);
}

/* Only arena broadcasts larger than the staging ring take the deep ring,
 * and only where the arena has one (ctx.deep_min_bytes > 0); the reason
 * says so. */
static void deep_ring(void **state)
{
    struct obc__algo_tuning t = tuning_for(2);
    (void)state;
    deep_min = 0;
    assert_ptr_equal(pick(8, 16u << 20, 1, &t), &obc__bcast_arena);
    assert_false(last_plan.deep);
    deep_min = 1u << 20;
    assert_ptr_equal(pick(8, 1u << 20, 1, &t), &obc__bcast_arena);
    assert_false(last_plan.deep);
    assert_null(strstr(last_why, "deep ring"));
    assert_ptr_equal(pick(8, (1u << 20) + 1, 1, &t), &obc__bcast_arena);
    assert_true(last_plan.deep);
    assert_non_null(strstr(last_why, "deep ring"));
    assert_ptr_equal(pick(8, 8, 1, &t), &obc__bcast_eager);
    assert_false(last_plan.deep);
    assert_ptr_not_equal(pick_coll(OBC_COLL_ALLREDUCE, 8, 1, 4u << 20, 1, &t), &obc__bcast_arena);
    assert_false(last_plan.deep);
    assert_ptr_not_equal(pick_on(OBC_COLL_BROADCAST, 8, 2, 2, 4u << 20, 1, &t), &obc__bcast_arena);
    assert_false(last_plan.deep);
    deep_min = 0;
}

static void stamps_differ(void **state)
{
    struct obc__coll_args a, b;
    (void)state;
    memset(&a, 0, sizeof(a));
    a.coll = OBC_COLL_BROADCAST;
    a.nbytes = 100;
    b = a;
    assert_true(obc__algo_stamp(&a) == obc__algo_stamp(&b));
    b.nbytes = 101;
    assert_true(obc__algo_stamp(&a) != obc__algo_stamp(&b));
    b = a;
    b.root = 1;
    assert_true(obc__algo_stamp(&a) != obc__algo_stamp(&b));
    b = a;
    b.seq = 1;
    assert_true(obc__algo_stamp(&a) != obc__algo_stamp(&b));
    b = a; /* obc_broadcast_as pieces of the same bytes, other wire dtypes */
    a.salt = 7;
    b.salt = 8;
    assert_true(obc__algo_stamp(&a) != obc__algo_stamp(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_forced),
        cmocka_unit_test(thresholds),
        cmocka_unit_test(reductions),
        cmocka_unit_test(across_machines),
        cmocka_unit_test(tuning_from_config),
        cmocka_unit_test(shm_below_is_tunable),
        cmocka_unit_test(relay_plans),
        cmocka_unit_test(plan_flags),
        cmocka_unit_test(stamps_differ),
        cmocka_unit_test(single_copy),
        cmocka_unit_test(alltoall_single_copy),
        cmocka_unit_test(alltoallv_posted),
        cmocka_unit_test(rooted_single_copy),
        cmocka_unit_test(crowded_allreduce_single_copy),
        cmocka_unit_test(deep_ring),
    };
    obc__err_init(&err);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
