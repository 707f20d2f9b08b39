/* SPDX-License-Identifier: MIT */
/*
 * rcase.c - reduction and gather test cases (see rcase.h): buffer set-up per
 * kind, rank and mode, and the full post-completion check.
 */
#include "rcase.h"

#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bcase.h"
#include "obct.h"

static size_t esize(const struct obct_rcase *c)
{
    return obc_dtype_size(c->d.dtype);
}

/* Remember n input elements at p (input index first) as ones the call must not change. */
static void keep_input(struct obct_rcase *c, const unsigned char *p, size_t n, size_t first,
                       const char *what)
{
    struct obct_rkept *k;
    OBCT_ASSERT(c->nkept < (int)(sizeof(c->kept) / sizeof(c->kept[0])));
    k = &c->kept[c->nkept++];
    k->p = p;
    k->n = n;
    k->first = first;
    k->hash = XXH3_64bits(p, n * esize(c));
    k->what = what;
}

static const char *const SENDBUF_KEPT = "sendbuf (must stay unchanged)";

static void setup_allreduce(struct obct_rcase *c, size_t mis)
{
    size_t nbytes = c->count * esize(c);
    obct_buf_alloc(&c->recv, nbytes, mis);
    if (c->in_place) {
        obct_rfill(&c->d, c->recv.data, c->count, 0, c->rank);
        c->call.sendbuf = c->recv.data;
    } else {
        obct_buf_alloc(&c->send, nbytes, mis ? mis + 1 : 0);
        obct_rfill(&c->d, c->send.data, c->count, 0, c->rank);
        keep_input(c, c->send.data, c->count, 0, SENDBUF_KEPT);
        obct_poison(c->recv.data, nbytes);
        c->call.sendbuf = c->send.data;
    }
    c->call.recvbuf = c->recv.data;
}

static void setup_reduce(struct obct_rcase *c, size_t mis)
{
    size_t nbytes = c->count * esize(c);
    int is_root = c->rank == c->root;
    if (is_root) {
        setup_allreduce(c, mis);
        return;
    }
    if (c->in_place && c->variant) {
        obct_buf_alloc(&c->recv, nbytes, mis);
        obct_rfill(&c->d, c->recv.data, c->count, 0, c->rank);
        keep_input(c, c->recv.data, c->count, 0,
                   "non-root's buffer (sendbuf == recvbuf, read only)");
        c->call.sendbuf = c->recv.data;
        c->call.recvbuf = c->recv.data;
        return;
    }
    obct_buf_alloc(&c->send, nbytes, mis ? mis + 1 : 0);
    obct_rfill(&c->d, c->send.data, c->count, 0, c->rank);
    keep_input(c, c->send.data, c->count, 0, SENDBUF_KEPT);
    c->call.sendbuf = c->send.data;
    if (c->variant) {
        obct_buf_alloc(&c->recv, nbytes, mis);
        obct_poison(c->recv.data, nbytes);
        c->call.recvbuf = c->recv.data;
    }
}

static void setup_allgather(struct obct_rcase *c, size_t mis)
{
    size_t bb = c->count * esize(c);
    size_t total = bb * (size_t)c->d.nranks;
    obct_buf_alloc(&c->recv, total, mis);
    obct_poison(c->recv.data, total);
    if (c->in_place) {
        obct_fill(c->recv.data + (size_t)c->rank * bb, bb, c->d.seed, c->rank);
        c->call.sendbuf = c->recv.data + (size_t)c->rank * bb;
    } else {
        obct_buf_alloc(&c->send, bb, mis ? mis + 1 : 0);
        obct_fill(c->send.data, bb, c->d.seed, c->rank);
        c->call.sendbuf = c->send.data;
    }
    c->call.recvbuf = c->recv.data;
}

static void setup_reduce_scatter(struct obct_rcase *c, size_t mis)
{
    size_t total = c->count * (size_t)c->d.nranks;
    size_t mine = (size_t)c->rank * c->count;
    obct_buf_alloc(&c->send, total * esize(c), mis);
    obct_rfill(&c->d, c->send.data, total, 0, c->rank);
    c->call.sendbuf = c->send.data;
    if (c->in_place) {
        static const char *const outside = "sendbuf outside the rank's block (must stay unchanged)";
        c->call.recvbuf = c->send.data + mine * esize(c);
        keep_input(c, c->send.data, mine, 0, outside);
        keep_input(c, c->send.data + (mine + c->count) * esize(c), total - mine - c->count,
                   mine + c->count, outside);
    } else {
        keep_input(c, c->send.data, total, 0, SENDBUF_KEPT);
        obct_buf_alloc(&c->recv, c->count * esize(c), mis ? mis + 1 : 0);
        obct_poison(c->recv.data, c->count * esize(c));
        c->call.recvbuf = c->recv.data;
    }
}

void obct_rcase_setup(struct obct_rcase *c, enum obct_rkind kind, const struct obct_rdata *d,
                      size_t count, int root, int in_place, int variant, int rank)
{
    size_t mis;
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->d = *d;
    c->count = count;
    c->root = root;
    c->rank = rank;
    c->in_place = in_place;
    c->variant = variant;
    c->call.kind = kind;
    c->call.count = count;
    c->call.dtype = d->dtype;
    c->call.op = d->op;
    c->call.root = root;
    mis = obc_dtype_size(d->dtype) == 1 ? (size_t)(d->seed % 7) : 0;
    switch (kind) {
    case OBCT_ALLREDUCE:
        setup_allreduce(c, mis);
        break;
    case OBCT_REDUCE:
        setup_reduce(c, mis);
        break;
    case OBCT_ALLGATHER:
        setup_allgather(c, mis);
        break;
    case OBCT_REDUCE_SCATTER:
        setup_reduce_scatter(c, mis);
        break;
    }
}

void obct_rcase_describe(const struct obct_rcase *c, char *out, size_t outlen)
{
    const char *extra = "";
    if (c->kind == OBCT_REDUCE && c->rank != c->root) {
        extra = c->variant ? " (non-root passes a recvbuf)" : " (non-root recvbuf NULL)";
    }
    snprintf(out, outlen, "%s %s %s count=%zu root=%d %s%s %s%s%s seed=%llu nranks=%d",
             obct_rkind_name(c->kind), obct_dtype_name(c->d.dtype),
             c->kind == OBCT_ALLGATHER ? "-" : obct_redop_name(c->d.op), c->count, c->root,
             c->in_place ? "in-place" : "out-of-place", extra, obct_rpat_name(c->d.pat),
             c->note ? " " : "", c->note ? c->note : "", (unsigned long long)c->d.seed,
             c->d.nranks);
}

static int check_allgather(const char *file, int line, const struct obct_rcase *c, const char *desc)
{
    char what[320];
    size_t bb = c->count * esize(c);
    int bad = 0;
    for (int r = 0; r < c->d.nranks; r++) {
        snprintf(what, sizeof(what), "%s: recvbuf block %d", desc, r);
        if (obct_verify_at(file, line, what, c->recv.data + (size_t)r * bb, bb, c->d.seed, r)) {
            bad = -1;
            break; /* the next blocks are usually wrong too: one report */
        }
    }
    if (c->send.base != NULL) {
        snprintf(what, sizeof(what), "%s: sendbuf (must stay unchanged)", desc);
        bad |= obct_verify_at(file, line, what, c->send.data, bb, c->d.seed, c->rank);
    }
    return bad;
}

static int check_reduce_scatter(const char *file, int line, const struct obct_rcase *c,
                                const char *desc)
{
    char what[320];
    size_t mine = (size_t)c->rank * c->count;
    const unsigned char *res = c->call.recvbuf;
    snprintf(what, sizeof(what), "%s: recvbuf (block %d)", desc, c->rank);
    return obct_rcheck_at(file, line, what, &c->d, res, c->count, mine);
}

/* allreduce and reduce */
static int check_reduction(const char *file, int line, const struct obct_rcase *c, const char *desc)
{
    char what[320];
    size_t nbytes = c->count * esize(c);
    int bad = 0;
    if (c->kind == OBCT_ALLREDUCE && c->sliced) {
        size_t lo = c->count * (size_t)c->rank / (size_t)c->d.nranks;
        size_t hi = c->count * (size_t)(c->rank + 1) / (size_t)c->d.nranks;
        snprintf(what, sizeof(what), "%s: recvbuf (this rank's slice)", desc);
        bad |= obct_rcheck_at(file, line, what, &c->d, c->recv.data + lo * esize(c), hi - lo, lo);
    } else if (c->kind == OBCT_ALLREDUCE || c->rank == c->root) {
        snprintf(what, sizeof(what), "%s: recvbuf", desc);
        bad |= obct_rcheck_at(file, line, what, &c->d, c->recv.data, c->count, 0);
    } else if (c->recv.base != NULL && !c->in_place) {
        snprintf(what, sizeof(what), "%s: non-root's recvbuf (must not be touched)", desc);
        bad |= obct_verify_poison_at(file, line, what, c->recv.data, nbytes);
    }
    return bad;
}

/* The inputs set-up kept (keep_input) are unchanged. */
static int check_kept(const char *file, int line, const struct obct_rcase *c, const char *desc)
{
    char what[320];
    int bad = 0;
    for (int i = 0; i < c->nkept; i++) {
        const struct obct_rkept *k = &c->kept[i];
        if (XXH3_64bits(k->p, k->n * esize(c)) == k->hash) {
            continue;
        }
        snprintf(what, sizeof(what), "%s: %s", desc, k->what);
        if (obct_rcheck_input_at(file, line, what, &c->d, k->p, k->n, k->first, c->rank) == 0) {
            obct_soft_fail(file, line, "%s: its hash changed, yet every element is its input",
                           what);
        }
        bad = -1;
    }
    return bad;
}

int obct_rcase_check_at(const char *file, int line, const struct obct_rcase *c)
{
    char desc[240];
    char what[320];
    int bad;
    obct_rcase_describe(c, desc, sizeof(desc));
    switch (c->kind) {
    case OBCT_ALLGATHER:
        bad = check_allgather(file, line, c, desc);
        break;
    case OBCT_REDUCE_SCATTER:
        bad = check_reduce_scatter(file, line, c, desc);
        break;
    default:
        bad = check_reduction(file, line, c, desc);
        break;
    }
    bad |= check_kept(file, line, c, desc);
    if (c->recv.base != NULL) {
        snprintf(what, sizeof(what), "%s: recvbuf", desc);
        bad |= obct_buf_check_at(file, line, what, &c->recv);
    }
    if (c->send.base != NULL) {
        snprintf(what, sizeof(what), "%s: sendbuf", desc);
        bad |= obct_buf_check_at(file, line, what, &c->send);
    }
    return bad;
}

void obct_rcase_check_consistent_at(const char *file, int line, const struct obct_rcase *c,
                                    obc_comm_t *comm)
{
    char desc[240];
    size_t nbytes = c->count * esize(c);
    int ndiff = -7;
    int first = -7;
    obc_result_t rc;
    if (c->kind == OBCT_ALLGATHER) {
        nbytes *= (size_t)c->d.nranks;
    } else if (c->kind != OBCT_ALLREDUCE) {
        return;
    }
    obct_rcase_describe(c, desc, sizeof(desc));
    rc = obc_check_consistency(c->recv.data, nbytes, 0, &ndiff, &first, comm);
    if (rc != OBC_SUCCESS) {
        obct_fail(file, line, "%s: obc_check_consistency returned %s: %s", desc, obct_rc_name(rc),
                  obc_comm_last_error(comm));
    }
    if (ndiff != 0 || first != -1) {
        obct_soft_fail(file, line,
                       "%s: obc_check_consistency(root 0): ndiff=%d first_diff_rank=%d, expected "
                       "0 and -1 (ranks hold different results)",
                       desc, ndiff, first);
    }
}

void obct_rcase_free(struct obct_rcase *c)
{
    obct_buf_free(&c->send);
    obct_buf_free(&c->recv);
}

void obct_rcase_run_at(const char *file, int line, enum obct_rkind kind, const struct obct_rdata *d,
                       size_t count, int root, int in_place, int variant, obc_comm_t *comm,
                       enum obct_completion how)
{
    struct obct_rcase c;
    char desc[240];
    obc_result_t rc;
    obct_rcase_setup(&c, kind, d, count, root, in_place, variant, obc_comm_rank(comm));
    c.note = obct_completion_name(how);
    /* large allreduces: the consistency check below proves the ranks agree */
    c.sliced = count >= OBCT_SLICED_MIN_COUNT;
    rc = obct_rcall_run(&c.call, comm, how);
    if (rc != OBC_SUCCESS) {
        obct_rcase_describe(&c, desc, sizeof(desc));
        obct_fail(file, line, "%s: returned %s: %s", desc, obct_rc_name(rc),
                  obc_comm_last_error(comm));
    }
    obct_rcase_check_at(file, line, &c);
    obct_rcase_check_consistent_at(file, line, &c, comm);
    obct_rcase_free(&c);
}
