/* SPDX-License-Identifier: MIT */
/*
 * perf_bench.c - the measurement method for one message size, identical to
 * bench/anchors so that obc's rows compare with MPI's and gloo's:
 *
 *   per iteration: fill input / poison output (untimed), obc_barrier,
 *   time this rank's call with CLOCK_MONOTONIC, count wrong bytes (untimed),
 *   and, in the timed loop, reduce (max) the times to rank 0 (untimed);
 *   warmup iterations are validated but untimed and size the timed loop:
 *   iterations = clamp(budget / the median warmup iteration's wall time, -m, -n).
 *   The median, not the mean: the first warmup iteration also waits for the
 *   rank that set up last (a 64 MiB run's buffers), and a mean of 10 ms
 *   made a 4 KiB row 15-20 iterations long, all measured in the moments
 *   after that start.
 */
#include <stdlib.h>
#include <string.h>

#include "perf.h"

/* One iteration: stores this rank's start and end stamps, adds wrong bytes. */
static void one_iter(struct perf_ctx *ctx, uint64_t *wrong, int64_t *t0, int64_t *t1)
{
    const struct perf_opts *o = ctx->opts;
    uint64_t iter = ctx->iter++;
    if (o->check) {
        ctx->op->fill(ctx, iter);
    }
    perf_must(ctx, obc_barrier(ctx->comm), "obc_barrier");
    *t0 = perf_now_ns();
    obc_result_t r = ctx->op->run(ctx);
    *t1 = perf_now_ns();
    perf_must(ctx, r, ctx->call);
    /* Self-test: one damaged byte per call must show up as exactly one wrong
     * byte (or element). The rank after the root damages its output, or the
     * root itself where only the root has one (reduce). */
    int victim = ctx->op->out_on_root_only ? o->root : (o->root + 1) % ctx->nranks;
    if (o->inject && ctx->out_nbytes > 0 && ctx->rank == victim) {
        ctx->out[ctx->out_nbytes / 2] ^= 0x5a;
    }
    if (o->check) {
        *wrong += ctx->op->check(ctx, iter);
    }
}

/* Collective: measures the size already set in ctx (count, nbytes); rank 0
 * gets the result. Every rank advances ctx->iter identically. */
void perf_bench_size(struct perf_ctx *ctx, struct perf_result *res)
{
    const struct perf_opts *o = ctx->opts;
    uint64_t wrong = 0;
    int64_t t0 = 0;
    int64_t t1 = 0;

    double *warm_s = malloc(sizeof(double) * (size_t)o->warmup);
    if (warm_s == NULL) {
        fprintf(stderr, "obc-perf: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < o->warmup; i++) {
        int64_t w0 = perf_now_ns();
        one_iter(ctx, &wrong, &t0, &t1);
        warm_s[i] = (double)(perf_now_ns() - w0) * 1e-9;
    }
    double warmup_s = perf_median(warm_s, o->warmup);
    free(warm_s);
    int iters = perf_agree_iters(ctx, warmup_s);

    double *max_us = malloc(sizeof(double) * (size_t)iters);
    double *span_us = malloc(sizeof(double) * (size_t)iters);
    if (max_us == NULL || span_us == NULL) {
        fprintf(stderr, "obc-perf: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < iters; i++) {
        one_iter(ctx, &wrong, &t0, &t1);
        perf_reduce_iteration(ctx, t0, t1, &max_us[i], &span_us[i]);
    }

    memset(res, 0, sizeof(*res));
    res->nbytes = ctx->nbytes;
    res->count = ctx->dsize > 0 ? ctx->nbytes / ctx->dsize : 0;
    res->warmup_us = warmup_s * 1e6;
    perf_summarize(ctx, max_us, span_us, iters, wrong, res);
    free(max_us);
    free(span_us);
}
