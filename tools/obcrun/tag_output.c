/* SPDX-License-Identifier: MIT */
/*
 * tag_output.c - --tag-output: each rank's stdout and stderr arrive on pipes
 * and leave on obcrun's stdout and stderr with "[rank R] " before every line.
 * Only whole lines are written, each with one writev, so lines of different
 * ranks never mix. The line buffer grows for long lines up to
 * OBCRUN_LINE_MAX_BYTES; a longer line is split into tagged lines of that
 * length. A last line without '\n' gets one at EOF.
 */
#include "obcrun.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* fd -1 makes a closed stream (no --tag-output). The line buffer is
 * allocated at the first read, so silent ranks cost nothing. */
void obcrun_stream_init(struct obcrun_stream *s, int fd, int out_fd, int rank)
{
    s->fd = fd;
    s->out_fd = out_fd;
    s->buf = NULL;
    s->cap = 0;
    s->nbytes = 0;
    snprintf(s->prefix, sizeof(s->prefix), "[rank %d] ", rank);
    if (fd >= 0) {
        /* The supervisor reads whatever poll reported, never more. */
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
}

static void write_all(int fd, struct iovec *iov, int niov)
{
    while (niov > 0) {
        ssize_t n = writev(fd, iov, niov);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            /* Our stdout may be a non-blocking fd shared with someone else. */
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            poll(&p, 1, -1);
            continue;
        }
        if (n < 0) {
            return; /* EPIPE and such: nobody reads our output any more */
        }
        while (niov > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++;
            niov--;
        }
        if (niov > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
}

/* Writes one tagged line; add_newline ends a line that had no '\n'. */
static void emit(const struct obcrun_stream *s, const char *line, size_t len, bool add_newline)
{
    struct iovec iov[3];
    int niov = 0;

    iov[niov++] = (struct iovec){(void *)s->prefix, strlen(s->prefix)};
    iov[niov++] = (struct iovec){(void *)line, len};
    if (add_newline) {
        iov[niov++] = (struct iovec){"\n", 1};
    }
    write_all(s->out_fd, iov, niov);
}

/* Writes every complete line held in buf and keeps the incomplete rest. */
static void emit_lines(struct obcrun_stream *s)
{
    size_t start = 0;
    char *nl;

    while ((nl = memchr(s->buf + start, '\n', s->nbytes - start)) != NULL) {
        size_t end = (size_t)(nl - s->buf) + 1;

        emit(s, s->buf + start, end - start, false);
        start = end;
    }
    memmove(s->buf, s->buf + start, s->nbytes - start);
    s->nbytes -= start;
}

/* Makes room for the next read: doubles buf up to OBCRUN_LINE_MAX_BYTES;
 * past that (or without memory) the held piece becomes a line of its own.
 * Returns false only if no buffer could be allocated at all. */
static bool make_room(struct obcrun_stream *s)
{
    if (s->nbytes < s->cap) {
        return true;
    }
    if (s->cap < OBCRUN_LINE_MAX_BYTES) {
        size_t cap = s->cap == 0 ? OBCRUN_LINE_BYTES : 2 * s->cap;
        char *buf = realloc(s->buf, cap);

        if (buf != NULL) {
            s->buf = buf;
            s->cap = cap;
            return true;
        }
    }
    if (s->nbytes == 0) {
        return false;
    }
    emit(s, s->buf, s->nbytes, true);
    s->nbytes = 0;
    return true;
}

static void close_stream(struct obcrun_stream *s)
{
    if (s->nbytes > 0) {
        emit(s, s->buf, s->nbytes, true);
    }
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
    s->nbytes = 0;
    close(s->fd);
    s->fd = -1;
}

/* Returns 1 after reading, 0 if nothing was there, -1 once closed. */
static int read_once(struct obcrun_stream *s)
{
    ssize_t n;

    if (!make_room(s)) {
        fprintf(stderr, "obcrun: out of memory, dropping the output of %s\n", s->prefix);
        close_stream(s);
        return -1;
    }
    n = read(s->fd, s->buf + s->nbytes, s->cap - s->nbytes);
    if (n > 0) {
        s->nbytes += (size_t)n;
        emit_lines(s);
        return 1;
    }
    if (n < 0 && errno == EINTR) {
        return 1;
    }
    if (n < 0 && errno == EAGAIN) {
        return 0;
    }
    close_stream(s); /* EOF: every writer (the rank and its children) is gone */
    return -1;
}

void obcrun_stream_read(struct obcrun_stream *s)
{
    if (s->fd >= 0) {
        read_once(s);
    }
}

/* Reads everything the pipe holds now, keeping the stream open. Used on a
 * reaped rank, so its last words come out before obcrun reports its death. */
void obcrun_stream_flush(struct obcrun_stream *s)
{
    while (s->fd >= 0 && read_once(s) > 0) {
    }
}

/* At the end: take what is still in the pipe and close it without waiting
 * for EOF, which a stray grandchild could hold off forever. */
void obcrun_stream_drain(struct obcrun_stream *s)
{
    obcrun_stream_flush(s);
    if (s->fd >= 0) {
        close_stream(s);
    }
}
