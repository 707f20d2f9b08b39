/* SPDX-License-Identifier: MIT */
/*
 * run_cmd.h - run a command (obcrun, usually) to completion with extra
 * environment variables, capturing stdout and stderr, under a deadline
 * after which it is SIGKILLed. For tests that check a tool's output.
 *
 * Part of the obct test library (tests/harness). Used by
 * integration/debug_log.c.
 */
#ifndef OBCT_RUN_CMD_H
#define OBCT_RUN_CMD_H

struct obct_cmd_result {
    int status; /* waitpid status */
    int timed_out;
    double seconds;
    char out[1 << 15];
    char err[1 << 15];
};

/* argv[0] is a path; env holds "NAME=VALUE" to set and "NAME" to unset, NULL-terminated. */
void obct_run_cmd(char *const argv[], const char *const env[], double timeout_s,
                  struct obct_cmd_result *res);
/* Exit code, or 128 + signal. */
int obct_cmd_exit_code(const struct obct_cmd_result *res);

#endif /* OBCT_RUN_CMD_H */
