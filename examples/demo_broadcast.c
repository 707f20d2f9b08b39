/* SPDX-License-Identifier: MIT */
/*
 * demo_broadcast.c - the first obc demo: rank 0 broadcasts float32 buffers
 * from 1 KiB to 256 MiB, every rank checks every element it received, and
 * rank 0 prints one table row per size: time, bandwidth and who verified it.
 *
 *   obcrun -n 4 build/bin/obc-demo-broadcast
 *
 * Uses only obc.h. Exits 0 only if every rank verified every size.
 */
#include <obc.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPEATS 5 /* timed broadcasts per size; the best one counts */

static const size_t sizes[] = {1 << 10, 1 << 20, 64 << 20, 256 << 20}; /* bytes */

/* What each rank tells the others about one size. */
struct result {
    double best_s; /* fastest of the REPEATS broadcasts on this rank */
    uint64_t nwrong; /* elements that differ from the pattern */
};

/* Exactly representable in float32, and different for neighbouring elements. */
static float pattern(size_t i)
{
    return (float)(i % 65521);
}

/* On error: say what failed and why, make every other rank fail fast too
 * (instead of waiting for us until their timeout), and exit. */
static void check(obc_result_t rc, const char *what, obc_comm_t *comm)
{
    if (rc != OBC_SUCCESS) {
        fprintf(stderr, "demo_broadcast: rank %d: %s failed: %s (%s)\n", obc_comm_rank(comm), what,
                obc_strerror(rc), obc_comm_last_error(comm));
        if (comm != NULL) {
            obc_comm_abort(comm);
        }
        exit(1);
    }
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Broadcasts `count` floats from rank 0 REPEATS times and checks the result. */
static struct result run_size(float *buf, size_t count, obc_comm_t *comm)
{
    struct result res = {1e30, 0};
    int rank = obc_comm_rank(comm);

    for (size_t i = 0; i < count; i++) {
        buf[i] = rank == 0 ? pattern(i) : -1.0f; /* stale data cannot pass */
    }
    for (int rep = 0; rep < REPEATS; rep++) {
        check(obc_barrier(comm), "obc_barrier", comm); /* start together */
        double t0 = now_s();
        check(obc_broadcast(rank == 0 ? buf : NULL, buf, count, OBC_FLOAT32, 0, comm),
              "obc_broadcast", comm);
        double t = now_s() - t0;
        res.best_s = t < res.best_s ? t : res.best_s;
    }
    for (size_t i = 0; i < count; i++) {
        res.nwrong += buf[i] != pattern(i);
    }
    return res;
}

/* There is no gather yet: each rank in turn broadcasts its result. */
static void collect(const struct result *mine, struct result *all, obc_comm_t *comm)
{
    int nranks = obc_comm_size(comm);

    for (int root = 0; root < nranks; root++) {
        check(obc_broadcast(mine, &all[root], sizeof(*mine), OBC_UINT8, root, comm),
              "obc_broadcast of results", comm);
    }
}

/* The lowest rank that saw wrong data, or -1 if all verified. */
static int first_failed(const struct result *all, int nranks)
{
    for (int r = 0; r < nranks; r++) {
        if (all[r].nwrong > 0) {
            return r;
        }
    }
    return -1;
}

static void print_row(size_t nbytes, const struct result *all, int nranks)
{
    double slowest = 0; /* the broadcast is done when the last rank has the data */
    int bad = first_failed(all, nranks);

    for (int r = 0; r < nranks; r++) {
        slowest = all[r].best_s > slowest ? all[r].best_s : slowest;
    }
    if (nbytes >= (1 << 20)) {
        printf("%6zu MiB", nbytes >> 20);
    } else {
        printf("%6zu KiB", nbytes >> 10);
    }
    if (nranks > 1) {
        printf(" %12.1f %9.2f   ", slowest * 1e6, (double)nbytes / slowest / 1e9);
    } else { /* in place on the only rank: nothing moves, a rate would mean nothing */
        printf(" %12.1f %9s   ", slowest * 1e6, "-");
    }
    if (bad < 0) {
        printf("verified on all %d ranks\n", nranks);
    } else {
        printf("FAILED: rank %d got %llu of %zu elements wrong\n", bad,
               (unsigned long long)all[bad].nwrong, nbytes / sizeof(float));
    }
    fflush(stdout); /* a row is not lost if a later size kills the job */
}

int main(void)
{
    const size_t nsizes = sizeof(sizes) / sizeof(sizes[0]);
    obc_comm_t *comm = NULL;
    int nfailed = 0;

    check(obc_comm_init_env(&comm), "obc_comm_init_env", comm);
    int rank = obc_comm_rank(comm);
    int nranks = obc_comm_size(comm);
    float *buf = malloc(sizes[nsizes - 1]);
    struct result *all = calloc((size_t)nranks, sizeof(*all));
    if (buf == NULL || all == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        obc_comm_abort(comm);
        return 1;
    }
    if (rank == 0) {
        printf("obc %s, %d ranks: broadcast of float32 from rank 0, best of %d\n", obc_version(),
               nranks, REPEATS);
        printf("%10s %12s %9s   %s\n", "size", "time (us)", "GB/s", "check");
    }
    for (size_t s = 0; s < nsizes; s++) {
        struct result mine = run_size(buf, sizes[s] / sizeof(float), comm);
        collect(&mine, all, comm);
        nfailed += first_failed(all, nranks) >= 0; /* every rank knows, so all exit alike */
        if (rank == 0) {
            print_row(sizes[s], all, nranks);
        }
    }
    free(all);
    free(buf);
    obc_result_t rc = obc_comm_destroy(comm);
    if (rc != OBC_SUCCESS) {
        fprintf(stderr, "demo_broadcast: rank %d: obc_comm_destroy failed: %s\n", rank,
                obc_strerror(rc));
        return 1;
    }
    return nfailed == 0 ? 0 : 1;
}
