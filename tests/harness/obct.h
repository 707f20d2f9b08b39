/* SPDX-License-Identifier: MIT */
/*
 * obct.h - assertions and reports for obc's test programs.
 *
 * Every message names the rank (OBC_RANK, or the one set with obct_set_rank),
 * file:line, the expression and both values. OBCT_* assertions are fatal:
 * they print and exit(1), so obcrun or the spawn parent sees the failure.
 * OBCT_CHECK_* are soft: they print, count, and obct_finish() turns the count
 * into the exit status. Nothing here hides a return.
 *
 * Inside a quiet scope (quiet.h: from obct_spawn to obct_job_free) stdout and
 * stderr go to a capture file, printed only if a check fails; a fatal
 * failure prints it before the exit, and obct_finish repeats the first FAIL
 * lines at the end. OBCT_VERBOSE=1 prints everything live instead.
 *
 * The base of the obct test library (the .c files of tests/harness, built as
 * the static library obct by tests/CMakeLists.txt and linked into the test
 * programs): the coll, fault, integration and large tests and every other
 * harness module include it. Tests and harness use obc.h only, never the
 * library's internals (tools/check.sh).
 */
#ifndef OBCT_H
#define OBCT_H

#include <stddef.h>
#include <stdint.h>

#include "obc.h"

/* Rank printed in every message; -1 (the default without OBC_RANK) is "parent". */
void obct_set_rank(int rank);
int obct_rank(void);

/* Monotonic seconds; CLOCK_MONOTONIC is one clock for every process of a host. */
double obct_now(void);
void obct_sleep(double seconds);

/* A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then
 * released), for a rendezvous the test starts itself. */
int obct_free_port(void);

/* Timeouts of helper processes and deadlines scale with OBC_TEST_TIMEOUT_MULTIPLIER. */
double obct_time_scale(void);

/* Symbolic name of a result code ("OBC_ERR_TIMEOUT"); "?" for an unknown one. */
const char *obct_rc_name(obc_result_t rc);

/* Print a prefixed message on stderr (and flush). */
void obct_log(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Print, replay the open quiet scope's capture (quiet.h), then exit(1). */
void obct_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
/* Print and count a soft failure. */
void obct_soft_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int obct_failures(void);
/* Exit status for main: 0 when no soft failure was counted; otherwise says so,
 * after the first FAIL lines again. */
int obct_finish(const char *test_name);

/* rc must equal want; otherwise print both codes and the comm's last error. */
void obct_expect_rc(const char *file, int line, const char *expr, obc_result_t got,
                    obc_result_t want, const obc_comm_t *comm, int fatal);

#define OBCT_LOG(...) obct_log(__FILE__, __LINE__, __VA_ARGS__)
#define OBCT_FAIL(...) obct_fail(__FILE__, __LINE__, __VA_ARGS__)

#define OBCT_ASSERT(cond) \
    do { \
        if (!(cond)) { \
            obct_fail(__FILE__, __LINE__, "assertion failed: %s", #cond); \
        } \
    } while (0)

#define OBCT_ASSERT_MSG(cond, ...) \
    do { \
        if (!(cond)) { \
            obct_log(__FILE__, __LINE__, "assertion failed: %s", #cond); \
            obct_fail(__FILE__, __LINE__, __VA_ARGS__); \
        } \
    } while (0)

#define OBCT_CMP_(a, op, b, fatal, type, fmt) \
    do { \
        type obct_a_ = (type)(a); \
        type obct_b_ = (type)(b); \
        if (!(obct_a_ op obct_b_)) { \
            if (fatal) { \
                obct_fail(__FILE__, __LINE__, "%s %s %s failed: " fmt " vs " fmt, #a, #op, #b, \
                          obct_a_, obct_b_); \
            } \
            obct_soft_fail(__FILE__, __LINE__, "%s %s %s failed: " fmt " vs " fmt, #a, #op, #b, \
                           obct_a_, obct_b_); \
        } \
    } while (0)

#define OBCT_EQ_INT(a, b) OBCT_CMP_(a, ==, b, 1, long long, "%lld")
#define OBCT_NE_INT(a, b) OBCT_CMP_(a, !=, b, 1, long long, "%lld")
#define OBCT_EQ_SIZE(a, b) OBCT_CMP_(a, ==, b, 1, unsigned long long, "%llu")
#define OBCT_LE_SIZE(a, b) OBCT_CMP_(a, <=, b, 1, unsigned long long, "%llu")
#define OBCT_LT_DBL(a, b) OBCT_CMP_(a, <, b, 1, double, "%.6f")
#define OBCT_LE_DBL(a, b) OBCT_CMP_(a, <=, b, 1, double, "%.6f")
#define OBCT_CHECK_EQ_INT(a, b) OBCT_CMP_(a, ==, b, 0, long long, "%lld")
#define OBCT_CHECK_LE_DBL(a, b) OBCT_CMP_(a, <=, b, 0, double, "%.6f")
#define OBCT_CHECK(cond) \
    do { \
        if (!(cond)) { \
            obct_soft_fail(__FILE__, __LINE__, "check failed: %s", #cond); \
        } \
    } while (0)

/* expr (an obc call) must return want; comm (may be NULL) supplies the message. */
#define OBCT_RC(expr, want, comm) \
    obct_expect_rc(__FILE__, __LINE__, #expr, (expr), (want), (comm), 1)
#define OBCT_OK(expr, comm) OBCT_RC(expr, OBC_SUCCESS, comm)
#define OBCT_CHECK_RC(expr, want, comm) \
    obct_expect_rc(__FILE__, __LINE__, #expr, (expr), (want), (comm), 0)

/* 1 if msg names rank r: "rank R" (also "rank=R", "rank: R", "rank #R") as a whole number. */
int obct_msg_names_rank(const char *msg, int rank);

/* obc_comm_init_env, fatal on failure; also sets the rank printed in messages. */
obc_comm_t *obct_comm_from_env(void);

#endif /* OBCT_H */
