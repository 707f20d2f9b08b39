/* SPDX-License-Identifier: MIT */
/*
 * status.c - the table of result codes (obc_strerror, obc_result_name) and the
 * error-detail buffers. One table, guarded by a static_assert on its length, so
 * a new code cannot be added without its name and text.
 */
#include "core/status.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"

/* The one table of result codes: RESULT stringizes the enum's own identifier, so
 * obc_result_name cannot drift from obc.h; Python (obc/_native.py) and the test
 * harness (obct_rc_name) read names and values from here instead of copying them. */
#define RESULT(code, text) [code] = {#code, text}
static const struct {
    const char *name; /* "OBC_ERR_TIMEOUT" */
    const char *text; /* "timed out" */
} results[] = {
    RESULT(OBC_SUCCESS, "success"),
    RESULT(OBC_ERR_INVALID_ARG, "invalid argument"),
    RESULT(OBC_ERR_NO_MEMORY, "out of memory"),
    RESULT(OBC_ERR_SYSTEM, "system call failed"),
    RESULT(OBC_ERR_TIMEOUT, "timed out"),
    RESULT(OBC_ERR_PEER_LOST, "peer lost"),
    RESULT(OBC_ERR_MISMATCH, "ranks disagree on the collective"),
    RESULT(OBC_ERR_ABORTED, "communicator aborted"),
    RESULT(OBC_ERR_AUTH, "bootstrap authentication failed"),
    RESULT(OBC_ERR_PROTOCOL, "protocol error"),
    RESULT(OBC_ERR_INTERNAL, "internal error"),
    RESULT(OBC_IN_PROGRESS, "in progress"),
};
#undef RESULT
static_assert(sizeof(results) / sizeof(results[0]) == OBC_IN_PROGRESS + 1,
              "every obc_result_t needs a name");

OBC_API const char *obc_strerror(obc_result_t r)
{
    if ((unsigned)r > OBC_IN_PROGRESS) {
        return "unknown result code";
    }
    return results[r].text;
}

OBC_API const char *obc_result_name(obc_result_t r)
{
    return (unsigned)r > OBC_IN_PROGRESS ? NULL : results[r].name;
}

static _Thread_local char thread_msg[OBC_ERR_MSG_BYTES];

void obc__err_init(struct obc__err *e)
{
    pthread_mutex_init(&e->lock, NULL);
    e->code = OBC_SUCCESS;
    e->msg[0] = '\0';
}

void obc__err_fini(struct obc__err *e)
{
    pthread_mutex_destroy(&e->lock);
}

obc_result_t obc__err_vset(struct obc__err *e, obc_result_t code, const char *fmt, va_list ap)
{
    char text[OBC_ERR_MSG_BYTES];
    vsnprintf(text, sizeof(text), fmt, ap);
    if (code == OBC_ERR_INVALID_ARG) {
        OBC_INFO(OBC_LOG_COLL, "%s: %s", obc_strerror(code), text);
    } else {
        OBC_WARN("%s: %s", obc_strerror(code), text);
    }
    if (e == NULL) {
        snprintf(thread_msg, sizeof(thread_msg), "%s", text);
        return code;
    }
    pthread_mutex_lock(&e->lock);
    e->code = code;
    snprintf(e->msg, sizeof(e->msg), "%s", text);
    pthread_mutex_unlock(&e->lock);
    return code;
}

obc_result_t obc__err_set(struct obc__err *e, obc_result_t code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    obc__err_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

void obc__err_copy(struct obc__err *e, char *out, size_t nbytes)
{
    pthread_mutex_lock(&e->lock);
    snprintf(out, nbytes, "%s", e->msg);
    pthread_mutex_unlock(&e->lock);
}

void obc__err_thread_set(const char *msg)
{
    snprintf(thread_msg, sizeof(thread_msg), "%s", msg);
}

const char *obc__err_thread_msg(void)
{
    return thread_msg;
}

int obc__err_is_fatal(obc_result_t code)
{
    switch (code) {
    case OBC_ERR_TIMEOUT:
    case OBC_ERR_PEER_LOST:
    case OBC_ERR_MISMATCH:
    case OBC_ERR_ABORTED:
    case OBC_ERR_PROTOCOL:
    case OBC_ERR_INTERNAL:
    case OBC_ERR_SYSTEM:
        return 1;
    default:
        return 0;
    }
}
