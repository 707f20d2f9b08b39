/* SPDX-License-Identifier: MIT */
/*
 * nl_bcast_loop.c - one rank of a broadcast loop for the multi-host tests
 * (tests/netlab/netlab_*.sh start it on emulated hosts).
 *
 *   nl_bcast_loop [-s SIZE] [-r ROOT] [-n ITERS] [-t SECONDS] [-k K] [-x K] [-q]
 *
 * Joins the job from the launcher's environment (obc_comm_init_env), then
 * broadcasts SIZE bytes (default 1M; suffixes K, M, G; at least 16) from ROOT
 * (default 0) with obc_bcast, ITERS times or, with -t, until the root has
 * looped SECONDS seconds. The root writes data that depends on the iteration;
 * every rank, the root included, checks every byte after every broadcast.
 * The first 16 bytes carry the iteration number and a stop flag that the root
 * sets on the last round, so all ranks agree on the number of broadcasts
 * whatever their clocks say. With -x K the last rank calls an allreduce of
 * the same bytes instead of broadcast K (counted from 0): a mismatched call,
 * which every rank must report as OBC_ERR_MISMATCH.
 *
 * Output (stdout, one line each, flushed; T = CLOCK_BOOTTIME seconds, which
 * all netlab hosts share and /proc/uptime shows the test scripts):
 *   rank R: started at T                      once the communicator exists
 *   rank R: N broadcasts at T                 every second (not with -q)
 *   rank R: iteration K done at T             with -k K, when broadcast K returned
 *   rank R: OK N broadcasts (...)             at the end; exit 0
 *   rank R: ERROR <obc_strerror> after N broadcasts at T: <obc_comm_last_error>
 *                                             exit 2 (init failures too)
 *   rank R: WRONG DATA after N broadcasts at T: <where>
 *                                             exit 3 (after obc_comm_abort, so that
 *                                             no peer waits for this rank)
 * Public API only (obc.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "obc.h"

#define HDR_BYTES 16
#define FLAG_STOP 1ull

struct opts {
    size_t size;
    int root;
    unsigned long iters; /* 0: bounded by seconds only */
    double seconds; /* 0: bounded by iters only */
    unsigned long mark; /* print a line when this iteration is done; 0: never */
    long mismatch_at; /* the last rank's odd call, or -1 */
    int quiet;
};

static char g_rank[32] = "?";

/* The clock the test scripts read (/proc/uptime): shared by every emulated host, never stepped. */
static double now_shared(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [-s SIZE] [-r ROOT] [-n ITERS] [-t SECONDS] [-k K] [-x K] [-q]\n"
            "  SIZE bytes (K/M/G suffixes, >= %d; default 1M), ROOT default 0;\n"
            "  at least one of -n and -t; -k prints a line when iteration K is done;\n"
            "  -x: the last rank calls an allreduce instead of broadcast K\n",
            argv0, HDR_BYTES);
    exit(64);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || end == s) {
        return -1;
    }
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end != '\0' && strcmp(end, "i") != 0 && strcmp(end, "iB") != 0 && strcmp(end, "B") != 0) {
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    int c;
    char *end;
    *o = (struct opts){.size = 1u << 20, .root = 0, .mismatch_at = -1};
    while ((c = getopt(argc, argv, "s:r:n:t:k:x:q")) != -1) {
        switch (c) {
        case 's':
            if (parse_size(optarg, &o->size) != 0 || o->size < HDR_BYTES) {
                usage(argv[0]);
            }
            break;
        case 'r':
            o->root = (int)strtol(optarg, &end, 10);
            if (*end != '\0' || o->root < 0) {
                usage(argv[0]);
            }
            break;
        case 'n':
            o->iters = strtoul(optarg, &end, 10);
            if (*end != '\0') {
                usage(argv[0]);
            }
            break;
        case 't':
            o->seconds = strtod(optarg, &end);
            if (*end != '\0' || o->seconds < 0) {
                usage(argv[0]);
            }
            break;
        case 'k':
            o->mark = strtoul(optarg, &end, 10);
            if (*end != '\0') {
                usage(argv[0]);
            }
            break;
        case 'x':
            o->mismatch_at = strtol(optarg, &end, 10);
            if (*end != '\0' || o->mismatch_at < 0) {
                usage(argv[0]);
            }
            break;
        case 'q':
            o->quiet = 1;
            break;
        default:
            usage(argv[0]);
        }
    }
    if (optind != argc || (o->iters == 0 && o->seconds == 0)) {
        usage(argv[0]);
    }
}

/* The 8 bytes at word index w of broadcast `iter`: a mix of both, so that a
 * block moved within the buffer, or left over from another round, differs. */
static uint64_t pattern(uint64_t iter, uint64_t w)
{
    uint64_t x = (iter + 1) * 0x9e3779b97f4a7c15ull ^ (w + 1) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 29);
}

static void fill(unsigned char *buf, size_t size, uint64_t iter, uint64_t flags)
{
    size_t w;
    memcpy(buf, &iter, 8);
    memcpy(buf + 8, &flags, 8);
    for (w = HDR_BYTES / 8; (w + 1) * 8 <= size; w++) {
        uint64_t v = pattern(iter, w);
        memcpy(buf + w * 8, &v, 8);
    }
    if (w * 8 < size) {
        uint64_t v = pattern(iter, w);
        memcpy(buf + w * 8, &v, size - w * 8);
    }
}

/* 0 if buf is broadcast `iter` (flags returned); else describes the first
 * wrong byte in `where`. */
static int verify(const unsigned char *buf, size_t size, uint64_t iter, uint64_t *flags,
                  char *where, size_t wlen)
{
    uint64_t got_iter;
    memcpy(&got_iter, buf, 8);
    memcpy(flags, buf + 8, 8);
    if (got_iter != iter || (*flags & ~FLAG_STOP) != 0) {
        snprintf(where, wlen, "header of broadcast %llu says iteration %llu, flags 0x%llx",
                 (unsigned long long)iter, (unsigned long long)got_iter,
                 (unsigned long long)*flags);
        return -1;
    }
    for (size_t w = HDR_BYTES / 8; w * 8 < size; w++) {
        uint64_t want = pattern(iter, w);
        size_t n = size - w * 8 < 8 ? size - w * 8 : 8;
        if (memcmp(buf + w * 8, &want, n) != 0) {
            const unsigned char *wb = (const unsigned char *)&want;
            for (size_t i = 0; i < n; i++) {
                if (buf[w * 8 + i] != wb[i]) {
                    snprintf(where, wlen, "byte %zu of broadcast %llu is 0x%02x, want 0x%02x",
                             w * 8 + i, (unsigned long long)iter, buf[w * 8 + i], wb[i]);
                    break;
                }
            }
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    obc_comm_t *comm = NULL;
    obc_result_t rc;
    unsigned char *buf;
    unsigned long done = 0;
    double t_start, t_next_report;
    const char *env_rank = getenv("RANK") ? getenv("RANK") : getenv("OBC_RANK");
    int rank;

    setvbuf(stdout, NULL, _IOLBF, 0);
    parse_opts(argc, argv, &o);
    if (env_rank != NULL) {
        snprintf(g_rank, sizeof(g_rank), "%s", env_rank);
    }

    rc = obc_comm_init_env(&comm);
    if (rc != OBC_SUCCESS) {
        printf("rank %s: ERROR %s after 0 broadcasts at %.3f: obc_comm_init_env: %s\n", g_rank,
               obc_strerror(rc), now_shared(), obc_comm_last_error(NULL));
        return 2;
    }
    rank = obc_comm_rank(comm);
    snprintf(g_rank, sizeof(g_rank), "%d", rank);
    if (o.root >= obc_comm_size(comm)) {
        printf("rank %d: ERROR root %d is not a rank of %d\n", rank, o.root, obc_comm_size(comm));
        obc_comm_destroy(comm);
        return 64;
    }
    buf = malloc(o.size);
    if (buf == NULL) {
        printf("rank %d: ERROR no memory for %zu bytes\n", rank, o.size);
        obc_comm_destroy(comm);
        return 2;
    }
    printf("rank %d: started at %.3f\n", rank, now_shared());
    t_start = now_mono();
    t_next_report = t_start + 1.0;

    for (;;) {
        uint64_t flags = 0;
        char where[200];
        if (rank == o.root) {
            int last = (o.iters != 0 && done + 1 >= o.iters) ||
                (o.seconds > 0 && now_mono() - t_start >= o.seconds);
            fill(buf, o.size, done, last ? FLAG_STOP : 0);
        }
        if (o.mismatch_at == (long)done && rank == obc_comm_size(comm) - 1) {
            rc = obc_allreduce(buf, buf, o.size, OBC_UINT8, OBC_SUM, comm);
            if (rc == OBC_SUCCESS) {
                printf("rank %d: ERROR the mismatched allreduce succeeded at %.3f\n", rank,
                       now_shared());
                obc_comm_destroy(comm);
                free(buf);
                return 4;
            }
        } else {
            rc = obc_bcast(buf, o.size, OBC_UINT8, o.root, comm);
        }
        if (rc != OBC_SUCCESS) {
            printf("rank %d: ERROR %s after %lu broadcasts at %.3f: %s\n", rank, obc_strerror(rc),
                   done, now_shared(), obc_comm_last_error(comm));
            obc_comm_destroy(comm);
            free(buf);
            return 2;
        }
        if (verify(buf, o.size, done, &flags, where, sizeof(where)) != 0) {
            printf("rank %d: WRONG DATA after %lu broadcasts at %.3f: %s\n", rank, done,
                   now_shared(), where);
            obc_comm_abort(comm);
            obc_comm_destroy(comm);
            free(buf);
            return 3;
        }
        done++;
        if (o.mark != 0 && done == o.mark) {
            printf("rank %d: iteration %lu done at %.3f\n", rank, done, now_shared());
        }
        if (flags & FLAG_STOP) {
            break;
        }
        if (!o.quiet && now_mono() >= t_next_report) {
            printf("rank %d: %lu broadcasts at %.3f\n", rank, done, now_shared());
            t_next_report += 1.0;
        }
    }
    {
        double secs = now_mono() - t_start;
        rc = obc_comm_destroy(comm);
        free(buf);
        if (rc != OBC_SUCCESS) {
            printf("rank %d: ERROR %s after %lu broadcasts at %.3f: obc_comm_destroy: %s\n", rank,
                   obc_strerror(rc), done, now_shared(), obc_comm_last_error(NULL));
            return 2;
        }
        printf("rank %d: OK %lu broadcasts (%zu bytes each, %.2f s, %.3f GB/s per rank)\n", rank,
               done, o.size, secs, secs > 0 ? (double)o.size * (double)done / secs / 1e9 : 0.0);
    }
    return 0;
}
