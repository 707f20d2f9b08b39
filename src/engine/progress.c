/* SPDX-License-Identifier: MIT */
/*
 * progress.c - the engine of one communicator: running an op (choose the
 * algorithm, then step + wait until done, under the no-progress timeout),
 * the queue of async ops, and the progress thread that drains it.
 *
 * Threads and locks: the user's thread submits; queued ops run in order,
 * one at a time, by whichever thread claims the head of the queue: the
 * progress thread (started at the first queued op, so work overlaps the
 * user's computation), or the user's thread itself while it waits in
 * obc_wait / obc_comm_synchronize (so a wait costs no thread hand-off when
 * the progress thread is asleep). `running` says the head is claimed.
 * `lock` guards the queue, `running` and the thread's life (leaf lock; the
 * error buffer's lock may be taken inside). An op leaves the queue only
 * after it ran, so "queue empty" means no op is running, and a blocking
 * call may then run inline.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/host_layout.h"
#include "core/log.h"
#include "engine/check_mode.h"
#include "engine/engine.h"
#include "engine/engine_impl.h"
#include "engine/health.h"
#include "engine/p2p_batch.h"
#include "engine/wait.h"
#include "platform/platform.h"

struct obc__engine {
    struct obc__algo_ctx ctx;
    struct obc__algo_persist persist; /* advanced only by the thread running ops */
    struct obc__algo_tuning tuning;
    struct obc__check check;
    struct obc__p2p_engine *p2p; /* point-to-point state; used only by the thread running ops */
    const struct obc__algo *last_choice[OBC_COLL_COUNT]; /* for logging changes only */
    _Atomic int64_t timeout_ns;
    _Atomic int broken; /* 0, or the obc_result_t that broke the communicator */
    char broken_msg[OBC_ERR_MSG_BYTES]; /* its message, written under `lock` before `broken` */
    _Atomic int first_error; /* first failure since the last synchronize */
    uint64_t next_seq; /* user thread only */
    uint32_t submitted; /* user thread only */
    _Atomic uint32_t completed;
    _Atomic uint32_t completed_waiters;

    pthread_mutex_t lock; /* guards everything below; leaf lock */
    pthread_cond_t wake;
    struct obc__op *head, *tail;
    bool running; /* the head op is being run by some thread */
    bool thread_running;
    bool stopping;
    pthread_t thread;
};

void obc__engine_set_timeout(struct obc__engine *e, double seconds)
{
    atomic_store(&e->timeout_ns, obc__config_timeout_ns(seconds));
}

obc_result_t obc__engine_broken(const struct obc__engine *e)
{
    return (obc_result_t)atomic_load_explicit(&e->broken, memory_order_acquire);
}

static void mark_broken(struct obc__engine *e, obc_result_t code)
{
    pthread_mutex_lock(&e->lock); /* the first failure wins; its message is kept */
    if (atomic_load(&e->broken) == 0) {
        obc__err_copy(e->ctx.err, e->broken_msg, sizeof(e->broken_msg));
        atomic_store_explicit(&e->broken, (int)code, memory_order_release);
    }
    pthread_mutex_unlock(&e->lock);
}

void obc__engine_abort(struct obc__engine *e, obc_result_t code)
{
    mark_broken(e, code);
    if (e->ctx.arena != NULL) {
        obc__arena_abort(e->ctx.arena, code, e->ctx.rank);
    }
    obc__p2p_abort(e->ctx.p2p);
}

/* An op failed for good: later calls are refused, and the other hosts
 * hear this host's verdict (a local rank died, or one aborted) before this
 * rank can leave. Most failures reach the verdict through a wait, which
 * tells them (health.c); a failed copy from a dead rank's memory does not,
 * and without the notice the other hosts would take this rank's goodbye in
 * mid-operation for its loss and name it instead of the dead rank. */
static void fail_for_good(struct obc__engine *e, obc_result_t code)
{
    mark_broken(e, code);
    if (e->ctx.arena != NULL) {
        obc__p2p_tell_verdict(e->ctx.p2p, obc__arena_verdict(e->ctx.arena));
    }
}

static obc_result_t broken_error(struct obc__engine *e, const struct obc__op *op)
{
    if (op->args.p2p != OBC__P2P_NONE) {
        return obc__err_set(e->ctx.err, OBC_ERR_ABORTED,
                            "%s rank %d not run: the communicator is broken (%s: %s)",
                            op->args.p2p == OBC__P2P_SEND ? "send to" : "recv from", op->args.root,
                            obc_strerror(obc__engine_broken(e)), e->broken_msg);
    }
    return obc__health_broken(e->ctx.err, &op->args, obc__engine_broken(e), e->broken_msg);
}

/* How often a stalled wait looks at the boards for a rank that entered
 * this operation with another call: a mismatch then fails in about this
 * time instead of after OBC_TIMEOUT. */
#define STALL_CHECK_NS 200000000

/* Wait for w's word to change, under the no-progress timeout: the wait,
 * every STALL_CHECK_NS (or on a failure) check mode's scan, the verdict.
 * *stalled is how long the op has waited without any word moving: a wait
 * with a turn (w->turn_ns) returns OBC_SUCCESS when its turn is over, and
 * the next wait of the op goes on counting from there. */
static obc_result_t wait_for(struct obc__engine *e, const struct obc__op *op,
                             const struct obc__wait *w, int64_t *stalled)
{
    int64_t timeout = atomic_load(&e->timeout_ns);
    int64_t waited = *stalled;
    for (;;) {
        int64_t slice = STALL_CHECK_NS - waited % STALL_CHECK_NS;
        bool turn_over = w->turn_ns > 0 && w->turn_ns < slice;
        if (turn_over) {
            slice = w->turn_ns;
        }
        if (timeout >= 0 && timeout - waited < slice) {
            slice = timeout - waited;
            turn_over = false;
        }
        obc_result_t res = obc__health_wait(&e->ctx, w, slice > 0 ? slice : 1);
        if (res == OBC_SUCCESS) {
            *stalled = 0;
        } else if (res != OBC_ERR_TIMEOUT || !turn_over) {
            /* Stalled, or failing: a rank that entered this operation with
             * another call explains it. The scan also gives the other hosts
             * this rank's call before they may hear of a failure. */
            obc_result_t odd = obc__check_stalled(&e->check, &op->args, e->ctx.err);
            if (odd != OBC_SUCCESS) {
                return odd;
            }
        }
        res = obc__health_verdict(&e->ctx, res);
        if (res != OBC_IN_PROGRESS) {
            return res;
        }
        waited += slice;
        if (timeout >= 0 && waited >= timeout) {
            return obc__health_timeout(&e->ctx, &e->check.boards, &op->args, w, timeout);
        }
        if (turn_over) {
            *stalled = waited;
            return OBC_SUCCESS;
        }
    }
}

/* Run one of check mode's steps (obc__check_*) to completion. */
static obc_result_t run_check(struct obc__engine *e, const struct obc__op *op,
                              obc_result_t (*check)(struct obc__check *,
                                                    const struct obc__coll_args *,
                                                    struct obc__err *, struct obc__wait *))
{
    int64_t stalled = 0;
    for (;;) {
        struct obc__wait w = {.peer = -1};
        obc_result_t res = check(&e->check, &op->args, e->ctx.err, &w);
        if (res != OBC_IN_PROGRESS) {
            return res;
        }
        res = wait_for(e, op, &w, &stalled);
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
}

const struct obc__algo *obc__engine_plan(const struct obc__engine *e,
                                         const struct obc__coll_args *args, struct obc__plan *plan,
                                         char *why, size_t why_bytes)
{
    return obc__algo_select(&e->ctx, &e->tuning, args, plan, why, why_bytes);
}

const struct obc__algo *obc__engine_forced(const struct obc__engine *e, obc_coll_t coll)
{
    return e->tuning.forced[coll];
}

/* Choose the algorithm and its plan (into op->args.plan, where the
 * algorithm reads it); at INFO, say so whenever the choice changes. */
static const struct obc__algo *choose(struct obc__engine *e, struct obc__op *op)
{
    char why[200] = "";
    bool logged = OBC_LOG_ENABLED(OBC_LOG_LEVEL_INFO, OBC_LOG_COLL);
    struct obc__plan plan;
    const struct obc__algo *a =
        obc__engine_plan(e, &op->args, &plan, logged ? why : NULL, sizeof(why));
    op->args.plan = plan;
    if (a != e->last_choice[op->args.coll]) {
        OBC_INFO(OBC_LOG_COLL, "%s #%llu: %zu bytes: algorithm %s (%s)",
                 obc__coll_name(op->args.coll), (unsigned long long)op->args.seq, op->args.nbytes,
                 a->name, why);
        e->last_choice[op->args.coll] = a;
    }
    OBC_TRACE(OBC_LOG_COLL, "%s #%llu: %zu bytes, root %d, %zu segments, algorithm %s",
              obc__coll_name(op->args.coll), (unsigned long long)op->args.seq, op->args.nbytes,
              op->args.root, op->args.nsegs, a->name);
    return a;
}

/* The hand-offs of one operation, at TRACE: how often its algorithm had
 * to wait for another rank, and how many of those waits slept on a futex
 * (each a trip through the scheduler). Contention-proof algorithms keep
 * both bounded whatever the message size (tests/coll/handoff_count.sh). */
static void trace_handoffs(const struct obc__op *op, const struct obc__algo *a, uint32_t waits,
                           uint32_t sleeps)
{
    OBC_TRACE(OBC_LOG_COLL, "%s #%llu: %zu bytes, algorithm %s: %u waits, %u sleeps",
              obc__coll_name(op->args.coll), (unsigned long long)op->args.seq, op->args.nbytes,
              a->name, waits, sleeps);
}

/* A failed operation returns to its caller, who may free its buffers: no
 * frame it published by reference may read them after that, and no
 * receive it posted may write them (obc__p2p_detach). */
static obc_result_t detached(struct obc__engine *e, obc_result_t res)
{
    obc__p2p_detach(e->ctx.p2p);
    return res;
}

static obc_result_t run_algorithm(struct obc__engine *e, struct obc__op *op,
                                  const struct obc__algo **chosen)
{
    const struct obc__algo *a = *chosen = choose(e, op);
    uint32_t waits = 0, sleeps = 0;
    int64_t stalled = 0;
    a->init(op->state, &e->ctx, &op->args);
    for (;;) {
        struct obc__wait w = {.peer = -1};
        obc_result_t res = a->step(op->state, &w);
        if (res != OBC_IN_PROGRESS) {
            trace_handoffs(op, a, waits, sleeps);
            return res == OBC_SUCCESS ? res : detached(e, res);
        }
        waits++;
        w.slept = &sleeps; /* after the step, which may have set the whole wait */
        res = wait_for(e, op, &w, &stalled);
        if (res != OBC_SUCCESS) {
            return detached(e, res);
        }
    }
}

static void complete(struct obc__engine *e, struct obc__op *op, obc_result_t res);

/* A point-to-point op queued right behind the running head `head` joins
 * its batch (off the queue; it completes on its own when its part is
 * done), so isend/irecv issued one after the other progress together as in
 * a group, whenever the thread running them looks. */
#define P2P_BATCH_MAX 4096

static void absorb(struct obc__engine *e, struct obc__op *head)
{
    pthread_mutex_lock(&e->lock);
    for (struct obc__op *x = head->next;
         x != NULL && x->args.p2p != OBC__P2P_NONE && obc__p2p_batch_len(e->p2p) < P2P_BATCH_MAX;
         x = head->next) {
        if (!obc__p2p_batch_add(e->p2p, x)) {
            break;
        }
        head->next = x->next;
        if (e->tail == x) {
            e->tail = head;
        }
    }
    pthread_mutex_unlock(&e->lock);
}

/* Complete the batch's absorbed ops that finished (or all, with res, when
 * the batch failed); the head is finished early (its request sees it) and
 * completed by whoever runs it. settled[i] says which are through. */
static void settle(struct obc__engine *e, bool *settled, size_t cap, obc_result_t failed)
{
    size_t n = obc__p2p_batch_len(e->p2p);
    for (size_t i = 0; i < n && i < cap; i++) {
        struct obc__op *op = obc__p2p_batch_op(e->p2p, i);
        obc_result_t res;
        if (op == NULL || settled[i]) {
            continue;
        }
        bool finished = obc__p2p_op_finished(op, &res);
        if (!finished && failed == OBC_SUCCESS) {
            continue;
        }
        res = finished ? res : failed;
        settled[i] = true;
        if (i == 0) {
            obc__op_finish(op, res);
        } else {
            obc__p2p_batch_forget(e->p2p, i);
            complete(e, op, res);
        }
    }
}

/* How long a batch with several blocked ops waits on one of them before it
 * looks at the others: short at first (a group's exchange), longer while
 * nothing moves, so that a long wait does not spin. */
#define P2P_TURN_MIN_NS 50000
#define P2P_MAX_WAITS 16

static obc_result_t p2p_timeout(struct obc__engine *e, int64_t timeout_ns, int peer)
{
    char what[OBC_ERR_MSG_BYTES];
    obc__p2p_batch_describe(e->p2p, what, sizeof(what));
    obc_result_t res = obc__err_set(e->ctx.err, OBC_ERR_TIMEOUT,
                                    "point-to-point on rank %d: timeout after %.1f s without "
                                    "progress; waiting for: %s",
                                    e->ctx.rank, (double)timeout_ns / 1e9, what);
    obc__p2p_tell_failure(e->ctx.p2p, res, peer >= 0 ? peer : e->ctx.rank);
    return res;
}

/* Wait for one of the batch's blocked ops (in turn), under the timeout
 * counted from the last progress. */
static obc_result_t p2p_wait(struct obc__engine *e, bool queued, int64_t last_progress,
                             unsigned *turn, int64_t *slice, uint32_t *sleeps)
{
    struct obc__wait ws[P2P_MAX_WAITS];
    /* Receives from self: no word announces them; sleep a slice, then look. */
    static _Atomic uint32_t never, never_sleepers;
    size_t n = obc__p2p_batch_waits(e->p2p, ws, P2P_MAX_WAITS);
    struct obc__wait w = {.word = &never, .sleepers = &never_sleepers, .peer = -1};
    if (n == 0 && !queued) {
        return obc__err_set(e->ctx.err, OBC_ERR_INVALID_ARG,
                            "obc_recv on rank %d from itself: no send to itself came before it "
                            "(it would wait forever)",
                            e->ctx.rank);
    }
    if (n > 0) {
        w = ws[(*turn)++ % n];
    }
    int64_t timeout = atomic_load(&e->timeout_ns);
    int64_t sl = n == 1 ? STALL_CHECK_NS : *slice;
    *slice = *slice * 2 < STALL_CHECK_NS ? *slice * 2 : STALL_CHECK_NS;
    if (w.turn_ns > 0 && w.turn_ns < sl) {
        sl = w.turn_ns; /* a receive from any source looks at its other streams */
    }
    w.slept = sleeps;
    int64_t left = timeout >= 0 ? timeout - (obc__now_ns() - last_progress) : sl;
    obc_result_t res = obc__health_wait(&e->ctx, &w, left < sl ? (left > 0 ? left : 1) : sl);
    res = obc__health_verdict(&e->ctx, res);
    if (res == OBC_IN_PROGRESS && timeout >= 0 && obc__now_ns() - last_progress >= timeout) {
        return p2p_timeout(e, timeout, w.peer);
    }
    return res == OBC_IN_PROGRESS ? OBC_SUCCESS : res;
}

/* Run a batch of point-to-point ops, `op` first: step, settle, wait. */
static obc_result_t run_p2p(struct obc__engine *e, struct obc__op *op, bool queued)
{
    static _Thread_local bool settled[P2P_BATCH_MAX];
    int64_t last_progress = obc__now_ns(), slice = P2P_TURN_MIN_NS;
    unsigned turn = 0;
    uint32_t waits = 0, sleeps = 0; /* the batch's hand-offs, for TRACE */
    size_t cleared = 1;
    obc__p2p_batch_begin(e->p2p, op);
    settled[0] = false;
    for (;;) {
        if (queued) {
            absorb(e, op);
            for (; cleared < obc__p2p_batch_len(e->p2p); cleared++) {
                settled[cleared] = false;
            }
        }
        bool moved = false;
        obc_result_t res = obc__p2p_batch_step(e->p2p, &e->ctx, &moved);
        if (res == OBC_IN_PROGRESS && !moved) {
            res = p2p_wait(e, queued, last_progress, &turn, &slice, &sleeps);
            waits++;
            res = res == OBC_SUCCESS ? OBC_IN_PROGRESS : res;
        } else if (moved) {
            last_progress = obc__now_ns();
            slice = P2P_TURN_MIN_NS;
        }
        if (res != OBC_IN_PROGRESS && res != OBC_SUCCESS) {
            obc__p2p_detach(e->ctx.p2p); /* its unfinished ops return to their callers */
        }
        if (res != OBC_IN_PROGRESS && res != OBC_SUCCESS && obc__err_is_fatal(res)) {
            fail_for_good(e, res); /* before anyone sees an op fail, so later calls are refused */
        }
        settle(e, settled, P2P_BATCH_MAX, res == OBC_IN_PROGRESS ? OBC_SUCCESS : res);
        if (res != OBC_IN_PROGRESS) {
            obc__p2p_batch_end(e->p2p);
            /* as trace_handoffs: a receive from any source sleeps on one
             * word whichever stream delivers (tests/coll/any_source_wakeups.sh) */
            OBC_TRACE(OBC_LOG_PROGRESS, "point-to-point batch of %zu ops: %u waits, %u sleeps",
                      obc__p2p_batch_len(e->p2p), waits, sleeps);
            obc_result_t mine;
            return obc__p2p_op_finished(op, &mine) ? mine : res;
        }
    }
}

/* Run one op to completion in this thread: enter it on the board, check
 * the calls agree (OBC_CHECK >= 1), move the data, check a broadcast's
 * bytes (OBC_CHECK = 2). Point-to-point ops go to run_p2p instead: they
 * are between two ranks, not on the boards. */
static obc_result_t run_op(struct obc__engine *e, struct obc__op *op, bool queued)
{
    if (obc__engine_broken(e) != OBC_SUCCESS) {
        return broken_error(e, op);
    }
    if (op->args.p2p != OBC__P2P_NONE) {
        obc_result_t res = run_p2p(e, op, queued);
        if (res != OBC_SUCCESS && obc__err_is_fatal(res)) {
            fail_for_good(e, res);
        }
        return res;
    }
    const struct obc__algo *a = NULL;
    obc__check_enter(&e->check, &op->args);
    obc_result_t res = run_check(e, op, obc__check_before);
    if (res == OBC_SUCCESS) {
        res = run_algorithm(e, op, &a);
    }
    if (res == OBC_SUCCESS) {
        res = obc__check_after(&e->check, &op->args, a, e->ctx.err);
    }
    if (res == OBC_SUCCESS) {
        res = run_check(e, op, obc__check_after_wait);
    }
    res = obc__check_explain(&e->check, &op->args, res, e->ctx.err);
    obc__check_leave(&e->check, &op->args, res);
    if (res != OBC_SUCCESS && obc__err_is_fatal(res)) {
        fail_for_good(e, res);
    }
    return res;
}

static void complete(struct obc__engine *e, struct obc__op *op, obc_result_t res)
{
    int none = 0;
    if (res != OBC_SUCCESS) {
        atomic_compare_exchange_strong(&e->first_error, &none, (int)res);
    }
    if (!obc__op_is_done(op)) { /* a batch's head was finished early (run_p2p's settle) */
        obc__op_finish(op, res);
    }
    atomic_fetch_add_explicit(&e->completed, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&e->completed_waiters, memory_order_seq_cst) != 0) {
        obc__futex_wake(&e->completed, false);
    }
    obc__op_unref(op); /* the engine's reference */
}

/* Claim the head of the queue, if nobody runs it yet. Caller holds lock. */
static struct obc__op *claim(struct obc__engine *e)
{
    if (e->running || e->head == NULL) {
        return NULL;
    }
    e->running = true;
    return e->head;
}

/* Run a claimed op, take it off the queue, release the claim, complete it. */
static void run_claimed(struct obc__engine *e, struct obc__op *op)
{
    obc_result_t res = run_op(e, op, true);
    pthread_mutex_lock(&e->lock);
    e->head = op->next;
    if (e->head == NULL) {
        e->tail = NULL;
    }
    e->running = false;
    pthread_cond_broadcast(&e->wake);
    pthread_mutex_unlock(&e->lock);
    complete(e, op, res);
}

static void *progress_main(void *arg)
{
    struct obc__engine *e = arg;
    pthread_mutex_lock(&e->lock);
    for (;;) {
        struct obc__op *op = claim(e);
        if (op != NULL) {
            pthread_mutex_unlock(&e->lock);
            run_claimed(e, op);
            pthread_mutex_lock(&e->lock);
            continue;
        }
        if (e->stopping && e->head == NULL) {
            break;
        }
        pthread_cond_wait(&e->wake, &e->lock);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* A thread waiting for another's op spins this long before it sleeps. */
#define OP_SPIN_NS 20000

/* Run queued ops in this thread while nobody else does, until done() holds;
 * otherwise sleep on the word the other runner will change. */
static void help_until(struct obc__engine *e, bool (*done)(struct obc__engine *, void *), void *arg,
                       _Atomic uint32_t *word, _Atomic uint32_t *nwaiters)
{
    while (!done(e, arg)) {
        uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
        pthread_mutex_lock(&e->lock);
        struct obc__op *op = claim(e);
        pthread_mutex_unlock(&e->lock);
        if (op != NULL) {
            run_claimed(e, op);
        } else if (!done(e, arg)) {
            /* The finishing thread wakes a private futex; no deadline. */
            struct obc__wait w = {.word = word, .sleepers = nwaiters, .seen = seen, .peer = -1};
            struct obc__wait_rules r = {OP_SPIN_NS, 0, -1, false, NULL, NULL};
            obc__wait_word(&w, &r, -1);
        }
    }
}

static bool op_done(struct obc__engine *e, void *arg)
{
    (void)e;
    return obc__op_is_done(arg);
}

obc_result_t obc__engine_wait_op(struct obc__engine *e, struct obc__op *op)
{
    help_until(e, op_done, op, &op->done, &op->nwaiters);
    return op->result;
}

obc_result_t obc__engine_submit(struct obc__engine *e, struct obc__op *op)
{
    int rc = 0;
    if (op->args.p2p == OBC__P2P_NONE) {
        op->args.seq = e->next_seq++; /* p2p ops number themselves per pair */
    }
    op->next = NULL;
    if (obc__engine_broken(e) != OBC_SUCCESS) {
        obc_result_t res = broken_error(e, op);
        obc__op_finish(op, res); /* never queued: whoever waits for it gets res */
        return res;
    }
    obc__op_ref(op);
    e->submitted++;
    pthread_mutex_lock(&e->lock);
    if (e->tail != NULL) {
        e->tail->next = op;
    } else {
        e->head = op;
    }
    e->tail = op;
    if (!e->thread_running) {
        rc = pthread_create(&e->thread, NULL, progress_main, e);
        e->thread_running = rc == 0;
    }
    pthread_cond_signal(&e->wake);
    pthread_mutex_unlock(&e->lock);
    if (rc != 0) {
        /* Without a thread nothing would ever run the queue: break loudly. */
        obc__engine_abort(e, OBC_ERR_SYSTEM);
        return obc__err_set(e->ctx.err, OBC_ERR_SYSTEM, "cannot start the progress thread");
    }
    return OBC_SUCCESS;
}

obc_result_t obc__engine_run_blocking(struct obc__engine *e, struct obc__op *op)
{
    /* Nothing queued when every submitted op has completed (the thread takes
     * an op off the queue before it completes it). One load, not the lock:
     * a small call costs a few hundred ns. The acquire pairs with
     * complete()'s add, so this thread sees what the last queued op wrote. */
    bool idle = atomic_load_explicit(&e->completed, memory_order_acquire) == e->submitted;
    if (idle) {
        if (op->args.p2p == OBC__P2P_NONE) {
            op->args.seq = e->next_seq++;
        }
        return run_op(e, op, false);
    }
    /* Ops are queued: keep the order by queueing a heap copy behind them. */
    struct obc__op *h = obc__op_new();
    if (h == NULL) {
        return obc__err_set(e->ctx.err, OBC_ERR_NO_MEMORY, "queued operation");
    }
    h->args = op->args;
    h->seg = op->seg;
    h->args.segs = &h->seg;
    obc_result_t res = obc__engine_submit(e, h);
    if (res == OBC_SUCCESS) {
        res = obc__engine_wait_op(e, h);
    }
    obc__op_unref(h);
    return res;
}

struct sync_target {
    uint32_t target;
};

static bool all_completed(struct obc__engine *e, void *arg)
{
    uint32_t now = atomic_load_explicit(&e->completed, memory_order_acquire);
    return (int32_t)(now - ((struct sync_target *)arg)->target) >= 0;
}

obc_result_t obc__engine_synchronize(struct obc__engine *e)
{
    struct sync_target t = {e->submitted};
    help_until(e, all_completed, &t, &e->completed, &e->completed_waiters);
    return (obc_result_t)atomic_exchange(&e->first_error, 0);
}

/* The teams algorithms run over (world, this host, the host leaders) and
 * the scratch they may use. The host and leader teams are the layout's own
 * tables (it outlives the engine); only the world's identity list is ours. */
#define ENGINE_SCRATCH_BYTES (2u << 20)

/* The deep ring serves messages larger than the staging ring, when the
 * arena has one that is deeper (setup_arena.c: more ranks than CPUs);
 * smaller ones keep the staging ring's few slots warm in cache. */
static size_t deep_min_bytes(const struct obc__arena *a)
{
    if (a == NULL) {
        return 0;
    }
    uint32_t stage = obc__arena_ring_nslots(a, OBC_RING_STAGE);
    if (obc__arena_ring_nslots(a, OBC_RING_DEEP) <= stage) {
        return 0;
    }
    return (size_t)stage * obc__arena_slot_bytes(a, OBC_RING_STAGE);
}

static obc_result_t engine_teams(struct obc__engine *e, const struct obc__engine_params *p)
{
    const struct obc__host_layout *l = p->layout;
    int n = p->nranks, mine = l->host_of[p->rank];
    int *world = malloc(sizeof(int) * (size_t)n);
    e->ctx.scratch = malloc(ENGINE_SCRATCH_BYTES);
    if (world == NULL || e->ctx.scratch == NULL) {
        free(world);
        free(e->ctx.scratch);
        return OBC_ERR_NO_MEMORY;
    }
    for (int r = 0; r < n; r++) {
        world[r] = r;
    }
    e->ctx.scratch_bytes = ENGINE_SCRATCH_BYTES;
    e->ctx.nhosts = l->nhosts;
    e->ctx.host_of = l->host_of;
    e->ctx.host_index = l->host_index;
    e->ctx.world = (struct obc__team){n, p->rank, world};
    e->ctx.host = (struct obc__team){l->host_start[mine + 1] - l->host_start[mine],
                                     l->host_index[p->rank], l->members + l->host_start[mine]};
    e->ctx.leaders = (struct obc__team){l->nhosts, l->head[mine] == p->rank ? mine : -1, l->head};
    return OBC_SUCCESS;
}

static void engine_teams_free(struct obc__engine *e)
{
    free((void *)e->ctx.world.ranks);
    free(e->ctx.scratch);
}

obc_result_t obc__engine_create(const struct obc__engine_params *p, struct obc__engine **out)
{
    struct obc__engine *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return obc__err_set(p->err, OBC_ERR_NO_MEMORY, "engine");
    }
    e->ctx.arena = p->arena;
    e->ctx.p2p = p->p2p;
    e->ctx.rank = p->rank;
    e->ctx.nranks = p->nranks;
    e->ctx.err = p->err;
    e->ctx.persist = &e->persist;
    e->ctx.arena_has_all = p->arena_has_all;
    e->ctx.cma = p->arena != NULL && obc__arena_has_cma(p->arena);
    e->ctx.mem = p->mem;
    e->ctx.p2p_slot_bytes = p->p2p != NULL ? obc__p2p_slot_bytes(p->p2p, p->rank) : 0;
    e->ctx.deep_min_bytes = deep_min_bytes(p->arena);
    e->tuning = p->tuning;
    bool ok = obc__check_init(&e->check, p) == OBC_SUCCESS && engine_teams(e, p) == OBC_SUCCESS;
    if (ok && obc__p2p_engine_create(p->nranks, &e->p2p) != OBC_SUCCESS) {
        engine_teams_free(e);
        ok = false;
    }
    if (!ok) {
        obc__check_fini(&e->check);
        free(e);
        return obc__err_set(p->err, OBC_ERR_NO_MEMORY, "engine teams and scratch");
    }
    atomic_init(&e->timeout_ns, obc__config_timeout_ns(p->timeout_s));
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->wake, NULL);
    *out = e;
    return OBC_SUCCESS;
}

obc_result_t obc__engine_destroy(struct obc__engine *e)
{
    if (e == NULL) {
        return OBC_SUCCESS;
    }
    obc_result_t res = obc__engine_synchronize(e);
    pthread_mutex_lock(&e->lock);
    e->stopping = true;
    pthread_cond_signal(&e->wake);
    bool running = e->thread_running;
    pthread_mutex_unlock(&e->lock);
    if (running) {
        pthread_join(e->thread, NULL);
    }
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->wake);
    engine_teams_free(e);
    obc__check_fini(&e->check);
    obc__p2p_engine_destroy(e->p2p);
    free(e);
    return res;
}
