/* SPDX-License-Identifier: MIT */
/*
 * obct.c - the report side of obct.h: rank prefix, fatal and soft failures,
 * result-code names, clocks and the timeout multiplier.
 *
 * Messages go to stderr, one fprintf each, flushed, so that lines of
 * different ranks interleave whole under obcrun.
 */
#include "obct.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "quiet.h"

#define OBCT_MAX_SOFT_FAILURES 25

static int g_rank = -2; /* -2: not looked up yet */
static int g_failures;

void obct_set_rank(int rank)
{
    g_rank = rank;
}

int obct_rank(void)
{
    if (g_rank == -2) {
        const char *s = getenv("OBC_RANK");
        g_rank = s ? atoi(s) : -1;
    }
    return g_rank;
}

double obct_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void obct_sleep(double seconds)
{
    struct timespec ts;
    if (seconds <= 0) {
        return;
    }
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
        /* EINTR: sleep the rest */
    }
}

double obct_time_scale(void)
{
    const char *s = getenv("OBC_TEST_TIMEOUT_MULTIPLIER");
    double v = s ? atof(s) : 1.0;
    return v >= 1.0 ? v : 1.0;
}

const char *obct_rc_name(obc_result_t rc)
{
    /* The library's own table (obc_result_name), not a copy of the enum here. */
    const char *name = obc_result_name(rc);
    return name ? name : "?";
}

static void vreport(const char *kind, const char *file, int line, const char *fmt, va_list ap)
{
    char msg[2048];
    char text[2400];
    const char *base = strrchr(file, '/');
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (obct_rank() >= 0) {
        snprintf(text, sizeof(text), "[obct rank %d] %s:%d: %s%s", obct_rank(),
                 base ? base + 1 : file, line, kind, msg);
    } else {
        snprintf(text, sizeof(text), "[obct parent] %s:%d: %s%s", base ? base + 1 : file, line,
                 kind, msg);
    }
    fflush(stdout); /* keep the order of stdout and stderr lines in a combined log */
    fprintf(stderr, "%s\n", text);
    fflush(stderr);
    if (kind[0] != '\0') {
        obct_quiet_note_fail_line(text); /* for obct_finish's summary */
    }
}

void obct_log(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("", file, line, fmt, ap);
    va_end(ap);
}

void obct_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("FAIL: ", file, line, fmt, ap);
    va_end(ap);
    fflush(stdout);
    obct_quiet_end_fatal(); /* the scenario's captured output, before it is lost */
    exit(1);
}

void obct_soft_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("FAIL: ", file, line, fmt, ap);
    va_end(ap);
    if (++g_failures >= OBCT_MAX_SOFT_FAILURES) {
        obct_fail(file, line, "%d failures: giving up", g_failures);
    }
}

int obct_failures(void)
{
    return g_failures;
}

int obct_finish(const char *test_name)
{
    obct_quiet_end(); /* a job never freed: its scope ends here */
    fflush(stdout);
    if (g_failures != 0) {
        obct_quiet_print_fail_lines(); /* the end of a long log shows them too */
        fprintf(stderr, "[obct rank %d] %s: %d check(s) failed\n", obct_rank(), test_name,
                g_failures);
        fflush(stderr);
        return 1;
    }
    return 0;
}

void obct_expect_rc(const char *file, int line, const char *expr, obc_result_t got,
                    obc_result_t want, const obc_comm_t *comm, int fatal)
{
    const char *detail;
    if (got == want) {
        return;
    }
    detail = obc_comm_last_error(comm);
    if (fatal) {
        obct_fail(file, line, "%s returned %s (%d, \"%s\"), expected %s (%d); last error: \"%s\"",
                  expr, obct_rc_name(got), (int)got, obc_strerror(got), obct_rc_name(want),
                  (int)want, detail ? detail : "(null)");
    }
    obct_soft_fail(file, line, "%s returned %s (%d, \"%s\"), expected %s (%d); last error: \"%s\"",
                   expr, obct_rc_name(got), (int)got, obc_strerror(got), obct_rc_name(want),
                   (int)want, detail ? detail : "(null)");
}

int obct_msg_names_rank(const char *msg, int rank)
{
    const char *p = msg;
    while (msg != NULL && (p = strcasestr(p, "rank")) != NULL) {
        const char *q = p + 4;
        char *end;
        long v;
        while (*q == ' ' || *q == '=' || *q == ':' || *q == '#') {
            q++;
        }
        if (*q >= '0' && *q <= '9') {
            v = strtol(q, &end, 10);
            if (v == rank) {
                return 1;
            }
        }
        p += 4;
    }
    return 0;
}

obc_comm_t *obct_comm_from_env(void)
{
    obc_comm_t *comm = NULL;
    OBCT_OK(obc_comm_init_env(&comm), NULL);
    OBCT_ASSERT(comm != NULL);
    obct_set_rank(obc_comm_rank(comm));
    return comm;
}

int obct_free_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    OBCT_ASSERT(fd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    OBCT_ASSERT(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    OBCT_ASSERT(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    return ntohs(a.sin_port);
}
