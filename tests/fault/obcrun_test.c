/* SPDX-License-Identifier: MIT */
/*
 * obcrun_test.c - obcrun's contract, driven from outside with
 * obcrun_helper as the rank program: exit 0 only when every rank exits 0;
 * --tag-output; a rank that SIGKILLs itself or exits 3 (after init, or
 * before it) stops the job within about 2 s, with obcrun's stderr naming the
 * rank and the signal or status, and obcrun exiting with that status; SIGINT
 * and SIGTERM to obcrun and --timeout stop every rank. After each case no
 * rank process survives and no new /dev/shm/obc* file remains. This process
 * is a child subreaper, so ranks orphaned by obcrun come back to it.
 */
/* obct: timeout=120 serial san */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "obct.h"

#define MAX_SHM 256
#define STOP_LIMIT_S 3.0 /* obcrun promises 2 s */

struct shm_list {
    int n;
    char name[MAX_SHM][256];
};

struct outcome {
    int status; /* waitpid status of obcrun */
    double t_start;
    double t_end;
    char out[1 << 14];
    char err[1 << 14];
};

static char g_dir[256];
static const char *g_obcrun;
static char g_helper[4096];

static void shm_list(struct shm_list *l)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    l->n = 0;
    OBCT_ASSERT(d != NULL);
    while ((e = readdir(d)) != NULL && l->n < MAX_SHM) {
        if (strncmp(e->d_name, "obc", 3) == 0) {
            snprintf(l->name[l->n++], sizeof(l->name[0]), "%s", e->d_name);
        }
    }
    closedir(d);
}

static pid_t g_last_obcrun; /* the obcrun of the case being checked */

/* New files count only if they are this case's job's: obcrun names the
 * library's segments obc-<its pid in hex>-..., and another program on the
 * machine may make and remove segments of its own meanwhile. */
static void check_no_new_shm(const char *what, const struct shm_list *before)
{
    struct shm_list after;
    char mine[32];
    snprintf(mine, sizeof(mine), "obc-%x-", (unsigned)g_last_obcrun);
    shm_list(&after);
    for (int i = 0; i < after.n; i++) {
        int old = strncmp(after.name[i], mine, strlen(mine)) != 0;
        for (int j = 0; j < before->n; j++) {
            old |= strcmp(after.name[i], before->name[j]) == 0;
        }
        if (!old) {
            obct_soft_fail(__FILE__, __LINE__, "%s: /dev/shm/%s left behind", what, after.name[i]);
        }
    }
}

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = 0;
    if (f != NULL) {
        n = fread(buf, 1, cap - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
}

static void clear_dir(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    char path[4096];
    OBCT_ASSERT(d != NULL);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", g_dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

static pid_t rank_pid(int rank)
{
    char path[4096];
    char buf[64];
    snprintf(path, sizeof(path), "%s/rank%d.pid", g_dir, rank);
    slurp(path, buf, sizeof(buf));
    return (pid_t)atol(buf);
}

static pid_t start(char **args)
{
    char out[4096];
    char err[4096];
    pid_t pid;
    snprintf(out, sizeof(out), "%s/obcrun.out", g_dir);
    snprintf(err, sizeof(err), "%s/obcrun.err", g_dir);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    OBCT_ASSERT(pid >= 0);
    if (pid == 0) {
        OBCT_ASSERT(freopen(out, "w", stdout) != NULL);
        OBCT_ASSERT(freopen(err, "w", stderr) != NULL);
        setenv("OBCT_DIR", g_dir, 1);
        execv(g_obcrun, args);
        _exit(127);
    }
    g_last_obcrun = pid;
    return pid;
}

static int wait_ready(int nranks, double timeout_s)
{
    double deadline = obct_now() + timeout_s;
    for (int r = 0; r < nranks; r++) {
        while (rank_pid(r) <= 0) {
            if (obct_now() > deadline) {
                return -1;
            }
            obct_sleep(0.005);
        }
    }
    return 0;
}

/* Wait for obcrun; SIGKILL it (and its process group) after timeout_s. */
static void finish(pid_t pid, struct outcome *o, double timeout_s)
{
    double deadline = obct_now() + timeout_s;
    char path[4096];
    for (;;) {
        pid_t r = waitpid(pid, &o->status, WNOHANG);
        if (r == pid) {
            break;
        }
        if (obct_now() > deadline) {
            obct_soft_fail(__FILE__, __LINE__, "obcrun still running after %.1f s: SIGKILL",
                           timeout_s);
            kill(pid, SIGKILL);
        }
        obct_sleep(0.002);
    }
    o->t_end = obct_now();
    snprintf(path, sizeof(path), "%s/obcrun.out", g_dir);
    slurp(path, o->out, sizeof(o->out));
    snprintf(path, sizeof(path), "%s/obcrun.err", g_dir);
    slurp(path, o->err, sizeof(o->err));
}

/* A pid is gone once it is reaped (we are the subreaper) or never existed. */
static int pid_alive(pid_t pid)
{
    while (waitpid(-1, NULL, WNOHANG) > 0) {
        /* reap orphaned ranks that obcrun left to us */
    }
    return pid > 0 && kill(pid, 0) == 0;
}

static void check_ranks_gone(const char *what, int nranks)
{
    double deadline = obct_now() + 1.0;
    for (int r = 0; r < nranks; r++) {
        pid_t pid = rank_pid(r);
        while (pid_alive(pid) && obct_now() < deadline) {
            obct_sleep(0.01);
        }
        if (pid_alive(pid)) {
            obct_soft_fail(__FILE__, __LINE__,
                           "%s: rank %d (pid %d) still alive after obcrun "
                           "exited; killing it",
                           what, r, (int)pid);
            kill(pid, SIGKILL);
        }
    }
}

/* Some line of text mentions "rank R" and contains one of the words. */
static int line_names(const char *text, int rank, const char *const *words, int nwords)
{
    char line[1024];
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) - 1 ? n : sizeof(line) - 1), p);
        if (obct_msg_names_rank(line, rank)) {
            for (int i = 0; i < nwords; i++) {
                if (strcasestr(line, words[i]) != NULL) {
                    return 1;
                }
            }
        }
        p += n + (p[n] == '\n');
    }
    return 0;
}

static double read_stamp(void)
{
    char path[4096];
    char buf[64];
    snprintf(path, sizeof(path), "%s/stamp", g_dir);
    slurp(path, buf, sizeof(buf));
    return atof(buf);
}

static int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Run obcrun -n N [--tag-output] helper ARGS...; deliver sig once ready (if sig). */
static void run(struct outcome *o, int nranks, int tag, const char *timeout, const char *mode,
                const char *a1, const char *a2, int sig)
{
    char n[16];
    char *args[16];
    int k = 0;
    pid_t pid;
    snprintf(n, sizeof(n), "%d", nranks);
    clear_dir();
    args[k++] = (char *)g_obcrun;
    args[k++] = "-n";
    args[k++] = n;
    args[k++] = "--timeout";
    args[k++] = (char *)(timeout ? timeout : "60");
    if (tag) {
        args[k++] = "--tag-output";
    }
    args[k++] = g_helper;
    args[k++] = (char *)mode;
    if (a1 != NULL) {
        args[k++] = (char *)a1;
    }
    if (a2 != NULL) {
        args[k++] = (char *)a2;
    }
    args[k] = NULL;
    o->t_start = obct_now();
    pid = start(args);
    if (sig != 0) {
        if (wait_ready(nranks, 30) != 0) {
            obct_soft_fail(__FILE__, __LINE__, "%s: ranks never became ready", mode);
        }
        o->t_start = obct_now();
        OBCT_ASSERT(kill(pid, sig) == 0);
    }
    finish(pid, o, 30);
}

static void case_hello(int tag)
{
    static struct outcome o;
    struct shm_list before;
    const char *what = tag ? "hello --tag-output" : "hello";
    shm_list(&before);
    run(&o, 3, tag, NULL, "hello", NULL, NULL, 0);
    printf("obcrun_test: %s: exit %d in %.3f s\n", what, exit_code(o.status), o.t_end - o.t_start);
    OBCT_CHECK_EQ_INT(exit_code(o.status), 0);
    for (int r = 0; r < 3; r++) {
        char want[64];
        const char *line;
        snprintf(want, sizeof(want), "hello from rank %d of 3\n", r);
        line = strstr(o.out, want);
        if (line == NULL) {
            obct_soft_fail(__FILE__, __LINE__, "%s: no \"%.*s\" in obcrun's stdout: \"%s\"", what,
                           (int)strlen(want) - 1, want, o.out);
            continue;
        }
        if (tag) {
            /* the tag before the line names the rank */
            const char *bol = line;
            char prefix[128];
            while (bol > o.out && bol[-1] != '\n') {
                bol--;
            }
            snprintf(prefix, sizeof(prefix), "%.*s", (int)(line - bol), bol);
            if (prefix[0] == '\0' || !obct_msg_names_rank(prefix, r)) {
                obct_soft_fail(__FILE__, __LINE__, "%s: rank %d's line has tag \"%s\"", what, r,
                               prefix);
            }
        } else if (line != o.out && line[-1] != '\n') {
            obct_soft_fail(__FILE__, __LINE__, "%s: untagged output has a prefix: \"%s\"", what,
                           o.out);
        }
    }
    check_no_new_shm(what, &before);
}

/* A rank dies or exits non-zero: everyone is stopped promptly and obcrun says so. */
static void case_rank_fails(const char *what, int nranks, const char *mode, int who, int code)
{
    static struct outcome o;
    static const char *const sig_words[] = {"SIGKILL", "signal 9", "killed"};
    char who_s[16];
    char code_s[16];
    char code_words[3][32];
    const char *cw[3] = {code_words[0], code_words[1], code_words[2]};
    struct shm_list before;
    double t_event;
    snprintf(who_s, sizeof(who_s), "%d", who);
    snprintf(code_s, sizeof(code_s), "%d", code);
    snprintf(code_words[0], sizeof(code_words[0]), "status %d", code);
    snprintf(code_words[1], sizeof(code_words[1]), "code %d", code);
    snprintf(code_words[2], sizeof(code_words[2]), "exited %d", code);
    shm_list(&before);
    run(&o, nranks, 0, NULL, mode, who_s, code ? code_s : NULL, 0);
    t_event = read_stamp();
    printf("obcrun_test: %s: obcrun exit %d, %.3f s after the rank's %s (%.3f s in all)\n", what,
           exit_code(o.status), o.t_end - t_event, code ? "exit" : "death", o.t_end - o.t_start);
    OBCT_CHECK(t_event > 0);
    OBCT_CHECK_LE_DBL(o.t_end - t_event, STOP_LIMIT_S);
    if (code != 0) {
        OBCT_CHECK_EQ_INT(exit_code(o.status), code);
    } else {
        OBCT_CHECK(exit_code(o.status) != 0);
    }
    if (!(code ? line_names(o.err, who, cw, 3) : line_names(o.err, who, sig_words, 3))) {
        obct_soft_fail(__FILE__, __LINE__,
                       "%s: obcrun's stderr does not name rank %d and %s: "
                       "\"%s\"",
                       what, who, code ? code_words[0] : "SIGKILL", o.err);
    }
    check_ranks_gone(what, nranks);
    check_no_new_shm(what, &before);
}

/* Stopping obcrun itself (a signal, or its own --timeout) stops every rank. */
static void case_stop(const char *what, int nranks, int sig, const char *timeout)
{
    static struct outcome o;
    struct shm_list before;
    shm_list(&before);
    run(&o, nranks, 0, timeout, "hang", NULL, NULL, sig);
    printf("obcrun_test: %s: obcrun %s %d after %.3f s\n", what,
           WIFEXITED(o.status) ? "exited" : "was killed by signal",
           WIFEXITED(o.status) ? WEXITSTATUS(o.status) : WTERMSIG(o.status), o.t_end - o.t_start);
    OBCT_CHECK(!(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0));
    if (timeout != NULL) {
        OBCT_CHECK(o.t_end - o.t_start >= atof(timeout) - 0.1);
        OBCT_CHECK_LE_DBL(o.t_end - o.t_start, atof(timeout) + STOP_LIMIT_S + 2.0);
    } else {
        OBCT_CHECK_LE_DBL(o.t_end - o.t_start, STOP_LIMIT_S);
    }
    check_ranks_gone(what, nranks);
    check_no_new_shm(what, &before);
}

int main(void)
{
    const char *bindir = getenv("OBCT_BINDIR");
    char tmpl[] = "/tmp/obct-obcrun-XXXXXX";
    g_obcrun = getenv("OBCT_OBCRUN");
    OBCT_ASSERT_MSG(g_obcrun != NULL && bindir != NULL, "set OBCT_OBCRUN and OBCT_BINDIR");
    snprintf(g_helper, sizeof(g_helper), "%s/obcrun_helper", bindir);
    OBCT_ASSERT(mkdtemp(tmpl) != NULL);
    snprintf(g_dir, sizeof(g_dir), "%s", tmpl);
    OBCT_ASSERT(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    unsetenv("OBC_TIMEOUT");

    case_hello(0);
    case_hello(1);
    case_rank_fails("rank 2 SIGKILLs itself", 4, "selfkill", 2, 0);
    case_rank_fails("rank 1 exits 3", 3, "exit", 1, 3);
    case_rank_fails("rank 1 exits 5 before init", 3, "early", 1, 5);
    case_stop("SIGINT to obcrun", 4, SIGINT, NULL);
    case_stop("SIGTERM to obcrun", 4, SIGTERM, NULL);
    case_stop("--timeout 2", 2, 0, "2");

    clear_dir();
    rmdir(g_dir);
    return obct_finish("obcrun_test");
}
