/* SPDX-License-Identifier: MIT */
/*
 * mem_alloc.c - obc_mem_alloc / obc_mem_free: blocks are page-aligned,
 * zero-filled and writable; bytes 0 gives NULL; they serve as the buffers
 * of broadcasts (in place and out of place) and allreduces; a free of a
 * pointer the communicator did not hand out (a stack address, an inner
 * pointer, a block freed already, another communicator's block) is
 * OBC_ERR_INVALID_ARG and leaves the block usable; threads allocate and free
 * side by side; blocks left allocated are freed by obc_comm_destroy. The
 * process's open fds and the entries of /dev/shm are counted before the
 * first communicator and after the last: unchanged.
 */
/* obct: nranks=1,3 */
/* obct: name=tcp env=OBC_HOST_ID=rank/2 nranks=4 san */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data.h"
#include "obct.h"

/* Entries of dir whose name contains part ("" for all). */
static int count_named(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (d == NULL) {
        return -1;
    }
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        n += e->d_name[0] != '.' && strstr(e->d_name, part) != NULL;
    }
    closedir(d);
    return n - (strcmp(dir, "/proc/self/fd") == 0); /* the DIR's own fd */
}

static int count_entries(const char *dir)
{
    return count_named(dir, "");
}

/* Open fds that are obc_mem_alloc memfds: the communicator's own threads
 * may open and close other fds meanwhile. */
static int count_memfds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d)) {
        char path[300], target[256];
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof(target) - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strstr(target, "memfd:obc-mem") != NULL;
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    return n;
}

/* This job's segments (obcrun puts OBC_JOB_ID in their names): other jobs
 * on the machine may come and go meanwhile. */
static int count_shm(void)
{
    const char *job = getenv("OBC_JOB_ID");
    return count_named("/dev/shm", job != NULL ? job : "obc");
}

static void basics(obc_comm_t *comm)
{
    void *p = (void *)1, *q = NULL;
    char local[8];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    OBCT_OK(obc_mem_alloc(&p, 0, comm), comm);
    OBCT_ASSERT(p == NULL);
    OBCT_OK(obc_mem_free(NULL, comm), comm);
    OBCT_RC(obc_mem_alloc(NULL, 10, comm), OBC_ERR_INVALID_ARG, NULL);
    OBCT_RC(obc_mem_alloc(&p, 10, NULL), OBC_ERR_INVALID_ARG, NULL);
    OBCT_RC(obc_mem_alloc(&p, SIZE_MAX - 10, comm), OBC_ERR_INVALID_ARG, NULL);
    int fds = count_memfds();
    OBCT_OK(obc_mem_alloc(&p, 1, comm), comm);
    OBCT_OK(obc_mem_alloc(&q, 3 * page + 17, comm), comm);
    OBCT_EQ_INT(count_memfds(), fds + 2);
    OBCT_ASSERT(p != q && (uintptr_t)p % page == 0 && (uintptr_t)q % page == 0);
    for (size_t i = 0; i < 3 * page + 17; i++) {
        OBCT_ASSERT(((unsigned char *)q)[i] == 0);
    }
    memset(q, 0x5a, 3 * page + 17);
    OBCT_RC(obc_mem_free(local, comm), OBC_ERR_INVALID_ARG, NULL);
    OBCT_RC(obc_mem_free((char *)q + 1, comm), OBC_ERR_INVALID_ARG, NULL);
    OBCT_ASSERT(strstr(obc_comm_last_error(comm), "obc_mem_free") != NULL);
    OBCT_ASSERT(((unsigned char *)q)[3 * page + 16] == 0x5a); /* still mapped */
    OBCT_OK(obc_mem_free(q, comm), comm);
    OBCT_RC(obc_mem_free(q, comm), OBC_ERR_INVALID_ARG, NULL); /* twice */
    OBCT_OK(obc_mem_free(p, comm), comm);
    OBCT_EQ_INT(count_memfds(), fds);
}

/* Broadcasts and allreduces whose buffers are shared blocks. */
static void in_collectives(obc_comm_t *comm)
{
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    const size_t sizes[] = {1, 4099, (1u << 20) + 3, (8u << 20) + 5};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t n = sizes[s];
        int root = (int)s % nranks;
        void *a = NULL, *b = NULL;
        OBCT_OK(obc_mem_alloc(&a, n, comm), comm);
        OBCT_OK(obc_mem_alloc(&b, n, comm), comm);
        if (rank == root) {
            obct_fill(a, n, s, root);
        }
        OBCT_OK(obc_broadcast(a, b, n, OBC_UINT8, root, comm), comm); /* out of place */
        obct_verify("broadcast into a shared block", b, n, s, root);
        if (rank == root) {
            obct_verify("the root's shared sendbuf", a, n, s, root);
        }
        OBCT_OK(obc_bcast(b, n, OBC_UINT8, (root + 1) % nranks, comm), comm); /* in place */
        obct_verify("in-place broadcast of a shared block", b, n, s, root);
        size_t cnt = n / sizeof(int32_t);
        int32_t *x = a;
        for (size_t i = 0; i < cnt; i++) {
            x[i] = (int32_t)(i % 1000) + rank;
        }
        OBCT_OK(obc_allreduce(x, b, cnt, OBC_INT32, OBC_SUM, comm), comm);
        for (size_t i = 0; i < cnt; i++) {
            int32_t want = (int32_t)(i % 1000) * nranks + nranks * (nranks - 1) / 2;
            if (((int32_t *)b)[i] != want) {
                OBCT_FAIL("allreduce in shared blocks: element %zu is %d, want %d", i,
                          ((int32_t *)b)[i], want);
            }
        }
        OBCT_OK(obc_mem_free(a, comm), comm);
        OBCT_OK(obc_mem_free(b, comm), comm);
    }
}

static void *churn(void *arg)
{
    obc_comm_t *comm = arg;
    for (int i = 0; i < 200; i++) {
        void *p = NULL;
        if (obc_mem_alloc(&p, 4096 * (size_t)(1 + i % 3), comm) != OBC_SUCCESS) {
            OBCT_FAIL("obc_mem_alloc in a thread");
        }
        ((volatile char *)p)[0] = 1;
        if (obc_mem_free(p, comm) != OBC_SUCCESS) {
            OBCT_FAIL("obc_mem_free in a thread");
        }
    }
    return NULL;
}

static void threads(obc_comm_t *comm)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        OBCT_ASSERT(pthread_create(&t[i], NULL, churn, comm) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
}

int main(void)
{
    int fds0 = count_entries("/proc/self/fd"), shm0 = count_shm();
    obc_comm_t *comm = obct_comm_from_env();
    obc_comm_t *other = obct_comm_from_env();
    basics(comm);
    in_collectives(comm);
    threads(comm);
    void *mine = NULL, *theirs = NULL;
    OBCT_OK(obc_mem_alloc(&theirs, 100, other), other);
    OBCT_RC(obc_mem_free(theirs, comm), OBC_ERR_INVALID_ARG, NULL);
    OBCT_OK(obc_mem_free(theirs, other), other);
    for (int i = 0; i < 3; i++) { /* left for obc_comm_destroy */
        OBCT_OK(obc_mem_alloc(&mine, (size_t)(i + 1) << 20, comm), comm);
        memset(mine, i, (size_t)(i + 1) << 20);
    }
    OBCT_OK(obc_barrier(comm), comm);
    OBCT_OK(obc_comm_destroy(other), NULL);
    OBCT_EQ_INT(count_memfds(), 3);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    OBCT_EQ_INT(count_memfds(), 0);
    OBCT_EQ_INT(count_entries("/proc/self/fd"), fds0);
    int shm1 = count_shm();
    OBCT_LOG("fds %d -> %d, /dev/shm entries %d -> %d", fds0, count_entries("/proc/self/fd"), shm0,
             shm1);
    OBCT_EQ_INT(shm1, shm0);
    return obct_finish("mem_alloc");
}
