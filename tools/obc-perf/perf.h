/* SPDX-License-Identifier: MIT */
/*
 * perf.h - obc-perf's private interface between its files: the options, the
 * op table entry, the per-run context and the per-size result.
 *
 * obc-perf measures collectives the way bench/anchors measures MPI_Bcast
 * (fill/poison, barrier, time each rank's call, max over ranks and span,
 * median, validate every byte) so both print comparable CSV lines. It uses
 * include/obc.h only. One file per job: perf_opts.c (command line),
 * perf_data.c (byte pattern and validation), perf_dtype.c (writing one
 * element of each dtype), perf_rdata.c (the reductions' typed inputs and
 * their exact expected results), perf_stats.c (clock, statistics,
 * collecting stamps), perf_ops.c (op table, broadcast and barrier),
 * perf_ops_reduce.c (allreduce, reduce, allgather, reduce_scatter),
 * perf_ops_p2p.c (sendrecv, a ping-pong),
 * perf_ops_personal.c (gather, scatter, alltoall), perf_ops_alltoallv.c
 * and perf_ops_allgatherv.c (the uneven blocks of alltoallv, allgatherv),
 * perf_bench.c (one size), perf_output.c (table and CSV), perf_main.c
 * (driver).
 */
#ifndef OBC_PERF_H
#define OBC_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "obc.h"

/* Command-line options; filled once by perf_opts_parse, then read-only. */
struct perf_opts {
    const char *op_name; /* -o */
    size_t min_bytes, max_bytes; /* -b, -e */
    double factor; /* -f */
    int root; /* -r */
    int max_iters, min_iters, warmup; /* -n, -m, -w */
    double budget_s; /* -t: timed-loop seconds per size */
    bool check; /* -c */
    bool in_place; /* -i */
    bool async; /* -a: obc_i* + obc_wait */
    bool shared; /* -M: buffers from obc_mem_alloc */
    int offset, offset_step; /* -A OFF[,STEP]: rank r's buffers start OFF + r*STEP into a page */
    bool has_dtype; /* -d given; otherwise the op's default */
    obc_dtype_t dtype;
    bool has_redop; /* --op given; otherwise OBC_SUM */
    obc_redop_t redop;
    bool csv, csv_header, verbose, span, inject; /* --csv, -H, -v, -S, -X */
    const char *label; /* --label, NULL: "obc" or "obc_<algo>" */
};

struct perf_ctx;

/*
 * One collective as obc-perf drives it: a set of small functions and one
 * entry in perf_ops.c's table. busbw factors follow nccl-tests (allreduce
 * 2(n-1)/n, allgather, reduce_scatter, gather, scatter and alltoall (n-1)/n,
 * broadcast and reduce 1).
 */
struct perf_op {
    const char *name; /* -o NAME, as OBC_ALGO spells it */
    obc_coll_t coll; /* the collective, for obc_comm_algorithm */
    bool is_p2p; /* point-to-point (sendrecv): no collective algorithm to name */
    bool has_root; /* prints the root; span starts at the root's start */
    bool has_data; /* false (barrier): one row, no buffers, no validation */
    bool has_redop; /* takes --op (the reductions) */
    bool out_on_root_only; /* only the root has an output (reduce): -X damages the root's */
    const char *wrong_unit; /* what the wrong column counts: "bytes" or "elements" */
    obc_dtype_t default_dtype;
    double (*busbw_factor)(int nranks);
    /* Allocates and touches every buffer this rank needs for max_bytes. */
    void (*setup)(struct perf_ctx *ctx);
    /* Sets ctx->count, ctx->nbytes, ctx->out and ctx->out_nbytes for a requested
     * size (whole elements, count >= 1). */
    void (*shape)(struct perf_ctx *ctx, size_t want_bytes);
    /* Writes this rank's input and poisons its output for iteration iter. */
    void (*fill)(struct perf_ctx *ctx, uint64_t iter);
    /* The timed call. */
    obc_result_t (*run)(struct perf_ctx *ctx);
    /* Wrong bytes or elements (wrong_unit) in this rank's output, and in its
     * input where the call promises not to modify it, for iteration iter. */
    uint64_t (*check)(const struct perf_ctx *ctx, uint64_t iter);
    /* Frees what setup allocated. */
    void (*teardown)(struct perf_ctx *ctx);
};

/* Everything one rank needs while measuring; lives in main for the whole run. */
struct perf_ctx {
    obc_comm_t *comm;
    int rank, nranks;
    const struct perf_opts *opts;
    const struct perf_op *op;
    obc_dtype_t dtype;
    size_t dsize; /* bytes per element of dtype */
    obc_redop_t redop; /* the reductions' operator */
    unsigned char *sendbuf; /* NULL where this rank sends nothing separate */
    unsigned char *recvbuf; /* NULL where this rank receives nothing separate */
    const char *call; /* the obc call(s) timed, for messages; set by setup */
    size_t count; /* the current size: the count argument of the call */
    size_t nbytes; /* the current size in bytes as nccl-tests counts it (allgather,
                    * reduce_scatter: the whole gathered or scattered buffer) */
    unsigned char *out; /* this rank's output for the current size, NULL if none */
    size_t out_nbytes; /* its length; -X damages its middle byte */
    uint64_t iter; /* global iteration number: the pattern seed */
    size_t *vec; /* alltoallv, allgatherv: their count and displacement arrays */
};

/* Per-size outcome, known on rank 0 only. */
struct perf_result {
    size_t nbytes, count; /* count: elements in nbytes */
    int iters; /* timed iterations */
    double usec; /* the reported metric: median max-over-ranks, or span with -S */
    double max_med_us, max_min_us, max_max_us; /* max-over-ranks time */
    double span_med_us, span_min_us, span_max_us;
    double warmup_us; /* wall time of one warmup iteration on rank 0 */
    double algbw, busbw; /* GB/s */
    uint64_t wrong; /* bytes or elements (wrong_unit), all ranks, warmup + timed iterations */
    char algorithm[32]; /* what the library ran (obc_comm_algorithm), for -v */
};

/* perf_opts.c */
int perf_opts_parse(int argc, char **argv, struct perf_opts *opts);
void perf_opts_usage(FILE *out);
const char *perf_dtype_name(obc_dtype_t dtype);
const char *perf_redop_name(obc_redop_t redop);
const char *perf_impl_label(struct perf_ctx *ctx, char *buf, size_t len);
/* The algorithm the library runs for the current size (ctx->count), into buf. */
void perf_algorithm(struct perf_ctx *ctx, char *buf, size_t len);

/* perf_data.c */
void perf_data_fill(unsigned char *buf, size_t nbytes, uint64_t iter, bool poison);
uint64_t perf_data_wrong(const unsigned char *buf, size_t nbytes, uint64_t iter);
/* Buffers come from obc_mem_alloc on comm from now on (-M); NULL: malloc. */
void perf_data_use_shared(obc_comm_t *comm);
void perf_data_set_offset(size_t offset);
unsigned char *perf_data_alloc(size_t nbytes);
unsigned char *perf_data_alloc_or_exit(size_t nbytes);
void perf_data_free(void *p);

/* perf_dtype.c: how an element of each dtype is stored. */
enum perf_kind { PERF_KIND_SIGNED, PERF_KIND_UNSIGNED, PERF_KIND_FLOAT };
enum perf_kind perf_dtype_kind(obc_dtype_t dtype);
int perf_dtype_exact_bits(obc_dtype_t dtype);
void perf_dtype_store_int(obc_dtype_t dtype, void *dst, uint64_t bits);
void perf_dtype_store_float(obc_dtype_t dtype, void *dst, double value);

/* perf_rdata.c: the reductions' data. `index` is the element's index in
 * the whole send buffer; buf points at element `first`. */
void perf_rdata_input(const struct perf_ctx *ctx, unsigned char *buf, size_t first, size_t count,
                      int rank, uint64_t iter);
uint64_t perf_rdata_input_wrong(const struct perf_ctx *ctx, const unsigned char *buf, size_t first,
                                size_t count, int rank, uint64_t iter);
void perf_rdata_poison(const struct perf_ctx *ctx, unsigned char *buf, size_t first, size_t count,
                       uint64_t iter);
uint64_t perf_rdata_result_wrong(const struct perf_ctx *ctx, const unsigned char *buf, size_t first,
                                 size_t count, uint64_t iter);

/* perf_ops.c */
const struct perf_op *perf_op_find(const char *name);
void perf_op_list(FILE *out);

/* perf_ops_reduce.c */
extern const struct perf_op perf_op_allreduce;
extern const struct perf_op perf_op_reduce;
extern const struct perf_op perf_op_allgather;
extern const struct perf_op perf_op_reduce_scatter;

/* perf_ops_p2p.c */
extern const struct perf_op perf_op_sendrecv;
/* perf_ops_personal.c */
/* The pattern of the block that src sends to dst in iteration iter. */
uint64_t perf_block_seed(const struct perf_ctx *ctx, uint64_t iter, int src, int dst);
/* busbw = algbw x (n-1)/n, for the gathers, scatter and the alltoalls. */
double perf_busbw_personal(int nranks);
extern const struct perf_op perf_op_gather;
extern const struct perf_op perf_op_scatter;
extern const struct perf_op perf_op_alltoall;
/* perf_ops_alltoallv.c */
extern const struct perf_op perf_op_alltoallv;
/* perf_ops_allgatherv.c */
extern const struct perf_op perf_op_allgatherv;

/* perf_stats.c */
int64_t perf_now_ns(void);
double perf_median(double *values, int n);
void perf_reduce_iteration(struct perf_ctx *ctx, int64_t t0, int64_t t1, double *max_us,
                           double *span_us);
void perf_summarize(struct perf_ctx *ctx, double *max_us, double *span_us, int iters,
                    uint64_t wrong, struct perf_result *res);
int perf_agree_iters(struct perf_ctx *ctx, double warmup_s);

/* perf_bench.c */
void perf_bench_size(struct perf_ctx *ctx, struct perf_result *res);

/* perf_output.c */
void perf_output_begin(const struct perf_ctx *ctx, const char *impl);
void perf_output_row(const struct perf_ctx *ctx, const char *impl, const struct perf_result *res);
void perf_output_end(const struct perf_ctx *ctx, uint64_t wrong_total, double busbw_sum, int rows);

/* perf_main.c */
void perf_must(struct perf_ctx *ctx, obc_result_t r, const char *call);

#endif /* OBC_PERF_H */
