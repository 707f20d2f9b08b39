/* SPDX-License-Identifier: MIT */
/*
 * shm_wait.c - how a rank waits for a shared word to change, and how it
 * notices that waiting is pointless (the arena was aborted, a peer died).
 *
 * Three phases: busy-poll for policy.spin_ns (the cheapest wake-up, ~0.2 us,
 * worth it only while ranks do not outnumber cores), then sched_yield until
 * policy.yield_ns (lets the rank that holds the data run on this core), then
 * sleep on a futex in slices of at most 100 ms; between slices the abort
 * word and the peers' pidfds are checked, so a dead peer is noticed within
 * about a slice. Writers call futex_wake only when the sleeper count beside
 * the word is non-zero; both sides use seq_cst on (value, sleepers), so a
 * store cannot slip between a sleeper's last check and its futex_wait
 * (the kernel re-checks the value too).
 */
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "platform/platform.h"
#include "transport/shm/shm_arena.h"

#define SLEEP_SLICE_NS 100000000ll /* 100 ms between health checks while asleep */
#define HEALTH_EVERY_NS 20000000ll /* pidfds are polled at most every 20 ms */

void obc__shm_flag_store(struct shm_flag *f, uint32_t value)
{
    atomic_store_explicit(&f->value, value, memory_order_seq_cst);
    if (atomic_load_explicit(&f->sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&f->value, true);
    }
}

uint32_t obc__shm_flag_add(struct shm_flag *f, uint32_t delta)
{
    uint32_t v = atomic_fetch_add_explicit(&f->value, delta, memory_order_seq_cst) + delta;
    if (atomic_load_explicit(&f->sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&f->value, true);
    }
    return v;
}

void obc__arena_abort(struct obc__arena *a, obc_result_t code, int culprit_rank)
{
    uint64_t none = 0, word = obc__verdict_word(code, culprit_rank);
    /* The first reason wins; later ones are consequences. */
    atomic_compare_exchange_strong_explicit(&a->hdr->abort_word, &none, word, memory_order_release,
                                            memory_order_relaxed);
}

int obc__arena_culprit(const struct obc__arena *a)
{
    uint64_t word = atomic_load_explicit(&a->hdr->abort_word, memory_order_acquire);
    return word == 0 ? -1 : obc__verdict_rank(word);
}

static obc_result_t report_abort(struct obc__arena *a, uint64_t word)
{
    int who = obc__verdict_rank(word);
    obc_result_t code = obc__verdict_code(word);
    switch (code) {
    case OBC_ERR_PEER_LOST:
        return obc__err_set(a->err, OBC_ERR_PEER_LOST,
                            "rank %d was lost (its process exited or became unreachable)", who);
    case OBC_ERR_MISMATCH:
        return obc__err_set(a->err, OBC_ERR_MISMATCH,
                            "rank %d found ranks disagreeing on a collective; see its log", who);
    case OBC_ERR_ABORTED:
        return obc__err_set(a->err, OBC_ERR_ABORTED, "communicator aborted by rank %d", who);
    default: /* e.g. a connection of another rank here failed (malformed data from `who`) */
        return obc__err_set(a->err, OBC_ERR_ABORTED, "communicator broken by rank %d (%s)", who,
                            obc_strerror(code));
    }
}

static obc_result_t check_abort(struct obc__arena *a)
{
    uint64_t word = atomic_load_explicit(&a->hdr->abort_word, memory_order_acquire);
    return word == 0 ? OBC_SUCCESS : report_abort(a, word);
}

static obc_result_t check_peers(struct obc__arena *a)
{
    for (int r = 0; r < a->nranks; r++) {
        if (r == a->rank || !obc__pidfd_exited(a->pidfds[r]) ||
            atomic_load_explicit(&a->mailboxes[r].departed, memory_order_acquire)) {
            continue;
        }
        obc__arena_abort(a, OBC_ERR_PEER_LOST, a->peers[r].rank);
        return obc__err_set(a->err, OBC_ERR_PEER_LOST,
                            "rank %d (pid %d) died without leaving the communicator",
                            a->peers[r].rank, (int)a->peers[r].pid);
    }
    return OBC_SUCCESS;
}

obc_result_t obc__arena_health(struct obc__arena *a)
{
    obc_result_t res = check_abort(a);
    int64_t now;
    if (res != OBC_SUCCESS) {
        return res;
    }
    now = obc__now_ns();
    if (now < a->next_health_ns) {
        return OBC_SUCCESS;
    }
    a->next_health_ns = now + HEALTH_EVERY_NS;
    return check_peers(a);
}

static bool changed(const struct obc__wait *w)
{
    return atomic_load_explicit(w->word, memory_order_acquire) != w->seen;
}

static obc_result_t sleep_phase(struct obc__arena *a, const struct obc__wait *w, int64_t start,
                                int64_t timeout_ns)
{
    for (;;) {
        obc_result_t res = obc__arena_health(a);
        int64_t slice = SLEEP_SLICE_NS, waited = obc__now_ns() - start;
        if (res != OBC_SUCCESS) {
            return res;
        }
        if (timeout_ns >= 0 && waited >= timeout_ns) {
            return OBC_ERR_TIMEOUT; /* the caller knows what it waited for */
        }
        if (timeout_ns >= 0 && timeout_ns - waited < slice) {
            slice = timeout_ns - waited;
        }
        atomic_fetch_add_explicit(w->sleepers, 1, memory_order_seq_cst);
        if (atomic_load_explicit(w->word, memory_order_seq_cst) == w->seen) {
            obc__futex_wait(w->word, w->seen, slice, true);
        }
        atomic_fetch_sub_explicit(w->sleepers, 1, memory_order_seq_cst);
        if (changed(w)) {
            return OBC_SUCCESS;
        }
    }
}

obc_result_t obc__arena_wait(struct obc__arena *a, const struct obc__wait *w, int64_t timeout_ns)
{
    int64_t start = obc__now_ns(), now = start;
    if (w->sleep_now) {
        return changed(w) ? OBC_SUCCESS : sleep_phase(a, w, start, timeout_ns);
    }
    for (unsigned i = 1;; i++) {
        if (changed(w)) {
            return OBC_SUCCESS;
        }
        if ((i & 63) == 0) {
            obc_result_t res = check_abort(a);
            if (res != OBC_SUCCESS) {
                return res;
            }
            now = obc__now_ns();
            if (now - start >= a->policy.spin_ns) {
                break;
            }
        }
        obc__cpu_relax();
    }
    while (now - start < a->policy.yield_ns) {
        obc__yield();
        if (changed(w)) {
            return OBC_SUCCESS;
        }
        obc_result_t res = obc__arena_health(a);
        if (res != OBC_SUCCESS) {
            return res;
        }
        now = obc__now_ns();
    }
    return sleep_phase(a, w, start, timeout_ns);
}
