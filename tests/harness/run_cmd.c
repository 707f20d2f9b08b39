/* SPDX-License-Identifier: MIT */
/*
 * run_cmd.c - run a command with captured output and a deadline (see
 * run_cmd.h). Output goes to temporary files, read back after exit, so a
 * chatty child never blocks on a full pipe.
 */
#include "run_cmd.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "obct.h"

static void slurp(FILE *f, char *buf, size_t cap)
{
    size_t n;
    rewind(f);
    n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

void obct_run_cmd(char *const argv[], const char *const env[], double timeout_s,
                  struct obct_cmd_result *res)
{
    FILE *out = tmpfile();
    FILE *err = tmpfile();
    double t0 = obct_now();
    pid_t pid;
    OBCT_ASSERT(out != NULL && err != NULL);
    memset(res, 0, sizeof(*res));
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    OBCT_ASSERT(pid >= 0);
    if (pid == 0) {
        dup2(fileno(out), 1);
        dup2(fileno(err), 2);
        for (int i = 0; env != NULL && env[i] != NULL; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq == NULL) {
                unsetenv(env[i]);
            } else {
                char name[256];
                snprintf(name, sizeof(name), "%.*s", (int)(eq - env[i]), env[i]);
                setenv(name, eq + 1, 1);
            }
        }
        execv(argv[0], argv);
        _exit(127);
    }
    for (;;) {
        pid_t r = waitpid(pid, &res->status, WNOHANG);
        if (r == pid) {
            break;
        }
        if (!res->timed_out && obct_now() - t0 > timeout_s) {
            OBCT_LOG("%s still running after %.0f s: SIGKILL", argv[0], timeout_s);
            kill(pid, SIGKILL);
            res->timed_out = 1;
        }
        obct_sleep(0.002);
    }
    res->seconds = obct_now() - t0;
    slurp(out, res->out, sizeof(res->out));
    slurp(err, res->err, sizeof(res->err));
}

int obct_cmd_exit_code(const struct obct_cmd_result *res)
{
    if (WIFEXITED(res->status)) {
        return WEXITSTATUS(res->status);
    }
    return 128 + WTERMSIG(res->status);
}
