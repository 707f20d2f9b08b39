/* SPDX-License-Identifier: MIT */
/*
 * comm.c - creating a communicator: join the rendezvous, learn which ranks
 * share this host (boot id + network namespace, or OBC_HOST_ID), build the
 * host arena, and connect to the ranks of other hosts:
 *   round 1  every rank: host identity, pid
 *   round 2  the host leader creates the segment: its (random) name
 *   round 3  every rank has attached (or says why not) + a probe address;
 *            the leader unlinks the segment now: a crash later leaves no file
 *   round 4  whether single-copy reads from the next local rank worked
 *   round 5  (several hosts) every rank's TCP listening address; then every
 *            pair of ranks on different hosts connects
 * The bootstrap connection is closed at the end: it is setup-time only.
 */
#include "core/comm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"
#include "core/log.h"
#include "platform/platform.h"

#define HOST_ID_BYTES 96
#define TCP_NSLOTS 4 /* per direction of a link: enough to keep a link busy */
/* Destroying a communicator lets remote peers receive what it sent last
 * for at most this long (or OBC_TIMEOUT, when shorter). */
#define P2P_DRAIN_MAX_NS 10000000000ll
#define SEG_NAME_BYTES 96

struct round1 {
    char host_id[HOST_ID_BYTES];
    int32_t pid;
};

struct round3 {
    int64_t status; /* an obc_result_t: whether this rank attached (no padding: it is sent) */
    uint64_t probe_addr;
};

static const uint64_t cma_probe_word = 0x6f62632d636d6121ull;

/* OBC_HOST_ID=rank/K (testing): ranks rank/K share a "host", so several
 * hosts, and TCP between them, can run on one machine under obcrun. */
static obc_result_t host_identity(const struct obc__config *cfg, int rank, char *out,
                                  struct obc__err *err)
{
    int per_host = 0;
    if (sscanf(cfg->host_id, "rank/%d", &per_host) == 1 && per_host > 0) {
        snprintf(out, HOST_ID_BYTES, "user:rank/%d:%d", per_host, rank / per_host);
        return OBC_SUCCESS;
    }
    if (cfg->host_id[0] != '\0') {
        snprintf(out, HOST_ID_BYTES, "user:%.88s", cfg->host_id);
        return OBC_SUCCESS;
    }
    int rc = obc__host_identity(out, HOST_ID_BYTES);
    if (rc != 0) {
        return obc__err_set(err, OBC_ERR_SYSTEM, "cannot read this host's identity");
    }
    return OBC_SUCCESS;
}

static bool same_host(const struct round1 *all, int a, int b)
{
    return strncmp(all[a].host_id, all[b].host_id, HOST_ID_BYTES) == 0;
}

/* From round 1: the hosts (numbered by their lowest rank), this rank's
 * place among the ranks of its host, and which ranks are elsewhere. */
static obc_result_t find_hosts(struct obc_comm *c, const struct round1 *all,
                               struct obc__arena_peer **peers)
{
    int nlocal = 0, nhosts = 0;
    *peers = malloc(sizeof(**peers) * (size_t)c->nranks);
    c->topo.host_of = calloc((size_t)c->nranks, sizeof(int));
    c->topo.remote = calloc((size_t)c->nranks, sizeof(bool));
    if (*peers == NULL || c->topo.host_of == NULL || c->topo.remote == NULL) {
        return obc__err_set(&c->err, OBC_ERR_NO_MEMORY, "host table");
    }
    for (int r = 0; r < c->nranks; r++) {
        int first = r;
        for (int q = 0; q < r && first == r; q++) {
            first = same_host(all, q, r) ? q : r;
        }
        c->topo.host_of[r] = first == r ? nhosts++ : c->topo.host_of[first];
        c->topo.remote[r] = !same_host(all, r, c->rank);
        if (!c->topo.remote[r]) {
            if (r == c->rank) {
                c->topo.local_rank = nlocal;
            }
            (*peers)[nlocal++] = (struct obc__arena_peer){(pid_t)all[r].pid, r};
        }
    }
    c->topo.local_nranks = nlocal;
    c->topo.nhosts = nhosts;
    c->topo.machines = nhosts;
    return OBC_SUCCESS;
}

/* OBC_HOST_SPLIT=K cuts one machine into hosts of K consecutive ranks for
 * the algorithms (data still moves through its shared memory), so that
 * hierarchical algorithms can be tested without several machines. */
static void split_hosts(struct obc_comm *c)
{
    int k = c->config.host_split;
    if (k <= 0) {
        return;
    }
    if (c->topo.machines > 1) {
        OBC_WARN("OBC_HOST_SPLIT=%d ignored: the ranks already span %d hosts", k, c->topo.machines);
        return;
    }
    for (int r = 0; r < c->nranks; r++) {
        c->topo.host_of[r] = r / k;
    }
    c->topo.nhosts = (c->nranks + k - 1) / k;
}

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

#define CHAN_NSLOTS 4

/* A channel's slot on a host of local_nranks: 8 MiB per rank for all its
 * channels, at most a chunk. */
static size_t chan_slot_bytes(const struct obc__config *cfg, int local_nranks)
{
    size_t per_pair =
        (8u << 20) / (CHAN_NSLOTS * (size_t)(local_nranks > 1 ? local_nranks - 1 : 1));
    size_t bytes = per_pair > cfg->chunk_bytes ? cfg->chunk_bytes : per_pair;
    return (bytes < 4096 ? 4096 : bytes) & ~(size_t)63;
}

static obc_result_t arena_settings(const struct obc__config *cfg, int local_nranks,
                                   struct obc__arena_geometry *geo, struct obc__wait_policy *policy,
                                   struct obc__err *err)
{
    if (cfg->chunk_bytes < 4096 || cfg->chunk_bytes > (16u << 20) || cfg->pipeline_depth < 2 ||
        cfg->pipeline_depth > 1024) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG,
                            "OBC_CHUNK_BYTES (%zu) must be 4 KiB .. 16 MiB and "
                            "OBC_PIPELINE_DEPTH (%d) 2 .. 1024",
                            cfg->chunk_bytes, cfg->pipeline_depth);
    }
    geo->nslots[OBC_RING_EAGER] = 64;
    geo->slot_bytes[OBC_RING_EAGER] = 16 * 1024;
    geo->nslots[OBC_RING_STAGE] = (uint32_t)cfg->pipeline_depth;
    geo->slot_bytes[OBC_RING_STAGE] = cfg->chunk_bytes;
    /* Windows: WIN_DEPTH (4) input and 4 result chunks per rank. Channels:
     * 4 slots per ordered pair, smaller as ranks multiply (they cost
     * address space for every pair, memory only for pairs that talk). */
    geo->window_bytes = 8 * cfg->chunk_bytes;
    geo->chan_nslots = CHAN_NSLOTS;
    geo->chan_slot_bytes = chan_slot_bytes(cfg, local_nranks);
    /* Spinning pays only while every rank has a core of its own; when ranks
     * outnumber cores, a waiter yields at once (measured: 8 B at 8 ranks on
     * 2 cores, span 11-14 us with no spin, 16-21 us with 2 us of spin). */
    if (cfg->spin_ns >= 0) {
        policy->spin_ns = cfg->spin_ns;
    } else {
        policy->spin_ns = local_nranks > obc__ncpus() ? 0 : 100000;
    }
    policy->yield_ns = cfg->yield_ns;
    return OBC_SUCCESS;
}

/* Rounds 2 and 3: create or attach the segment, then unlink it. */
static obc_result_t build_arena(struct obc_comm *c, struct obc__boot *boot,
                                const struct obc__arena_peer *peers, char (*names)[SEG_NAME_BYTES],
                                struct round3 *r3)
{
    struct obc__arena_geometry geo;
    struct obc__wait_policy policy;
    char mine[SEG_NAME_BYTES] = "";
    struct round3 me = {0, (uint64_t)(uintptr_t)&cma_probe_word};
    bool leader = c->topo.local_rank == 0;
    obc_result_t res;
    OBC_CHECK(arena_settings(&c->config, c->topo.local_nranks, &geo, &policy, &c->err));
    if (leader) {
        segment_name(&c->config, mine);
        res = obc__arena_create(mine, 0, c->topo.local_nranks, &geo, peers, &policy, &c->err,
                                &c->arena);
        me.status = res;
        if (res != OBC_SUCCESS) {
            mine[0] = '\0'; /* nothing to attach to, nothing to unlink */
        }
    }
    OBC_CHECK(obc__boot_allgather(boot, mine, sizeof(mine), names, &c->err));
    if (!leader) {
        const char *name = names[peers[0].rank];
        res = name[0] == '\0' ? OBC_ERR_SYSTEM
                              : obc__arena_attach(name, c->topo.local_rank, c->topo.local_nranks,
                                                  peers, &policy, &c->err, &c->arena);
        me.status = res;
    }
    res = obc__boot_allgather(boot, &me, sizeof(me), r3, &c->err);
    if (leader && mine[0] != '\0') {
        obc__arena_unlink(mine);
    }
    OBC_CHECK(res);
    for (int r = 0; r < c->nranks; r++) {
        if (r3[r].status != OBC_SUCCESS) {
            return obc__err_set(&c->err, OBC_ERR_SYSTEM,
                                "rank %d could not set up the host's shared memory (%s)", r,
                                obc_strerror((obc_result_t)r3[r].status));
        }
    }
    OBC_INFO(OBC_LOG_INIT, "transport shm: %d local ranks, %zu-byte segment, spin %lld ns",
             c->topo.local_nranks, obc__arena_bytes(c->arena), (long long)policy.spin_ns);
    return OBC_SUCCESS;
}

/* Round 4: may local ranks read each other's memory (process_vm_readv)? */
static obc_result_t probe_cma(struct obc_comm *c, struct obc__boot *boot,
                              const struct obc__arena_peer *peers, const struct round3 *r3)
{
    int32_t ok = 1, *all = malloc(sizeof(int32_t) * (size_t)c->nranks);
    if (all == NULL) {
        return obc__err_set(&c->err, OBC_ERR_NO_MEMORY, "probe table");
    }
    if (c->topo.local_nranks > 1) {
        int next = (c->topo.local_rank + 1) % c->topo.local_nranks;
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

/* The address ranks of other hosts reach this one on: OBC_SOCKET_IFNAME's
 * interface, else the one this rank reached the rendezvous from, never
 * loopback when the hosts are real (other machines cannot reach it). */
static obc_result_t tcp_address(struct obc_comm *c, struct obc__boot *boot, char *ip, size_t n)
{
    const char *want = c->config.socket_ifname;
    bool real_hosts = c->config.host_id[0] == '\0';
    if (want[0] != '\0') {
        obc__sock_pick_ifaddr(want, ip, n);
        if (strncmp(ip, "127.", 4) == 0 && strncmp(want, "lo", 2) != 0) {
            return obc__err_set(&c->err, OBC_ERR_SYSTEM,
                                "rank %d: OBC_SOCKET_IFNAME=%s matches no interface that is up "
                                "with an IPv4 address",
                                c->rank, want);
        }
        return OBC_SUCCESS;
    }
    if (obc__boot_local_ip(boot, ip, n) == 0 && (strncmp(ip, "127.", 4) != 0 || !real_hosts)) {
        return OBC_SUCCESS;
    }
    obc__sock_pick_ifaddr("", ip, n);
    if (strncmp(ip, "127.", 4) == 0) {
        return obc__err_set(&c->err, OBC_ERR_SYSTEM,
                            "rank %d: the ranks span %d hosts, but no network interface other "
                            "than loopback is up here",
                            c->rank, c->topo.machines);
    }
    return OBC_SUCCESS;
}

/* The usable bytes of a p2p slot, the same for every pair on every rank:
 * a chunk, or less where a crowded host's channels are smaller. */
static size_t common_slot_bytes(const struct obc_comm *c)
{
    size_t bytes = c->topo.machines > 1 ? c->config.chunk_bytes & ~(size_t)63 : SIZE_MAX;
    for (int h = 0; h < c->topo.machines; h++) {
        int n = 0;
        for (int r = 0; r < c->nranks; r++) {
            n += c->topo.host_of[r] == h;
        }
        size_t chan = chan_slot_bytes(&c->config, n);
        bytes = chan < bytes ? chan : bytes;
    }
    return bytes;
}

/* Round 5 (every rank, when the ranks span several hosts), then connect. */
static obc_result_t build_p2p(struct obc_comm *c, struct obc__boot *boot)
{
    struct obc__p2p_setup s = {
        .arena = c->arena,
        .rank = c->rank,
        .nranks = c->nranks,
        .remote = c->topo.remote,
        .slot_bytes = common_slot_bytes(c),
        .tcp_nslots = TCP_NSLOTS,
        .listen_fd = -1,
        .timeout_ns = obc__config_timeout_ns(c->config.timeout_s),
    };
    struct obc__tcp_contact me, *all = NULL;
    char ip[64];
    obc_result_t res = OBC_SUCCESS;
    if (c->topo.machines > 1) {
        all = calloc((size_t)c->nranks, sizeof(*all));
        res = all != NULL ? tcp_address(c, boot, ip, sizeof(ip)) : OBC_ERR_NO_MEMORY;
        if (res == OBC_SUCCESS) {
            res = obc__tcp_listen(ip, c->nranks, &me, &s.listen_fd, &c->err);
        }
        if (res == OBC_SUCCESS) {
            OBC_INFO(OBC_LOG_INIT, "tcp: listening on %s:%d for %d hosts", me.addr, (int)me.port,
                     c->topo.machines);
            res = obc__boot_allgather(boot, &me, sizeof(me), all, &c->err);
        }
        s.contacts = all;
    }
    if (res == OBC_SUCCESS) {
        res = obc__p2p_create(&s, &c->err, &c->p2p);
    } else if (s.listen_fd >= 0) {
        obc__fd_close(s.listen_fd);
    }
    free(all);
    return res;
}

static obc_result_t setup(struct obc_comm *c, struct obc__boot *boot)
{
    obc_result_t res;
    struct round1 me, *r1 = calloc((size_t)c->nranks, sizeof(*r1));
    char(*names)[SEG_NAME_BYTES] = calloc((size_t)c->nranks, SEG_NAME_BYTES);
    struct round3 *r3 = calloc((size_t)c->nranks, sizeof(*r3));
    struct obc__arena_peer *peers = NULL;
    memset(&me, 0, sizeof(me));
    me.pid = (int32_t)getpid();
    res = r1 && names && r3 ? OBC_SUCCESS : OBC_ERR_NO_MEMORY;
    OBC_CHECK_GOTO(res, res, out);
    OBC_CHECK_GOTO(host_identity(&c->config, c->rank, me.host_id, &c->err), res, out);
    OBC_CHECK_GOTO(obc__boot_allgather(boot, &me, sizeof(me), r1, &c->err), res, out);
    OBC_CHECK_GOTO(find_hosts(c, r1, &peers), res, out);
    OBC_CHECK_GOTO(build_arena(c, boot, peers, names, r3), res, out);
    OBC_CHECK_GOTO(probe_cma(c, boot, peers, r3), res, out);
    OBC_CHECK_GOTO(build_p2p(c, boot), res, out);
    split_hosts(c);
out:
    free(r1);
    free(names);
    free(r3);
    free(peers);
    return res;
}

obc_result_t obc__comm_create(const struct obc__config *cfg, const struct obc__boot_endpoint *ep,
                              int rank, int nranks, struct obc_comm **out)
{
    struct obc__boot *boot = NULL;
    obc_result_t res;
    struct obc_comm *c = calloc(1, sizeof(*c));
    *out = NULL;
    if (c == NULL) {
        return obc__err_set(NULL, OBC_ERR_NO_MEMORY, "communicator");
    }
    c->rank = rank;
    c->nranks = nranks;
    c->config = *cfg;
    obc__err_init(&c->err);
    obc__log_set_rank(rank);
    res = obc__boot_join(ep, rank, nranks, obc__config_timeout_ns(cfg->timeout_s), &boot, &c->err);
    if (res == OBC_SUCCESS) {
        res = setup(c, boot);
    }
    obc__boot_close(boot);
    if (res != OBC_SUCCESS) {
        return obc__comm_fail(c, res);
    }
    *out = c;
    return OBC_SUCCESS;
}

obc_result_t obc__comm_fail(struct obc_comm *comm, obc_result_t res)
{
    char msg[OBC_ERR_MSG_BYTES];
    obc__err_copy(&comm->err, msg, sizeof(msg));
    obc__comm_free(comm);
    obc__err_thread_set(msg);
    return res;
}

void obc__comm_free(struct obc_comm *comm)
{
    if (comm == NULL) {
        return;
    }
    int64_t drain = comm->closing_broken ? 0 : obc__config_timeout_ns(comm->config.timeout_s);
    obc__p2p_destroy(comm->p2p, drain < 0 || drain > P2P_DRAIN_MAX_NS ? P2P_DRAIN_MAX_NS : drain);
    obc__arena_destroy(comm->arena);
    free(comm->topo.host_of);
    free(comm->topo.remote);
    obc__err_fini(&comm->err);
    free(comm);
}
