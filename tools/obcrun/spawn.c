/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - starts the ranks with fork + execvp. All ranks share one new
 * process group (led by rank 0) so obcrun can signal them together, while
 * obcrun alone stays in the terminal's foreground group and gets Ctrl-C.
 * Each child asks for SIGKILL when obcrun dies, and reports a failed exec
 * through a close-on-exec pipe, so obcrun can say once why PROGRAM did not
 * start instead of N ranks each saying it.
 */
#include "obcrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

/* What a child needs besides the job; every fd is close-on-exec. */
struct child_fds {
    int status_w; /* gets {stage, errno} if the child fails before exec */
    int out_w; /* --tag-output pipe ends, or -1 */
    int err_w;
    int stdin_fd; /* /dev/null when obcrun's stdin is a terminal, else -1 */
    int cpu; /* --bind: the CPU the rank runs on, or -1 */
};

enum { STAGE_SETUP, STAGE_EXEC };

static struct rlimit orig_nofile; /* restored in each rank */

static _Noreturn void fail_child(int status_w, int stage)
{
    int report[2] = {stage, errno};
    ssize_t n = write(status_w, report, sizeof(report));

    (void)n; /* nothing more to do if obcrun cannot hear us */
    _exit(report[1] == ENOENT || report[1] == ENOTDIR ? 127 : 126);
}

static _Noreturn void run_child(const struct obcrun_job *job, const struct child_fds *fds,
                                pid_t parent)
{
    /* Also done by the parent: whichever runs first makes the group exist
     * before the next rank is forked into it. */
    setpgid(0, job->pgid);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
        fail_child(fds->status_w, STAGE_SETUP);
    }
    if (getppid() != parent) {
        _exit(127); /* obcrun died before PR_SET_PDEATHSIG took hold */
    }
    if (fds->out_w >= 0 && (dup2(fds->out_w, 1) < 0 || dup2(fds->err_w, 2) < 0)) {
        fail_child(fds->status_w, STAGE_SETUP);
    }
    /* A rank outside the foreground group that reads the terminal would be
     * stopped by SIGTTIN and hang the job. */
    if (fds->stdin_fd >= 0 && dup2(fds->stdin_fd, 0) < 0) {
        fail_child(fds->status_w, STAGE_SETUP);
    }
    if (obcrun_bind_self(fds->cpu) != 0) {
        fail_child(fds->status_w, STAGE_SETUP);
    }
    /* Ignored signals and the mask survive exec; give PROGRAM obcrun's own. */
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &job->orig_mask, NULL);
    setrlimit(RLIMIT_NOFILE, &orig_nofile);
    execvp(job->opts.argv[0], job->opts.argv);
    fail_child(fds->status_w, STAGE_EXEC);
}

/* Blocks until the child has exec'd (EOF) or reported why it could not. */
static int wait_exec(const struct obcrun_job *job, int rank, int status_r)
{
    int report[2];
    ssize_t n;

    do {
        n = read(status_r, report, sizeof(report));
    } while (n < 0 && errno == EINTR);
    close(status_r);
    if (n != (ssize_t)sizeof(report)) {
        return 0;
    }
    if (report[0] == STAGE_EXEC) {
        fprintf(stderr, "obcrun: rank %d cannot run '%s': %s\n", rank, job->opts.argv[0],
                strerror(report[1]));
    } else {
        fprintf(stderr, "obcrun: rank %d failed to start: %s\n", rank, strerror(report[1]));
    }
    return -1;
}

static int open_pipes(const struct obcrun_job *job, int status[2], int out[2], int err[2])
{
    if (pipe2(status, O_CLOEXEC) != 0) {
        return -1;
    }
    if (job->opts.tag_output && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) {
        return -1;
    }
    return 0;
}

static void close_ends(int a, int b, int c)
{
    int fds[3] = {a, b, c};

    for (int i = 0; i < 3; i++) {
        if (fds[i] >= 0) {
            close(fds[i]);
        }
    }
}

/* Starts one rank. Returns 0, or -1 if it (or obcrun) failed to start it. */
static int start_rank(struct obcrun_job *job, int rank, int stdin_fd)
{
    int status[2] = {-1, -1}; /* [0] read end (obcrun), [1] write end (child) */
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};
    struct obcrun_rank *r = &job->ranks[rank];
    pid_t parent = getpid();
    pid_t pid;

    if (open_pipes(job, status, out, err) != 0 || obcrun_env_set_rank(rank) != 0) {
        fprintf(stderr, "obcrun: cannot start rank %d: %s\n", rank, strerror(errno));
        close_ends(status[0], out[0], err[0]);
        close_ends(status[1], out[1], err[1]);
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        struct child_fds child = {status[1], out[1], err[1], stdin_fd,
                                  obcrun_bind_cpu(&job->opts, rank)};
        run_child(job, &child, parent);
    }
    close_ends(status[1], out[1], err[1]);
    if (pid < 0) {
        fprintf(stderr, "obcrun: cannot start rank %d: fork: %s\n", rank, strerror(errno));
        close_ends(status[0], out[0], err[0]);
        return -1;
    }
    obcrun_stream_init(&r->out, out[0], 1, rank);
    obcrun_stream_init(&r->err, err[0], 2, rank);
    job->pgid = job->pgid != 0 ? job->pgid : pid;
    setpgid(pid, job->pgid); /* EACCES once the child has exec'd: it did it itself */
    r->pid = pid;
    r->is_live = true;
    job->nlive++;
    return wait_exec(job, rank, status[0]);
}

/* --tag-output keeps two pipes per rank open in obcrun: more than the usual
 * soft limit of 1024 fds for large jobs, so raise it to the hard limit. */
static void raise_fd_limit(void)
{
    struct rlimit lim;

    getrlimit(RLIMIT_NOFILE, &orig_nofile);
    lim = orig_nofile;
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
}

void obcrun_spawn_all(struct obcrun_job *job)
{
    int stdin_fd = -1;

    raise_fd_limit();
    if (isatty(0)) {
        stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    }
    obcrun_env_release_port(job); /* now rank 0 may bind it */
    for (int rank = 0; rank < job->opts.nranks; rank++) {
        if (start_rank(job, rank, stdin_fd) != 0) {
            /* A failed exec shows up as the rank's exit status 127 in the
             * supervisor, which then stops the others; other failures
             * leave no rank to report, so stop here. */
            if (!job->ranks[rank].is_live) {
                obcrun_stop(job, 1);
            }
            break;
        }
    }
    if (stdin_fd >= 0) {
        close(stdin_fd);
    }
}
