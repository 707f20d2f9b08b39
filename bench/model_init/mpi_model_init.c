/* SPDX-License-Identifier: MIT */
/*
 * mpi_model_init.c - the anchor of the model-initialisation benchmark: rank
 * 0's GPT-like model (gpt_model.h) reaches every rank by one MPI_Bcast per
 * tensor, as a program that broadcasts its parameters one by one does.
 * Each tensor is its own malloc'd buffer. Per repetition (untimed): rank 0
 * fills, the others poison, MPI_Barrier; timed: the 148 broadcasts on each
 * rank; the repetition's time is the slowest rank's (MPI_Reduce MAX).
 * Afterwards every byte is checked (untimed).
 * Prints impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong (the median).
 * Usage: mpirun -n N mpi_model_init [-r REPS] [-l LABEL]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpt_model.h"

int main(int argc, char **argv)
{
    int rank, nranks, reps = 5, c;
    const char *label = "openmpi";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "r:l:")) != -1) {
        if (c == 'r') {
            reps = atoi(optarg);
        } else if (c == 'l') {
            label = optarg;
        }
    }
    size_t counts[GPT_TENSORS], total = 0;
    unsigned char *t[GPT_TENSORS];
    gpt_counts(counts);
    for (int i = 0; i < GPT_TENSORS; i++) {
        t[i] = malloc(counts[i] * 4);
        total += counts[i] * 4;
    }
    double *times = calloc((size_t)reps, sizeof(double));
    uint64_t wrong = 0;
    for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up */
        gpt_fill_model(t, counts, rep + 1, rank != 0);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < GPT_TENSORS; i++) {
            MPI_Bcast(t[i], (int)counts[i], MPI_FLOAT, 0, MPI_COMM_WORLD);
        }
        double mine = MPI_Wtime() - t0, slowest = 0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        wrong += gpt_wrong_model(t, counts, rep + 1);
        if (rep >= 0) {
            times[rep] = slowest;
        }
    }
    uint64_t all_wrong = 0;
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double s = gpt_median(times, reps);
        printf("%s,%d,%zu,%.1f,%.3f,%.3f,%llu\n", label, nranks, total, s * 1e6, total / s / 1e9,
               total / s / 1e9, (unsigned long long)all_wrong);
    }
    MPI_Finalize();
    return all_wrong != 0 && rank == 0;
}
