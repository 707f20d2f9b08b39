/* SPDX-License-Identifier: MIT */
/*
 * p2p_msg.h - sending and receiving checked items over p2p channels, for
 * the algorithms that use them (ring, recursive doubling, chain,
 * dissemination).
 */
#ifndef OBC_ALGO_P2P_MSG_H
#define OBC_ALGO_P2P_MSG_H

#include "algo/algo.h"

/* The next item from peer, checked: it must carry the op's stamp and
 * exactly nbytes; anything else is a mismatch that breaks the communicator
 * (*res = OBC_ERR_MISMATCH, message naming both ranks). NULL with
 * *res = OBC_IN_PROGRESS while it has not arrived. Release it with
 * obc__p2p_recv_release. */
void *p2p_expect(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args, int peer,
                 size_t nbytes, uint64_t stamp, obc_result_t *res, struct obc__wait *w);

#endif
