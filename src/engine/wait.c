/* SPDX-License-Identifier: MIT */
/*
 * wait.c - the one wait (see wait.h). Three phases: busy-poll for
 * rules->spin_ns (the cheapest wake-up, ~0.2 us, worth it only while
 * ranks do not outnumber cores: with 8 ranks on 2 cores the caller sets
 * it to 0), then sched_yield until rules->yield_ns (lets the rank that
 * holds the data run on this core), then sleep on a futex in slices, with
 * health() between them, so a dead peer is noticed within about a slice.
 * Wakers call futex_wake only when the sleeper count beside the word is
 * non-zero; both sides use seq_cst on (value, sleepers), so a store cannot
 * slip between a sleeper's last check and its futex_wait (the kernel
 * re-checks the value too).
 */
#include "engine/wait.h"

#include "platform/platform.h"

static bool changed(const struct obc__wait *w)
{
    return atomic_load_explicit(w->word, memory_order_acquire) != w->seen;
}

static obc_result_t health(const struct obc__wait_rules *r)
{
    return r->health != NULL ? r->health(r->arg) : OBC_SUCCESS;
}

static obc_result_t sleep_phase(const struct obc__wait *w, const struct obc__wait_rules *r,
                                int64_t start, int64_t timeout_ns)
{
    for (;;) {
        obc_result_t res = health(r);
        int64_t slice = r->slice_ns, waited = obc__now_ns() - start;
        if (res != OBC_SUCCESS) {
            return res;
        }
        if (timeout_ns >= 0 && waited >= timeout_ns) {
            return OBC_ERR_TIMEOUT; /* the caller knows what it waited for */
        }
        if (timeout_ns >= 0 && (slice < 0 || timeout_ns - waited < slice)) {
            slice = timeout_ns - waited;
        }
        atomic_fetch_add_explicit(w->sleepers, 1, memory_order_seq_cst);
        if (atomic_load_explicit(w->word, memory_order_seq_cst) == w->seen) {
            obc__futex_wait(w->word, w->seen, slice, r->shared);
            if (w->slept != NULL) {
                *w->slept += 1;
            }
        }
        atomic_fetch_sub_explicit(w->sleepers, 1, memory_order_seq_cst);
        if (changed(w)) {
            return OBC_SUCCESS;
        }
    }
}

obc_result_t obc__wait_word(const struct obc__wait *w, const struct obc__wait_rules *r,
                            int64_t timeout_ns)
{
    int64_t start = obc__now_ns(), now = start;
    if (w->sleep_now) {
        return changed(w) ? OBC_SUCCESS : sleep_phase(w, r, start, timeout_ns);
    }
    for (unsigned i = 1;; i++) {
        if (changed(w)) {
            return OBC_SUCCESS;
        }
        if ((i & 63) == 0) {
            obc_result_t res = health(r);
            if (res != OBC_SUCCESS) {
                return res;
            }
            now = obc__now_ns();
            if (now - start >= r->spin_ns) {
                break;
            }
        }
        obc__cpu_relax();
    }
    while (now - start < r->yield_ns) {
        obc__yield();
        if (changed(w)) {
            return OBC_SUCCESS;
        }
        obc_result_t res = health(r);
        if (res != OBC_SUCCESS) {
            return res;
        }
        now = obc__now_ns();
    }
    return sleep_phase(w, r, start, timeout_ns);
}
