/* SPDX-License-Identifier: MIT */
/*
 * perf_stats.c - time and statistics: the clock, the agreed iteration
 * count, and turning every rank's per-iteration start/end stamps into the
 * max-over-ranks time and the span, each summarised by its median.
 *
 * All ranks of one host share CLOCK_MONOTONIC, so stamps from different
 * processes can be subtracted. They travel to rank 0 after every timed
 * iteration, by the same reduction the anchors make (bench/anchors): what
 * happens between two timed calls decides which rank leaves the next
 * barrier first, and so the max-over-ranks time of small messages; a loop
 * that differed there would not compare with them.
 */
#include <stdlib.h>
#include <time.h>

#include "perf.h"

int64_t perf_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts values in place (callers then read min and max at the ends). */
double perf_median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof(values[0]), cmp_double);
    if (n % 2 == 1) {
        return values[n / 2];
    }
    return 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* Rank 0 turns the wall time of the median warmup iteration into the timed
 * iteration count; all ranks must run the same number, so it is broadcast. */
int perf_agree_iters(struct perf_ctx *ctx, double warmup_s)
{
    const struct perf_opts *o = ctx->opts;
    int64_t iters = o->max_iters;
    if (ctx->rank == 0 && warmup_s > 0) {
        double want = o->budget_s / warmup_s;
        iters = want < (double)o->max_iters ? (int64_t)want : o->max_iters;
    }
    if (iters < o->min_iters) {
        iters = o->min_iters;
    }
    perf_must(ctx, obc_bcast(&iters, 1, OBC_INT64, 0, ctx->comm), "obc_bcast(iterations)");
    return (int)iters;
}

/* The anchors' per-iteration step, after the timed call and the check:
 * the max over ranks of (own duration, end stamp, negated reference start)
 * goes to rank 0. The reference is the root's start, or the earliest start
 * of a collective without a root. Like the anchors' MPI_Reduce it paces the
 * loop: rank 0 waits for it before its next barrier. Stamps in ns since
 * boot are exact in a double (below 2^53). */
void perf_reduce_iteration(struct perf_ctx *ctx, int64_t t0, int64_t t1, double *max_us,
                           double *span_us)
{
    bool ref = !ctx->op->has_root || ctx->rank == ctx->opts->root;
    double in[3] = {(double)(t1 - t0), (double)t1, ref ? -(double)t0 : -1e300};
    double out[3] = {0, 0, 0};
    perf_must(ctx, obc_reduce(in, out, 3, OBC_FLOAT64, OBC_MAX, 0, ctx->comm), "obc_reduce(times)");
    *max_us = out[0] * 1e-3;
    *span_us = (out[1] + out[2]) * 1e-3;
}

/* Collective: every rank passes its wrong-byte count; rank 0's max_us and
 * span_us (from perf_reduce_iteration) become the summary in res, on rank 0. */
void perf_summarize(struct perf_ctx *ctx, double *max_us, double *span_us, int iters,
                    uint64_t wrong, struct perf_result *res)
{
    uint64_t total = 0;
    perf_must(ctx, obc_reduce(&wrong, &total, 1, OBC_UINT64, OBC_SUM, 0, ctx->comm),
              "obc_reduce(wrong)");
    if (ctx->rank != 0) {
        return;
    }
    res->iters = iters;
    res->max_med_us = perf_median(max_us, iters);
    res->max_min_us = max_us[0];
    res->max_max_us = max_us[iters - 1];
    res->span_med_us = perf_median(span_us, iters);
    res->span_min_us = span_us[0];
    res->span_max_us = span_us[iters - 1];
    res->usec = ctx->opts->span ? res->span_med_us : res->max_med_us;
    /* bytes / usec / 1e3 = bytes / s / 1e9: GB/s with GB = 10^9 B (anchors, nccl-tests). */
    res->algbw = res->usec > 0 ? (double)res->nbytes / res->usec / 1e3 : 0.0;
    res->busbw = res->algbw * ctx->op->busbw_factor(ctx->nranks);
    res->wrong = total;
}
