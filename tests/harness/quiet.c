/* SPDX-License-Identifier: MIT */
/*
 * quiet.c - quiet scopes and the FAIL-line summary (quiet.h).
 *
 * One capture file per process, made at the first scope and emptied at each
 * one, so a test killed from outside leaves its last scenario's output there
 * (its path is printed once). It is opened O_APPEND: the parent and every
 * child share it, and no write may land on another's. The FAIL lines are
 * found in the capture by the obct prefix, so a child's count as well as the
 * parent's.
 */
#include "quiet.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "obct.h"

#define OBCT_QUIET_FAIL_LINES 10 /* repeated after a replay and by obct_finish */
#define OBCT_QUIET_LINE_MAX 512

static struct {
    int open; /* fds 1 and 2 point at the capture file */
    int fd; /* the capture file; -1 until the first scope */
    int real_out; /* the test's own fds 1 and 2, kept while a scope is open */
    int real_err;
    int failures_at_begin;
    int unavailable; /* no capture file could be made: stay live */
    char path[512];
    char label[320];
} g_quiet = {.fd = -1, .real_out = -1, .real_err = -1};

/* The first FAIL lines of this process (its own and those of replayed scopes). */
static char g_fail_lines[OBCT_QUIET_FAIL_LINES][OBCT_QUIET_LINE_MAX];
static int g_nfail_lines;

/* The FAIL lines of one capture: how many, the first few kept. */
struct fail_lines {
    int n;
    char line[OBCT_QUIET_FAIL_LINES][OBCT_QUIET_LINE_MAX];
};

static int verbose(void)
{
    const char *v = getenv("OBCT_VERBOSE");
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* Async-signal-safe: write and strlen only. */
static void write_raw(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void write_str_raw(int fd, const char *s)
{
    write_raw(fd, s, strlen(s));
}

/* Async-signal-safe: pread leaves the shared offset (the children's) alone. */
static void copy_capture(int to_fd)
{
    char buf[4096];
    off_t at = 0;
    for (;;) {
        ssize_t n = pread(g_quiet.fd, buf, sizeof(buf), at);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        write_raw(to_fd, buf, (size_t)n);
        at += n;
    }
}

/* Async-signal-safe: dup2 and close only. */
static void restore_real_fds(void)
{
    if (g_quiet.real_out >= 0) {
        dup2(g_quiet.real_out, 1);
        close(g_quiet.real_out);
    }
    if (g_quiet.real_err >= 0) {
        dup2(g_quiet.real_err, 2);
        close(g_quiet.real_err);
    }
    g_quiet.real_out = -1;
    g_quiet.real_err = -1;
    g_quiet.open = 0;
}

static void note_line(const char *line)
{
    if (g_nfail_lines < OBCT_QUIET_FAIL_LINES) {
        snprintf(g_fail_lines[g_nfail_lines], OBCT_QUIET_LINE_MAX, "%s", line);
    }
    g_nfail_lines++;
}

/* "[obct rank 2] file.c:12: FAIL: ..." or "[obct parent] ...", whoever printed it,
 * or a sanitizer's report: under ASan, UBSan or TSan a report inside a scope may
 * fail the test only at exit (TSan's exit code 66), and must not be dropped. */
static int is_fail_line(const char *line)
{
    static const char *const sanitizer_marks[] = {"ERROR: AddressSanitizer",
                                                  "WARNING: ThreadSanitizer",
                                                  "ERROR: LeakSanitizer", ": runtime error: "};
    if (strncmp(line, "[obct ", 6) == 0 && strstr(line, ": FAIL: ") != NULL) {
        return 1;
    }
    for (size_t i = 0; i < sizeof(sanitizer_marks) / sizeof(sanitizer_marks[0]); i++) {
        if (strstr(line, sanitizer_marks[i]) != NULL) {
            return 1;
        }
    }
    return 0;
}

static void collect_fail_lines(struct fail_lines *fl)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    FILE *f = fopen(g_quiet.path, "r");
    fl->n = 0;
    if (f == NULL) {
        return;
    }
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') {
            line[len - 1] = '\0';
        }
        if (is_fail_line(line)) {
            if (fl->n < OBCT_QUIET_FAIL_LINES) {
                snprintf(fl->line[fl->n], OBCT_QUIET_LINE_MAX, "%s", line);
            }
            fl->n++;
        }
    }
    free(line);
    fclose(f);
}

/* The capture on the real stderr, framed, then its FAIL lines fl again (also
 * noted for obct_finish), so that they follow whatever long output came before. */
static void replay(const char *why, const struct fail_lines *fl)
{
    int kept = fl->n < OBCT_QUIET_FAIL_LINES ? fl->n : OBCT_QUIET_FAIL_LINES;
    fprintf(stderr, "---- captured output of %s (%s) ----\n", g_quiet.label, why);
    fflush(stderr);
    copy_capture(2);
    if (fl->n == 0) {
        fprintf(stderr, "---- end of the captured output of %s ----\n", g_quiet.label);
    } else {
        fprintf(stderr, "---- end of the captured output of %s; its FAIL lines: ----\n",
                g_quiet.label);
    }
    for (int i = 0; i < kept; i++) {
        fprintf(stderr, "%s\n", fl->line[i]);
        note_line(fl->line[i]);
    }
    if (fl->n > kept) {
        fprintf(stderr, "(and %d more FAIL lines above)\n", fl->n - kept);
        g_nfail_lines += fl->n - kept;
    }
    fflush(stderr);
}

/* A child writes into the capture through the fds 1 and 2 it inherited; the
 * scope, the file and the real fds stay the parent's (its exit must not
 * remove the file, its obct_fail must not replay). */
static void forget_in_child(void)
{
    if (g_quiet.real_out >= 0) {
        close(g_quiet.real_out);
    }
    if (g_quiet.real_err >= 0) {
        close(g_quiet.real_err);
    }
    if (g_quiet.fd >= 0) {
        close(g_quiet.fd);
    }
    g_quiet.open = 0;
    g_quiet.fd = -1;
    g_quiet.real_out = -1;
    g_quiet.real_err = -1;
    g_quiet.path[0] = '\0';
}

/* Stop capturing: the real fds 1 and 2 back, and the capture's FAIL lines. */
static void close_scope(struct fail_lines *fl)
{
    fflush(stdout);
    fflush(stderr);
    restore_real_fds();
    collect_fail_lines(fl);
}

/* Stop capturing and replay, whatever the checks said. */
static void end_with_replay(const char *why)
{
    struct fail_lines fl;
    close_scope(&fl);
    replay(why, &fl);
}

static void remove_capture_at_exit(void)
{
    if (g_quiet.open) { /* exit() while a job ran, not through obct_fail */
        end_with_replay("the program exited inside it");
    }
    if (g_quiet.path[0] != '\0') {
        unlink(g_quiet.path);
    }
}

/* $TMPDIR/obct-<program>-<pid>-XXXXXX, made once; 0 if it cannot be. */
static int open_capture_file(void)
{
    static int registered;
    const char *dir = getenv("TMPDIR");
    int fd;
    if (g_quiet.fd >= 0 || g_quiet.unavailable) {
        return g_quiet.fd >= 0;
    }
    if (dir == NULL || dir[0] == '\0') {
        dir = "/tmp";
    }
    snprintf(g_quiet.path, sizeof(g_quiet.path), "%s/obct-%s-%d-XXXXXX", dir,
             program_invocation_short_name, (int)getpid());
    fd = mkstemp(g_quiet.path);
    if (fd >= 0) {
        /* Above 2, so that restoring fds 1 and 2 never closes it. */
        g_quiet.fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
    }
    if (g_quiet.fd < 0 || fcntl(g_quiet.fd, F_SETFL, O_APPEND) != 0) {
        fprintf(stderr, "[obct] cannot make a capture file %s (%s): output stays live\n",
                g_quiet.path, strerror(errno));
        g_quiet.unavailable = 1;
        return 0;
    }
    if (!registered) {
        atexit(remove_capture_at_exit);
        pthread_atfork(NULL, NULL, forget_in_child);
        registered = 1;
    }
    fprintf(stderr,
            "[obct] each job's output goes to %s and is printed only if the job fails "
            "(OBCT_VERBOSE=1 prints it live)\n",
            g_quiet.path);
    fflush(stderr);
    return 1;
}

int obct_quiet_begin(const char *label)
{
    if (g_quiet.open || verbose() || !open_capture_file()) {
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    if (ftruncate(g_quiet.fd, 0) != 0) {
        return 0;
    }
    g_quiet.real_out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    g_quiet.real_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
    if (g_quiet.real_out < 0 || g_quiet.real_err < 0 || dup2(g_quiet.fd, 1) < 0 ||
        dup2(g_quiet.fd, 2) < 0) {
        restore_real_fds();
        return 0;
    }
    snprintf(g_quiet.label, sizeof(g_quiet.label), "%s", label);
    g_quiet.failures_at_begin = obct_failures();
    g_quiet.open = 1;
    return 1;
}

int obct_quiet_end(void)
{
    int failed;
    struct fail_lines fl;
    if (!g_quiet.open) {
        return 0;
    }
    failed = obct_failures() - g_quiet.failures_at_begin;
    close_scope(&fl);
    if (failed > 0) {
        char why[64];
        snprintf(why, sizeof(why), "%d check(s) failed", failed);
        replay(why, &fl);
    } else if (fl.n > 0) {
        replay("a FAIL line or a sanitizer report was printed", &fl);
    }
    return failed > 0 || fl.n > 0;
}

void obct_quiet_end_fatal(void)
{
    if (g_quiet.open) {
        end_with_replay("a fatal failure: the test stops here");
    }
}

void obct_quiet_abandon_in_signal(void)
{
    if (!g_quiet.open) {
        return;
    }
    restore_real_fds();
    write_str_raw(2, "---- captured output of ");
    write_str_raw(2, g_quiet.label);
    write_str_raw(2, " (the test was stopped inside it) ----\n");
    copy_capture(2);
    write_str_raw(2, "---- end of the captured output ----\n");
    unlink(g_quiet.path);
}

void obct_quiet_note_fail_line(const char *line)
{
    if (!g_quiet.open) {
        note_line(line);
    }
}

void obct_quiet_print_fail_lines(void)
{
    int kept = g_nfail_lines < OBCT_QUIET_FAIL_LINES ? g_nfail_lines : OBCT_QUIET_FAIL_LINES;
    if (kept == 0) {
        return;
    }
    fprintf(stderr, "[obct] the first FAIL lines, again:\n");
    for (int i = 0; i < kept; i++) {
        fprintf(stderr, "  %s\n", g_fail_lines[i]);
    }
    if (g_nfail_lines > kept) {
        fprintf(stderr, "  (and %d more above)\n", g_nfail_lines - kept);
    }
    fflush(stderr);
}
