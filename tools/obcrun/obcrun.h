/* SPDX-License-Identifier: MIT */
/*
 * obcrun.h - what the launcher's files share: the parsed options, one record
 * per rank and the job that holds them. obcrun is a plain POSIX program: it
 * never links libobc, and its only contract with the library is the
 * environment each rank gets (job_env.c) and the /dev/shm naming rule
 * (shm_cleanup.c). Everything runs on obcrun's single thread.
 */
#ifndef OBCRUN_H
#define OBCRUN_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define OBCRUN_MAX_RANKS 1024
#define OBCRUN_JOB_ID_BYTES 32
/* --tag-output line buffer: starts small, grows for long lines; a line
 * longer than the maximum is split into tagged lines of that length. */
#define OBCRUN_LINE_BYTES 8192
#define OBCRUN_LINE_MAX_BYTES (1024 * 1024)

/* --bind: auto (the default) binds like core when there are 2 ranks or more. */
enum obcrun_bind { OBCRUN_BIND_AUTO, OBCRUN_BIND_CORE, OBCRUN_BIND_NONE };

struct obcrun_opts {
    int nranks;
    enum obcrun_bind bind;
    double timeout_s; /* whole-job wall-clock limit; <= 0 means none */
    bool tag_output;
    char **argv; /* PROGRAM and its arguments, NULL-terminated (points into main's argv) */
};

/* One tagged output stream of a rank (--tag-output): the read end of a pipe
 * and the bytes of the line it is in the middle of. */
struct obcrun_stream {
    int fd; /* non-blocking read end; -1 once closed (or never opened) */
    int out_fd; /* where tagged lines go: 1 or 2 */
    char *buf; /* the incomplete line; owned, freed when the stream closes */
    size_t cap; /* bytes allocated at buf */
    size_t nbytes; /* bytes held in buf */
    char prefix[24]; /* "[rank R] " */
};

struct obcrun_rank {
    pid_t pid; /* 0 if never started */
    bool is_live; /* started and not yet reaped */
    struct obcrun_stream out; /* unused without --tag-output (fd -1) */
    struct obcrun_stream err;
};

struct obcrun_job {
    struct obcrun_opts opts;
    struct obcrun_rank *ranks; /* opts.nranks entries */
    int nlive; /* ranks started and not yet reaped */
    pid_t pgid; /* the ranks' process group (rank 0's pid); 0 before spawning */
    char job_id[OBCRUN_JOB_ID_BYTES];
    int port_fd; /* socket holding the bootstrap port until spawning; -1 after */
    int store_port_fd; /* likewise MASTER_PORT, torch's store (torchrun's variables) */
    sigset_t orig_mask; /* obcrun's mask before it blocked signals; given to ranks */
    int signal_fd; /* signalfd of the blocked signals (supervise.c) */
    struct pollfd *pollfds; /* supervise.c's poll set: signal_fd + 2 per rank */
    struct obcrun_stream **polled; /* the stream behind each pollfds entry */
    struct timespec deadline; /* end of --timeout (CLOCK_MONOTONIC) */
    bool is_stopping; /* a failure, signal or timeout asked every rank to stop */
    bool is_killed; /* SIGKILL has been sent to the ranks */
    struct timespec kill_at; /* when SIGTERM escalates to SIGKILL */
    int exit_code; /* obcrun's exit status once stopping */
};

/* bind.c: --bind's value; the CPU rank `rank` is bound to (-1: none); binding the caller. */
int obcrun_bind_parse(const char *s, struct obcrun_opts *opts);
int obcrun_bind_cpu(const struct obcrun_opts *opts, int rank);
int obcrun_bind_self(int cpu);

/* job_env.c: job id, secret, bootstrap port and torchrun's variables, exported to the ranks. */
int obcrun_env_setup(struct obcrun_job *job);
int obcrun_env_set_rank(int rank);
void obcrun_env_release_port(struct obcrun_job *job);

/* spawn.c: start every rank; on a start failure the job begins stopping. */
void obcrun_spawn_all(struct obcrun_job *job);

/* supervise.c: signals, reaping, the timeout and stopping the ranks. */
int obcrun_supervise_init(struct obcrun_job *job);
void obcrun_stop(struct obcrun_job *job, int exit_code);
int obcrun_supervise(struct obcrun_job *job);

/* tag_output.c: "[rank R] " before every line of a rank's output. */
void obcrun_stream_init(struct obcrun_stream *s, int fd, int out_fd, int rank);
void obcrun_stream_read(struct obcrun_stream *s);
void obcrun_stream_flush(struct obcrun_stream *s);
void obcrun_stream_drain(struct obcrun_stream *s);

/* shm_cleanup.c: remove /dev/shm/obc-<job id>-* files. */
int obcrun_shm_cleanup(const char *job_id);

/* time helpers (supervise.c) */
struct timespec obcrun_now(void);
struct timespec obcrun_after(struct timespec t, double seconds);

#endif /* OBCRUN_H */
