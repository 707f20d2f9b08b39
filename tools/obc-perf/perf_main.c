/* SPDX-License-Identifier: MIT */
/*
 * perf_main.c - obc-perf's driver: parse options, create the communicator
 * from the environment (obcrun), walk the sizes MIN, MIN*F, ..., MAX, print
 * one row per size and decide the exit status.
 *
 * Exit status: 0 when every byte was right (with -X: when exactly one byte
 * per iteration was wrong, proving the checker), 1 on any obc failure or
 * wrong data, 2 on a usage error. Rank 0 decides and broadcasts the verdict
 * so that every rank exits with the same status.
 */
#include <stdlib.h>
#include <string.h>

#include "perf.h"

/* Any failed obc call ends the run: the numbers would be meaningless. Abort
 * first so that peers fail promptly instead of waiting for their timeout. */
void perf_must(struct perf_ctx *ctx, obc_result_t r, const char *call)
{
    if (r == OBC_SUCCESS) {
        return;
    }
    fprintf(stderr, "obc-perf: rank %d: %s failed: %s: %s\n", ctx->rank, call, obc_strerror(r),
            obc_comm_last_error(ctx->comm));
    fflush(stdout);
    obc_comm_abort(ctx->comm);
    exit(1);
}

/* Checks that need the op or the communicator. Every rank reaches the same
 * answer, so only rank 0 says why; returns 0 to go on. */
static int check_run_options(const struct perf_ctx *ctx)
{
    const struct perf_opts *o = ctx->opts;
    const char *why = NULL;
    if (!ctx->op->has_data && (o->in_place || o->inject || o->has_dtype)) {
        why = "this collective moves no data: -i, -X and -d do not apply";
    } else if (!ctx->op->has_redop && o->has_redop) {
        why = "this collective reduces nothing: --op does not apply";
    } else if (ctx->op->has_root && o->root >= ctx->nranks) {
        why = "root out of range";
    } else if (ctx->dsize == 0) {
        why = "datatype unknown to the library";
    }
    if (why != NULL && ctx->rank == 0) {
        fprintf(stderr, "obc-perf: %s (%s, %d ranks, root %d)\n", why, ctx->op->name, ctx->nranks,
                o->root);
    }
    return why != NULL ? -1 : 0;
}

/* Measures every size; returns the verdict on rank 0 (0 good, 1 bad). */
static int run_sizes(struct perf_ctx *ctx, const char *impl)
{
    const struct perf_opts *o = ctx->opts;
    uint64_t wrong_total = 0;
    double busbw_sum = 0;
    int rows = 0;
    bool bad = false;
    size_t prev_nbytes = 0;
    double want = (double)o->min_bytes;
    for (;;) {
        size_t want_bytes = (size_t)(want + 0.5);
        if (want_bytes > o->max_bytes || !ctx->op->has_data) {
            want_bytes = o->max_bytes;
        }
        ctx->op->shape(ctx, want_bytes);
        /* Rounding to whole elements can map two sizes to one: measure it once. */
        if (rows == 0 || ctx->nbytes != prev_nbytes) {
            struct perf_result res;
            perf_bench_size(ctx, &res);
            perf_algorithm(ctx, res.algorithm, sizeof(res.algorithm));
            perf_output_row(ctx, impl, &res);
            prev_nbytes = ctx->nbytes;
            wrong_total += res.wrong;
            busbw_sum += res.busbw;
            rows++;
            uint64_t expected = o->inject ? (uint64_t)(o->warmup + res.iters) : 0;
            bad = bad || (ctx->rank == 0 && res.wrong != expected);
        }
        if (want_bytes >= o->max_bytes) {
            break;
        }
        want *= o->factor;
    }
    perf_output_end(ctx, wrong_total, busbw_sum, rows);
    return bad ? 1 : 0;
}

static obc_comm_t *init_comm(void)
{
    obc_comm_t *comm = NULL;
    obc_result_t r = obc_comm_init_env(&comm);
    if (r != OBC_SUCCESS) {
        fprintf(stderr, "obc-perf: obc_comm_init_env failed: %s: %s\n", obc_strerror(r),
                obc_comm_last_error(NULL));
        exit(1);
    }
    return comm;
}

/* Parses the command line and finds the op; exits on help or a usage error. */
static const struct perf_op *parse_or_exit(int argc, char **argv, struct perf_opts *opts)
{
    int p = perf_opts_parse(argc, argv, opts);
    if (p != 0) {
        exit(p > 0 ? 0 : 2);
    }
    const struct perf_op *op = perf_op_find(opts->op_name);
    if (op == NULL) {
        bool listing = strcmp(opts->op_name, "list") == 0;
        if (!listing) {
            fprintf(stderr, "obc-perf: unknown collective '%s'\n", opts->op_name);
        }
        perf_op_list(listing ? stdout : stderr);
        exit(listing ? 0 : 2);
    }
    return op;
}

int main(int argc, char **argv)
{
    struct perf_opts opts;
    struct perf_ctx ctx = {0};
    char label_buf[128];

    ctx.op = parse_or_exit(argc, argv, &opts);
    ctx.opts = &opts;
    ctx.comm = init_comm();
    if (opts.shared) {
        perf_data_use_shared(ctx.comm);
    }
    ctx.rank = obc_comm_rank(ctx.comm);
    ctx.nranks = obc_comm_size(ctx.comm);
    perf_data_set_offset((size_t)(opts.offset + (long)ctx.rank * opts.offset_step) % 4096);
    ctx.dtype = opts.has_dtype ? opts.dtype : ctx.op->default_dtype;
    ctx.dsize = obc_dtype_size(ctx.dtype);
    ctx.redop = opts.has_redop ? opts.redop : OBC_SUM;
    /* Every rank sees the same options and nranks, so all agree to stop. */
    if (check_run_options(&ctx) != 0) {
        obc_comm_destroy(ctx.comm);
        return 2;
    }
    const char *impl = perf_impl_label(&ctx, label_buf, sizeof(label_buf));

    ctx.op->setup(&ctx);
    perf_output_begin(&ctx, impl);
    int64_t verdict = run_sizes(&ctx, impl);
    perf_must(&ctx, obc_bcast(&verdict, 1, OBC_INT64, 0, ctx.comm), "obc_bcast(verdict)");
    ctx.op->teardown(&ctx);
    obc_result_t r = obc_comm_destroy(ctx.comm);
    if (r != OBC_SUCCESS) {
        /* comm is gone: its last-error text cannot be read any more. */
        fprintf(stderr, "obc-perf: rank %d: obc_comm_destroy failed: %s\n", ctx.rank,
                obc_strerror(r));
        return 1;
    }
    return (int)verdict;
}
