/* SPDX-License-Identifier: MIT */
/*
 * boot_wire.h - the rendezvous wire format, private to src/bootstrap.
 * Each message is a fixed header followed by `nbytes` of payload.
 *   HELLO  client->server  payload: struct boot_hello (secret text, pid)
 *   DATA   client->server  payload: this rank's blob of round `round`
 *   ALL    server->client  payload: nranks blobs of round `round`
 *   BYE    client->server  no payload: this rank leaves
 *   ERROR  server->client  payload: text; `round` carries the obc_result_t
 */
#ifndef OBC_BOOT_WIRE_H
#define OBC_BOOT_WIRE_H

#include <stdint.h>

#include "bootstrap/bootstrap.h"

#define BOOT_MAGIC 0x4f424342u /* "OBCB" */
#define BOOT_VERSION 1
#define BOOT_MAX_RANKS (1 << 20)
#define BOOT_MAX_ERROR_TEXT 256

enum boot_type { BOOT_HELLO = 1, BOOT_DATA, BOOT_ALL, BOOT_BYE, BOOT_ERROR };

struct boot_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    int32_t rank;
    int32_t nranks;
    uint32_t round;
    uint32_t nbytes;
};

/* The payload of HELLO. The pid lets the server answer the rank of its own
 * process last: that rank's process hosts the server and may exit as soon as
 * it has its answer, which must not cut off the other ranks' answers. */
struct boot_hello {
    char secret[OBC_BOOT_SECRET_BYTES];
    char pad[3];
    int32_t pid;
};

/* Validate a header read from the network against what the reader expects.
 * Returns NULL when fine, else a static description of the problem. */
const char *obc__boot_hdr_problem(const struct boot_hdr *h, int nranks, uint64_t max_payload);

/* The absolute deadline ns from now, or -1 (none) for ns < 0. */
int64_t obc__boot_deadline(int64_t ns);

/* Constant-time comparison of two secret texts of OBC_BOOT_SECRET_BYTES. */
int obc__boot_secret_equal(const char *a, const char *b);

#endif
