/* Vendored from ../shared/netlab/nldelay.c, unchanged but for this line. */
/*
 * nldelay.c - constant one-way delay for packets in an NFQUEUE, because this
 * machine's kernel has no sch_netem (CONFIG_NET_SCH_NETEM is not set).
 *
 * netlab runs one nldelay per delayed host, inside that host's network
 * namespace, together with an iptables rule that sends the packets arriving
 * on the host's link to the queue:
 *
 *   iptables -t raw -A PREROUTING -i eth0 -j NFQUEUE --queue-num 0
 *   nldelay -q 0 -d 200      # 200 microseconds
 *
 * Design (cheap on purpose):
 *  - metadata-only copy mode (NFQNL_COPY_META): no payload goes to user space;
 *  - NFQA_CFG_F_GSO: GSO super-packets are queued whole, not segmented;
 *  - the delay is constant, so packets leave in arrival order: one
 *    NFQNL_MSG_VERDICT_BATCH (accept every id <= X) releases all packets
 *    that are due, and a packet whose notification was lost (ENOBUFS) is
 *    still released by the next batch;
 *  - waiting uses ppoll() with a nanosecond timeout and 1 ns timer slack.
 * The packets are held in the receiver's PREROUTING, where the skb no longer
 * belongs to the sender's socket, so TCP small queues do not throttle the
 * sender the way a delay on the sender's own egress would.
 *
 * Not a netem replacement: no jitter, no reordering, no rate; the delay is
 * added to the time the packet reaches this host's PREROUTING.
 *
 * Build: cc -O2 -Wall -o nldelay nldelay.c     (only kernel UAPI headers)
 * Usage: nldelay -q QUEUE -d DELAY_US [-m MAXLEN] [-v]
 * Exits 0 on SIGTERM/SIGINT; prints counters on exit with -v.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef NETLINK_NO_ENOBUFS
#define NETLINK_NO_ENOBUFS 5
#endif

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

static int fd;
static uint32_t seq;
static uint16_t qnum;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* message builder */
struct msg { char buf[256]; size_t len; };

static void msg_init(struct msg *m, uint16_t type, uint16_t flags)
{
    memset(m, 0, sizeof *m);
    struct nlmsghdr *nh = (struct nlmsghdr *)m->buf;
    nh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
    nh->nlmsg_flags = NLM_F_REQUEST | flags;
    nh->nlmsg_seq = ++seq;
    struct nfgenmsg *g = (struct nfgenmsg *)NLMSG_DATA(nh);
    g->nfgen_family = AF_UNSPEC;
    g->version = NFNETLINK_V0;
    g->res_id = htons(qnum);
    m->len = NLMSG_LENGTH(sizeof(struct nfgenmsg));
}

static void msg_attr(struct msg *m, uint16_t type, const void *data, uint16_t dlen)
{
    struct nlattr *a = (struct nlattr *)(m->buf + NLMSG_ALIGN(m->len));
    a->nla_type = type;
    a->nla_len = NLA_HDRLEN + dlen;
    memcpy((char *)a + NLA_HDRLEN, data, dlen);
    m->len = NLMSG_ALIGN(m->len) + NLA_ALIGN(a->nla_len);
}

static int msg_send(struct msg *m)
{
    struct nlmsghdr *nh = (struct nlmsghdr *)m->buf;
    nh->nlmsg_len = (uint32_t)m->len;
    struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
    for (;;) {
        ssize_t r = sendto(fd, m->buf, m->len, 0, (struct sockaddr *)&sa, sizeof sa);
        if (r == (ssize_t)m->len) return 0;
        if (r < 0 && errno == EINTR) continue;
        return -1;
    }
}

/* send a config message and wait for its ACK; returns 0 or -errno */
static int config(struct msg *m)
{
    if (msg_send(m) < 0) return -errno;
    uint32_t want = ((struct nlmsghdr *)m->buf)->nlmsg_seq;
    char rb[8192];
    for (;;) {
        ssize_t r = recv(fd, rb, sizeof rb, 0);
        if (r < 0) { if (errno == EINTR) continue; return -errno; }
        for (struct nlmsghdr *nh = (struct nlmsghdr *)rb; NLMSG_OK(nh, (size_t)r);
             nh = NLMSG_NEXT(nh, r)) {
            if (nh->nlmsg_type == NLMSG_ERROR && nh->nlmsg_seq == want) {
                struct nlmsgerr *e = (struct nlmsgerr *)NLMSG_DATA(nh);
                return e->error;
            }
        }
    }
}

static int verdict_batch(uint32_t maxid)
{
    struct msg m;
    msg_init(&m, NFQNL_MSG_VERDICT_BATCH, 0);
    struct nfqnl_msg_verdict_hdr vh = { .verdict = htonl(NF_ACCEPT), .id = htonl(maxid) };
    msg_attr(&m, NFQA_VERDICT_HDR, &vh, sizeof vh);
    return msg_send(&m);
}

static void usage(const char *p)
{
    fprintf(stderr, "usage: %s -q QUEUE -d DELAY_US [-m MAXLEN] [-v]\n", p);
    exit(2);
}

int main(int argc, char **argv)
{
    long q = -1, maxlen = 65536;
    double delay_us = -1;
    int verbose = 0, c;
    while ((c = getopt(argc, argv, "q:d:m:v")) != -1) {
        switch (c) {
        case 'q': q = strtol(optarg, NULL, 10); break;
        case 'd': delay_us = strtod(optarg, NULL); break;
        case 'm': maxlen = strtol(optarg, NULL, 10); break;
        case 'v': verbose = 1; break;
        default: usage(argv[0]);
        }
    }
    if (q < 0 || q > 65535 || delay_us < 0 || maxlen < 16) usage(argv[0]);
    qnum = (uint16_t)q;
    const uint64_t delay = (uint64_t)(delay_us * 1000.0);

    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct sigaction sa = { .sa_handler = on_sig };
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
    if (fd < 0) { perror("nldelay: socket(NETLINK_NETFILTER)"); return 1; }
    int one = 1, rcv = 16 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
    struct sockaddr_nl local = { .nl_family = AF_NETLINK };
    if (bind(fd, (struct sockaddr *)&local, sizeof local) < 0) {
        perror("nldelay: bind"); return 1;
    }

    struct msg m;
    int err;
    msg_init(&m, NFQNL_MSG_CONFIG, NLM_F_ACK);
    struct nfqnl_msg_config_cmd cmd = { .command = NFQNL_CFG_CMD_BIND, .pf = htons(AF_INET) };
    msg_attr(&m, NFQA_CFG_CMD, &cmd, sizeof cmd);
    if ((err = config(&m)) < 0) {
        fprintf(stderr, "nldelay: bind queue %u: %s\n", qnum, strerror(-err));
        return 1;
    }
    msg_init(&m, NFQNL_MSG_CONFIG, NLM_F_ACK);
    struct nfqnl_msg_config_params par = { .copy_range = htonl(0), .copy_mode = NFQNL_COPY_META };
    msg_attr(&m, NFQA_CFG_PARAMS, &par, sizeof par);
    uint32_t ml = htonl((uint32_t)maxlen);
    msg_attr(&m, NFQA_CFG_QUEUE_MAXLEN, &ml, sizeof ml);
    uint32_t fl = htonl(NFQA_CFG_F_GSO);
    msg_attr(&m, NFQA_CFG_MASK, &fl, sizeof fl);
    msg_attr(&m, NFQA_CFG_FLAGS, &fl, sizeof fl);
    if ((err = config(&m)) < 0) {
        fprintf(stderr, "nldelay: configure queue %u: %s\n", qnum, strerror(-err));
        return 1;
    }

    /* FIFO of (id, due time) */
    size_t cap = (size_t)maxlen + 1024, head = 0, tail = 0; /* tail: next free */
    uint32_t *ids = malloc(cap * sizeof *ids);
    uint64_t *due = malloc(cap * sizeof *due);
    if (!ids || !due) { perror("nldelay: malloc"); return 1; }
    static char rb[1 << 18];
    uint64_t n_pkts = 0, n_batches = 0, max_late = 0;

    if (verbose)
        fprintf(stderr, "nldelay: queue %u delay %.1f us maxlen %ld\n", qnum, delay_us, maxlen);

    while (!stop) {
        struct timespec to, *top = NULL;
        if (head != tail) {
            uint64_t t = now_ns(), d = due[head];
            uint64_t w = d > t ? d - t : 0;
            to.tv_sec = (time_t)(w / 1000000000ull);
            to.tv_nsec = (long)(w % 1000000000ull);
            top = &to;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int pr = ppoll(&pfd, 1, top, NULL);
        if (pr < 0 && errno != EINTR) { perror("nldelay: ppoll"); break; }
        if (pr > 0) {
            for (;;) {
                ssize_t r = recv(fd, rb, sizeof rb, MSG_DONTWAIT);
                if (r < 0) {
                    if (errno == EINTR) continue;
                    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) break;
                    perror("nldelay: recv"); stop = 1; break;
                }
                uint64_t t = now_ns();
                for (struct nlmsghdr *nh = (struct nlmsghdr *)rb; NLMSG_OK(nh, (size_t)r);
                     nh = NLMSG_NEXT(nh, r)) {
                    if (nh->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
                        continue;
                    struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(nh) +
                                                         NLMSG_ALIGN(sizeof(struct nfgenmsg)));
                    int alen = (int)nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));
                    while (alen >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
                           (int)a->nla_len <= alen) {
                        if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR) {
                            struct nfqnl_msg_packet_hdr *ph =
                                (struct nfqnl_msg_packet_hdr *)((char *)a + NLA_HDRLEN);
                            size_t nt = (tail + 1) % cap;
                            if (nt == head) {        /* full: release the oldest now */
                                verdict_batch(ids[head]);
                                head = (head + 1) % cap;
                            }
                            ids[tail] = ntohl(ph->packet_id);
                            due[tail] = t + delay;
                            tail = nt;
                            n_pkts++;
                            break;
                        }
                        alen -= NLA_ALIGN(a->nla_len);
                        a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
                    }
                }
            }
        }
        /* release everything that is due with one batch verdict */
        uint64_t t = now_ns();
        size_t last = cap;
        while (head != tail && due[head] <= t) {
            if (t - due[head] > max_late) max_late = t - due[head];
            last = head;
            head = (head + 1) % cap;
        }
        if (last != cap) {
            if (verdict_batch(ids[last]) < 0 && errno != ENOBUFS) {
                perror("nldelay: verdict"); break;
            }
            n_batches++;
        }
    }
    if (verbose)
        fprintf(stderr, "nldelay: queue %u: %llu packets, %llu batch verdicts, max late %.1f us\n",
                qnum, (unsigned long long)n_pkts, (unsigned long long)n_batches, max_late / 1e3);
    /* release what is still held (closing the socket would drop it) */
    if (head != tail)
        verdict_batch(ids[(tail + cap - 1) % cap]);
    msg_init(&m, NFQNL_MSG_CONFIG, 0);
    cmd.command = NFQNL_CFG_CMD_UNBIND;
    msg_attr(&m, NFQA_CFG_CMD, &cmd, sizeof cmd);
    msg_send(&m);
    close(fd);
    return 0;
}
