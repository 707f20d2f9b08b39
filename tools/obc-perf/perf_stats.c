/* SPDX-License-Identifier: MIT */
/*
 * perf_stats.c - time and statistics: the clock, the agreed iteration
 * count, and turning every rank's per-iteration start/end stamps into the
 * max-over-ranks time and the span, each summarised by its median.
 *
 * All ranks of one host share CLOCK_MONOTONIC, so stamps from different
 * processes can be subtracted. The stamps travel to rank 0 only after the
 * timed loop of a size (one broadcast per rank, that rank as root), because
 * any communication inside the loop would disturb what is being measured.
 */
#include <stdlib.h>
#include <string.h>
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

/* Rank 0 turns the wall time of one warmup iteration into the timed
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

/* Running fold of all ranks' stamps, on rank 0. */
struct fold {
    double *max_ns; /* per iteration: the slowest rank's own duration */
    int64_t *last_end; /* per iteration: latest end over ranks */
    int64_t *ref_start; /* per iteration: root's start, or earliest start without a root */
    uint64_t wrong;
};

/* packed = [t0 x iters, t1 x iters, wrong] of rank r. */
static void fold_rank(struct fold *f, const struct perf_ctx *ctx, const int64_t *packed, int iters,
                      int r)
{
    for (int i = 0; i < iters; i++) {
        int64_t t0 = packed[i];
        int64_t t1 = packed[iters + i];
        double dur = (double)(t1 - t0);
        bool first = r == 0;
        if (first || dur > f->max_ns[i]) {
            f->max_ns[i] = dur;
        }
        if (first || t1 > f->last_end[i]) {
            f->last_end[i] = t1;
        }
        if (ctx->op->has_root ? r == ctx->opts->root : (first || t0 < f->ref_start[i])) {
            f->ref_start[i] = t0;
        }
    }
    f->wrong += (uint64_t)packed[2 * iters];
}

static void summarize(const struct perf_ctx *ctx, struct fold *f, int iters,
                      struct perf_result *res)
{
    double *span = malloc(sizeof(double) * (size_t)iters);
    if (span == NULL) {
        fprintf(stderr, "obc-perf: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < iters; i++) {
        span[i] = (double)(f->last_end[i] - f->ref_start[i]);
        f->max_ns[i] *= 1e-3;
        span[i] *= 1e-3;
    }
    res->iters = iters;
    res->max_med_us = perf_median(f->max_ns, iters);
    res->max_min_us = f->max_ns[0];
    res->max_max_us = f->max_ns[iters - 1];
    res->span_med_us = perf_median(span, iters);
    res->span_min_us = span[0];
    res->span_max_us = span[iters - 1];
    res->usec = ctx->opts->span ? res->span_med_us : res->max_med_us;
    /* bytes / usec / 1e3 = bytes / s / 1e9: GB/s with GB = 10^9 B (anchors, nccl-tests). */
    res->algbw = res->usec > 0 ? (double)res->nbytes / res->usec / 1e3 : 0.0;
    res->busbw = res->algbw * ctx->op->busbw_factor(ctx->nranks);
    res->wrong = f->wrong;
    free(span);
}

static void *must_alloc(size_t nbytes)
{
    void *p = malloc(nbytes == 0 ? 1 : nbytes);
    if (p == NULL) {
        fprintf(stderr, "obc-perf: out of memory\n");
        exit(1);
    }
    return p;
}

/* Collective: every rank passes its stamps (ns) and wrong-byte count; rank 0
 * gets the summary in res. Each rank r >= 1 broadcasts its arrays with root
 * r (the API has no gather); rank 0 folds them as they arrive. */
void perf_collect(struct perf_ctx *ctx, const int64_t *t0, const int64_t *t1, int iters,
                  uint64_t wrong, struct perf_result *res)
{
    size_t n = 2 * (size_t)iters + 1;
    int64_t *mine = must_alloc(n * sizeof(int64_t));
    int64_t *theirs = must_alloc(n * sizeof(int64_t));
    memcpy(mine, t0, (size_t)iters * sizeof(int64_t));
    memcpy(mine + iters, t1, (size_t)iters * sizeof(int64_t));
    mine[2 * iters] = (int64_t)wrong;

    struct fold f = {0};
    if (ctx->rank == 0) {
        f.max_ns = must_alloc(sizeof(double) * (size_t)iters);
        f.last_end = must_alloc(sizeof(int64_t) * (size_t)iters);
        f.ref_start = must_alloc(sizeof(int64_t) * (size_t)iters);
        fold_rank(&f, ctx, mine, iters, 0);
    }
    for (int r = 1; r < ctx->nranks; r++) {
        const int64_t *send = ctx->rank == r ? mine : NULL;
        perf_must(ctx, obc_broadcast(send, theirs, n, OBC_INT64, r, ctx->comm),
                  "obc_broadcast(stamps)");
        if (ctx->rank == 0) {
            fold_rank(&f, ctx, theirs, iters, r);
        }
    }
    if (ctx->rank == 0) {
        summarize(ctx, &f, iters, res);
    }
    free(f.max_ns);
    free(f.last_end);
    free(f.ref_start);
    free(mine);
    free(theirs);
}
