/* SPDX-License-Identifier: MIT */
/*
 * setup_arena.c - bootstrap rounds 2-4, which build the host arena (one
 * shared segment per machine and communicator):
 *   round 2  the machine's first rank creates the segment: its (random) name
 *   round 3  every rank has attached (or says why not) + a probe address;
 *            the creator unlinks the segment now: a crash later leaves no file
 *   round 4  whether single-copy reads from the next local rank worked
 * Every rank takes part in every round, whatever its machine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "core/log.h"
#include "platform/platform.h"
#include "setup/setup_impl.h"
#include "transport/arena.h"
#include "transport/transport.h"

#define SEG_NAME_BYTES 96
#define CHAN_NSLOTS 4

struct round3 {
    int64_t status; /* an obc_result_t: whether this rank attached (no padding: it is sent) */
    uint64_t probe_addr;
};

static const uint64_t cma_probe_word = 0x6f62632d636d6121ull;

/* Unpredictable names: obcrun's job id (it removes what a crashed job left),
 * or else "p<creator pid>", so that the next creator on the host can sweep a
 * segment whose creator died before unlinking it. */
#define SEG_PID_PREFIX "obc-p"

static void segment_name(const struct obc__config *cfg, char *out)
{
    unsigned char r[8] = {0};
    char owner[48];
    obc__random_bytes(r, sizeof(r));
    if (cfg->job_id[0] != '\0') {
        snprintf(owner, sizeof(owner), "%.40s", cfg->job_id);
    } else {
        snprintf(owner, sizeof(owner), "p%d", (int)getpid());
        int swept = obc__shm_sweep_dead(SEG_PID_PREFIX);
        if (swept > 0) {
            OBC_INFO(OBC_LOG_SHM, "removed %d shared-memory segment(s) left by dead processes",
                     swept);
        }
    }
    snprintf(out, SEG_NAME_BYTES, "/obc-%s-%02x%02x%02x%02x%02x%02x%02x%02x", owner, r[0], r[1],
             r[2], r[3], r[4], r[5], r[6], r[7]);
}

/* A channel's slot on a host of local_nranks: 8 MiB per rank for all its
 * channels, at most a chunk. */
size_t obc__setup_chan_slot_bytes(const struct obc__config *cfg, int local_nranks)
{
    size_t per_pair =
        (8u << 20) / (CHAN_NSLOTS * (size_t)(local_nranks > 1 ? local_nranks - 1 : 1));
    size_t bytes = per_pair > cfg->chunk_bytes ? cfg->chunk_bytes : per_pair;
    return (bytes < 4096 ? 4096 : bytes) & ~(size_t)63;
}

/*
 * How a wait spends its first moments, chosen by where the ranks may run
 * (measured on the 2-core VM beside one CPU-bound process, docs/perf/contention.md):
 *  - each rank bound to a core of its own: spin up to SPIN_OWNED_NS, never
 *    sched_yield. Yielding hands the core to the busy process for a whole
 *    time slice (a 1 MiB broadcast took 1-3 ms instead of 0.13-0.21); spinning
 *    takes the core from nobody of ours;
 *  - ranks that may share cores but do not outnumber them: a short spin,
 *    then yield, so that two ranks the scheduler stacked on one core let
 *    each other run (spinning 2 ms there made 16 MiB 1.7-5.8x slower);
 *  - more ranks than CPUs: yield at once (8 B at 8 ranks on 2 cores: span
 *    11-14 us with no spin, 16-21 us with 2 us of spin), and only for
 *    20 us before sleeping. The likely reason (not traced): a yield gives
 *    the core to whichever rank comes next, so waiting ranks that share a
 *    core hand it round among themselves; asleep, they leave it to the
 *    rank with work. Three runs of seven rounds at 4 and 8 ranks on 2
 *    cores, 8 B-1 MiB, both metrics (bench/results/2026-12-05-crowded-
 *    yield): most rows are two-mode from launch to launch, and 20 us moves
 *    launches to the fast mode. Medians over the 21 launches: 0.90 of 2 ms's
 *    time (geometric mean over 56 rows; 25 rows faster by more than 10%,
 *    4 slower, those four 4-rank broadcast rows by span whose launches
 *    split alike between the modes either way); allreduce at 4 ranks
 *    512 B-32 KiB 0.57-0.68, broadcast at 8 ranks 256 KiB 0.80. 0 (sleep
 *    at once) was far slower below 32 KiB (4-rank 8 B allreduce 44 us
 *    against 12). Measured again on a slower VM (bench/results/2026-12-06-
 *    crowded-yield-again), 40 launches of each at 4 ranks, idle and beside
 *    a busy process: 20 us was the best or level in every table against
 *    200 us and against yielding less only after a late yield (which took
 *    0.97-1.47x its time).
 * Then every wait sleeps on a futex. OBC_SPIN_NS and OBC_YIELD_NS override.
 */
#define SPIN_OWNED_NS 2000000
#define SPIN_SHARED_NS 100000
#define YIELD_NS 2000000
#define YIELD_CROWDED_NS 20000

static const char *wait_settings(const struct obc__config *cfg, const struct obc__host_layout *l,
                                 struct obc__wait_policy *policy)
{
    const char *why;
    if (l->local_nranks > l->machine_cpus) {
        policy->spin_ns = 0;
        policy->yield_ns = YIELD_CROWDED_NS;
        why = "more ranks than CPUs: yield briefly, then sleep";
    } else if (l->cores_owned) {
        policy->spin_ns = SPIN_OWNED_NS;
        policy->yield_ns = 0;
        why = "a core per rank: spin, then sleep";
    } else {
        policy->spin_ns = SPIN_SHARED_NS;
        policy->yield_ns = YIELD_NS;
        why = "cores shared with the scheduler's choice: spin briefly, yield, then sleep";
    }
    if (cfg->spin_ns >= 0) {
        policy->spin_ns = cfg->spin_ns;
    }
    if (cfg->yield_ns >= 0) {
        policy->yield_ns = cfg->yield_ns;
    }
    return why;
}

/*
 * The staging rings (the arena broadcast, bcast_ring.c). A broadcast larger
 * than its ring makes the root wait for the slowest reader once per ring's
 * worth; with more ranks than CPUs every such wait is a trip of all the
 * readers through the scheduler, and beside a CPU-bound process each trip
 * waits out time slices. So such hosts get a second, deeper ring for the
 * messages larger than the first. 8 ranks on the 2-core VM beside one busy
 * process, time over Open MPI's (bench/results/2026-12-06-crowded-ring):
 * 16 MiB 1.60-1.96x through 8 slots, 1.03-1.13x through 32; 64 MiB 1.47x
 * and 1.00x; 4 ranks at 64 MiB 1.37x and 0.54x. 64 slots (16 MiB) hold a
 * 16 MiB message whole, so its root writes and leaves: 0.89x / 0.83x (max
 * over ranks / span) against 1.19x / 1.15x through 32 and 1.22x / 0.97x
 * through 48; 64 MiB 0.87x / 0.64x against 0.98x / 0.79x
 * (bench/results/2026-12-06-deep-ring-64). Its cost is fixed: each rank's
 * peak RSS grows by 16.5 MiB in a 2 GiB broadcast (8.8 through 32).
 * Smaller messages keep the 8-slot ring: through 32 slots, 256 KiB
 * broadcasts at 8 ranks were 6-10x slower by span in about half the
 * launches (the slots go cold between uses). Hosts with a CPU per rank
 * need no second ring: their readers keep up. OBC_PIPELINE_DEPTH sets the
 * first ring and turns the second off.
 */
#define STAGE_DEPTH 8
#define DEEP_DEPTH 64
#define UNUSED_DEPTH 2 /* never deeper than the staging ring: never used */

static obc_result_t arena_settings(const struct obc__config *cfg, const struct obc__host_layout *l,
                                   struct obc__arena_geometry *geo, struct obc__err *err)
{
    bool automatic = cfg->pipeline_depth < 0;
    int depth = automatic ? STAGE_DEPTH : cfg->pipeline_depth;
    bool crowded = l->local_nranks > l->machine_cpus;
    if (cfg->chunk_bytes < 4096 || cfg->chunk_bytes > (16u << 20) || depth < 2 || depth > 1024) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "OBC_CHUNK_BYTES (%zu) must be 4 KiB .. 16 MiB and "
                            "OBC_PIPELINE_DEPTH (%d) 2 .. 1024",
                            cfg->chunk_bytes, depth);
    }
    geo->nslots[OBC_RING_EAGER] = 64;
    geo->slot_bytes[OBC_RING_EAGER] = 16 * 1024;
    geo->nslots[OBC_RING_STAGE] = (uint32_t)depth;
    geo->slot_bytes[OBC_RING_STAGE] = cfg->chunk_bytes;
    geo->nslots[OBC_RING_DEEP] = automatic && crowded ? DEEP_DEPTH : UNUSED_DEPTH;
    geo->slot_bytes[OBC_RING_DEEP] = cfg->chunk_bytes;
    /* Windows: WIN_DEPTH (4) input and 4 result chunks per rank. Channels:
     * 4 slots per ordered pair, smaller as ranks multiply (they cost
     * address space for every pair, memory only for pairs that talk). */
    geo->window_bytes = 8 * cfg->chunk_bytes;
    geo->chan_nslots = CHAN_NSLOTS;
    geo->chan_slot_bytes = obc__setup_chan_slot_bytes(cfg, l->local_nranks);
    return OBC_SUCCESS;
}

/* Can /dev/shm hold the whole segment? It is sparse, so making it always
 * works, but a page the tmpfs cannot back fails with SIGBUS at its first
 * write, in the middle of some later collective. A container's /dev/shm is
 * 64 MiB unless told otherwise, and 8 ranks on a host need 84-99 MiB:
 * every local rank checks, so every one can say why it stops. */
static obc_result_t check_shm_room(struct obc_comm *c, const struct obc__arena_geometry *geo)
{
    const double mib = 1024.0 * 1024.0;
    size_t need = obc__arena_segment_bytes(c->layout.local_nranks, geo);
    int64_t room = obc__shm_free_bytes();
    if (room < 0 || (uint64_t)room >= need) {
        return OBC_SUCCESS; /* no statvfs answer: nothing to judge by */
    }
    return obc__err_set(&c->err, OBC_ERR_NO_MEMORY,
                        "/dev/shm has %.1f MiB free, and the shared memory of %d ranks on "
                        "this host needs %.1f MiB: make /dev/shm larger (in a container: "
                        "docker run --shm-size), run fewer ranks per host, or lower "
                        "OBC_CHUNK_BYTES",
                        (double)room / mib, c->layout.local_nranks, (double)need / mib);
}

/* Rounds 2 and 3: create or attach the segment, then unlink it. */
static obc_result_t build_arena(struct obc_comm *c, struct obc__boot *boot,
                                const struct obc__arena_peer *peers, char (*names)[SEG_NAME_BYTES],
                                struct round3 *r3)
{
    const struct obc__host_layout *l = &c->layout;
    struct obc__arena_geometry geo;
    struct obc__wait_policy policy;
    char mine[SEG_NAME_BYTES] = "";
    struct round3 me = {0, (uint64_t)(uintptr_t)&cma_probe_word};
    bool leader = l->local_rank == 0;
    obc_result_t res;
    const char *waits = wait_settings(&c->config, l, &policy);
    OBC_CHECK(arena_settings(&c->config, l, &geo, &c->err));
    obc_result_t room = check_shm_room(c, &geo);
    if (leader) {
        segment_name(&c->config, mine);
        res = room != OBC_SUCCESS
            ? room
            : obc__arena_create(mine, 0, l->local_nranks, &geo, peers, &policy, &c->err, &c->arena);
        me.status = res;
        if (res != OBC_SUCCESS) {
            mine[0] = '\0'; /* nothing to attach to, nothing to unlink */
        }
    }
    OBC_CHECK(obc__boot_allgather(boot, mine, sizeof(mine), names, &c->err));
    if (!leader) {
        const char *name = names[peers[0].rank];
        res = room; /* no name: the leader failed, and says why in round 3 */
        if (res == OBC_SUCCESS && name[0] != '\0') {
            res = obc__arena_attach(name, l->local_rank, l->local_nranks, peers, &policy, &c->err,
                                    &c->arena);
        }
        me.status = res;
    }
    res = obc__boot_allgather(boot, &me, sizeof(me), r3, &c->err);
    if (leader && mine[0] != '\0') {
        obc__arena_unlink(mine);
    }
    OBC_CHECK(res);
    if (me.status != OBC_SUCCESS) {
        return (obc_result_t)me.status; /* this rank's own reason, already in c->err */
    }
    for (int r = 0; r < c->nranks; r++) {
        if (r3[r].status != OBC_SUCCESS) {
            return obc__err_set(&c->err, OBC_ERR_SYSTEM,
                                "rank %d could not set up the host's shared memory (%s)", r,
                                obc_strerror((obc_result_t)r3[r].status));
        }
    }
    OBC_INFO(OBC_LOG_INIT,
             "transport shm: %d local ranks on %d CPUs, %zu-byte segment (staging ring %u x "
             "%zu bytes, deep ring %u); waits spin %lld ns, yield until %lld ns (%s)",
             l->local_nranks, l->machine_cpus, obc__arena_bytes(c->arena),
             (unsigned)geo.nslots[OBC_RING_STAGE], geo.slot_bytes[OBC_RING_STAGE],
             geo.nslots[OBC_RING_DEEP] > geo.nslots[OBC_RING_STAGE]
                 ? (unsigned)geo.nslots[OBC_RING_DEEP]
                 : 0u,
             (long long)policy.spin_ns, (long long)policy.yield_ns, waits);
    return OBC_SUCCESS;
}

/* Round 4: may local ranks read each other's memory (process_vm_readv)? */
static obc_result_t probe_cma(struct obc_comm *c, struct obc__boot *boot,
                              const struct obc__arena_peer *peers, const struct round3 *r3)
{
    const struct obc__host_layout *l = &c->layout;
    int32_t ok = 1, *all = malloc(sizeof(int32_t) * (size_t)c->nranks);
    if (all == NULL) {
        return obc__err_set(&c->err, OBC_ERR_NO_MEMORY, "probe table");
    }
    if (l->local_nranks > 1) {
        int next = (l->local_rank + 1) % l->local_nranks;
        ok = c->config.cma &&
            obc__arena_probe_cma(c->arena, peers[next].rank,
                                 (const void *)(uintptr_t)r3[peers[next].rank].probe_addr);
    }
    obc_result_t res = obc__boot_allgather(boot, &ok, sizeof(ok), all, &c->err);
    for (int r = 0; res == OBC_SUCCESS && r < c->nranks; r++) {
        ok &= all[r];
    }
    free(all);
    if (res == OBC_SUCCESS) {
        obc__arena_set_cma(c->arena, ok != 0);
        OBC_INFO(OBC_LOG_INIT, "single-copy transfers (process_vm_readv): %s",
                 ok                  ? "available"
                     : c->config.cma ? "not permitted"
                                     : "disabled by OBC_CMA=0");
    }
    return res;
}

obc_result_t obc__setup_arena(struct obc_comm *c, struct obc__boot *boot,
                              const struct obc__setup_hello *hello)
{
    const struct obc__host_layout *l = &c->layout;
    obc_result_t res;
    char(*names)[SEG_NAME_BYTES] = calloc((size_t)c->nranks, SEG_NAME_BYTES);
    struct round3 *r3 = calloc((size_t)c->nranks, sizeof(*r3));
    struct obc__arena_peer *peers = malloc(sizeof(*peers) * (size_t)l->local_nranks);
    res = names && r3 && peers ? OBC_SUCCESS
                               : obc__err_set(&c->err, OBC_ERR_NO_MEMORY, "arena tables");
    OBC_CHECK_GOTO(res, res, out);
    for (int i = 0; i < l->local_nranks; i++) {
        peers[i] = (struct obc__arena_peer){(pid_t)hello[l->local[i]].pid, l->local[i]};
    }
    OBC_CHECK_GOTO(build_arena(c, boot, peers, names, r3), res, out);
    OBC_CHECK_GOTO(probe_cma(c, boot, peers, r3), res, out);
out:
    free(names);
    free(r3);
    free(peers);
    return res;
}
