/* SPDX-License-Identifier: MIT */
/*
 * setup_p2p.c - the p2p links of a communicator: the host arena's channels
 * to ranks of this machine and, when the ranks span several machines,
 * bootstrap round 5 (every rank's TCP listening address) and a connection
 * for every pair of ranks on different machines.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "platform/platform.h"
#include "setup/setup_impl.h"
#include "transport/transport.h"

/* Slots per direction of a link. A sender whose ring is full sleeps until
 * half of it is free (tcp_link.c), so the thread keeps half a ring to send
 * while the rank wakes: with 8 slots of 256 KiB that is 1 MiB. Measured on
 * loopback against 4 slots woken per slot (in-place broadcast, each rank
 * its own host, medians of 5 alternating rounds with Open MPI;
 * bench/results/2026-12-07-tcp-wakes): 2 idle ranks 0.67-0.94x the time
 * from 64 KiB to 64 MiB, beside a busy process 0.88-1.11x, 4 ranks on 2
 * CPUs 0.77-0.98x (64 MiB: 1.18x in those rounds, 0.94x in 5 more); still
 * 1.2-1.6x Open MPI's time from 1 MiB when idle, 1.7-5.6x beside a busy process.
 * Memory: 2 x 8 slots per link, allocated once, touched only by the
 * frames that land in them or are copied into them (posted receives land
 * in the caller's buffer; a send by reference writes its header only):
 * peak RSS +1 MB in a 2-rank broadcast to 64 MiB, +3 MB in a 4-rank
 * alltoall to 16 MiB. */
#define TCP_NSLOTS 8

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
                            c->rank, c->layout.machines);
    }
    return OBC_SUCCESS;
}

/* The usable bytes of a p2p slot, the same for every pair on every rank:
 * a chunk, or less where a crowded machine's channels are smaller. */
static size_t common_slot_bytes(const struct obc_comm *c)
{
    const struct obc__host_layout *l = &c->layout;
    size_t bytes = l->machines > 1 ? c->config.chunk_bytes & ~(size_t)63 : SIZE_MAX;
    for (int m = 0; m < l->machines; m++) {
        int n = 0;
        for (int r = 0; r < c->nranks; r++) {
            n += l->machine_of[r] == m;
        }
        size_t chan = obc__setup_chan_slot_bytes(&c->config, n);
        bytes = chan < bytes ? chan : bytes;
    }
    return bytes;
}

obc_result_t obc__setup_p2p(struct obc_comm *c, struct obc__boot *boot)
{
    struct obc__p2p_setup s = {
        .arena = c->arena,
        .rank = c->rank,
        .nranks = c->nranks,
        .remote = c->layout.remote,
        .slot_bytes = common_slot_bytes(c),
        .tcp_nslots = TCP_NSLOTS,
        .listen_fd = -1,
        .timeout_ns = obc__config_timeout_ns(c->config.timeout_s),
    };
    struct obc__tcp_contact me, *all = NULL;
    char ip[64];
    obc_result_t res = OBC_SUCCESS;
    if (c->layout.machines > 1) {
        all = calloc((size_t)c->nranks, sizeof(*all));
        res = all != NULL ? tcp_address(c, boot, ip, sizeof(ip)) : OBC_ERR_NO_MEMORY;
        if (res == OBC_SUCCESS) {
            res = obc__tcp_listen(ip, c->nranks, &me, &s.listen_fd, &c->err);
        }
        if (res == OBC_SUCCESS) {
            OBC_INFO(OBC_LOG_INIT, "tcp: listening on %s:%d for %d hosts", me.addr, (int)me.port,
                     c->layout.machines);
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
