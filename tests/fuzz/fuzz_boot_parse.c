/* SPDX-License-Identifier: MIT */
/*
 * fuzz_boot_parse.c - libFuzzer target for the two decoders that take bytes
 * from outside: a unique id (obc_unique_id_t, which travels through the
 * user's own channel) and a rendezvous header (struct boot_hdr, from the
 * network), validated against a reader's expectations taken from the input
 * too. Properties checked beyond "no crash, no UB" (ASan+UBSan):
 *  - a decoded id has a non-empty host, a port and terminated strings, and
 *    encoding it again decodes to the same endpoint;
 *  - a header that passes validation never announces more payload than the
 *    reader allows, nor a rank outside the announced count, so no size a
 *    peer sends can make the reader allocate or read without bound.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/boot_wire.h"
#include "bootstrap/bootstrap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* assert() vanishes under NDEBUG (RelWithDebInfo); these checks must not. */
#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
            abort(); \
        } \
    } while (0)

static void fuzz_id(const uint8_t *data, size_t size)
{
    obc_unique_id_t id;
    struct obc__boot_endpoint ep, again;
    memset(&id, 0, sizeof(id));
    memcpy(id.bytes, data, size < sizeof(id.bytes) ? size : sizeof(id.bytes));
    if (obc__boot_decode_id(&id, &ep) != OBC_SUCCESS) {
        return;
    }
    CHECK(ep.host[0] != '\0' && ep.port > 0 && ep.port <= 65535);
    CHECK(memchr(ep.host, '\0', sizeof(ep.host)) != NULL);
    CHECK(memchr(ep.secret, '\0', sizeof(ep.secret)) != NULL);
    obc__boot_encode_id(&ep, &id);
    CHECK(obc__boot_decode_id(&id, &again) == OBC_SUCCESS);
    CHECK(strcmp(again.host, ep.host) == 0 && again.port == ep.port &&
          strcmp(again.secret, ep.secret) == 0);
}

static void fuzz_header(const uint8_t *data, size_t size)
{
    struct boot_hdr h;
    int32_t nranks;
    uint32_t max_payload;
    if (size < sizeof(h) + sizeof(nranks) + sizeof(max_payload)) {
        return;
    }
    memcpy(&h, data, sizeof(h));
    memcpy(&nranks, data + sizeof(h), sizeof(nranks));
    memcpy(&max_payload, data + sizeof(h) + sizeof(nranks), sizeof(max_payload));
    if (nranks < 0) {
        nranks = 0; /* readers pass their count, or 0 when they learn it */
    }
    if (obc__boot_hdr_problem(&h, nranks, max_payload) != NULL) {
        return;
    }
    CHECK(h.magic == BOOT_MAGIC && h.version == BOOT_VERSION);
    CHECK(h.type >= BOOT_HELLO && h.type <= BOOT_ERROR);
    CHECK(h.nranks > 0 && h.nranks <= BOOT_MAX_RANKS && (nranks == 0 || h.nranks == nranks));
    CHECK(h.rank >= 0 && h.rank < h.nranks);
    CHECK(h.nbytes <= max_payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    /* The first byte picks the decoder, so one corpus covers both. */
    if (data[0] & 1) {
        fuzz_id(data + 1, size - 1);
    } else {
        fuzz_header(data + 1, size - 1);
    }
    return 0;
}
