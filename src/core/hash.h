/* SPDX-License-Identifier: MIT */
/* hash.h - the one hash of obc: 64-bit XXH3 (Debian's xxhash, header-only
 * use, so libobc gains no runtime dependency). */
#ifndef OBC_CORE_HASH_H
#define OBC_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t obc__hash64(const void *buf, size_t nbytes);

#endif
