/* SPDX-License-Identifier: MIT */
/*
 * debug_log.c - logging and algorithm forcing as seen from outside, running
 * obcrun -n 2 obcrun_helper hello (a barrier and a verified broadcast):
 * a clean run logs nothing at the default level; OBC_DEBUG=INFO logs on
 * stderr only, every library line prefixed "obc HOST:PID:RANK", from each
 * rank, naming the transport (shm) and a forced algorithm (OBC_ALGO=
 * broadcast=eager/arena/cma); an unknown algorithm name fails the init
 * with a message that names it.
 */
/* obct: timeout=120 san */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "obct.h"
#include "run_cmd.h"

static char g_helper[4096];
static char *g_obcrun;
static char g_dir_env[300];

static void run_hello(const char *const env[], struct obct_cmd_result *res)
{
    char *argv[] = {g_obcrun, "-n", "2", "--timeout", "60", g_helper, "hello", NULL};
    obct_run_cmd(argv, env, 90, res);
}

/* Lines of the library log ("obc ...") in text, and whether each has the prefix. */
static int count_log_lines(const char *what, const char *text, const char *host, int *ranks_seen)
{
    char line[2048];
    const char *p = text;
    int n = 0;
    while (*p) {
        size_t len = strcspn(p, "\n");
        snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) - 1 ? len : sizeof(line) - 1),
                 p);
        p += len + (p[len] == '\n');
        if (strncmp(line, "obc ", 4) != 0) {
            continue;
        }
        n++;
        if (host != NULL) {
            int pid = -1;
            int rank = -2;
            char h[256];
            if (sscanf(line, "obc %255[^:]:%d:%d ", h, &pid, &rank) != 3 || strcmp(h, host) != 0) {
                obct_soft_fail(__FILE__, __LINE__, "%s: log line without \"obc %s:PID:RANK\": %s",
                               what, host, line);
            } else if (rank >= 0 && rank < 2) {
                ranks_seen[rank] = 1;
            }
        }
    }
    return n;
}

static void quiet_by_default(void)
{
    static struct obct_cmd_result res;
    const char *env[] = {"OBC_DEBUG", "OBC_ALGO", g_dir_env, NULL};
    int seen[2] = {0, 0};
    run_hello(env, &res);
    OBCT_CHECK_EQ_INT(obct_cmd_exit_code(&res), 0);
    if (count_log_lines("default level", res.err, NULL, seen) != 0) {
        obct_soft_fail(__FILE__, __LINE__, "a clean run logged at the default level: %s", res.err);
    }
    printf("debug_log: default level: %zu bytes on stderr\n", strlen(res.err));
}

static void info_names_choice(const char *algo)
{
    static struct obct_cmd_result res;
    char algo_env[64];
    char host[256];
    int seen[2] = {0, 0};
    const char *env[] = {"OBC_DEBUG=INFO", algo_env, g_dir_env, NULL};
    int n;
    snprintf(algo_env, sizeof(algo_env), "OBC_ALGO=broadcast=%s", algo);
    OBCT_ASSERT(gethostname(host, sizeof(host)) == 0);
    run_hello(env, &res);
    OBCT_CHECK_EQ_INT(obct_cmd_exit_code(&res), 0);
    n = count_log_lines(algo_env, res.err, host, seen);
    printf("debug_log: OBC_DEBUG=INFO %s: %d log lines\n", algo_env, n);
    OBCT_CHECK(n > 0);
    OBCT_CHECK(seen[0] && seen[1]);
    OBCT_CHECK(strstr(res.err, "shm") != NULL);
    if (strstr(res.err, algo) == NULL) {
        obct_soft_fail(__FILE__, __LINE__, "%s: INFO log never names \"%s\": %s", algo_env, algo,
                       res.err);
    }
    if (count_log_lines("stdout", res.out, NULL, seen) != 0) {
        obct_soft_fail(__FILE__, __LINE__, "log lines on stdout: %s", res.out);
    }
}

static void unknown_algorithm(void)
{
    static struct obct_cmd_result res;
    const char *env[] = {"OBC_ALGO=broadcast=nosuchalgo", g_dir_env, NULL};
    run_hello(env, &res);
    printf("debug_log: OBC_ALGO=broadcast=nosuchalgo: exit %d in %.2f s\n",
           obct_cmd_exit_code(&res), res.seconds);
    OBCT_CHECK(obct_cmd_exit_code(&res) != 0);
    OBCT_CHECK(res.seconds < 20);
    if (strstr(res.err, "nosuchalgo") == NULL) {
        obct_soft_fail(__FILE__, __LINE__, "the init error does not name the bad algorithm: %s",
                       res.err);
    }
}

int main(void)
{
    const char *bindir = getenv("OBCT_BINDIR");
    char tmpl[] = "/tmp/obct-log-XXXXXX";
    g_obcrun = getenv("OBCT_OBCRUN");
    OBCT_ASSERT_MSG(g_obcrun != NULL && bindir != NULL, "set OBCT_OBCRUN and OBCT_BINDIR");
    snprintf(g_helper, sizeof(g_helper), "%s/obcrun_helper", bindir);
    OBCT_ASSERT(mkdtemp(tmpl) != NULL);
    snprintf(g_dir_env, sizeof(g_dir_env), "OBCT_DIR=%s", tmpl);
    quiet_by_default();
    info_names_choice("eager");
    info_names_choice("arena");
    info_names_choice("cma");
    unknown_algorithm();
    {
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
        if (system(cmd) != 0) {
            OBCT_LOG("could not remove %s", tmpl);
        }
    }
    return obct_finish("debug_log");
}
