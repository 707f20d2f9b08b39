/* SPDX-License-Identifier: MIT */
/*
 * shmem.c - POSIX shared-memory segments. Created with O_EXCL and mode 0600
 * (the name is random, chosen by the caller); the creator unlinks it as soon
 * as every local rank has attached, so a crash later leaves nothing behind.
 */
#include "platform/platform.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

void obc__shm_detach(void *addr, size_t nbytes)
{
    if (addr != NULL) {
        munmap(addr, nbytes);
    }
}
