/* SPDX-License-Identifier: MIT */
/*
 * perf_output.c - what obc-perf prints, on rank 0 only: a nccl-tests-style
 * table by default, or with --csv exactly the anchors' lines
 *   impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong
 * (header only with -H, '#' comment lines only with -v) so bench/anchors'
 * plot.py reads obc rows and MPI/gloo rows from one file.
 */
#include <stdio.h>

#include "perf.h"

static const char *metric_name(const struct perf_opts *o)
{
    return o->span ? "span (latest end over ranks - root's start)"
                   : "max over ranks of each rank's own time";
}

static const char *redop_name(const struct perf_ctx *ctx)
{
    return ctx->op->has_redop ? perf_redop_name(ctx->redop) : "none";
}

/* One '#' line that identifies the run; plot.py and the anchors' scripts skip it. */
static void print_run_comment(const struct perf_ctx *ctx, const char *impl)
{
    const struct perf_opts *o = ctx->opts;
    printf("# impl=%s nranks=%d root=%d library=obc %s op=%s call=%s dtype=%s redop=%s "
           "check=%d wrong=%s warmup=%d iters=%d..%d budget_s=%g\n",
           impl, ctx->nranks, ctx->op->has_root ? o->root : -1, obc_version(), ctx->op->name,
           ctx->call, ctx->op->has_data ? perf_dtype_name(ctx->dtype) : "none", redop_name(ctx),
           (int)(o->check && ctx->op->has_data), ctx->op->wrong_unit, o->warmup, o->min_iters,
           o->max_iters, o->budget_s);
    printf("# usec = median over timed iterations of the %s\n", metric_name(o));
}

void perf_output_begin(const struct perf_ctx *ctx, const char *impl)
{
    const struct perf_opts *o = ctx->opts;
    if (ctx->rank != 0) {
        return;
    }
    if (o->csv) {
        if (o->verbose) {
            print_run_comment(ctx, impl);
        }
        if (o->csv_header) {
            printf("impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong\n");
        }
    } else {
        printf("# obc-perf: %s over %d ranks, %s\n", ctx->op->name, ctx->nranks, ctx->call);
        print_run_comment(ctx, impl);
        printf("#\n");
        printf("# %10s %12s %9s %6s %6s %10s %9s %9s %9s\n", "size", "count", "type", "redop",
               "root", "time", "algbw", "busbw", "#wrong");
        printf("# %10s %12s %9s %6s %6s %10s %9s %9s %9s\n", "(B)", "(elements)", "", "", "",
               "(us)", "(GB/s)", "(GB/s)", ctx->op->wrong_unit);
    }
    fflush(stdout);
}

static void print_detail_comment(const struct perf_result *r, const char *impl)
{
    printf("# impl=%s bytes=%zu iters=%d maxrank_median_usec=%.3f maxrank_min_usec=%.3f "
           "maxrank_max_usec=%.3f span_median_usec=%.3f span_min_usec=%.3f "
           "span_max_usec=%.3f warmup_wall_usec=%.1f algorithm=%s\n",
           impl, r->nbytes, r->iters, r->max_med_us, r->max_min_us, r->max_max_us, r->span_med_us,
           r->span_min_us, r->span_max_us, r->warmup_us, r->algorithm);
}

void perf_output_row(const struct perf_ctx *ctx, const char *impl, const struct perf_result *r)
{
    const struct perf_opts *o = ctx->opts;
    if (ctx->rank != 0) {
        return;
    }
    if (o->csv) {
        printf("%s,%d,%zu,%.3f,%.6f,%.6f,%llu\n", impl, ctx->nranks, r->nbytes, r->usec, r->algbw,
               r->busbw, (unsigned long long)r->wrong);
    } else {
        printf("  %10zu %12zu %9s %6s %6d %10.2f %9.3f %9.3f %9llu\n", r->nbytes, r->count,
               ctx->op->has_data ? perf_dtype_name(ctx->dtype) : "none", redop_name(ctx),
               ctx->op->has_root ? o->root : -1, r->usec, r->algbw, r->busbw,
               (unsigned long long)r->wrong);
    }
    if (o->verbose) {
        print_detail_comment(r, impl);
    }
    fflush(stdout);
}

/* Table footer in nccl-tests' spirit: total wrong bytes and average busbw. */
void perf_output_end(const struct perf_ctx *ctx, uint64_t wrong_total, double busbw_sum, int rows)
{
    if (ctx->rank != 0 || ctx->opts->csv) {
        return;
    }
    printf("# wrong %s total: %llu %s\n", ctx->op->wrong_unit, (unsigned long long)wrong_total,
           ctx->opts->inject ? "(self-test: expected one per iteration)"
                             : (wrong_total == 0 ? "OK" : "FAILED"));
    printf("# avg busbw: %.3f GB/s\n", rows > 0 ? busbw_sum / rows : 0.0);
    fflush(stdout);
}
