/* SPDX-License-Identifier: MIT */
/*
 * split_leak.c - creating and destroying children does not leak: after a
 * few warm-up cycles, every rank counts its open fds (/proc/self/fd), its
 * threads and RSS (/proc/self/status), its mappings of shared-memory
 * segments (/proc/self/maps) and this job's /dev/shm entries
 * (obc-<OBC_JOB_ID>-*), then runs CYCLES (argv[1], default 200) cycles of
 * split by parity (under fake hosts, children that cross a TCP link) + an
 * allreduce and an ibarrier in the child (the latter starts its progress
 * thread) + a parent allreduce + destroy, alternating whether the child is
 * destroyed before or after the parent's allreduce, and counts again. fds,
 * threads, shm mappings and /dev/shm entries must be back where they were
 * (threads get 2 s to finish, should a child ever leave one detached); RSS
 * may grow by at most 8 MiB (allocator caches). VmSize is only reported:
 * glibc reserves 64 MiB of address space for each malloc arena a new
 * thread gets, and keeps it.
 * Prints seconds per cycle. bench/split_leak.sh runs the 1000-cycle
 * measurement of docs/subcomm.md (`obcrun -n 4 build/tests/bin/split_leak
 * 1000` and two more).
 */
/* obct: nranks=4 timeout=120 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 timeout=120 san */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obct.h"

/* Under ASan or TSan, freed memory sits in the sanitizer's quarantine and
 * RSS grows by design. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMORY_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MEMORY_CHECKED 0
#endif
#endif
#ifndef MEMORY_CHECKED
#define MEMORY_CHECKED 1
#endif

struct counts {
    long fds, threads, rss_kib, vm_kib, shm_maps, shm_job, shm_all;
};

static long count_dir(const char *path, const char *prefix)
{
    DIR *d = opendir(path);
    long n = 0;
    OBCT_ASSERT(d != NULL);
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (e->d_name[0] != '.' && strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            n++;
        }
    }
    closedir(d);
    return n;
}

static long status_field(const char *name)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");
    OBCT_ASSERT(f != NULL);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, name, strlen(name)) == 0) {
            v = atol(line + strlen(name));
        }
    }
    fclose(f);
    return v;
}

/* Mappings of shared-memory segments (unlinked ones show as "(deleted)"):
 * an arena a destroyed child left mapped is one more. */
static long shm_mappings(void)
{
    char line[512];
    long n = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    OBCT_ASSERT(f != NULL);
    while (fgets(line, sizeof(line), f) != NULL) {
        n += strstr(line, "/dev/shm/") != NULL;
    }
    fclose(f);
    return n;
}

static void measure(struct counts *c)
{
    char prefix[128];
    const char *job = getenv("OBC_JOB_ID");
    snprintf(prefix, sizeof(prefix), "obc-%s-", job != NULL ? job : "");
    c->fds = count_dir("/proc/self/fd", "") - 1; /* the DIR's own fd */
    c->threads = status_field("Threads:");
    c->rss_kib = status_field("VmRSS:");
    c->vm_kib = status_field("VmSize:"); /* reported: malloc's thread arenas reserve 64 MiB each */
    c->shm_maps = shm_mappings();
    c->shm_job = job != NULL ? count_dir("/dev/shm", prefix) : 0;
    c->shm_all = count_dir("/dev/shm", "");
}

static void cycle(obc_comm_t *world, int i)
{
    int rank = obc_comm_rank(world), n = obc_comm_size(world);
    obc_comm_t *child = NULL;
    obc_request_t *req = NULL;
    int64_t v = rank, want = 0, one = 1;
    for (int r = rank % 2; r < n; r += 2) {
        want += r;
    }
    OBCT_OK(obc_comm_split(world, rank % 2, 0, &child), world);
    OBCT_OK(obc_allreduce(&v, &v, 1, OBC_INT64, OBC_SUM, child), child);
    OBCT_EQ_INT(v, want);
    OBCT_OK(obc_ibarrier(child, &req), child);
    OBCT_OK(obc_wait(req), child);
    if (i % 2 == 0) {
        OBCT_OK(obc_comm_destroy(child), NULL);
    }
    OBCT_OK(obc_allreduce(&one, &one, 1, OBC_INT64, OBC_SUM, world), world);
    OBCT_EQ_INT(one, n);
    if (i % 2 == 1) {
        OBCT_OK(obc_comm_destroy(child), NULL);
    }
}

int main(int argc, char **argv)
{
    obc_comm_t *world = obct_comm_from_env();
    int cycles = argc > 1 ? atoi(argv[1]) : 200;
    struct counts before, after;
    for (int i = 0; i < 4; i++) {
        cycle(world, i);
    }
    OBCT_OK(obc_barrier(world), world);
    obct_sleep(0.2);
    measure(&before);
    double t = obct_now();
    for (int i = 0; i < cycles; i++) {
        cycle(world, i);
    }
    double per_cycle = (obct_now() - t) / cycles;
    OBCT_OK(obc_barrier(world), world);
    for (double end = obct_now() + 2.0 * obct_time_scale(); obct_now() < end; obct_sleep(0.05)) {
        measure(&after);
        if (after.threads <= before.threads && after.fds <= before.fds) {
            break;
        }
    }
    printf(
        "split_leak: rank %d: %d cycles, %.3f ms per cycle; fds %ld -> %ld, threads %ld -> "
        "%ld, /dev/shm entries of this job %ld -> %ld (all %ld -> %ld), shm mappings %ld -> %ld, "
        "RSS %ld -> %ld KiB, VmSize %ld -> %ld KiB\n",
        obc_comm_rank(world), cycles, per_cycle * 1e3, before.fds, after.fds, before.threads,
        after.threads, before.shm_job, after.shm_job, before.shm_all, after.shm_all,
        before.shm_maps, after.shm_maps, before.rss_kib, after.rss_kib, before.vm_kib,
        after.vm_kib);
    OBCT_CHECK_EQ_INT(after.fds, before.fds);
    OBCT_CHECK_EQ_INT(after.threads, before.threads);
    OBCT_CHECK_EQ_INT(after.shm_job, before.shm_job);
    OBCT_CHECK_EQ_INT(after.shm_maps, before.shm_maps);
    if (!MEMORY_CHECKED) {
        printf("split_leak: RSS not checked: the sanitizer keeps freed memory in "
               "quarantine (ASan's own leak check at exit covers the heap)\n");
    } else {
        OBCT_CHECK(after.rss_kib - before.rss_kib <= 8 * 1024);
    }
    OBCT_OK(obc_comm_destroy(world), NULL);
    return obct_finish("split_leak");
}
