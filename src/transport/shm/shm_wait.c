/* SPDX-License-Identifier: MIT */
/*
 * shm_wait.c - what is the arena's in a wait (the loop itself is the
 * engine's one wait, engine/wait.c): waking a shared word's sleepers, the
 * abort word, and noticing that waiting is pointless (the arena was
 * aborted, a peer died). Writers call futex_wake only when the sleeper
 * count beside the word is non-zero; both sides use seq_cst on (value,
 * sleepers), so a store cannot slip between a sleeper's last check and
 * its futex_wait (the kernel re-checks the value too).
 */
#include "core/log.h"
#include "platform/platform.h"
#include "transport/shm/shm_arena.h"

#define HEALTH_EVERY_NS 20000000ll /* pidfds are polled at most every 20 ms */

void obc__shm_flag_store(struct shm_flag *f, uint32_t value)
{
    atomic_store_explicit(&f->value, value, memory_order_seq_cst);
    if (atomic_load_explicit(&f->sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&f->value, true);
    }
}

uint32_t obc__shm_flag_swap(struct shm_flag *f, uint32_t value)
{
    uint32_t old = atomic_exchange_explicit(&f->value, value, memory_order_seq_cst);
    if (atomic_load_explicit(&f->sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&f->value, true);
    }
    return old;
}

uint32_t obc__shm_flag_add(struct shm_flag *f, uint32_t delta)
{
    uint32_t v = atomic_fetch_add_explicit(&f->value, delta, memory_order_seq_cst) + delta;
    if (atomic_load_explicit(&f->sleepers, memory_order_seq_cst) != 0) {
        obc__futex_wake(&f->value, true);
    }
    return v;
}

void obc__arena_abort_verdict(struct obc__arena *a, uint64_t verdict)
{
    uint64_t none = 0;
    /* The first reason wins; later ones are consequences. */
    atomic_compare_exchange_strong_explicit(&a->hdr->abort_word, &none, verdict,
                                            memory_order_release, memory_order_relaxed);
}

void obc__arena_abort(struct obc__arena *a, obc_result_t code, int culprit_rank)
{
    obc__arena_abort_verdict(a, obc__verdict_word(code, culprit_rank));
}

void obc__arena_abort_mismatch(struct obc__arena *a, int self, int other)
{
    obc__arena_abort_verdict(a, obc__verdict_pair(OBC_ERR_MISMATCH, self, other));
}

uint64_t obc__arena_verdict(const struct obc__arena *a)
{
    return atomic_load_explicit(&a->hdr->abort_word, memory_order_acquire);
}

static obc_result_t report_abort(struct obc__arena *a, uint64_t word)
{
    int who = obc__verdict_rank(word), other = obc__verdict_other(word);
    obc_result_t code = obc__verdict_code(word);
    if (code == OBC_ERR_MISMATCH && other >= 0) {
        return obc__err_set(a->err, OBC_ERR_MISMATCH,
                            "rank %d found that rank %d disagrees with it on a call (a collective "
                            "or a send/recv); see rank %d's log",
                            who, other, who);
    }
    switch (code) {
    case OBC_ERR_PEER_LOST:
        return obc__err_set(a->err, OBC_ERR_PEER_LOST,
                            "rank %d was lost (its process exited or became unreachable)", who);
    case OBC_ERR_MISMATCH:
        return obc__err_set(
            a->err, OBC_ERR_MISMATCH,
            "rank %d found ranks disagreeing on a call (a collective or a send/recv); see its log",
            who);
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

struct obc__wait_policy obc__arena_wait_policy(const struct obc__arena *a)
{
    return a->policy;
}
