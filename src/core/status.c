/* SPDX-License-Identifier: MIT */
/*
 * status.c - the table of result names (obc_strerror) and the error-detail
 * buffers. One table, guarded by a static_assert on its length, so a new
 * code cannot be added without its text.
 */
#include "core/status.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"

static const char *const result_names[] = {
    [OBC_SUCCESS] = "success",
    [OBC_ERR_INVALID_ARG] = "invalid argument",
    [OBC_ERR_NO_MEMORY] = "out of memory",
    [OBC_ERR_SYSTEM] = "system call failed",
    [OBC_ERR_TIMEOUT] = "timed out",
    [OBC_ERR_PEER_LOST] = "peer lost",
    [OBC_ERR_MISMATCH] = "ranks disagree on the collective",
    [OBC_ERR_ABORTED] = "communicator aborted",
    [OBC_ERR_AUTH] = "bootstrap authentication failed",
    [OBC_ERR_PROTOCOL] = "protocol error",
    [OBC_ERR_INTERNAL] = "internal error",
    [OBC_IN_PROGRESS] = "in progress",
};
static_assert(sizeof(result_names) / sizeof(result_names[0]) == OBC_IN_PROGRESS + 1,
              "every obc_result_t needs a name");

OBC_API const char *obc_strerror(obc_result_t r)
{
    if ((unsigned)r > OBC_IN_PROGRESS) {
        return "unknown result code";
    }
    return result_names[r];
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
