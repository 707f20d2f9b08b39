/* SPDX-License-Identifier: MIT */
/*
 * bcast_mapped.c - broadcasts from obc_mem_alloc blocks, which every reader
 * copies straight out of the root's memory (the arena's one-copy mode,
 * src/algo/broadcast/bcast_mapped.c, below OBC_CMA_MIN_BYTES and when
 * forced; the single-copy broadcast's mapped reads, bcast_cma.c, above):
 *  - sizes on both sides of OBC_MAPPED_MIN_BYTES, every root, out of place
 *    (into a block and into ordinary memory) and in place; guard bytes
 *    around the ordinary destination stay untouched;
 *  - the mechanism itself: after such a broadcast a reader holds a
 *    read-only shared mapping of one of the root's memfds (/proc/self/maps),
 *    and none once the communicator is gone;
 *  - a fused group of 150 tensors at offsets of one block (and one group
 *    with a tensor outside the blocks, which is staged);
 *  - more blocks than a reader keeps mapped, freed and allocated again so
 *    the root's fd numbers are reused with new contents: never stale data;
 *  - a rank whose group splits the same bytes differently gets
 *    OBC_ERR_MISMATCH, and the root an error too, never a hang.
 * Without single-copy permission (OBC_CMA=0) the same calls are staged.
 */
/* obct: nranks=2,4 */
/* obct: name=nocma env=OBC_CMA=0 nranks=3 */
/* obct: name=arena env=OBC_ALGO=broadcast=arena nranks=3 */
/* obct: name=odd env=OBC_MAPPED_MIN_BYTES=4097 nranks=3 san */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bcase.h"
#include "data.h"
#include "obct.h"

#define MIB ((size_t)1 << 20)

/* Shared memfd mappings of this process with the given permissions
 * ("rw-s": its own blocks, "r--s": peers' blocks mapped to read them). */
static int memfd_maps(const char *perms)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    OBCT_ASSERT(f != NULL);
    while (fgets(line, sizeof(line), f) != NULL) {
        n += strstr(line, perms) != NULL && strstr(line, "memfd:obc-mem") != NULL;
    }
    fclose(f);
    return n;
}

static bool cma_allowed(void)
{
    const char *v = getenv("OBC_CMA");
    return v == NULL || strcmp(v, "0") != 0;
}

static void *block(size_t n, obc_comm_t *comm)
{
    void *p = NULL;
    OBCT_OK(obc_mem_alloc(&p, n, comm), comm);
    return p;
}

/* One size from every root, three ways. */
static void sizes(obc_comm_t *comm)
{
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    const size_t list[] = {MIB - 1, MIB, 3 * MIB + 5, 16 * MIB + 7};
    size_t count = sizeof(list) / sizeof(list[0]) - (obct_quick() ? 1 : 0); /* no 16 MiB */
    for (size_t s = 0; s < count; s++) {
        size_t n = list[s];
        void *send = block(n, comm), *recv = block(n, comm);
        struct obct_buf plain;
        obct_buf_alloc(&plain, n, 3);
        for (int root = 0; root < nranks; root++) {
            uint64_t seed = s * 16 + (uint64_t)root;
            obct_fill(send, n, seed, root);
            OBCT_OK(obc_broadcast(send, recv, n, OBC_UINT8, root, comm), comm);
            obct_verify("into a block", recv, n, seed, root);
            obct_verify("the root's sendbuf, unchanged", send, n, seed, root);
            obct_poison(plain.data, n);
            OBCT_OK(obc_broadcast(send, plain.data, n, OBC_UINT8, root, comm), comm);
            obct_verify("into ordinary memory", plain.data, n, seed, root);
            obct_buf_check("guards around it", &plain);
            if (rank == root) {
                obct_fill(recv, n, seed + 7, root);
            }
            OBCT_OK(obc_bcast(recv, n, OBC_UINT8, root, comm), comm);
            obct_verify("in place", recv, n, seed + 7, root);
        }
        obct_buf_free(&plain);
        OBCT_OK(obc_mem_free(send, comm), comm);
        OBCT_OK(obc_mem_free(recv, comm), comm);
    }
    /* Every rank was a reader of another rank's block. */
    int peers = memfd_maps("r--s");
    OBCT_LOG("read-only mappings of peers' blocks: %d", peers);
    if (cma_allowed()) {
        OBCT_ASSERT(peers >= 1);
    } else {
        OBCT_EQ_INT(peers, 0);
    }
}

/* Tensor i of the group: sizes from 1 B to about 64 KiB, and a few of
 * 1-2 MiB (each fused bucket crosses the mapped minimum). */
static size_t tensor_bytes(int i)
{
    return i % 37 == 5 ? MIB + (size_t)i * 4099 : (size_t)(i * i * 31 % 65536) + 1;
}

static void group(obc_comm_t *comm, bool one_outside)
{
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    enum { N = 150 };
    size_t off[N + 1];
    off[0] = 0;
    for (int i = 0; i < N; i++) {
        off[i + 1] = off[i] + tensor_bytes(i) + (size_t)(i % 8); /* unaligned offsets */
    }
    unsigned char *all = block(off[N], comm);
    struct obct_buf outside;
    obct_buf_alloc(&outside, tensor_bytes(77), 0);
    int root = nranks - 1;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            unsigned char *t = one_outside && i == 77 ? outside.data : all + off[i];
            if (rank == root) {
                obct_fill(t, tensor_bytes(i), (uint64_t)(i + 1000 * round), root);
            } else {
                obct_poison(t, tensor_bytes(i));
            }
        }
        OBCT_OK(obc_group_start(), NULL);
        for (int i = 0; i < N; i++) {
            unsigned char *t = one_outside && i == 77 ? outside.data : all + off[i];
            OBCT_OK(obc_bcast(t, tensor_bytes(i), OBC_UINT8, root, comm), comm);
        }
        OBCT_OK(obc_group_end(), NULL);
        for (int i = 0; i < N; i++) {
            unsigned char *t = one_outside && i == 77 ? outside.data : all + off[i];
            obct_verify("a tensor of the group", t, tensor_bytes(i), (uint64_t)(i + 1000 * round),
                        root);
        }
    }
    obct_buf_check("guards of the tensor outside the blocks", &outside);
    obct_buf_free(&outside);
    OBCT_OK(obc_mem_free(all, comm), comm);
}

/* The size from which a block's broadcast is read straight out of it. */
static size_t mapped_min_bytes(void)
{
    const char *v = getenv("OBC_MAPPED_MIN_BYTES");
    return v != NULL && atol(v) > 0 ? (size_t)atol(v) : MIB;
}

/* 70 blocks (a reader keeps 64 mapped) from rank 0, twice round, then all
 * freed and allocated again with other contents: the fds are reused. The
 * blocks are just over the mapped minimum (64 KiB at least): what is tested
 * is the count of mappings, and 1 MiB blocks cost TSan a minute. */
static void churn(obc_comm_t *comm)
{
    enum { NB = 70 };
    size_t min = mapped_min_bytes();
    size_t n = (min > 64 * 1024 ? min : 64 * 1024) + 11;
    void *b[NB];
    void *recv = block(n, comm);
    for (int gen = 0; gen < 3; gen++) {
        for (int i = 0; i < NB; i++) {
            b[i] = block(n + (size_t)i * 4096, comm);
            obct_fill(b[i], n, (uint64_t)(gen * 100 + i), 0);
        }
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < NB; i++) {
                OBCT_OK(obc_broadcast(b[i], recv, n, OBC_UINT8, 0, comm), comm);
                obct_verify("from one of many blocks", recv, n, (uint64_t)(gen * 100 + i), 0);
            }
        }
        for (int i = 0; i < NB; i++) {
            OBCT_OK(obc_mem_free(b[i], comm), comm);
        }
    }
    OBCT_OK(obc_mem_free(recv, comm), comm);
    int mapped = memfd_maps("r--s");
    OBCT_LOG("read-only mappings after the churn: %d", mapped);
    OBCT_ASSERT(mapped <= 64 * (obc_comm_size(comm) - 1) + 4);
    if (cma_allowed() && obc_comm_rank(comm) != 0) {
        OBCT_ASSERT(mapped >= 64); /* the churn went past the cap */
    }
}

/* The same 4 MiB cut 1 + 3 MiB on the last rank, 2 + 2 elsewhere: the
 * stamps agree (same total), the description does not. */
static void mismatch(obc_comm_t *parent)
{
    obc_comm_t *comm = NULL;
    OBCT_OK(obc_comm_dup(parent, &comm), parent);
    int rank = obc_comm_rank(comm), nranks = obc_comm_size(comm);
    unsigned char *buf = block(4 * MIB, comm);
    size_t first = rank == nranks - 1 ? MIB : 2 * MIB;
    obct_fill(buf, 4 * MIB, 5, rank);
    OBCT_OK(obc_comm_set_timeout(comm, 10 * obct_time_scale()), comm);
    OBCT_OK(obc_group_start(), NULL);
    OBCT_OK(obc_bcast(buf, first, OBC_UINT8, 0, comm), comm);
    OBCT_OK(obc_bcast(buf + first, 4 * MIB - first, OBC_UINT8, 0, comm), comm);
    obc_result_t rc = obc_group_end();
    OBCT_LOG("split differently: %s (%s)", obct_rc_name(rc), obc_comm_last_error(comm));
    if (rank == nranks - 1 && cma_allowed()) {
        OBCT_EQ_INT(rc, OBC_ERR_MISMATCH);
        OBCT_ASSERT(strstr(obc_comm_last_error(comm), "another size") != NULL);
    } else if (rank == 0 && cma_allowed()) {
        OBCT_ASSERT(rc != OBC_SUCCESS);
    }
    obc_comm_destroy(comm);
}

int main(void)
{
    obc_comm_t *comm = obct_comm_from_env();
    sizes(comm);
    group(comm, false);
    group(comm, true);
    churn(comm);
    OBCT_OK(obc_barrier(comm), comm);
    if (obc_comm_size(comm) > 1) {
        mismatch(comm);
    }
    OBCT_OK(obc_barrier(comm), comm);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    OBCT_EQ_INT(memfd_maps("r--s"), 0);
    OBCT_EQ_INT(memfd_maps("rw-s"), 0);
    return obct_finish("bcast_mapped");
}
