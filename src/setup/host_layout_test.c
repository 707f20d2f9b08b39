/* SPDX-License-Identifier: MIT */
/*
 * host_layout_test.c - the host layout from a made-up round 1: machines
 * numbered by their lowest rank, this rank's place on its machine, hosts
 * with their heads and members, OBC_HOST_SPLIT's cuts of one machine (and
 * its refusal when the ranks already span machines), OBC_HOST_ID's names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "setup/setup_impl.h"

#define MAX_RANKS 8

/* hello[r] says rank r runs on machine names[r]. */
static void make_hello(struct obc__setup_hello *hello, const char *names, int nranks)
{
    memset(hello, 0, sizeof(*hello) * (size_t)nranks);
    for (int r = 0; r < nranks; r++) {
        snprintf(hello[r].host_id, sizeof(hello[r].host_id), "machine-%c", names[r]);
        hello[r].pid = 1000 + r;
    }
}

static void assert_ints(const int *got, const int *want, int n)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(got[i], want[i]);
    }
}

static void machines_interleaved(void **state)
{
    (void)state;
    struct obc__setup_hello hello[MAX_RANKS];
    struct obc__host_layout l;
    make_hello(hello, "ABACBA", 6);
    assert_int_equal(obc__host_layout_build(&l, hello, 2, 6, 0, NULL), OBC_SUCCESS);
    assert_int_equal(l.machines, 3);
    assert_ints(l.machine_of, (const int[]){0, 1, 0, 2, 1, 0}, 6);
    assert_int_equal(l.local_nranks, 3);
    assert_int_equal(l.local_rank, 1);
    assert_ints(l.local, (const int[]){0, 2, 5}, 3);
    assert_false(l.remote[0] || l.remote[2] || l.remote[5]);
    assert_true(l.remote[1] && l.remote[3] && l.remote[4]);
    assert_false(l.one_arena);
    assert_int_equal(l.nhosts, 3);
    assert_ints(l.host_of, l.machine_of, 6);
    assert_ints(l.head, (const int[]){0, 1, 3}, 3);
    assert_ints(l.host_index, (const int[]){0, 0, 1, 0, 1, 2}, 6);
    assert_ints(l.host_start, (const int[]){0, 3, 5, 6}, 4);
    assert_ints(l.members, (const int[]){0, 2, 5, 1, 4, 3}, 6);
    obc__host_layout_fini(&l);
}

static void split_one_machine(void **state)
{
    (void)state;
    struct obc__setup_hello hello[MAX_RANKS];
    struct obc__host_layout l;
    make_hello(hello, "AAAAA", 5);
    assert_int_equal(obc__host_layout_build(&l, hello, 3, 5, 2, NULL), OBC_SUCCESS);
    assert_int_equal(l.machines, 1);
    assert_true(l.one_arena);
    assert_int_equal(l.local_nranks, 5);
    assert_int_equal(l.local_rank, 3);
    assert_int_equal(l.nhosts, 3);
    assert_ints(l.host_of, (const int[]){0, 0, 1, 1, 2}, 5);
    assert_ints(l.head, (const int[]){0, 2, 4}, 3);
    assert_ints(l.host_index, (const int[]){0, 1, 0, 1, 0}, 5);
    assert_ints(l.host_start, (const int[]){0, 2, 4, 5}, 4);
    obc__host_layout_fini(&l);
}

static void split_ignored_across_machines(void **state)
{
    (void)state;
    struct obc__setup_hello hello[MAX_RANKS];
    struct obc__host_layout l;
    make_hello(hello, "AABB", 4);
    assert_int_equal(obc__host_layout_build(&l, hello, 0, 4, 1, NULL), OBC_SUCCESS);
    assert_int_equal(l.machines, 2);
    assert_int_equal(l.nhosts, 2);
    assert_ints(l.host_of, (const int[]){0, 0, 1, 1}, 4);
    assert_ints(l.head, (const int[]){0, 2}, 2);
    obc__host_layout_fini(&l);
}

/* A child of parent ranks {1, 2, 3, 5} under OBC_HOST_SPLIT=2 on one
 * machine: its hosts are the parent's (1, 1, 2, 2 -> parent hosts 0, 1, 1,
 * 2), not cuts of its own ranks, and its own host_split is not applied. */
static void hosts_from_parent(void **state)
{
    (void)state;
    struct obc__setup_hello hello[MAX_RANKS];
    struct obc__host_layout l;
    const int parent_host[] = {0, 1, 1, 2};
    make_hello(hello, "AAAA", 4);
    for (int r = 0; r < 4; r++) {
        hello[r].parent_host = parent_host[r] + 1;
    }
    assert_int_equal(obc__host_layout_build(&l, hello, 1, 4, 2, NULL), OBC_SUCCESS);
    assert_int_equal(l.machines, 1);
    assert_int_equal(l.nhosts, 3);
    assert_ints(l.host_of, (const int[]){0, 1, 1, 2}, 4);
    assert_ints(l.head, (const int[]){0, 1, 3}, 3);
    assert_ints(l.host_index, (const int[]){0, 0, 1, 0}, 4);
    obc__host_layout_fini(&l);
    /* Parent hosts 5 and 2 (the child's order differs): numbered by lowest child rank. */
    make_hello(hello, "AB", 2);
    hello[0].parent_host = 6;
    hello[1].parent_host = 3;
    assert_int_equal(obc__host_layout_build(&l, hello, 0, 2, 0, NULL), OBC_SUCCESS);
    assert_int_equal(l.machines, 2);
    assert_ints(l.host_of, (const int[]){0, 1}, 2);
    obc__host_layout_fini(&l);
}

static void identity_from_config(void **state)
{
    (void)state;
    static struct obc__config cfg;
    char id[OBC_SETUP_HOST_ID_BYTES];
    snprintf(cfg.host_id, sizeof(cfg.host_id), "rank/2");
    assert_int_equal(obc__host_layout_identity(&cfg, 3, id, NULL), OBC_SUCCESS);
    assert_string_equal(id, "user:rank/2:1");
    snprintf(cfg.host_id, sizeof(cfg.host_id), "rack7");
    assert_int_equal(obc__host_layout_identity(&cfg, 3, id, NULL), OBC_SUCCESS);
    assert_string_equal(id, "user:rack7");
}

/* The CPUs of one machine's 4 ranks: each rank may use ncpus[r], and is
 * bound to bound[r] when that is one CPU (-1: not bound). */
static void layout_cpus(const int *ncpus, const int *bound, int *machine_cpus, bool *owned)
{
    struct obc__setup_hello hello[4];
    struct obc__host_layout l;
    make_hello(hello, "AAAA", 4);
    for (int r = 0; r < 4; r++) {
        hello[r].ncpus = ncpus[r];
        hello[r].bound_cpu = bound[r];
    }
    assert_int_equal(obc__host_layout_build(&l, hello, 0, 4, 0, NULL), OBC_SUCCESS);
    *machine_cpus = l.machine_cpus;
    *owned = l.cores_owned;
    obc__host_layout_fini(&l);
}

static void cpus_from_affinity(void **state)
{
    (void)state;
    int cpus;
    bool owned;
    /* free to run on all 2 CPUs: the scheduler places them */
    layout_cpus((const int[]){2, 2, 2, 2}, (const int[]){-1, -1, -1, -1}, &cpus, &owned);
    assert_int_equal(cpus, 2);
    assert_false(owned);
    /* a CPU each (mpirun, obcrun with enough CPUs) */
    layout_cpus((const int[]){1, 1, 1, 1}, (const int[]){0, 1, 2, 3}, &cpus, &owned);
    assert_int_equal(cpus, 4);
    assert_true(owned);
    /* two to a CPU (obcrun with more ranks than CPUs): 2 CPUs, not 1 */
    layout_cpus((const int[]){1, 1, 1, 1}, (const int[]){0, 1, 0, 1}, &cpus, &owned);
    assert_int_equal(cpus, 2);
    assert_false(owned);
    /* all on one CPU (taskset -c 0) */
    layout_cpus((const int[]){1, 1, 1, 1}, (const int[]){3, 3, 3, 3}, &cpus, &owned);
    assert_int_equal(cpus, 1);
    assert_false(owned);
    /* some bound, some not: the widest mask counts */
    layout_cpus((const int[]){1, 8, 1, 1}, (const int[]){0, -1, 1, 2}, &cpus, &owned);
    assert_int_equal(cpus, 8);
    assert_false(owned);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(machines_interleaved),          cmocka_unit_test(split_one_machine),
        cmocka_unit_test(split_ignored_across_machines), cmocka_unit_test(hosts_from_parent),
        cmocka_unit_test(identity_from_config),          cmocka_unit_test(cpus_from_affinity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
