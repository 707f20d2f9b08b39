/* SPDX-License-Identifier: MIT */
/*
 * spawn_ranks.c - fork-based launcher for fault tests (see spawn_ranks.h).
 *
 * Order matters: children are forked before the parent touches the library
 * (obc is not fork-safe), the id travels over one pipe per child, and the
 * parent stays alive to host the rendezvous until it reaps everyone.
 */
#include "spawn_ranks.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "obct.h"
#include "quiet.h"

static pid_t g_pids[OBCT_MAX_RANKS];
static int g_npids;
static char g_scenario[256]; /* obct_scenario: the label of the jobs that follow */

void obct_launch_env(int rank, int nranks, int port, const char *secret)
{
    char v[64];
    snprintf(v, sizeof(v), "%d", rank);
    setenv("OBC_RANK", v, 1);
    snprintf(v, sizeof(v), "%d", nranks);
    setenv("OBC_NRANKS", v, 1);
    snprintf(v, sizeof(v), "127.0.0.1:%d", port);
    setenv("OBC_BOOTSTRAP", v, 1);
    setenv("OBC_SECRET", secret, 1);
}

void obct_scenario(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_scenario, sizeof(g_scenario), fmt, ap);
    va_end(ap);
    printf("%s\n", g_scenario);
    fflush(stdout);
}

/* Capture the job's output: children forked from here on write into it too. */
static void begin_quiet_scope(struct obct_job *job)
{
    char label[320];
    snprintf(label, sizeof(label), "%s (job %s)", g_scenario[0] ? g_scenario : "a job",
             job->job_id);
    job->quiet = obct_quiet_begin(label);
}

static void read_all(int fd, void *p, size_t n)
{
    unsigned char *c = p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        OBCT_ASSERT_MSG(r > 0, "reading the unique id from the parent failed (r=%zd)", r);
        c += r;
        n -= (size_t)r;
    }
}

static void write_all(int fd, const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n > 0) {
        ssize_t r = write(fd, c, n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        OBCT_ASSERT_MSG(r > 0, "writing the unique id to a child failed");
        c += r;
        n -= (size_t)r;
    }
}

static void run_child(struct obct_job *job, int rank, int fd, obct_rank_fn fn, void *arg, int flags,
                      pid_t parent)
{
    obc_unique_id_t id;
    obc_comm_t *comm = NULL;
    int ret;
    obct_set_rank(rank);
    signal(SIGALRM, SIG_DFL); /* not the parent's watchdog */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(1);
    }
    alarm((unsigned)(300 * obct_time_scale()));
    read_all(fd, &id, sizeof(id));
    close(fd);
    if (!(flags & OBCT_SPAWN_NO_INIT)) {
        obc_result_t rc = obc_comm_init_rank(&comm, job->nranks, &id, rank);
        if (rc != OBC_SUCCESS) {
            OBCT_LOG("obc_comm_init_rank(nranks=%d, rank=%d) failed: %s: %s", job->nranks, rank,
                     obct_rc_name(rc), obc_comm_last_error(NULL));
            exit(OBCT_EXIT_INIT_FAILED);
        }
    }
    ret = fn(comm, rank, job->nranks, &job->reports[rank], arg);
    fflush(stdout);
    fflush(stderr);
    exit(ret);
}

void obct_spawn(struct obct_job *job, int nranks, obct_rank_fn fn, void *arg, int flags)
{
    int fds[OBCT_MAX_RANKS];
    obc_unique_id_t id;
    size_t shared_bytes = sizeof(struct obct_report) * (size_t)nranks;
    pid_t parent = getpid();
    void *shared;
    OBCT_ASSERT(nranks >= 1 && nranks <= OBCT_MAX_RANKS);
    static int njobs;
    memset(job, 0, sizeof(*job));
    job->nranks = nranks;
    snprintf(job->job_id, sizeof(job->job_id), "obct%dj%d", (int)parent, njobs++);
    setenv("OBC_JOB_ID", job->job_id, 1);
    shared = mmap(NULL, shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    OBCT_ASSERT(shared != MAP_FAILED);
    job->reports = shared;
    for (int r = 0; r < nranks; r++) {
        atomic_init(&job->reports[r].progress, 0);
        job->reports[r].rc = -1;
        job->reports[r].rc_after = -1;
    }
    begin_quiet_scope(job);
    fflush(stdout);
    fflush(stderr);
    job->t_start = obct_now();
    for (int r = 0; r < nranks; r++) {
        int p[2];
        pid_t pid;
        OBCT_ASSERT(pipe(p) == 0);
        pid = fork();
        OBCT_ASSERT_MSG(pid >= 0, "fork failed: %s", strerror(errno));
        if (pid == 0) {
            for (int q = 0; q < r; q++) {
                close(fds[q]);
            }
            close(p[1]);
            run_child(job, r, p[0], fn, arg, flags, parent);
        }
        close(p[0]);
        fds[r] = p[1];
        job->pid[r] = pid;
        g_pids[g_npids < OBCT_MAX_RANKS ? g_npids++ : 0] = pid;
    }
    memset(&id, 0, sizeof(id));
    if (!(flags & OBCT_SPAWN_NO_INIT)) {
        OBCT_OK(obc_get_unique_id(&id), NULL);
    }
    for (int r = 0; r < nranks; r++) {
        write_all(fds[r], &id, sizeof(id));
        close(fds[r]);
    }
}

void obct_progress(struct obct_report *self)
{
    atomic_fetch_add(&self->progress, 1);
}

static int reap(struct obct_job *job, int rank, int options)
{
    int status;
    pid_t r;
    if (job->reaped[rank]) {
        return 1;
    }
    do {
        r = waitpid(job->pid[rank], &status, options);
    } while (r < 0 && errno == EINTR);
    if (r == job->pid[rank]) {
        job->status[rank] = status;
        job->reaped[rank] = 1;
        job->t_exit[rank] = obct_now();
        return 1;
    }
    return 0;
}

int obct_wait_progress(struct obct_job *job, int rank, long min, double timeout_s)
{
    double deadline = obct_now() + timeout_s;
    while (atomic_load(&job->reports[rank].progress) < min) {
        if (obct_now() > deadline || reap(job, rank, WNOHANG)) {
            return -1;
        }
        obct_sleep(0.001);
    }
    return 0;
}

double obct_signal(struct obct_job *job, int rank, int sig)
{
    double t = obct_now();
    OBCT_ASSERT_MSG(kill(job->pid[rank], sig) == 0, "kill(rank %d, %d): %s", rank, sig,
                    strerror(errno));
    return t;
}

int obct_join_rank(struct obct_job *job, int rank, double timeout_s)
{
    double deadline = obct_now() + timeout_s;
    while (!reap(job, rank, WNOHANG)) {
        if (obct_now() > deadline) {
            return -1;
        }
        obct_sleep(0.002);
    }
    return 0;
}

int obct_join(struct obct_job *job, double timeout_s)
{
    double deadline = obct_now() + timeout_s;
    int res = 0;
    for (;;) {
        int running = 0;
        for (int r = 0; r < job->nranks; r++) {
            running += !reap(job, r, WNOHANG);
        }
        if (running == 0) {
            return res;
        }
        if (obct_now() > deadline) {
            for (int r = 0; r < job->nranks; r++) {
                if (!job->reaped[r]) {
                    OBCT_LOG("rank %d (pid %d) still running after %.1f s: SIGKILL", r,
                             (int)job->pid[r], timeout_s);
                    kill(job->pid[r], SIGKILL);
                }
            }
            for (int r = 0; r < job->nranks; r++) {
                reap(job, r, 0);
            }
            return -1;
        }
        obct_sleep(0.002);
    }
}

int obct_exit_code(const struct obct_job *job, int rank)
{
    int st = job->status[rank];
    if (!job->reaped[rank]) {
        return -1000;
    }
    if (WIFEXITED(st)) {
        return WEXITSTATUS(st);
    }
    if (WIFSIGNALED(st)) {
        return -WTERMSIG(st);
    }
    return -999;
}

void obct_job_free(struct obct_job *job)
{
    if (job->reports != NULL) {
        munmap(job->reports, sizeof(struct obct_report) * (size_t)job->nranks);
        job->reports = NULL;
    }
    if (job->quiet) {
        job->quiet = 0;
        obct_quiet_end();
    }
}

int obct_job_check_shm(const struct obct_job *job)
{
    char prefix[64];
    int n = 0;
    struct dirent *e;
    DIR *d = opendir("/dev/shm");
    if (d == NULL) {
        return 0;
    }
    snprintf(prefix, sizeof(prefix), "obc-%s-", job->job_id);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            OBCT_LOG("FAIL: /dev/shm/%s left behind by job %s", e->d_name, job->job_id);
            unlinkat(dirfd(d), e->d_name, 0);
            n++;
        }
    }
    closedir(d);
    if (n > 0) {
        obct_soft_fail(__FILE__, __LINE__, "%d shared-memory file(s) left behind", n);
    }
    return n;
}

static void on_alarm(int sig)
{
    static const char msg[] = "[obct parent] watchdog expired: killing every child, failing\n";
    (void)sig;
    for (int i = 0; i < g_npids; i++) {
        kill(g_pids[i], SIGKILL);
    }
    obct_quiet_abandon_in_signal(); /* what the hung job printed, then this message */
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        _exit(1);
    }
    _exit(1);
}

void obct_watchdog(double seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm((unsigned)(seconds * obct_time_scale()) + 1);
}
