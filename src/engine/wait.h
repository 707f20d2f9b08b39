/* SPDX-License-Identifier: MIT */
/*
 * wait.h - the one wait of the library: until a word changes, under a
 * deadline, spinning while that is cheap and sleeping on a futex after.
 * Every transport's word (arena flags and counters, TCP ring indexes) and
 * the engine's own words (an op's `done`, the completed count) go through
 * it; what differs is in struct obc__wait_rules, filled by the caller.
 */
#ifndef OBC_ENGINE_WAIT_H
#define OBC_ENGINE_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "transport/transport.h"

struct obc__wait_rules {
    int64_t spin_ns; /* busy-poll this long (0: not at all) */
    int64_t yield_ns; /* then sched_yield until this long since the start */
    int64_t slice_ns; /* futex sleeps last at most this (< 0: no limit) */
    bool shared; /* the word's wakers use shared futexes (another process may wake it) */
    /* Between polls and slices: OBC_SUCCESS to go on waiting, else the
     * reason to stop (the arena was aborted, a peer died). NULL: none. */
    obc_result_t (*health)(void *arg);
    void *arg;
};

/* Until *w->word != w->seen (OBC_SUCCESS), health() says otherwise (its
 * code), or timeout_ns pass without change (OBC_ERR_TIMEOUT; < 0: never).
 * w->sleep_now skips the spin and yield phases. */
obc_result_t obc__wait_word(const struct obc__wait *w, const struct obc__wait_rules *r,
                            int64_t timeout_ns);

#endif
