/* SPDX-License-Identifier: MIT */
/*
 * board.h - this rank's public record (the arena's board): which operation
 * it is in, which it finished last, and a flight recorder of its recent
 * operations, readable by every rank of the host at any time, even while
 * the owner is stopped or stuck. The engine uses it for:
 *  - named hangs: on a timeout, say which ranks have not arrived at the
 *    operation and what each of them last completed;
 *  - mismatches without OBC_CHECK: when a wait stalls, ranks that entered
 *    the same operation number with a different call are named at once;
 *  - check mode: OBC_CHECK=1 compares every rank's call before data moves,
 *    OBC_CHECK=2 also the broadcast payload's hash after it.
 * Only while one arena holds every rank of the communicator (one host): with
 * several hosts the boards are off (arena NULL below). The TCP transport
 * does not carry them; across hosts a mismatch is found by the frames'
 * stamps once the two calls exchange data, else it ends in a timeout
 * (docs/multihost.md).
 */
#ifndef OBC_ENGINE_BOARD_H
#define OBC_ENGINE_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "algo/algo.h"

struct obc__boards {
    struct obc__arena *arena; /* NULL: no boards (one rank, or several hosts) */
    int rank;
    int nranks;
    int check; /* OBC_CHECK */
    const char *dump_path; /* OBC_DEBUG_DUMP, "" for the log */
};

/* Flight recorder entries kept per rank. */
#define OBC_BOARD_RECENT 32

void obc__board_enter(struct obc__boards *b, const struct obc__coll_args *args);
void obc__board_leave(struct obc__boards *b, const struct obc__coll_args *args, obc_result_t res);

/* OBC_CHECK >= 1, before data moves: OBC_SUCCESS once every rank entered
 * this operation with the same call, OBC_ERR_MISMATCH (message in err)
 * when one did not, OBC_IN_PROGRESS with *w while some have not arrived. */
obc_result_t obc__board_check_arrival(struct obc__boards *b, const struct obc__coll_args *args,
                                      struct obc__err *err, struct obc__wait *w);
/* OBC_CHECK >= 2, after a broadcast: post this rank's payload hash, then as
 * above, comparing every rank's hash with the root's. */
void obc__board_post_hash(struct obc__boards *b, const struct obc__coll_args *args);
obc_result_t obc__board_check_hash(struct obc__boards *b, const struct obc__coll_args *args,
                                   struct obc__err *err, struct obc__wait *w);

/* A stalled wait: OBC_ERR_MISMATCH (message in err) if a rank entered this
 * operation's number with a different call, else OBC_SUCCESS. */
obc_result_t obc__board_find_mismatch(struct obc__boards *b, const struct obc__coll_args *args,
                                      struct obc__err *err);
/* Append to out who has not arrived at this operation and what each last
 * completed ("rank 3 has not arrived (last completed allreduce #11)"). */
void obc__board_describe_laggards(struct obc__boards *b, const struct obc__coll_args *args,
                                  char *out, size_t nbytes);
/* The flight recorder of this rank and of the ranks that have not arrived,
 * to OBC_DEBUG_DUMP or the log. */
void obc__board_dump(struct obc__boards *b, const struct obc__coll_args *args);

#endif
