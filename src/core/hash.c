/* SPDX-License-Identifier: MIT */
/* hash.c - obc__hash64 over xxhash's XXH3, compiled into libobc. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/hash.h"

uint64_t obc__hash64(const void *buf, size_t nbytes)
{
    return (uint64_t)XXH3_64bits(buf, nbytes);
}
