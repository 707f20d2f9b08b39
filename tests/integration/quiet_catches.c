/* SPDX-License-Identifier: MIT */
/*
 * quiet_catches.c - the quiet scopes of tests/harness (quiet.c) hide what a
 * passing job printed and show what a failing one did. The test runs itself
 * again ("inner" mode) with its output in a pipe, and reads that output:
 *  - a passing job's ranks' lines must not appear;
 *  - a job with a failed check must appear whole (every rank's lines),
 *    framed, followed by its FAIL line, and the FAIL line again at the end;
 *  - a job whose rank printed a sanitizer report must appear, although no
 *    check failed (TSan fails a test only at its exit);
 *  - a fatal assertion inside a job replays the job before the exit;
 *  - with OBCT_VERBOSE=1 everything appears live, nothing is framed.
 */
/* obct: timeout=60 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "obct.h"
#include "spawn_ranks.h"

#define NRANKS 2

static int rank_main(obc_comm_t *comm, int rank, int nranks, struct obct_report *self, void *arg)
{
    const char *what = arg;
    (void)comm, (void)nranks, (void)self;
    fprintf(stderr, "rank %d of the %s job says hello\n", rank, what);
    if (rank == 1 && strcmp(what, "sanitizer") == 0) {
        fprintf(stderr, "==1==WARNING: ThreadSanitizer: a planted report\n");
    }
    return rank == 1 && strcmp(what, "failing") == 0 ? 3 : 0;
}

/* One job of NRANKS ranks; its ranks' exit codes are checked (softly). */
static void job(const char *what, int fatal)
{
    struct obct_job j;
    obct_scenario("quiet: the %s job", what);
    obct_spawn(&j, NRANKS, rank_main, (void *)what, OBCT_SPAWN_NO_INIT);
    OBCT_ASSERT_MSG(obct_join(&j, 30) == 0, "the %s job did not finish", what);
    for (int r = 0; r < NRANKS; r++) {
        if (fatal) {
            OBCT_ASSERT_MSG(obct_exit_code(&j, r) == 0, "rank %d of the %s job exited %d", r, what,
                            obct_exit_code(&j, r));
        }
        OBCT_CHECK_EQ_INT(obct_exit_code(&j, r), 0);
    }
    obct_job_free(&j);
}

static int inner(const char *mode)
{
    if (strcmp(mode, "fatal") == 0) {
        job("failing", 1); /* exits inside the job's scope */
        return 0;
    }
    job("passing", 0);
    job("failing", 0);
    job("sanitizer", 0);
    return obct_finish("quiet_catches inner");
}

/* Run this program in `mode` with OBCT_VERBOSE=verbose; its stdout and
 * stderr together into out (NUL-terminated); returns its exit status. */
static int run_inner(const char *mode, const char *verbose, char *out, size_t cap)
{
    int fds[2];
    size_t len = 0;
    ssize_t n;
    int status = 0;
    OBCT_ASSERT(pipe(fds) == 0);
    pid_t pid = fork();
    OBCT_ASSERT(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("OBCT_VERBOSE", verbose, 1);
        execl("/proc/self/exe", "quiet_catches", mode, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    while (len + 1 < cap && (n = read(fds[0], out + len, cap - 1 - len)) > 0) {
        len += (size_t)n;
    }
    out[len] = '\0';
    close(fds[0]);
    OBCT_ASSERT(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void expect(const char *out, const char *text, int present, const char *why)
{
    if ((strstr(out, text) != NULL) != present) {
        obct_soft_fail(__FILE__, __LINE__, "%s: \"%s\" %s in the output", why, text,
                       present ? "missing" : "found");
    }
}

/* The FAIL line of the failing job comes after the end of its replay. */
static void expect_fail_after_replay(const char *out)
{
    const char *end = strstr(out, "---- end of the captured output of quiet: the failing job");
    if (end == NULL || strstr(end, ": FAIL: ") == NULL) {
        obct_soft_fail(__FILE__, __LINE__, "no FAIL line follows the failing job's replay");
    }
}

/* Run the inner program in mode with OBCT_VERBOSE=verbose into out; it must
 * exit 1 (its failing job's check). */
static void run_failing_inner(const char *mode, const char *verbose, char *out, size_t cap)
{
    OBCT_CHECK_EQ_INT(run_inner(mode, verbose, out, cap), 1);
}

/* The whole inner output, when one of the checks on it since `before` failed. */
static void show_if_failed(const char *what, int before, const char *out)
{
    if (obct_failures() != before) {
        fprintf(stderr, "---- the %s run's output ----\n%s---- end ----\n", what, out);
    }
}

int main(int argc, char **argv)
{
    static char out[1 << 16];
    int before;
    if (argc > 1) {
        return inner(argv[1]);
    }

    before = obct_failures();
    run_failing_inner("all", "0", out, sizeof(out));
    expect(out, "of the passing job says hello", 0, "a passing job is quiet");
    expect(out, "rank 0 of the failing job says hello", 1, "a failing job is replayed whole");
    expect(out, "rank 1 of the failing job says hello", 1, "a failing job is replayed whole");
    expect(out, "---- captured output of quiet: the failing job", 1, "the replay is framed");
    expect(out, "the failing job (job", 1, "the replay names the job");
    expect(out, "(1 check(s) failed) ----", 1, "the replay says why");
    expect_fail_after_replay(out);
    expect(out, "a planted report", 1, "a sanitizer report is replayed");
    expect(out, "rank 0 of the sanitizer job says hello", 1, "its job is replayed whole");
    expect(out, "the first FAIL lines, again", 1, "the FAIL lines are repeated at the end");
    show_if_failed("quiet", before, out);

    before = obct_failures();
    run_failing_inner("fatal", "0", out, sizeof(out));
    expect(out, "rank 1 of the failing job says hello", 1, "a fatal failure replays the job");
    expect(out, "a fatal failure", 1, "the replay says why");
    show_if_failed("fatal", before, out);

    before = obct_failures();
    run_failing_inner("all", "1", out, sizeof(out));
    expect(out, "rank 0 of the passing job says hello", 1, "OBCT_VERBOSE=1 prints live");
    expect(out, "---- captured output of", 0, "OBCT_VERBOSE=1 replays nothing");
    show_if_failed("verbose", before, out);
    return obct_finish("quiet_catches");
}
