/* SPDX-License-Identifier: MIT */
/*
 * status.h - error detail buffers. A failure records its code and a message
 * (which call, which rank, errno text) in an obc__err, the per-communicator
 * buffer behind obc_comm_last_error(). Before a communicator exists (init,
 * argument checks on a NULL comm) the thread-local buffer is used instead.
 */
#ifndef OBC_CORE_STATUS_H
#define OBC_CORE_STATUS_H

#include <stdarg.h>
#include <pthread.h>

#include "obc.h"

#define OBC_ERR_MSG_BYTES 1024

struct obc__err {
    pthread_mutex_t lock; /* guards msg: abort() may race with the owner thread; leaf lock */
    obc_result_t code;
    char msg[OBC_ERR_MSG_BYTES];
};

void obc__err_init(struct obc__err *e);
void obc__err_fini(struct obc__err *e);

/* Record code + formatted message in e (or in the thread-local buffer when e
 * is NULL), log it at WARN (INFO for invalid arguments) and return code. */
obc_result_t obc__err_set(struct obc__err *e, obc_result_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
obc_result_t obc__err_vset(struct obc__err *e, obc_result_t code, const char *fmt, va_list ap);

/* Copy e's message into out (thread-safe snapshot). */
void obc__err_copy(struct obc__err *e, char *out, size_t nbytes);

/* Put msg into the thread-local buffer without logging it again. */
void obc__err_thread_set(const char *msg);
/* The thread-local buffer, for obc_comm_last_error(NULL). */
const char *obc__err_thread_msg(void);

/* True for the codes that break a communicator (timeout, peer lost, ...). */
int obc__err_is_fatal(obc_result_t code);

#endif
