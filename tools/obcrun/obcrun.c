/* SPDX-License-Identifier: MIT */
/*
 * obcrun.c - the launcher's entry point: parses the command line, prepares
 * the job (environment, signals), starts the ranks and hands over to the
 * supervisor, then removes the job's leftover shared memory on every path.
 *
 *   obcrun -n N [--timeout SEC] [--tag-output] [--bind core|none] [--] PROGRAM [ARGS...]
 *
 * Exit status: 0 if every rank exited 0; otherwise the first failing rank's
 * status (128+signal if killed), 124 on --timeout, 128+signal when obcrun
 * was interrupted, 2 for bad arguments, 1 if obcrun itself failed.
 */
#include "obcrun.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USAGE \
    "usage: obcrun -n N [--timeout SEC] [--tag-output] [--bind core|none] [--] PROGRAM " \
    "[ARGS...]\n" \
    "Start N ranks (1..1024) of PROGRAM on this host for obc_comm_init_env.\n" \
    "  -n, -np N       number of ranks\n" \
    "  --timeout SEC   stop every rank after SEC seconds (exit status 124)\n" \
    "  --tag-output    prefix each line of output with \"[rank R] \"\n" \
    "  --bind core|none  core: rank R runs on CPU R mod C of the C CPUs obcrun may use\n" \
    "                  (the default for 2 ranks or more when they do not outnumber the\n" \
    "                  CPUs); none: every rank may run on all of them (the default when\n" \
    "                  they outnumber the CPUs)\n" \
    "  -h, --help      show this help\n" \
    "Each rank gets OBC_RANK, OBC_NRANKS, OBC_BOOTSTRAP, OBC_SECRET, OBC_JOB_ID and, as\n" \
    "torchrun, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.\n" \
    "If one rank fails, the others are stopped and obcrun exits with its status.\n"

static int usage_error(const char *fmt, const char *arg)
{
    fputs("obcrun: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n" USAGE, stderr);
    return -1;
}

/* Takes the value that follows option argv[*i]; NULL if there is none. */
static const char *next_value(char **argv, int *i)
{
    if (argv[*i + 1] == NULL) {
        return NULL;
    }
    *i += 1;
    return argv[*i];
}

static int parse_nranks(const char *s, struct obcrun_opts *opts)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || n < 1 || n > OBCRUN_MAX_RANKS) {
        return usage_error("the number of ranks must be from 1 to 1024, got '%s'", s);
    }
    opts->nranks = (int)n;
    return 0;
}

static int parse_timeout(const char *s, struct obcrun_opts *opts)
{
    char *end;
    double t;

    errno = 0;
    t = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(t) || t <= 0) {
        return usage_error("--timeout needs a positive number of seconds, got '%s'", s);
    }
    opts->timeout_s = t;
    return 0;
}

/* Parses one option at argv[*i]; returns 0, -1 on error, 1 for --help. */
static int parse_option(char **argv, int *i, struct obcrun_opts *opts)
{
    const char *arg = argv[*i];
    const char *value;

    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
        return 1;
    }
    if (strcmp(arg, "--tag-output") == 0) {
        opts->tag_output = true;
        return 0;
    }
    if (strcmp(arg, "-n") == 0 || strcmp(arg, "-np") == 0) {
        value = next_value(argv, i);
        return value ? parse_nranks(value, opts) : usage_error("option %s needs a value", arg);
    }
    if (strncmp(arg, "-n", 2) == 0 && isdigit((unsigned char)arg[2])) {
        return parse_nranks(arg + 2, opts); /* "-n4" */
    }
    if (strcmp(arg, "--timeout") == 0) {
        value = next_value(argv, i);
        return value ? parse_timeout(value, opts) : usage_error("option %s needs a value", arg);
    }
    if (strncmp(arg, "--timeout=", 10) == 0) {
        return parse_timeout(arg + 10, opts);
    }
    if (strcmp(arg, "--bind") == 0 || strncmp(arg, "--bind=", 7) == 0) {
        value = arg[6] == '=' ? arg + 7 : next_value(argv, i);
        if (value == NULL || obcrun_bind_parse(value, opts) != 0) {
            return usage_error("--bind needs core or none, got '%s'", value ? value : "");
        }
        return 0;
    }
    return usage_error("unknown option '%s'", arg);
}

/* Returns 0 with opts filled, 1 after printing help, -1 after a message. */
static int parse_args(int argc, char **argv, struct obcrun_opts *opts)
{
    int i = 1;

    for (; i < argc; i++) {
        const char *arg = argv[i];
        int rc;

        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            break; /* PROGRAM: the rest belongs to it */
        }
        rc = parse_option(argv, &i, opts);
        if (rc != 0) {
            return rc;
        }
    }
    if (opts->nranks == 0) {
        return usage_error("%s", "missing -n N (the number of ranks)");
    }
    if (i >= argc) {
        return usage_error("%s", "missing PROGRAM to run");
    }
    opts->argv = argv + i;
    return 0;
}

static int prepare_job(struct obcrun_job *job)
{
    job->port_fd = -1;
    job->store_port_fd = -1;
    job->signal_fd = -1;
    job->ranks = calloc((size_t)job->opts.nranks, sizeof(*job->ranks));
    if (job->ranks == NULL) {
        fprintf(stderr, "obcrun: out of memory\n");
        return -1;
    }
    for (int i = 0; i < job->opts.nranks; i++) {
        obcrun_stream_init(&job->ranks[i].out, -1, 1, i);
        obcrun_stream_init(&job->ranks[i].err, -1, 2, i);
    }
    if (obcrun_supervise_init(job) != 0 || obcrun_env_setup(job) != 0) {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct obcrun_job job;
    int rc;

    memset(&job, 0, sizeof(job));
    rc = parse_args(argc, argv, &job.opts);
    if (rc != 0) {
        if (rc > 0) {
            fputs(USAGE, stdout);
        }
        return rc > 0 ? 0 : 2;
    }
    if (job.opts.timeout_s > 0) {
        job.deadline = obcrun_after(obcrun_now(), job.opts.timeout_s);
    }
    if (prepare_job(&job) != 0) {
        rc = 1;
    } else {
        obcrun_spawn_all(&job);
        rc = obcrun_supervise(&job);
    }
    /* Ranks that crashed or were killed cannot unlink their segments. */
    if (job.job_id[0] != '\0') {
        obcrun_shm_cleanup(job.job_id);
    }
    if (job.signal_fd >= 0) {
        close(job.signal_fd);
    }
    free(job.pollfds);
    free(job.polled);
    free(job.ranks);
    return rc;
}
