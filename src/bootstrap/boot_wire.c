/* SPDX-License-Identifier: MIT */
/* boot_wire.c - header validation, secret comparison and deadlines for the rendezvous. */
#include "bootstrap/boot_wire.h"

#include <string.h>

#include "platform/platform.h"

const char *obc__boot_hdr_problem(const struct boot_hdr *h, int nranks, uint64_t max_payload)
{
    if (h->magic != BOOT_MAGIC) {
        return "bad magic (not an obc peer)";
    }
    if (h->version != BOOT_VERSION) {
        return "unsupported protocol version";
    }
    if (h->type < BOOT_HELLO || h->type > BOOT_ERROR) {
        return "unknown message type";
    }
    if (h->nranks <= 0 || h->nranks > BOOT_MAX_RANKS || (nranks > 0 && h->nranks != nranks)) {
        return "rank count differs";
    }
    if (h->rank < 0 || h->rank >= h->nranks) {
        return "rank out of range";
    }
    if (h->nbytes > max_payload) {
        return "payload too large";
    }
    return NULL;
}

int obc__boot_secret_equal(const char *a, const char *b)
{
    unsigned char diff = 0;
    for (size_t i = 0; i < OBC_BOOT_SECRET_BYTES; i++) {
        diff |= (unsigned char)(a[i] ^ b[i]);
    }
    return diff == 0;
}

int64_t obc__boot_deadline(int64_t ns)
{
    return ns < 0 ? -1 : obc__now_ns() + ns;
}
