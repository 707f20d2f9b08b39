/* SPDX-License-Identifier: MIT */
/*
 * copy_kernel.h - memory copies for the algorithms. A large destination
 * that will not stay in cache is written with non-temporal (streaming)
 * stores: no read-for-ownership of the destination lines, so a copy moves
 * 2 bytes of DRAM traffic per byte instead of 3. glibc switches to such
 * stores only for very large copies (192 MiB on the development VM), far
 * above where a broadcast benefits.
 */
#ifndef OBC_ALGO_COPY_KERNEL_H
#define OBC_ALGO_COPY_KERNEL_H

#include <stddef.h>

/* Copy n bytes; `streaming` selects non-temporal stores where the CPU has
 * them (x86-64), plain memcpy otherwise or for short copies. */
void obc__copy(void *dst, const void *src, size_t n, int streaming);

#endif
