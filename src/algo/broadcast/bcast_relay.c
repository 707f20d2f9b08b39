/* SPDX-License-Identifier: MIT */
/*
 * bcast_relay.c - broadcast by relaying chunks over p2p links, for ranks
 * that do not share one arena (several hosts). Members of the relay form a
 * tree; each receives a chunk from its parent, forwards it to its
 * children, then keeps it. Three registry entries share this body:
 *
 *  chain  every rank is a member, in the order root, root+1, ...: a
 *         pipelined chain. Every link is busy at once and the root sends
 *         each byte once: time ~ size / link + (n - 1) chunk times.
 *  tree   every rank is a member of a binomial tree over that order:
 *         log2(n) hops, for small messages (latency bound).
 *  hier   only one head per host is a member (the root on its host, the
 *         lowest rank elsewhere), hosts in the order root's host, next,
 *         ...; a chain for large messages, a binomial tree for one chunk, a
 *         tree of radix 8 for a few KiB (select.c decides, in the plan).
 *         Each head then hands every chunk to the other ranks of its host
 *         through the arena's windows, chunk by chunk: the host stage of
 *         chunk k runs while the network still carries chunk k+1 (the TCP
 *         transport keeps receiving into its ring meanwhile).
 *
 *   hosts:   A(root) --c0 c1 c2--> B --c0 c1--> C --c0--> D     (chain)
 *   in B:    head B forwards c1 to C, then copies c1 out to B's ranks
 *
 * Chunks never straddle a segment of a fused group, so every rank cuts the
 * message the same way; each carries the op's stamp and size, checked on
 * arrival (p2p_expect). The root's speed does not depend on which rank it
 * is: the member order starts at the root.
 */
#include <stdint.h>
#include <string.h>

#include "algo/p2p/p2p_msg.h"
#include "algo/window/win_reduce.h"
#include "core/copy.h"

/* A k-nomial position has at most (radix - 1) children per digit: radix 8
 * over up to 8^10 members fits. */
#define RELAY_MAX_CHILDREN 70
#define RELAY_FLAT_RADIX 8
/* A segment of at least this many bytes is posted (post_segment). */
#define RELAY_POST_MIN (64u << 10)

struct relay_state {
    const struct obc__algo_ctx *ctx;
    const struct obc__coll_args *args;
    uint64_t stamp;
    size_t chunk;
    bool member; /* relays data (else: only receives from its host's head) */
    bool host_stage; /* hands every chunk on inside the host */
    int host_root; /* the head's index in the host team */
    int parent; /* communicator rank; -1 on the root */
    int children[RELAY_MAX_CHILDREN];
    int nchildren;
    size_t seg, off; /* the current chunk */
    size_t seg_at; /* the current segment's offset in the message (all segments' bytes) */
    size_t post_seg; /* the segment post_segment last looked at (SIZE_MAX: none yet) */
    int phase;
    bool kept; /* the current chunk is in recv */
    bool posted; /* the parent's chunks land in recv as they arrive (post_segment) */
    int forwarded; /* children that have the current chunk */
    int drained; /* children whose link no longer references this call's buffers */
    struct win_gather_run host;
};
_Static_assert(sizeof(struct relay_state) <= OBC_ALGO_STATE_BYTES, "state must fit");

enum { PH_RELAY, PH_HOST_START, PH_HOST, PH_NEXT };

/* k-nomial tree over positions 0..n-1 (0 is the root): a position's parent
 * clears its lowest nonzero base-`radix` digit; its children set one digit
 * below that, the largest subtree first. Radix 2 is the binomial tree;
 * radix >= n is a flat fan-out from the root. */
static void tree_links(int pos, int n, int radix, int *parent, int *children, int *nchildren)
{
    int low = n; /* the weight of pos's lowest nonzero digit (n: the root) */
    if (pos > 0) {
        for (low = 1; (pos / low) % radix == 0; low *= radix) {
        }
    }
    *parent = pos == 0 ? -1 : pos - (pos / low) % radix * low;
    *nchildren = 0;
    int top = 0;
    for (int step = 1; step < low && step < n; step *= radix) {
        top = step;
    }
    for (int step = top; step >= 1; step /= radix) {
        for (int j = 1; j < radix && pos + j * step < n; j++) {
            if (*nchildren < RELAY_MAX_CHILDREN) {
                children[(*nchildren)++] = pos + j * step;
            }
        }
    }
}

/* The relay's members in order (positions), as communicator ranks. */
static int member_rank(const struct obc__algo_ctx *ctx, int root, bool heads, int pos)
{
    if (!heads) {
        return (root + pos) % ctx->nranks;
    }
    int h = (ctx->host_of[root] + pos) % ctx->leaders.n;
    return h == ctx->host_of[root] ? root : ctx->leaders.ranks[h];
}

/* The shape and the chunk come from the plan (select.c): every rank cuts
 * the message the same way. */
static void relay_init(struct relay_state *s, struct obc__algo_ctx *ctx,
                       const struct obc__coll_args *args, bool heads)
{
    enum obc__relay_shape shape = args->plan.shape;
    int n = heads ? ctx->leaders.n : ctx->nranks, pos = -1;
    int root_host = ctx->host_of[args->root];
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->args = args;
    s->stamp = obc__algo_stamp(args);
    s->chunk = args->plan.chunk_bytes;
    for (int p = 0; p < n && pos < 0; p++) {
        pos = member_rank(ctx, args->root, heads, p) == ctx->rank ? p : -1;
    }
    s->member = pos >= 0;
    s->parent = -1;
    if (s->member && shape == OBC_RELAY_CHAIN) {
        s->parent = pos > 0 ? member_rank(ctx, args->root, heads, pos - 1) : -1;
        s->nchildren = pos + 1 < n;
        s->children[0] = s->nchildren ? member_rank(ctx, args->root, heads, pos + 1) : -1;
    } else if (s->member) {
        int parent, kids[RELAY_MAX_CHILDREN];
        tree_links(pos, n, shape == OBC_RELAY_FLAT ? RELAY_FLAT_RADIX : 2, &parent, kids,
                   &s->nchildren);
        s->parent = parent < 0 ? -1 : member_rank(ctx, args->root, heads, parent);
        for (int i = 0; i < s->nchildren; i++) {
            s->children[i] = member_rank(ctx, args->root, heads, kids[i]);
        }
    }
    /* Every rank of an arena must take part in the same window jobs (their
     * chunk counters advance together), so a host of one rank sits the
     * host stage out only when it has its arena to itself. */
    s->host_stage = heads && (ctx->host.n > 1 || ctx->arena_has_all);
    /* The head of this host: the root on its own host, else the lowest rank
     * (index 0 of the host team), as the host layout numbers them. */
    s->host_root = ctx->host_of[ctx->rank] == root_host ? ctx->host_index[args->root] : 0;
    s->phase = PH_RELAY;
    s->post_seg = SIZE_MAX;
}

/* Before the first chunk of a segment: post its recv, so that from another
 * host its chunks arrive there, not in slots (obc__p2p_recv_post; a parent
 * on this host is not affected). The parent sends the whole message, every
 * segment of a fused group in order, as one run of frames, so the segment
 * starts at run offset seg_at; a chunk never straddles two segments. A
 * smaller segment is not worth the post: its chunks are copied out, and
 * the last post, whose range lies behind them, takes none of them. */
static void post_segment(struct relay_state *s)
{
    const struct obc__seg *g = &s->args->segs[s->seg];
    s->post_seg = s->seg;
    if (s->parent < 0 || g->nbytes < RELAY_POST_MIN) {
        return;
    }
    obc__p2p_recv_post(s->ctx->p2p, s->parent, s->stamp, s->seg_at, g->recv, g->nbytes);
    s->posted = true;
}

static bool relay_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks > 1;
}

/* Hierarchical: the host stage needs every rank of a host on one arena. */
static bool hier_supports(const struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    (void)args;
    return ctx->nranks > 1 && ctx->arena != NULL && ctx->host.n <= 512;
}

static size_t chunk_len(const struct relay_state *s)
{
    size_t left = s->args->segs[s->seg].nbytes - s->off;
    return left < s->chunk ? left : s->chunk;
}

/* Receive the current chunk and keep it in recv (the root: its own copy;
 * a posted chunk is there already), releasing the parent's slot at once;
 * then forward it to every child from where it stays put for the whole
 * call (the root's send buffer, else recv), by reference: to another host
 * the TCP link sends it from there, with no copy into a slot (relay_step
 * waits for those links to drain before the call returns). */
static obc_result_t relay_chunk(struct relay_state *s, struct obc__wait *w)
{
    const struct obc__algo_ctx *ctx = s->ctx;
    const struct obc__seg *g = &s->args->segs[s->seg];
    size_t len = chunk_len(s);
    const unsigned char *from = (const unsigned char *)g->send + s->off;
    unsigned char *keep = (unsigned char *)g->recv + s->off;
    obc_result_t res = OBC_SUCCESS;
    if (!s->kept) {
        const unsigned char *src = from;
        if (s->parent >= 0) {
            src = p2p_expect(ctx, s->args, s->parent, len, s->stamp, &res, w);
            if (src == NULL) {
                return res;
            }
        }
        bool landed = s->posted && obc__p2p_recv_landed(ctx->p2p, s->parent);
        if (keep != src && !landed) {
            obc__copy(keep, src, len, 0);
        }
        if (s->parent >= 0) {
            obc__p2p_recv_release(ctx->p2p, s->parent);
        }
        s->kept = true;
    }
    if (s->parent >= 0) {
        from = keep;
    }
    for (; s->forwarded < s->nchildren; s->forwarded++) {
        int child = s->children[s->forwarded];
        void *dst = obc__p2p_send_acquire(ctx->p2p, child, w);
        if (dst == NULL) {
            w->peer = child;
            return OBC_IN_PROGRESS;
        }
        obc__p2p_send_publish_ref(ctx->p2p, child, dst, 0, from, len, s->stamp);
    }
    s->forwarded = 0;
    s->kept = false;
    return OBC_SUCCESS;
}

static void host_start(struct relay_state *s)
{
    const struct obc__seg *g = &s->args->segs[s->seg];
    bool is_root = s->ctx->rank == s->args->root;
    struct win_gather_job job = {
        .args = s->args,
        .team = &s->ctx->host,
        .in = (const unsigned char *)(is_root ? g->send : g->recv) + s->off,
        .out = (unsigned char *)g->recv + s->off,
        .nbytes = chunk_len(s),
        .bcast = true,
        .root = s->host_root,
    };
    win_gather_start(&s->host, s->ctx, &job);
}

static obc_result_t relay_step(void *state, struct obc__wait *w)
{
    struct relay_state *s = state;
    const struct obc__coll_args *a = s->args;
    while (s->seg < a->nsegs) {
        obc_result_t res = OBC_SUCCESS;
        if (a->segs[s->seg].nbytes == 0) {
            s->seg++;
            continue;
        }
        switch (s->phase) {
        case PH_RELAY:
            if (s->member && s->post_seg != s->seg) {
                post_segment(s);
            }
            res = s->member ? relay_chunk(s, w) : OBC_SUCCESS;
            s->phase = res == OBC_SUCCESS ? PH_HOST_START : PH_RELAY;
            break;
        case PH_HOST_START:
            if (s->host_stage) {
                host_start(s);
            }
            s->phase = PH_HOST;
            break;
        case PH_HOST:
            res = s->host_stage ? win_gather_step(&s->host, w) : OBC_SUCCESS;
            s->phase = res == OBC_SUCCESS ? PH_NEXT : PH_HOST;
            /* Across machines the next chunk comes at network speed: spinning
             * for it would only take the CPU from the threads that read it. */
            w->sleep_now = !s->ctx->arena_has_all;
            break;
        default:
            s->off += chunk_len(s);
            if (s->off == a->segs[s->seg].nbytes) {
                s->seg_at += s->off;
                s->seg++;
                s->off = 0;
            }
            s->phase = PH_RELAY;
        }
        if (res != OBC_SUCCESS) {
            return res;
        }
    }
    for (; s->drained < s->nchildren; s->drained++) {
        if (!obc__p2p_send_drained(s->ctx->p2p, s->children[s->drained], w)) {
            return OBC_IN_PROGRESS;
        }
    }
    if (s->posted) {
        obc__p2p_recv_unpost(s->ctx->p2p, s->parent);
        s->posted = false;
    }
    return OBC_SUCCESS;
}

/* chain and tree link every rank, hier only the host heads: the plan says
 * which shape, also for hier (chain, binomial or radix-8 tree by size). */
static void all_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    relay_init(state, ctx, args, false);
}

static void hier_init(void *state, struct obc__algo_ctx *ctx, const struct obc__coll_args *args)
{
    relay_init(state, ctx, args, true);
}

const struct obc__algo obc__bcast_chain = {OBC_COLL_BROADCAST, "chain", relay_supports, all_init,
                                           relay_step};
const struct obc__algo obc__bcast_tree = {OBC_COLL_BROADCAST, "tree", relay_supports, all_init,
                                          relay_step};
const struct obc__algo obc__bcast_hier = {OBC_COLL_BROADCAST, "hier", hier_supports, hier_init,
                                          relay_step};
