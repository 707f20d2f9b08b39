/* SPDX-License-Identifier: MIT */
/*
 * host_layout.c - the host layout, computed once per communicator from
 * bootstrap round 1 (every rank's host identity): the machines, this rank's
 * place on its own, and the hosts as algorithms see them (OBC_HOST_SPLIT may
 * cut one machine into several). Pure computation over the exchanged
 * identities: every rank derives the same numbers from the same round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "platform/platform.h"
#include "setup/setup_impl.h"

/* OBC_HOST_ID=rank/K (testing): ranks rank/K share a "host", so several
 * hosts, and TCP between them, can run on one machine under obcrun. */
obc_result_t obc__host_layout_identity(const struct obc__config *cfg, int rank, char *out,
                                       struct obc__err *err)
{
    int per_host = 0;
    if (sscanf(cfg->host_id, "rank/%d", &per_host) == 1 && per_host > 0) {
        snprintf(out, OBC_SETUP_HOST_ID_BYTES, "user:rank/%d:%d", per_host, rank / per_host);
        return OBC_SUCCESS;
    }
    if (cfg->host_id[0] != '\0') {
        snprintf(out, OBC_SETUP_HOST_ID_BYTES, "user:%.88s", cfg->host_id);
        return OBC_SUCCESS;
    }
    int rc = obc__host_identity(out, OBC_SETUP_HOST_ID_BYTES);
    if (rc != 0) {
        return obc__err_set(err, OBC_ERR_SYSTEM, "cannot read this host's identity");
    }
    return OBC_SUCCESS;
}

static bool same_machine(const struct obc__setup_hello *all, int a, int b)
{
    return strncmp(all[a].host_id, all[b].host_id, OBC_SETUP_HOST_ID_BYTES) == 0;
}

/* The machines (numbered by their lowest rank), this rank's place among the
 * ranks of its machine, and which ranks are elsewhere. */
static void find_machines(struct obc__host_layout *l, const struct obc__setup_hello *all)
{
    int nlocal = 0, nmachines = 0;
    for (int r = 0; r < l->nranks; r++) {
        int first = r;
        for (int q = 0; q < r && first == r; q++) {
            first = same_machine(all, q, r) ? q : r;
        }
        l->machine_of[r] = first == r ? nmachines++ : l->machine_of[first];
        l->remote[r] = !same_machine(all, r, l->rank);
        if (!l->remote[r]) {
            if (r == l->rank) {
                l->local_rank = nlocal;
            }
            l->local[nlocal++] = r;
        }
    }
    l->local_nranks = nlocal;
    l->machines = nmachines;
    l->one_arena = nmachines == 1;
}

/* The hosts are the machines, unless OBC_HOST_SPLIT=K cuts one machine
 * into hosts of K consecutive ranks, so that hierarchical algorithms can be
 * tested without several machines. */
static void find_hosts(struct obc__host_layout *l, int split)
{
    memcpy(l->host_of, l->machine_of, sizeof(int) * (size_t)l->nranks);
    l->nhosts = l->machines;
    if (split <= 0) {
        return;
    }
    if (l->machines > 1) {
        OBC_WARN("OBC_HOST_SPLIT=%d ignored: the ranks already span %d hosts", split, l->machines);
        return;
    }
    for (int r = 0; r < l->nranks; r++) {
        l->host_of[r] = r / split;
    }
    l->nhosts = (l->nranks + split - 1) / split;
}

/* A child's hosts are its parent's (hello[].parent_host, 1 + the parent's
 * host indices), renumbered by their lowest rank in the child. A parent's host
 * never spans two machines, so neither does a child's. */
static bool hosts_from_parent(struct obc__host_layout *l, const struct obc__setup_hello *all)
{
    for (int r = 0; r < l->nranks; r++) {
        if (all[r].parent_host <= 0) {
            return false;
        }
    }
    l->nhosts = 0;
    for (int r = 0; r < l->nranks; r++) {
        int first = r;
        for (int q = 0; q < r && first == r; q++) {
            first = all[q].parent_host == all[r].parent_host ? q : r;
        }
        l->host_of[r] = first == r ? l->nhosts++ : l->host_of[first];
    }
    return true;
}

/* Every host's ranks, in ascending order (a counting sort by host), every
 * rank's index among them, and each host's head: the lowest of them. Every
 * host has a rank: hosts are numbered by their lowest rank, or by r / K. */
static void group_hosts(struct obc__host_layout *l)
{
    for (int r = 0; r < l->nranks; r++) {
        l->host_start[l->host_of[r] + 1]++;
    }
    for (int h = 0; h < l->nhosts; h++) {
        l->host_start[h + 1] += l->host_start[h];
        l->head[h] = 0; /* until the last loop: how many of its ranks are placed */
    }
    for (int r = 0; r < l->nranks; r++) {
        int h = l->host_of[r];
        l->host_index[r] = l->head[h]++;
        l->members[l->host_start[h] + l->host_index[r]] = r;
    }
    for (int h = 0; h < l->nhosts; h++) {
        l->head[h] = l->members[l->host_start[h]];
    }
}

/* See machine_cpus in host_layout.h. Two ranks bound to one CPU own no
 * core; ranks that are all bound, some of them two to a CPU (obcrun with
 * more ranks than CPUs), run on as many CPUs as they are bound to. */
static void count_cpus(struct obc__host_layout *l, const struct obc__setup_hello *hello)
{
    bool all_bound = true, owned = true;
    int most = 1, distinct = 0;
    for (int i = 0; i < l->local_nranks; i++) {
        const struct obc__setup_hello *h = &hello[l->local[i]];
        bool first = true;
        most = h->ncpus > most ? h->ncpus : most;
        all_bound = all_bound && h->bound_cpu >= 0;
        for (int j = 0; all_bound && first && j < i; j++) {
            first = hello[l->local[j]].bound_cpu != h->bound_cpu;
        }
        owned = owned && all_bound && first;
        distinct += first ? 1 : 0;
    }
    l->cores_owned = owned && l->local_nranks > 1;
    l->machine_cpus = all_bound && l->local_nranks > 1 ? distinct : most;
}

obc_result_t obc__host_layout_build(struct obc__host_layout *l,
                                    const struct obc__setup_hello *hello, int rank, int nranks,
                                    int host_split, struct obc__err *err)
{
    size_t n = (size_t)nranks;
    memset(l, 0, sizeof(*l));
    l->rank = rank;
    l->nranks = nranks;
    /* One block for the int tables: machine_of, local, host_of, head,
     * host_index, members (n each) and host_start (n + 1). */
    int *block = calloc(7 * n + 1, sizeof(int));
    l->remote = calloc(n, sizeof(bool));
    if (block == NULL || l->remote == NULL) {
        free(block);
        free(l->remote);
        l->remote = NULL;
        return obc__err_set(err, OBC_ERR_NO_MEMORY, "host layout");
    }
    l->machine_of = block;
    l->local = block + n;
    l->host_of = block + 2 * n;
    l->head = block + 3 * n;
    l->host_index = block + 4 * n;
    l->members = block + 5 * n;
    l->host_start = block + 6 * n;
    find_machines(l, hello);
    if (!hosts_from_parent(l, hello)) {
        find_hosts(l, host_split);
    }
    group_hosts(l);
    count_cpus(l, hello);
    return OBC_SUCCESS;
}

void obc__host_layout_fini(struct obc__host_layout *l)
{
    free(l->machine_of); /* the int block */
    free(l->remote);
    memset(l, 0, sizeof(*l));
}
