/* SPDX-License-Identifier: MIT */
/*
 * supervise.c - watches the running ranks until all are gone. One ppoll
 * waits on a signalfd (SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, blocked
 * since before the first fork, so none can be lost) and on the
 * --tag-output pipes, with a timeout at the next deadline (--timeout, or
 * the SIGTERM-to-SIGKILL escalation). After each SIGCHLD every exited
 * child is reaped with waitpid(WNOHANG). The first failure (a rank dying,
 * a signal to obcrun, the timeout) stops the job: SIGTERM to the ranks'
 * process group, SIGKILL 1 s later, and obcrun exits with its status.
 */
#include "obcrun.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define KILL_GRACE_S 1.0 /* SIGTERM to SIGKILL; the brief allows the ranks 2 s in all */

struct timespec obcrun_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

struct timespec obcrun_after(struct timespec t, double seconds)
{
    double whole;
    double frac;

    seconds = seconds > 1e9 ? 1e9 : seconds; /* keeps time_t from overflowing */
    whole = (double)(long)seconds;
    frac = seconds - whole;
    t.tv_sec += (time_t)whole;
    t.tv_nsec += (long)(frac * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static bool is_reached(struct timespec at, struct timespec now)
{
    return now.tv_sec > at.tv_sec || (now.tv_sec == at.tv_sec && now.tv_nsec >= at.tv_nsec);
}

/* The ppoll timeout until the next deadline; NULL when there is none. */
static struct timespec *next_wakeup(const struct obcrun_job *job, struct timespec *left)
{
    struct timespec now = obcrun_now();
    struct timespec at;

    if (job->is_stopping) {
        if (job->is_killed) {
            return NULL;
        }
        at = job->kill_at;
    } else if (job->opts.timeout_s > 0) {
        at = job->deadline;
    } else {
        return NULL;
    }
    if (is_reached(at, now)) {
        *left = (struct timespec){0, 0};
        return left;
    }
    left->tv_sec = at.tv_sec - now.tv_sec;
    left->tv_nsec = at.tv_nsec - now.tv_nsec;
    if (left->tv_nsec < 0) {
        left->tv_sec--;
        left->tv_nsec += 1000000000L;
    }
    return left;
}

/* The signals that stop the job. One obcrun inherited as ignored (nohup,
 * a background job of a non-interactive shell) stays ignored: a blocked
 * signal would still be queued to the signalfd. */
static void add_stop_signals(sigset_t *set)
{
    static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

    for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++) {
        struct sigaction old;

        if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
            sigaddset(set, stop_signals[i]);
        }
    }
}

int obcrun_supervise_init(struct obcrun_job *job)
{
    sigset_t set;
    size_t npoll = 1 + 2 * (size_t)job->opts.nranks;

    /* An inherited SIG_IGN for SIGCHLD would make the kernel reap the
     * ranks itself, and obcrun would never learn how they ended. */
    signal(SIGCHLD, SIG_DFL);
    /* A closed stdout must not kill obcrun before it has stopped the ranks. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    add_stop_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &job->orig_mask);
    job->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    job->pollfds = calloc(npoll, sizeof(*job->pollfds));
    job->polled = calloc(npoll, sizeof(*job->polled));
    if (job->signal_fd < 0 || job->pollfds == NULL || job->polled == NULL) {
        fprintf(stderr, "obcrun: cannot set up signal handling: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* Signals every rank: through the process group, plus directly any rank
 * that left it (setsid, setpgid) so that none escapes. */
static void signal_ranks(const struct obcrun_job *job, int signo)
{
    if (job->pgid > 0) {
        kill(-job->pgid, signo);
    }
    for (int i = 0; i < job->opts.nranks; i++) {
        const struct obcrun_rank *r = &job->ranks[i];

        /* An unreaped child's pid cannot have been reused. */
        if (r->is_live && getpgid(r->pid) != job->pgid) {
            kill(r->pid, signo);
        }
    }
}

void obcrun_stop(struct obcrun_job *job, int exit_code)
{
    if (job->is_stopping) {
        return; /* the first cause decides the exit status */
    }
    job->is_stopping = true;
    job->exit_code = exit_code;
    job->kill_at = obcrun_after(obcrun_now(), KILL_GRACE_S);
    signal_ranks(job, SIGTERM);
}

static void kill_ranks(struct obcrun_job *job)
{
    job->is_killed = true;
    signal_ranks(job, SIGKILL);
}

/* Prints how a rank failed; returns the exit status obcrun passes on. */
static int report_failure(const struct obcrun_job *job, int rank, int status)
{
    pid_t pid = job->ranks[rank].pid;

    if (WIFSIGNALED(status)) {
        int signo = WTERMSIG(status);

        fprintf(stderr, "obcrun: rank %d (pid %d) was killed by signal %d (%s)%s\n", rank, (int)pid,
                signo, strsignal(signo), WCOREDUMP(status) ? ", core dumped" : "");
        return 128 + signo;
    }
    fprintf(stderr, "obcrun: rank %d (pid %d) exited with status %d\n", rank, (int)pid,
            WEXITSTATUS(status));
    return WEXITSTATUS(status);
}

static int mark_reaped(struct obcrun_job *job, pid_t pid)
{
    for (int i = 0; i < job->opts.nranks; i++) {
        struct obcrun_rank *r = &job->ranks[i];

        if (r->is_live && r->pid == pid) {
            r->is_live = false;
            job->nlive--;
            obcrun_stream_flush(&r->out);
            obcrun_stream_flush(&r->err);
            return i;
        }
    }
    return -1;
}

/* Reaps every exited rank. Of several failures seen together, a rank killed
 * by a signal is the likelier cause (its peers then exit with an error of
 * their own), and waitpid returns them in fork order, not death order. */
static void reap_children(struct obcrun_job *job)
{
    int first = -1;
    int first_status = 0;
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) != 0) {
        int rank;

        if (pid < 0) {
            if (errno == EINTR) {
                continue;
            }
            break; /* ECHILD: nothing left */
        }
        rank = mark_reaped(job, pid);
        if (rank < 0 || job->is_stopping || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            continue; /* after a stop, deaths are our own SIGTERM's doing */
        }
        if (first < 0 || (WIFSIGNALED(status) && !WIFSIGNALED(first_status))) {
            first = rank;
            first_status = status;
        }
    }
    if (first >= 0) {
        obcrun_stop(job, report_failure(job, first, first_status));
    }
}

/* A repeated signal changes nothing: SIGKILL follows within KILL_GRACE_S
 * anyway, and tools like timeout(1) deliver theirs twice (to obcrun, then
 * to its process group). */
static void on_stop_signal(struct obcrun_job *job, int signo)
{
    if (!job->is_stopping) {
        fprintf(stderr, "obcrun: received signal %d (%s), stopping %d ranks\n", signo,
                strsignal(signo), job->nlive);
        obcrun_stop(job, 128 + signo);
    }
}

static void handle_signals(struct obcrun_job *job)
{
    struct signalfd_siginfo info;
    bool has_child = false;

    while (read(job->signal_fd, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
        if (info.ssi_signo == SIGCHLD) {
            has_child = true;
        } else {
            on_stop_signal(job, (int)info.ssi_signo);
        }
    }
    if (has_child) {
        reap_children(job);
    }
}

static void check_deadlines(struct obcrun_job *job)
{
    struct timespec now = obcrun_now();

    if (!job->is_stopping && job->opts.timeout_s > 0 && is_reached(job->deadline, now)) {
        fprintf(stderr, "obcrun: timeout after %g s, stopping %d ranks\n", job->opts.timeout_s,
                job->nlive);
        obcrun_stop(job, 124);
    }
    if (job->is_stopping && !job->is_killed && is_reached(job->kill_at, now)) {
        if (job->nlive > 0) {
            fprintf(stderr, "obcrun: %d ranks still running %g s after SIGTERM, killing them\n",
                    job->nlive, KILL_GRACE_S);
        }
        kill_ranks(job);
    }
}

/* Fills the poll set: the signalfd first, then every open output pipe. */
static nfds_t fill_pollfds(struct obcrun_job *job)
{
    nfds_t n = 0;

    job->pollfds[n++] = (struct pollfd){.fd = job->signal_fd, .events = POLLIN};
    for (int i = 0; i < job->opts.nranks; i++) {
        struct obcrun_stream *pair[2] = {&job->ranks[i].out, &job->ranks[i].err};

        for (int k = 0; k < 2; k++) {
            if (pair[k]->fd >= 0) {
                job->polled[n] = pair[k];
                job->pollfds[n++] = (struct pollfd){.fd = pair[k]->fd, .events = POLLIN};
            }
        }
    }
    return n;
}

/* ppoll cannot fail on valid arguments; if it does anyway, end the job
 * with blocking calls rather than spin. */
static void give_up(struct obcrun_job *job)
{
    int status;

    fprintf(stderr, "obcrun: ppoll: %s; killing all ranks\n", strerror(errno));
    obcrun_stop(job, 1);
    kill_ranks(job);
    while (job->nlive > 0 && waitpid(-1, &status, 0) > 0) {
        job->nlive--;
    }
}

int obcrun_supervise(struct obcrun_job *job)
{
    while (job->nlive > 0) {
        struct timespec left;
        nfds_t n = fill_pollfds(job);

        if (ppoll(job->pollfds, n, next_wakeup(job, &left), NULL) < 0 && errno != EINTR) {
            give_up(job);
            break;
        }
        if (job->pollfds[0].revents != 0) {
            handle_signals(job);
        }
        for (nfds_t i = 1; i < n; i++) {
            if (job->pollfds[i].revents != 0) {
                obcrun_stream_read(job->polled[i]);
            }
        }
        check_deadlines(job);
    }
    for (int i = 0; i < job->opts.nranks; i++) {
        obcrun_stream_drain(&job->ranks[i].out);
        obcrun_stream_drain(&job->ranks[i].err);
    }
    if (job->is_stopping && job->pgid > 0) {
        kill(-job->pgid, SIGKILL); /* children the ranks left behind */
    }
    return job->is_stopping ? job->exit_code : 0;
}
