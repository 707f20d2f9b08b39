/* SPDX-License-Identifier: MIT */
/*
 * shmem.c - POSIX shared-memory segments. Created with O_EXCL and mode 0600
 * (the name is random, chosen by the caller); the creator unlinks it as soon
 * as every local rank has attached, so a crash later leaves nothing behind.
 * A creator that dies before that leaves its segment; segments named after
 * their creator's pid are swept by the next creator on the host once that
 * pid is gone (obcrun sweeps its own job's names).
 */
#include "platform/platform.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Where glibc's shm_open keeps its segments: a tmpfs, swept and measured here. */
static const char shm_dir[] = "/dev/shm";

static int map_fd(int fd, size_t nbytes, void **addr)
{
    void *p = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int saved = errno;
    close(fd);
    if (p == MAP_FAILED) {
        return -saved;
    }
    *addr = p;
    return 0;
}

int64_t obc__shm_free_bytes(void)
{
    struct statvfs st;
    if (statvfs(shm_dir, &st) != 0) {
        return -errno;
    }
    return (int64_t)st.f_bavail * (int64_t)st.f_frsize;
}

int obc__shm_create(const char *name, size_t nbytes, void **addr)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -errno;
    }
    if (ftruncate(fd, (off_t)nbytes) != 0) {
        int saved = errno;
        close(fd);
        shm_unlink(name);
        return -saved;
    }
    int rc = map_fd(fd, nbytes, addr);
    if (rc != 0) {
        shm_unlink(name);
    }
    return rc;
}

int obc__shm_attach(const char *name, size_t nbytes, void **addr)
{
    struct stat st;
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -errno;
    }
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < nbytes) {
        close(fd);
        return -EPROTO; /* not the segment we were told about */
    }
    return map_fd(fd, nbytes, addr);
}

int obc__shm_unlink(const char *name)
{
    return shm_unlink(name) == 0 ? 0 : -errno;
}

int obc__shm_sweep_dead(const char *prefix)
{
    DIR *d = opendir(shm_dir);
    size_t len = strlen(prefix);
    int removed = 0;
    if (d == NULL) {
        return 0;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end = NULL;
        if (strncmp(e->d_name, prefix, len) != 0) {
            continue;
        }
        long pid = strtol(e->d_name + len, &end, 10);
        if (end == e->d_name + len || *end != '-' || pid <= 0 || kill((pid_t)pid, 0) == 0 ||
            errno != ESRCH) {
            continue; /* not a pid name, or its creator may still live */
        }
        char name[300];
        snprintf(name, sizeof(name), "/%s", e->d_name);
        removed += shm_unlink(name) == 0;
    }
    closedir(d);
    return removed;
}

void obc__shm_detach(void *addr, size_t nbytes)
{
    if (addr != NULL) {
        munmap(addr, nbytes);
    }
}

int obc__memfd_create(size_t nbytes, void **addr)
{
    int fd = memfd_create("obc-mem", MFD_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    if (ftruncate(fd, (off_t)nbytes) != 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    void *p = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    *addr = p;
    return fd;
}

int obc__peer_fd_map(pid_t pid, int fd, bool writable, size_t *nbytes, void **addr)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
    int mine = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (mine < 0) {
        return -errno;
    }
    struct stat st;
    int rc = fstat(mine, &st) != 0 ? -errno : 0;
    if (rc == 0 && *nbytes == 0) {
        *nbytes = (size_t)st.st_size;
    }
    if (rc == 0 && ((size_t)st.st_size < *nbytes || *nbytes == 0)) {
        rc = -EINVAL;
    }
    /* MAP_POPULATE: one call fills the page tables that faults would fill
     * 16 pages at a time on the first copy. */
    int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
    void *p = rc == 0 ? mmap(NULL, *nbytes, prot, MAP_SHARED | MAP_POPULATE, mine, 0) : NULL;
    if (rc == 0 && p == MAP_FAILED) {
        rc = -errno;
    }
    close(mine);
    if (rc == 0) {
        *addr = p;
    }
    return rc;
}

size_t obc__page_bytes(void)
{
    long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? (size_t)n : 4096;
}
