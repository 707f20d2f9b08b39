/* SPDX-License-Identifier: MIT */
/*
 * copy.h - copies of user data. Every copy of a user's bytes into or out of
 * shared memory goes through obc__copy, for two reasons:
 *  - a large destination that will not stay in cache can be written with
 *    non-temporal (streaming) stores: no read-for-ownership of the
 *    destination lines, so 2 bytes of DRAM traffic per byte instead of 3.
 *    glibc switches to such stores only for very large copies (192 MiB on
 *    the development VM), far above where a broadcast benefits;
 *  - memcpy's `rep movsb` is many times slower for some pairs of addresses
 *    (copy.c), and the user picks the addresses.
 */
#ifndef OBC_CORE_COPY_H
#define OBC_CORE_COPY_H

#include <stdbool.h>
#include <stddef.h>

/* Copy n bytes; `streaming` selects non-temporal stores where the CPU has
 * them (x86-64) and the copy is long enough to gain from them. */
void obc__copy(void *dst, const void *src, size_t n, int streaming);

/* Does a string copy (`rep movsb`: memcpy's middle sizes, and the kernel's
 * copies for process_vm_readv/writev) run slowly from src to dst? True when
 * dst lies 1-63 bytes after src modulo 4 KiB (copy.c). */
bool obc__copy_distance_is_slow(const void *dst, const void *src);

#endif
