/* SPDX-License-Identifier: MIT */
/*
 * board.c - the rank's public record in the arena (see board.h): its
 * layout, the writes the owner makes at each operation's start and end, and
 * the readings other ranks make to name a hang (here) or a mismatch
 * (check_mode.c compares the calls it reads here).
 *
 * Layout (in OBC_BOARD_BYTES of shared memory, zeroed at creation):
 * `arrived` and `completed` hold an operation's position (seq + 1; 0 =
 * none); recent[pos % OBC_BOARD_RECENT] is that operation's entry, its call
 * and its timings. Every word is atomic: other processes read while the
 * owner writes. The owner clears an entry's pos, fills the entry, then
 * stores its pos into it and into `arrived`; a reader takes the entry's
 * pos, then the entry, then checks that the entry still holds that pos, so
 * it never mixes two calls. This is a sequence lock made of release stores
 * and acquire loads only, no fences (ThreadSanitizer does not model them,
 * and on x86 both are plain moves): a reader that loads (acquire) a field
 * the owner stored (release) after clearing pos must then see pos cleared
 * or moved on, never the pos it started from.
 * `odd` holds a call the owner found different from its own (and
 * `odd_rank` whose), so that the ranks of its host can name it too. Board
 * flag 0 follows `arrived`, flag 1 the payload hash's pos, for
 * ranks that wait on them (check mode only). Times come from the coarse
 * clock (ms resolution): two precise clock reads would cost more than the
 * rest of the record on a small collective.
 */
#include "engine/board.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "core/log.h"
#include "core/reduce.h"
#include "platform/platform.h"
#include "transport/arena.h"

enum { FLAG_ARRIVED, FLAG_HASHED };
enum { STATE_RUNNING = 1, STATE_DONE, STATE_FAILED };

struct entry {
    _Atomic uint64_t pos;
    _Atomic uint64_t coll, root, dtype, redop, count, nbytes;
    _Atomic uint64_t state, result;
    _Atomic int64_t start_ns, end_ns;
};

struct board {
    _Atomic uint64_t arrived;
    _Atomic uint64_t completed;
    _Atomic uint64_t hash_pos;
    _Atomic uint64_t hash;
    struct entry recent[OBC_BOARD_RECENT];
    struct entry odd; /* a call this rank found different from its own ... */
    _Atomic uint64_t odd_rank; /* ... and whose it was */
};

_Static_assert(sizeof(struct board) <= OBC_BOARD_BYTES, "the board must fit the arena's");

static struct board *board_of(struct obc__boards *b, int rank)
{
    return (struct board *)(void *)obc__arena_board(b->arena, rank);
}

static uint64_t pos_of(const struct obc__coll_args *args)
{
    return args->seq + 1;
}

static bool read_call(const struct entry *e, uint64_t pos, struct obc__board_call *c)
{
    if (pos == 0 || atomic_load_explicit(&e->pos, memory_order_acquire) != pos) {
        return false;
    }
    c->pos = pos;
    c->coll = (obc_coll_t)atomic_load_explicit(&e->coll, memory_order_acquire);
    c->root = (int)atomic_load_explicit(&e->root, memory_order_acquire);
    c->dtype = (obc_dtype_t)atomic_load_explicit(&e->dtype, memory_order_acquire);
    c->redop = (obc_redop_t)atomic_load_explicit(&e->redop, memory_order_acquire);
    c->count = (size_t)atomic_load_explicit(&e->count, memory_order_acquire);
    c->nbytes = (size_t)atomic_load_explicit(&e->nbytes, memory_order_acquire);
    c->state = (int)atomic_load_explicit(&e->state, memory_order_acquire);
    c->result = (obc_result_t)atomic_load_explicit(&e->result, memory_order_acquire);
    c->start_ns = atomic_load_explicit(&e->start_ns, memory_order_acquire);
    c->end_ns = atomic_load_explicit(&e->end_ns, memory_order_acquire);
    return atomic_load_explicit(&e->pos, memory_order_relaxed) == pos &&
        (unsigned)c->coll < OBC_COLL_COUNT;
}

static bool read_entry(const struct board *bd, uint64_t pos, struct obc__board_call *c)
{
    return read_call(&bd->recent[pos % OBC_BOARD_RECENT], pos, c);
}

/* Fill entry e with a call: its pos cleared first and set last (released:
 * readers check it). */
static void write_call(struct entry *e, const struct obc__board_call *c)
{
    atomic_store_explicit(&e->pos, 0, memory_order_relaxed);
    atomic_store_explicit(&e->coll, (uint64_t)c->coll, memory_order_release);
    atomic_store_explicit(&e->root, (uint64_t)c->root, memory_order_release);
    atomic_store_explicit(&e->dtype, (uint64_t)c->dtype, memory_order_release);
    atomic_store_explicit(&e->redop, (uint64_t)c->redop, memory_order_release);
    atomic_store_explicit(&e->count, (uint64_t)c->count, memory_order_release);
    atomic_store_explicit(&e->nbytes, (uint64_t)c->nbytes, memory_order_release);
    atomic_store_explicit(&e->state, (uint64_t)c->state, memory_order_release);
    atomic_store_explicit(&e->result, (uint64_t)c->result, memory_order_release);
    atomic_store_explicit(&e->start_ns, c->start_ns, memory_order_release);
    atomic_store_explicit(&e->end_ns, c->end_ns, memory_order_release);
    atomic_store_explicit(&e->pos, c->pos, memory_order_release);
}

void obc__board_enter(struct obc__boards *b, const struct obc__coll_args *args)
{
    if (b->arena == NULL) {
        return;
    }
    struct board *bd = board_of(b, b->rank);
    uint64_t pos = pos_of(args);
    struct obc__board_call c = {
        .pos = pos,
        .coll = args->coll,
        .root = args->root,
        .dtype = args->dtype,
        .redop = args->redop,
        .count = args->count,
        .nbytes = args->nbytes,
        .state = STATE_RUNNING,
        .result = OBC_SUCCESS,
        .start_ns = obc__coarse_now_ns(),
    };
    write_call(&bd->recent[pos % OBC_BOARD_RECENT], &c);
    atomic_store_explicit(&bd->arrived, pos, memory_order_release);
    if (b->check >= 1) { /* only check mode waits on it */
        obc__arena_board_flag_store(b->arena, FLAG_ARRIVED, (uint32_t)pos);
    }
}

void obc__board_leave(struct obc__boards *b, const struct obc__coll_args *args, obc_result_t res)
{
    if (b->arena == NULL) {
        return;
    }
    struct board *bd = board_of(b, b->rank);
    struct entry *e = &bd->recent[pos_of(args) % OBC_BOARD_RECENT];
    atomic_store_explicit(&e->end_ns, obc__coarse_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&e->result, (uint64_t)res, memory_order_relaxed);
    atomic_store_explicit(&e->state, res == OBC_SUCCESS ? STATE_DONE : STATE_FAILED,
                          memory_order_release);
    if (res == OBC_SUCCESS) {
        atomic_store_explicit(&bd->completed, pos_of(args), memory_order_release);
    }
}

/* "allreduce (count 10, float32, sum)", "broadcast (count 12, int8, root 0)". */
void obc__board_describe_call(const struct obc__board_call *c, char *out, size_t nbytes)
{
    int n = snprintf(out, nbytes, "%s (count %zu, %s", obc__coll_name(c->coll), c->count,
                     obc__dtype_name(c->dtype));
    if (n < 0 || (size_t)n >= nbytes) {
        return;
    }
    switch (c->coll) {
    case OBC_COLL_BROADCAST:
    case OBC_COLL_GATHER:
    case OBC_COLL_SCATTER:
        snprintf(out + n, nbytes - (size_t)n, ", root %d)", c->root);
        break;
    case OBC_COLL_REDUCE:
        snprintf(out + n, nbytes - (size_t)n, ", %s, root %d)", obc__redop_name(c->redop), c->root);
        break;
    case OBC_COLL_ALLREDUCE:
    case OBC_COLL_REDUCE_SCATTER:
        snprintf(out + n, nbytes - (size_t)n, ", %s)", obc__redop_name(c->redop));
        break;
    default:
        snprintf(out + n, nbytes - (size_t)n, ")");
        break;
    }
}

bool obc__board_read(struct obc__boards *b, int rank, uint64_t seq, struct obc__board_call *c)
{
    return b->arena != NULL && (b->remote == NULL || !b->remote[rank]) &&
        read_entry(board_of(b, rank), seq + 1, c);
}

void obc__board_post_odd(struct obc__boards *b, int rank, const struct obc__board_call *odd)
{
    if (b->arena == NULL) {
        return;
    }
    struct board *bd = board_of(b, b->rank);
    atomic_store_explicit(&bd->odd.pos, 0, memory_order_relaxed);
    atomic_store_explicit(&bd->odd_rank, (uint64_t)rank, memory_order_release);
    write_call(&bd->odd, odd);
}

bool obc__board_odd(struct obc__boards *b, int rank, uint64_t seq, int *odd_rank,
                    struct obc__board_call *odd)
{
    if (b->arena == NULL || (b->remote != NULL && b->remote[rank])) {
        return false;
    }
    struct board *bd = board_of(b, rank);
    if (!read_call(&bd->odd, seq + 1, odd)) {
        return false;
    }
    /* odd_rank belongs to the same sequence lock: read after the entry's
     * pos, then the pos checked again */
    *odd_rank = (int)atomic_load_explicit(&bd->odd_rank, memory_order_acquire);
    return atomic_load_explicit(&bd->odd.pos, memory_order_relaxed) == seq + 1 && *odd_rank >= 0 &&
        *odd_rank < b->nranks;
}

bool obc__board_hash(struct obc__boards *b, int rank, uint64_t seq, uint64_t *hash)
{
    if (b->arena == NULL || (b->remote != NULL && b->remote[rank])) {
        return false;
    }
    struct board *bd = board_of(b, rank);
    if (atomic_load_explicit(&bd->hash_pos, memory_order_acquire) != seq + 1) {
        return false; /* the same sequence lock as an entry's (see the top) */
    }
    *hash = atomic_load_explicit(&bd->hash, memory_order_acquire);
    return atomic_load_explicit(&bd->hash_pos, memory_order_relaxed) == seq + 1;
}

void obc__board_post_hash(struct obc__boards *b, const struct obc__coll_args *args, uint64_t hash)
{
    if (b->arena == NULL) {
        return;
    }
    struct board *bd = board_of(b, b->rank);
    atomic_store_explicit(&bd->hash_pos, 0, memory_order_relaxed);
    atomic_store_explicit(&bd->hash, hash, memory_order_release);
    atomic_store_explicit(&bd->hash_pos, pos_of(args), memory_order_release);
    obc__arena_board_flag_store(b->arena, FLAG_HASHED, (uint32_t)pos_of(args));
}

bool obc__board_reached(struct obc__boards *b, int rank, int what, uint64_t seq,
                        struct obc__wait *w)
{
    int idx = what == OBC_BOARD_HASHED ? FLAG_HASHED : FLAG_ARRIVED;
    return b->arena == NULL ||
        obc__arena_board_flag_reached(b->arena, rank, idx, (uint32_t)(seq + 1), w);
}

static size_t append(char *out, size_t nbytes, size_t used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t append(char *out, size_t nbytes, size_t used, const char *fmt, ...)
{
    if (used + 1 >= nbytes) {
        return used;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + used, nbytes - used, fmt, ap);
    va_end(ap);
    return n < 0 ? used : (used + (size_t)n < nbytes ? used + (size_t)n : nbytes - 1);
}

/* "allreduce #11" for a rank's last completed operation, or "nothing". */
static void last_completed(struct board *bd, char *out, size_t nbytes)
{
    struct obc__board_call c;
    uint64_t done = atomic_load_explicit(&bd->completed, memory_order_acquire);
    if (done == 0) {
        snprintf(out, nbytes, "nothing yet");
    } else if (read_entry(bd, done, &c)) {
        snprintf(out, nbytes, "%s #%llu", obc__coll_name(c.coll), (unsigned long long)(done - 1));
    } else {
        snprintf(out, nbytes, "#%llu", (unsigned long long)(done - 1));
    }
}

static bool has_arrived(struct board *bd, uint64_t pos)
{
    return (int64_t)(atomic_load_explicit(&bd->arrived, memory_order_acquire) - pos) >= 0;
}

void obc__board_describe_laggards(struct obc__boards *b, const struct obc__coll_args *args,
                                  char *out, size_t nbytes)
{
    size_t used = strlen(out);
    int missing = 0;
    if (b->arena == NULL || b->remote != NULL) {
        return; /* the arena's boards show only this host's ranks */
    }
    for (int r = 0; r < b->nranks; r++) {
        struct board *bd = board_of(b, r);
        if (r == b->rank || has_arrived(bd, pos_of(args))) {
            continue;
        }
        char done[64];
        last_completed(bd, done, sizeof(done));
        used =
            append(out, nbytes, used, "; rank %d has not arrived at %s #%llu (last completed %s)",
                   r, obc__coll_name(args->coll), (unsigned long long)args->seq, done);
        missing++;
    }
    if (missing == 0) {
        used = append(out, nbytes, used, "; every rank has arrived at it");
    }
    /* A live rank that makes no progress may simply not be running. */
    for (int r = 0; r < b->nranks; r++) {
        pid_t pid = r == b->rank ? 0 : obc__arena_peer_pid(b->arena, r);
        char state = pid > 0 ? obc__proc_state(pid) : '?';
        if (state == 'T' || state == 't') {
            used = append(out, nbytes, used,
                          "; rank %d (pid %d) is stopped (SIGSTOP, Ctrl-Z or a debugger)", r,
                          (int)pid);
        }
    }
}

static const char *state_name(int state)
{
    return state == STATE_RUNNING ? "running" : state == STATE_DONE ? "done" : "failed";
}

/* Rank r's recent operations, oldest first, as lines into fd. */
static void dump_rank(struct obc__boards *b, int r, int fd)
{
    struct board *bd = board_of(b, r);
    uint64_t last = atomic_load_explicit(&bd->arrived, memory_order_acquire);
    uint64_t first = last > OBC_BOARD_RECENT ? last - OBC_BOARD_RECENT + 1 : 1;
    int64_t now = obc__coarse_now_ns();
    dprintf(fd, "obc flight recorder: rank %d (seen by rank %d), last %llu operations:\n", r,
            b->rank, (unsigned long long)(last >= first ? last - first + 1 : 0));
    for (uint64_t pos = first; pos <= last && pos > 0; pos++) {
        struct obc__board_call c;
        char what[96];
        if (!read_entry(bd, pos, &c)) {
            continue;
        }
        obc__board_describe_call(&c, what, sizeof(what));
        int64_t end = c.state == STATE_RUNNING ? now : c.end_ns;
        dprintf(fd, "  #%llu %s %zu bytes: %s%s%s, started %.3f s ago, %s %.3f ms\n",
                (unsigned long long)(pos - 1), what, c.nbytes, state_name(c.state),
                c.state == STATE_FAILED ? " " : "",
                c.state == STATE_FAILED ? obc_strerror(c.result) : "",
                (double)(now - c.start_ns) / 1e9, c.state == STATE_RUNNING ? "running for" : "took",
                (double)(end - c.start_ns) / 1e6);
    }
}

void obc__board_dump(struct obc__boards *b, const struct obc__coll_args *args)
{
    if (b->arena == NULL || b->remote != NULL) {
        return;
    }
    int fd = STDERR_FILENO;
    char path[300];
    if (b->dump_path != NULL && b->dump_path[0] != '\0') {
        snprintf(path, sizeof(path), "%s.%d", b->dump_path, b->rank);
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) {
            OBC_WARN("cannot open OBC_DEBUG_DUMP file %s; dumping to stderr", path);
            fd = STDERR_FILENO;
        }
    }
    dump_rank(b, b->rank, fd);
    for (int r = 0; r < b->nranks; r++) {
        if (r != b->rank && !has_arrived(board_of(b, r), pos_of(args))) {
            dump_rank(b, r, fd);
        }
    }
    if (fd != STDERR_FILENO) {
        close(fd);
    }
}
