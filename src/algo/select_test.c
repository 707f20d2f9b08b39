/* SPDX-License-Identifier: MIT */
/*
 * select_test.c - algorithm choice: OBC_ALGO parsing (good and bad
 * entries), the size thresholds, the single-rank case, a forced algorithm
 * that cannot run falling back, ranks on several machines (no shared arena),
 * and the stamp separating operations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "algo/algo.h"

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

/* nhosts hosts as algorithms see them; machines > 1: each has its own arena. */
static const struct obc__algo *pick_on(enum obc__coll coll, int nranks, int nhosts, int machines,
                                       size_t nbytes, size_t nsegs,
                                       const struct obc__algo_tuning *t)
{
    struct obc__algo_ctx ctx;
    struct obc__coll_args args;
    char why[200];
    memset(&ctx, 0, sizeof(ctx));
    memset(&args, 0, sizeof(args));
    ctx.nranks = nranks;
    ctx.nhosts = nhosts;
    ctx.arena = (struct obc__arena *)&ctx; /* non-NULL: the windows exist */
    ctx.arena_has_all = machines == 1;
    ctx.world.n = nranks;
    ctx.host.n = nranks / nhosts;
    ctx.leaders.n = nhosts;
    ctx.scratch_bytes = 1 << 20;
    args.coll = coll;
    args.nbytes = nbytes;
    args.nsegs = nsegs;
    const struct obc__algo *a = obc__algo_select(&ctx, t, &args, why, sizeof(why));
    assert_true(strlen(why) > 0); /* every choice says why */
    return a;
}

static const struct obc__algo *pick_coll(enum obc__coll coll, int nranks, int nhosts, size_t nbytes,
                                         size_t nsegs, const struct obc__algo_tuning *t)
{
    return pick_on(coll, nranks, nhosts, 1, nbytes, nsegs, t);
}

static const struct obc__algo *pick(int nranks, size_t nbytes, size_t nsegs,
                                    const struct obc__algo_tuning *t)
{
    return pick_coll(OBC_COLL_BROADCAST, nranks, 1, nbytes, nsegs, t);
}

/* Default tuning, as a host of `ncpus` CPUs gets it. */
static struct obc__algo_tuning tuning_for(int ncpus)
{
    struct obc__algo_tuning t;
    memset(&t, 0, sizeof(t));
    obc__algo_default_tuning(&t, ncpus);
    t.ncpus = ncpus;
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
    struct obc__algo_tuning t;
    (void)state;
    memset(&t, 0, sizeof(t));
    obc__algo_default_tuning(&t, 4);
    assert_ptr_equal(pick(1, 1 << 20, 1, &t), &obc__bcast_self);
    assert_ptr_equal(pick(4, 8, 1, &t), &obc__bcast_eager);
    assert_ptr_equal(pick(4, t.eager_max_bytes, 1, &t), &obc__bcast_eager);
    /* a forced algorithm wins wherever it can run; on one rank "self" always runs */
    t.forced[OBC_COLL_BROADCAST] = &obc__bcast_arena;
    assert_ptr_equal(pick(4, 8, 1, &t), &obc__bcast_arena);
    assert_ptr_equal(pick(1, 8, 1, &t), &obc__bcast_self);
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_forced),  cmocka_unit_test(thresholds),
        cmocka_unit_test(reductions),    cmocka_unit_test(across_machines),
        cmocka_unit_test(stamps_differ),
    };
    obc__err_init(&err);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
