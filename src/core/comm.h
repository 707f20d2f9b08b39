/* SPDX-License-Identifier: MIT */
/*
 * comm.h - struct obc_comm, built from module-owned parts: the config
 * snapshot, the error buffer, the host layout, the transports (host arena,
 * p2p) and the engine. Core owns only the ground floor (rank, config,
 * errors); the transports and the engine are opaque here, and
 * setup/comm_setup.c assembles and takes apart the whole.
 */
#ifndef OBC_CORE_COMM_H
#define OBC_CORE_COMM_H

#include "obc.h"
#include "core/config.h"
#include "core/host_layout.h"
#include "core/mem.h"
#include "core/status.h"

/* A rank's machine identity as bootstrap round 1 carries it (setup_impl.h). */
#define OBC_COMM_HOST_ID_BYTES 96

struct obc__arena;
struct obc__p2p;
struct obc__engine;

/* The most staging buffers obc_broadcast_as keeps (OBC_CAST_DEPTH's bound). */
#define OBC_COMM_CAST_MAX_DEPTH 16

struct obc_comm {
    int rank;
    int nranks;
    struct obc__config config;
    struct obc__err err;
    char last_error[OBC_ERR_MSG_BYTES]; /* snapshot returned by obc_comm_last_error */
    struct obc__host_layout layout; /* filled by setup, from the bootstrap */
    /* This rank's machine identity as it sent it in round 1: a child made by
     * obc_comm_split sends the same, so its machines are its parent's. */
    char host_id[OBC_COMM_HOST_ID_BYTES];
    /* The address this rank reached its rendezvous from ("" if unknown): the
     * TCP address setup picks by default, for this comm and its children. */
    char boot_ip[64];
    struct obc__arena *arena;
    struct obc__p2p *p2p;
    struct obc__engine *engine;
    bool closing_broken; /* destroyed after a failure: do not linger for peers */
    struct obc__mem_list mem; /* obc_mem_alloc's blocks, freed at the latest by release */
    /* obc_broadcast_as's staging buffers, made at its first call and kept (a
     * communicator is used by one thread at a time): depth x chunk bytes, not
     * growing with the message, and no allocation or first-touch per call. */
    unsigned char *cast_stage[OBC_COMM_CAST_MAX_DEPTH];
    size_t cast_stage_bytes; /* bytes of each of them (0: none made yet) */
};

/* The ground floor of a communicator: rank, nranks, a copy of cfg and an
 * empty error buffer; everything else zero. On failure *out is NULL and the
 * message is in the thread's error buffer. */
obc_result_t obc__comm_alloc(const struct obc__config *cfg, int rank, int nranks,
                             struct obc_comm **out);
/* Free what obc__comm_alloc made, and the obc_mem_alloc blocks still held.
 * The caller has taken down the rest (no op can touch them any more). */
void obc__comm_release(struct obc_comm *comm);

#endif
