/* SPDX-License-Identifier: MIT */
/*
 * data.h - test data for obc: a deterministic byte pattern f(seed, rank,
 * index), guarded buffers, and verification that names the first bad index.
 *
 * A buffer is allocated with OBCT_GUARD bytes of a known pattern before and
 * after the payload; obct_buf_check reports any write outside the payload.
 * Fill and verify work a 64-bit word at a time (a few ns per 8 bytes), so
 * checking every byte of a 4 GiB buffer stays cheap.
 *
 * Part of the obct test library (tests/harness). Under bcase and rcase (their
 * buffers), and used directly by killcheck.c, the fault tests that check data
 * (abort_test, killed_rank*, coll_mismatch, stall_peer, obcrun_helper) and
 * tests/large (rss_*).
 */
#ifndef OBCT_DATA_H
#define OBCT_DATA_H

#include <stddef.h>
#include <stdint.h>

#define OBCT_GUARD 64
#define OBCT_POISON 0xCD

struct obct_buf {
    unsigned char *base; /* what was allocated */
    unsigned char *data; /* payload: base + misalign + OBCT_GUARD */
    size_t nbytes; /* payload size */
    size_t alloc_bytes; /* bytes mapped at base */
};

/* Byte `index` of the pattern for (seed, rank). */
uint8_t obct_pattern_byte(uint64_t seed, int rank, size_t index);

void obct_fill(void *p, size_t nbytes, uint64_t seed, int rank);
void obct_poison(void *p, size_t nbytes);

/* 0 when p holds the pattern; otherwise prints what (with file:line), the first bad
 * index, expected and got bytes and how many bytes differ, counts a soft failure and
 * returns -1. */
int obct_verify_at(const char *file, int line, const char *what, const void *p, size_t nbytes,
                   uint64_t seed, int rank);
/* Same for a buffer that must still hold OBCT_POISON. */
int obct_verify_poison_at(const char *file, int line, const char *what, const void *p,
                          size_t nbytes);

/* Allocate nbytes (0 allowed) with guards; misalign (0..63) shifts the payload off a
 * 64-byte boundary. Fatal on failure. Large buffers are mmap'd, so untouched pages
 * cost nothing until filled; a freed one may come back, unzeroed, as the next buffer
 * of as many pages (data.c), so a test fills or poisons what it reads. */
void obct_buf_alloc(struct obct_buf *b, size_t nbytes, size_t misalign);
void obct_buf_free(struct obct_buf *b);
/* 0 when both guards are intact; otherwise reports like obct_verify_at. */
int obct_buf_check_at(const char *file, int line, const char *what, const struct obct_buf *b);

#define obct_verify(what, p, n, seed, rank) \
    obct_verify_at(__FILE__, __LINE__, what, p, n, seed, rank)
#define obct_verify_poison(what, p, n) obct_verify_poison_at(__FILE__, __LINE__, what, p, n)
#define obct_buf_check(what, b) obct_buf_check_at(__FILE__, __LINE__, what, b)

/* Peak resident set (VmHWM of /proc/self/status) in bytes; fatal if unreadable. */
size_t obct_peak_rss(void);

#endif /* OBCT_DATA_H */
