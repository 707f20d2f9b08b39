/* SPDX-License-Identifier: MIT */
/*
 * boot_id.c - the bytes of obc_unique_id_t: a magic, the rendezvous host and
 * port, and the session secret. Decoding checks everything, since the bytes
 * travel through the user's own channel.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bootstrap/bootstrap.h"

#define ID_MAGIC 0x4f424349u /* "OBCI" */

struct id_layout {
    uint32_t magic;
    uint16_t port;
    char host[46];
    char secret[33]; /* 32 hex characters */
};
_Static_assert(sizeof(struct id_layout) <= sizeof(obc_unique_id_t), "id must fit");

void obc__boot_encode_id(const struct obc__boot_endpoint *ep, obc_unique_id_t *id)
{
    struct id_layout l;
    memset(&l, 0, sizeof(l));
    l.magic = ID_MAGIC;
    l.port = (uint16_t)ep->port;
    snprintf(l.host, sizeof(l.host), "%.*s", (int)sizeof(l.host) - 1, ep->host);
    snprintf(l.secret, sizeof(l.secret), "%.*s", (int)sizeof(l.secret) - 1, ep->secret);
    memset(id, 0, sizeof(*id));
    memcpy(id->bytes, &l, sizeof(l));
}

obc_result_t obc__boot_decode_id(const obc_unique_id_t *id, struct obc__boot_endpoint *ep)
{
    struct id_layout l;
    memcpy(&l, id->bytes, sizeof(l));
    if (l.magic != ID_MAGIC || l.port == 0 || memchr(l.host, '\0', sizeof(l.host)) == NULL ||
        memchr(l.secret, '\0', sizeof(l.secret)) == NULL || l.host[0] == '\0') {
        return OBC_ERR_INVALID_ARG;
    }
    memset(ep, 0, sizeof(*ep));
    strcpy(ep->host, l.host);
    ep->port = l.port;
    strcpy(ep->secret, l.secret);
    return OBC_SUCCESS;
}
