/* SPDX-License-Identifier: MIT */
/*
 * px.h - the personal exchange: the building block of gather, scatter,
 * alltoall, alltoallv and allgatherv over the p2p interface (within a host
 * the arena's channels, across hosts TCP links). A rank's part of one of
 * these collectives is a list of units; a unit is at most one message to a
 * peer and one message from a peer (or a local copy of the rank's own
 * block). A few units (plan.peers_in_flight) progress at once, both
 * directions in the same pass, so neither a pairwise exchange nor a root
 * serving many peers ever waits on one direction while the other could
 * move.
 *
 * A message is cut into items of one p2p slot; the first carries an 8-byte
 * header, the message's length, so that a receiver whose count differs
 * from its sender's fails at the first item with OBC_ERR_MISMATCH naming
 * the sender and both counts, and a message of 0 bytes is still one item
 * (a count that is 0 on one side only cannot leave an item behind or a
 * receiver waiting). Every item carries the op's stamp.
 *
 * Pulled messages (alltoallv, allgatherv; plan.pull_min_bytes): a message
 * of at least that many bytes to a rank of this host moves single copy.
 * Both ends know its size (the sender's count, the receiver's), so both
 * choose alike. Its one item is a 16-byte header: the length with
 * PX_PULL_BIT set, and the address of the sender's bytes; the receiver
 * reads them with process_vm_readv, then sends the sender an ack item,
 * after its own message to that sender. The sender's message is done at
 * the ack, after the receiver's message on the same channel, so its
 * buffer stays untouched until the receiver has read it. A count that
 * differs between the two ends still fails at the header (the lengths
 * differ).
 */
#ifndef OBC_ALGO_PX_H
#define OBC_ALGO_PX_H

#include "algo/algo.h"

/* The most units in flight (plan.peers_in_flight is clamped to it). */
#define PX_MAX_INFLIGHT 8

/* Several pairwise units in flight: a rank sleeps on one blocked word at a
 * time, for a turn of this long at first, doubling to the maximum while
 * nothing moves (px_step). */
#define PX_TURN_MIN_NS 20000
#define PX_TURN_MAX_NS 2000000

struct px_xfer {
    unsigned char *buf; /* a send's source is read only */
    size_t nbytes; /* payload of the message */
    size_t done; /* payload bytes moved */
    int peer; /* -1: no message in this direction */
    bool started; /* the first item (with the header) has moved */
    bool finished; /* every item has moved (a pulled send: its header) */
    bool pulled; /* read by the receiver from the sender's buffer (px.h) */
    bool referenced; /* an item went by reference: finished once its link drained */
};

struct px_unit {
    struct px_xfer send, recv;
    bool trails; /* in place: receive only bytes already sent (same region) */
    bool ack_owed; /* this rank pulled recv's message: an ack goes to its sender */
    bool ack_due; /* send was pulled: its receiver's ack follows recv's message */
    bool posted; /* recv is posted (admit): withdrawn when it finishes */
};

struct px_run {
    const struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    uint64_t stamp;
    size_t esize, slot;
    int me, n;
    int nunits; /* this rank's units */
    int next; /* first unit not yet admitted */
    int inflight; /* window size */
    struct px_unit active[PX_MAX_INFLIGHT]; /* unit u at active[u % inflight] */
    bool busy[PX_MAX_INFLIGHT];
    int first; /* oldest unit not finished */
    bool pairwise; /* a pairwise exchange (not a root serving its peers) */
    unsigned turn; /* which blocked word the next turn sleeps on */
    int64_t turn_ns; /* the next turn's length */
    size_t pull_min; /* plan.pull_min_bytes */
    bool by_ref; /* items are published by reference (obc__p2p_send_publish_ref) */
};

/* init() of every personal algorithm: the units follow from args. */
void px_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args);
/* step() of every personal algorithm. */
obc_result_t px_step(void *state, struct obc__wait *w);

#endif
