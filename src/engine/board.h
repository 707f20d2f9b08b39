/* SPDX-License-Identifier: MIT */
/*
 * board.h - this rank's public record (the arena's board): which operation
 * it is in, which it finished last, and a flight recorder of its recent
 * operations, readable by every rank of the host at any time, even while
 * the owner is stopped or stuck. The engine uses it for:
 *  - named hangs: on a timeout, say which ranks have not arrived at the
 *    operation and what each of them last completed (one host only);
 *  - check mode (check_mode.c), which reads the calls of this host's ranks
 *    here and those of other hosts' ranks from their notes.
 */
#ifndef OBC_ENGINE_BOARD_H
#define OBC_ENGINE_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "algo/algo.h"

struct obc__boards {
    struct obc__arena *arena; /* NULL: no boards */
    const bool *remote; /* [nranks]: ranks whose boards are on other hosts; NULL: none */
    int rank;
    int nranks;
    int check; /* OBC_CHECK */
    const char *dump_path; /* OBC_DEBUG_DUMP, "" for the log */
};

/* Flight recorder entries kept per rank. */
#define OBC_BOARD_RECENT 32

void obc__board_enter(struct obc__boards *b, const struct obc__coll_args *args);
void obc__board_leave(struct obc__boards *b, const struct obc__coll_args *args, obc_result_t res);

/* A consistent copy of one operation's entry. */
struct obc__board_call {
    uint64_t pos; /* seq + 1 */
    obc_coll_t coll;
    int root;
    obc_dtype_t dtype;
    obc_redop_t redop;
    size_t count, nbytes;
    int state;
    obc_result_t result;
    int64_t start_ns, end_ns;
};

/* Local rank `rank`'s call for operation seq, if its board holds it. */
bool obc__board_read(struct obc__boards *b, int rank, uint64_t seq, struct obc__board_call *c);
/* "allreduce (count 10, float32, sum)", "broadcast (count 12, int8, root 0)". */
void obc__board_describe_call(const struct obc__board_call *c, char *out, size_t nbytes);

/* A call this rank found different from its own (rank `rank`'s), for
 * the ranks of its host to name too; and local rank `rank`'s such finding
 * for operation seq, if it made one (the odd call's rank in *odd_rank). */
void obc__board_post_odd(struct obc__boards *b, int rank, const struct obc__board_call *odd);
bool obc__board_odd(struct obc__boards *b, int rank, uint64_t seq, int *odd_rank,
                    struct obc__board_call *odd);

/* Check mode's flags: a rank has arrived at an operation, or posted its
 * payload hash for it; *w waits for the flag when it has not. */
enum { OBC_BOARD_ARRIVED, OBC_BOARD_HASHED };
bool obc__board_reached(struct obc__boards *b, int rank, int what, uint64_t seq,
                        struct obc__wait *w);
void obc__board_post_hash(struct obc__boards *b, const struct obc__coll_args *args, uint64_t hash);
/* Local rank `rank`'s payload hash of operation seq, if it posted that one. */
bool obc__board_hash(struct obc__boards *b, int rank, uint64_t seq, uint64_t *hash);

/* Append to out who has not arrived at this operation and what each last
 * completed ("rank 3 has not arrived (last completed allreduce #11)"). */
void obc__board_describe_laggards(struct obc__boards *b, const struct obc__coll_args *args,
                                  char *out, size_t nbytes);
/* The flight recorder of this rank and of the ranks that have not arrived,
 * to OBC_DEBUG_DUMP or the log. */
void obc__board_dump(struct obc__boards *b, const struct obc__coll_args *args);

#endif
