/* SPDX-License-Identifier: MIT */
/*
 * obc_model_init.c - the model-initialisation benchmark on obc, measured as
 * mpi_model_init.c measures the anchor (same model, fill, timing and
 * check): rank 0's 148 tensors reach every rank
 *   grouped  as one obc group of in-place broadcasts (default): obc fuses
 *            the small tensors into few transfers;
 *   each     one obc_bcast per tensor, as the MPI program does;
 * with the tensors in malloc'd buffers of their own (default) or, with -s,
 * in one obc_mem_alloc block at 64-byte offsets (what
 * obc.sync_module(shared=True) does), which readers copy straight out of
 * the root's memory.
 * Usage: obcrun -n N obc_model_init [-m grouped|each] [-s] [-r REPS] [-l LABEL]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpt_model.h"
#include "obc.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ok(obc_result_t r, obc_comm_t *comm, const char *what)
{
    if (r != OBC_SUCCESS) {
        fprintf(stderr, "obc_model_init: %s: %s: %s\n", what, obc_strerror(r),
                obc_comm_last_error(comm));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int reps = 5, c, grouped = 1, shared = 0;
    const char *label = NULL;
    while ((c = getopt(argc, argv, "m:sr:l:")) != -1) {
        if (c == 'm') {
            grouped = strcmp(optarg, "each") != 0;
        } else if (c == 's') {
            shared = 1;
        } else if (c == 'r') {
            reps = atoi(optarg);
        } else if (c == 'l') {
            label = optarg;
        }
    }
    obc_comm_t *comm = NULL;
    ok(obc_comm_init_env(&comm), NULL, "obc_comm_init_env");
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    size_t counts[GPT_TENSORS], total = 0, slab_bytes = 0;
    unsigned char *t[GPT_TENSORS], *slab = NULL;
    gpt_counts(counts);
    for (int i = 0; i < GPT_TENSORS; i++) {
        slab_bytes += (counts[i] * 4 + 63) / 64 * 64;
    }
    if (shared) {
        ok(obc_mem_alloc((void **)&slab, slab_bytes, comm), comm, "obc_mem_alloc");
    }
    for (int i = 0, off = 0; i < GPT_TENSORS; i++) {
        t[i] = shared ? slab + off : malloc(counts[i] * 4);
        off += (int)((counts[i] * 4 + 63) / 64 * 64);
        total += counts[i] * 4;
    }
    double *times = calloc((size_t)reps, sizeof(double));
    uint64_t wrong = 0;
    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
        gpt_fill_model(t, counts, rep + 1, rank != 0);
        ok(obc_barrier(comm), comm, "obc_barrier");
        double t0 = now();
        if (grouped) {
            ok(obc_group_start(), comm, "obc_group_start");
        }
        for (int i = 0; i < GPT_TENSORS; i++) {
            ok(obc_bcast(t[i], counts[i], OBC_FLOAT32, 0, comm), comm, "obc_bcast");
        }
        if (grouped) {
            ok(obc_group_end(), comm, "obc_group_end");
        }
        double mine = now() - t0, slowest = 0;
        ok(obc_allreduce(&mine, &slowest, 1, OBC_FLOAT64, OBC_MAX, comm), comm, "obc_allreduce");
        wrong += gpt_wrong_model(t, counts, rep + 1);
        if (rep >= 0) {
            times[rep] = slowest;
        }
    }
    uint64_t all_wrong = 0;
    ok(obc_allreduce(&wrong, &all_wrong, 1, OBC_UINT64, OBC_SUM, comm), comm, "obc_allreduce");
    if (rank == 0) {
        char name[64];
        snprintf(name, sizeof(name), "obc_%s%s", grouped ? "grouped" : "each",
                 shared ? "_shared" : "");
        double s = gpt_median(times, reps);
        printf("%s,%d,%zu,%.1f,%.3f,%.3f,%llu\n", label != NULL ? label : name, nranks, total,
               s * 1e6, total / s / 1e9, total / s / 1e9, (unsigned long long)all_wrong);
    }
    for (int i = 0; !shared && i < GPT_TENSORS; i++) {
        free(t[i]);
    }
    ok(obc_comm_destroy(comm), NULL, "obc_comm_destroy");
    return all_wrong != 0;
}
