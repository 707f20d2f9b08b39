/* SPDX-License-Identifier: MIT */
/*
 * perf_opts.c - obc-perf's command line: option table, size parsing with
 * K/M/G suffixes, datatype names, defaults and the consistency checks.
 *
 * Option letters follow nccl-tests (-b -e -f -n -w -c -d -a, --op) and the
 * anchors harness (-r -m -t -H -v -S -X) so one command line reads the same
 * for every benchmark in a comparison; -o picks the collective, because
 * obc-perf is one program for all of them (nccl-tests has one per
 * collective and spends -o on the operator, which here is --op only).
 * Parsing happens before the communicator exists, so errors here never need
 * a collective to report.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

/* obc names first (printed), then nccl-tests spellings accepted as aliases. */
static const struct {
    const char *name;
    obc_dtype_t dtype;
} dtype_names[] = {
    {"int8", OBC_INT8},       {"uint8", OBC_UINT8},       {"int32", OBC_INT32},
    {"uint32", OBC_UINT32},   {"int64", OBC_INT64},       {"uint64", OBC_UINT64},
    {"float16", OBC_FLOAT16}, {"bfloat16", OBC_BFLOAT16}, {"float32", OBC_FLOAT32},
    {"float64", OBC_FLOAT64}, {"char", OBC_INT8},         {"int", OBC_INT32},
    {"half", OBC_FLOAT16},    {"float", OBC_FLOAT32},     {"double", OBC_FLOAT64},
};

#define N_DTYPE_NAMES (sizeof(dtype_names) / sizeof(dtype_names[0]))

const char *perf_dtype_name(obc_dtype_t dtype)
{
    for (size_t i = 0; i < N_DTYPE_NAMES; i++) {
        if (dtype_names[i].dtype == dtype) {
            return dtype_names[i].name;
        }
    }
    return "?";
}

static const struct {
    const char *name;
    obc_redop_t redop;
} redop_names[] = {
    {"sum", OBC_SUM}, {"prod", OBC_PROD}, {"min", OBC_MIN}, {"max", OBC_MAX}, {"avg", OBC_AVG},
};

#define N_REDOP_NAMES (sizeof(redop_names) / sizeof(redop_names[0]))

const char *perf_redop_name(obc_redop_t redop)
{
    for (size_t i = 0; i < N_REDOP_NAMES; i++) {
        if (redop_names[i].redop == redop) {
            return redop_names[i].name;
        }
    }
    return "?";
}

static int parse_redop(const char *s, obc_redop_t *out)
{
    for (size_t i = 0; i < N_REDOP_NAMES; i++) {
        if (strcmp(s, redop_names[i].name) == 0) {
            *out = redop_names[i].redop;
            return 0;
        }
    }
    fprintf(stderr,
            "obc-perf: unknown reduction operator '%s' (sum prod min max avg; the "
            "collective is -o)\n",
            s);
    return -1;
}

static int parse_dtype(const char *s, obc_dtype_t *out)
{
    for (size_t i = 0; i < N_DTYPE_NAMES; i++) {
        if (strcmp(s, dtype_names[i].name) == 0) {
            *out = dtype_names[i].dtype;
            return 0;
        }
    }
    fprintf(stderr, "obc-perf: unknown datatype '%s'\n", s);
    return -1;
}

/* Byte counts are powers of 1024 ("256M" = 256 MiB), as in nccl-tests and the anchors. */
static int parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || !(v >= 0)) {
        fprintf(stderr, "obc-perf: bad size '%s'\n", s);
        return -1;
    }
    double unit = 1;
    if (*end == 'k' || *end == 'K') {
        unit = 1024.0;
    } else if (*end == 'm' || *end == 'M') {
        unit = 1024.0 * 1024.0;
    } else if (*end == 'g' || *end == 'G') {
        unit = 1024.0 * 1024.0 * 1024.0;
    }
    if (unit != 1) {
        end++;
    }
    /* 2^62 keeps the conversion to size_t and later products exact. */
    if (*end != '\0' || v * unit >= 4611686018427387904.0) {
        fprintf(stderr, "obc-perf: bad size '%s' (use N, NK, NM or NG)\n", s);
        return -1;
    }
    *out = (size_t)(v * unit);
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "obc-perf: '%s' is not an integer in [%d, %d]\n", s, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_bool(const char *s, bool *out)
{
    int v = 0;
    if (parse_int(s, 0, 1, &v) != 0) {
        return -1;
    }
    *out = v != 0;
    return 0;
}

/* "OFF" or "OFF,STEP", each 0-4095. */
static int parse_offset(const char *s, struct perf_opts *o)
{
    char off[32];
    const char *comma = strchr(s, ',');
    size_t n = comma != NULL ? (size_t)(comma - s) : strlen(s);
    if (n >= sizeof(off)) {
        fprintf(stderr, "obc-perf: -A wants OFF or OFF,STEP, not '%s'\n", s);
        return -1;
    }
    memcpy(off, s, n);
    off[n] = '\0';
    o->offset_step = 0;
    return parse_int(off, 0, 4095, &o->offset) != 0 ||
            (comma != NULL && parse_int(comma + 1, 0, 4095, &o->offset_step) != 0)
        ? -1
        : 0;
}

static int parse_double(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) {
        fprintf(stderr, "obc-perf: '%s' is not a number\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

void perf_opts_usage(FILE *out)
{
    fprintf(out,
            "usage: obcrun -n N obc-perf [options]\n"
            "  -o, --collective NAME  broadcast barrier allreduce reduce allgather\n"
            "                       reduce_scatter gather scatter alltoall alltoallv\n"
            "                       (uneven blocks of 1-3 half-blocks), allgatherv\n"
            "                       (rank r's block 1-3 half-blocks), sendrecv\n"
            "                       (ping-pong of rank 0 and the last rank) (default\n"
            "                       broadcast; -o list)\n"
            "  -b, --minbytes SIZE  smallest message, K/M/G = 2^10/2^20/2^30 (default 8)\n"
            "  -e, --maxbytes SIZE  largest message, always measured (default 256M)\n"
            "  -f, --stepfactor F   size multiplier between steps, > 1 (default 2)\n"
            "  -r, --root R         root rank of rooted collectives (default 0)\n"
            "  -d, --datatype T     int8 uint8 int32 uint32 int64 uint64 float16 bfloat16\n"
            "                       float32 float64 (default float32)\n"
            "      --op OP          reduction operator: sum prod min max avg (default sum)\n"
            "  -i, --inplace 0|1    in place as obc.h defines it per collective (broadcast:\n"
            "                       obc_bcast) (default 0)\n"
            "  -a, --async 0|1      non-blocking call + obc_wait, timed together (default 0)\n"
            "  -M, --shared 0|1     buffers from obc_mem_alloc (shared memory: a broadcast\n"
            "                       from one is copied once) (default 0)\n"
            "  -A, --offset OFF[,STEP]  rank r's buffers start (OFF + r*STEP) mod 4096 bytes\n"
            "                       past a page boundary: numpy's large arrays start 16\n"
            "                       bytes in, torch's 64, a slice anywhere (default 0,0:\n"
            "                       page-aligned, as the anchors' buffers)\n"
            "  -n, --iters N        most timed iterations per size (default 200)\n"
            "  -m, --miniters N     fewest timed iterations per size (default 5)\n"
            "  -w, --warmup N       untimed, validated iterations per size, >= 1 (default 3)\n"
            "  -t, --budget SEC     timed-loop seconds per size; iterations =\n"
            "                       clamp(SEC / the median warmup iteration, -m, -n)\n"
            "                       (default 0.5)\n"
            "  -c, --check 0|1      fill, poison and validate every output byte or element\n"
            "                       against a locally computed exact result (default 1)\n"
            "  -S, --span           usec = latest end over ranks - root's start\n"
            "                       (default: slowest rank's own time)\n"
            "      --csv            print impl,nranks,bytes,usec,algbw_GBps,busbw_GBps,wrong\n"
            "                       (bytes: the whole buffer, as nccl-tests: alltoall sends\n"
            "                       bytes/N to each peer, alltoallv about that, allgatherv\n"
            "                       gathers about bytes in all; wrong: bytes for broadcast,\n"
            "                       the gathers, scatter and the alltoalls, elements for\n"
            "                       reductions)\n"
            "  -H, --header         with --csv: print the header line first\n"
            "  -v, --verbose        '#' detail lines (iterations, min/max, span, the\n"
            "                       algorithm the library chose for the size)\n"
            "  -X, --selftest       the rank after the root (reduce: the root) flips one\n"
            "                       output byte after each call; exit 0 only if wrong ==\n"
            "                       iterations for every size\n"
            "      --label NAME     impl column (default obc, or obc_<algo> when OBC_ALGO\n"
            "                       names this collective, e.g. allreduce=ring,broadcast=arena)\n"
            "  -h, --help           this text\n");
}

static const struct option long_opts[] = {
    {"collective", required_argument, NULL, 'o'},
    {"op", required_argument, NULL, 'R'},
    {"minbytes", required_argument, NULL, 'b'},
    {"maxbytes", required_argument, NULL, 'e'},
    {"stepfactor", required_argument, NULL, 'f'},
    {"root", required_argument, NULL, 'r'},
    {"datatype", required_argument, NULL, 'd'},
    {"inplace", required_argument, NULL, 'i'},
    {"async", required_argument, NULL, 'a'},
    {"shared", required_argument, NULL, 'M'},
    {"offset", required_argument, NULL, 'A'},
    {"iters", required_argument, NULL, 'n'},
    {"miniters", required_argument, NULL, 'm'},
    {"warmup", required_argument, NULL, 'w'},
    {"budget", required_argument, NULL, 't'},
    {"check", required_argument, NULL, 'c'},
    {"span", no_argument, NULL, 'S'},
    {"csv", no_argument, NULL, 'C'},
    {"header", no_argument, NULL, 'H'},
    {"verbose", no_argument, NULL, 'v'},
    {"selftest", no_argument, NULL, 'X'},
    {"label", required_argument, NULL, 'L'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void set_defaults(struct perf_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->op_name = "broadcast";
    o->min_bytes = 8;
    o->max_bytes = (size_t)256 << 20;
    o->factor = 2.0;
    o->max_iters = 200;
    o->min_iters = 5;
    o->warmup = 3;
    o->budget_s = 0.5;
    o->check = true;
}

/* Applies one option; returns 0, or -1 on a bad value. */
static int apply_opt(int c, const char *arg, struct perf_opts *o)
{
    switch (c) {
    case 'o':
        o->op_name = arg;
        return 0;
    case 'b':
        return parse_size(arg, &o->min_bytes);
    case 'e':
        return parse_size(arg, &o->max_bytes);
    case 'f':
        return parse_double(arg, &o->factor);
    case 'r':
        return parse_int(arg, 0, 1 << 30, &o->root);
    case 'd':
        o->has_dtype = true;
        return parse_dtype(arg, &o->dtype);
    case 'R':
        o->has_redop = true;
        return parse_redop(arg, &o->redop);
    case 'i':
        return parse_bool(arg, &o->in_place);
    case 'a':
        return parse_bool(arg, &o->async);
    case 'M':
        return parse_bool(arg, &o->shared);
    case 'A':
        return parse_offset(arg, o);
    case 'n':
        return parse_int(arg, 1, 1 << 24, &o->max_iters);
    case 'm':
        return parse_int(arg, 1, 1 << 24, &o->min_iters);
    case 'w':
        return parse_int(arg, 1, 1 << 24, &o->warmup);
    case 't':
        return parse_double(arg, &o->budget_s);
    case 'c':
        return parse_bool(arg, &o->check);
    case 'S':
        o->span = true;
        return 0;
    case 'C':
        o->csv = true;
        return 0;
    case 'H':
        o->csv_header = true;
        return 0;
    case 'v':
        o->verbose = true;
        return 0;
    case 'X':
        o->inject = true;
        return 0;
    case 'L':
        o->label = arg;
        return 0;
    default:
        return -1;
    }
}

static int validate(const struct perf_opts *o)
{
    if (o->min_bytes < 1 || o->max_bytes < o->min_bytes) {
        fprintf(stderr, "obc-perf: need 1 <= -b <= -e\n");
        return -1;
    }
    if (o->max_bytes > o->min_bytes && !(o->factor > 1.0)) {
        fprintf(stderr, "obc-perf: -f must be > 1\n");
        return -1;
    }
    if (o->max_iters < o->min_iters || !(o->budget_s >= 0)) {
        fprintf(stderr, "obc-perf: need -m <= -n and -t >= 0\n");
        return -1;
    }
    if (o->inject && !o->check) {
        fprintf(stderr, "obc-perf: -X needs -c 1 (it tests the checker)\n");
        return -1;
    }
    return 0;
}

/* Returns 0 to run, 1 when help was printed (exit 0), -1 on a usage error (exit 2). */
int perf_opts_parse(int argc, char **argv, struct perf_opts *opts)
{
    set_defaults(opts);
    opterr = 1;
    for (;;) {
        int c = getopt_long(argc, argv, "o:b:e:f:r:d:i:a:M:A:n:m:w:t:c:SHvXh", long_opts, NULL);
        if (c == -1) {
            break;
        }
        if (c == 'h') {
            perf_opts_usage(stdout);
            return 1;
        }
        if (c == '?' || apply_opt(c, optarg, opts) != 0) {
            perf_opts_usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "obc-perf: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    return validate(opts);
}

/*
 * The impl column: --label, else "obc_<algo>" when OBC_ALGO forces this
 * collective's algorithm (e.g. "broadcast=chain,allreduce=ring"), else
 * "obc", so that rows of forced algorithms never merge with default ones.
 * The library says what is forced: OBC_ALGO is its to parse.
 */
const char *perf_impl_label(struct perf_ctx *ctx, char *buf, size_t len)
{
    char forced[64];
    if (ctx->opts->label != NULL) {
        return ctx->opts->label;
    }
    if (ctx->op->is_p2p) {
        return "obc";
    }
    perf_must(ctx, obc_comm_algorithm_forced(ctx->comm, ctx->op->coll, forced, sizeof(forced)),
              "obc_comm_algorithm_forced");
    if (forced[0] == '\0') {
        return "obc";
    }
    snprintf(buf, len, "obc_%s", forced);
    return buf;
}

void perf_algorithm(struct perf_ctx *ctx, char *buf, size_t len)
{
    if (ctx->op->is_p2p) {
        snprintf(buf, len, "p2p");
        return;
    }
    /* obc.h asks about allgatherv by its whole gathered size, which is the
     * same on every rank (ctx->count is only its nominal block). */
    size_t nbytes =
        ctx->op->coll == OBC_COLL_ALLGATHERV ? ctx->out_nbytes : ctx->count * ctx->dsize;
    perf_must(ctx, obc_comm_algorithm(ctx->comm, ctx->op->coll, nbytes, buf, len),
              "obc_comm_algorithm");
}
