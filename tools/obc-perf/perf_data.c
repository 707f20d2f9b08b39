/* SPDX-License-Identifier: MIT */
/*
 * perf_data.c - the data obc-perf moves: a pattern that depends on the word
 * position and on the global iteration number, its bitwise-NOT poison, and
 * the count of wrong bytes; plus the pre-touched buffers, page-aligned or
 * a chosen number of bytes past a page boundary (-A).
 *
 * Because the pattern changes with the iteration, stale data from an
 * earlier call is caught; because it changes with the position, shifted or
 * truncated data is caught; because the poison differs from the pattern in
 * every bit, any byte the collective fails to write is certainly counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

/* Word `word` of the pattern of iteration `iter`. The iteration is rotated
 * into the high bits so that (word, iter) and (word + 1, iter - 1) do not
 * collide, then a 64-bit finaliser (MurmurHash3's fmix64) makes every
 * input bit affect every output byte. */
static uint64_t pattern_word(uint64_t word, uint64_t iter)
{
    uint64_t it = (iter + 1) * 0x9FB21C651E98DF25ull;
    uint64_t x = (word + 1) * 0xA24BAED4963EE407ull + ((it << 29) | (it >> 35));
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 33;
    return x;
}

/* Writes the pattern (or its complement with poison) of iteration iter.
 * Words go through memcpy, so the buffer needs no alignment and the byte
 * order is the host's for fill and check alike. */
void perf_data_fill(unsigned char *buf, size_t nbytes, uint64_t iter, bool poison)
{
    const uint64_t flip = poison ? ~(uint64_t)0 : 0;
    const size_t nwords = nbytes / 8;
    for (size_t k = 0; k < nwords; k++) {
        uint64_t w = pattern_word(k, iter) ^ flip;
        memcpy(buf + 8 * k, &w, 8);
    }
    if (nbytes % 8 != 0) {
        uint64_t w = pattern_word(nwords, iter) ^ flip;
        memcpy(buf + 8 * nwords, &w, nbytes % 8);
    }
}

static unsigned bytes_differing(const unsigned char *a, const unsigned char *b, size_t n)
{
    unsigned count = 0;
    for (size_t i = 0; i < n; i++) {
        count += a[i] != b[i];
    }
    return count;
}

/* Counts the bytes of buf that differ from the pattern of iteration iter.
 * Whole words are compared first; only a differing word is examined byte
 * by byte, so a correct buffer costs one pass at memory speed. */
uint64_t perf_data_wrong(const unsigned char *buf, size_t nbytes, uint64_t iter)
{
    uint64_t wrong = 0;
    const size_t nwords = nbytes / 8;
    for (size_t k = 0; k < nwords; k++) {
        uint64_t want = pattern_word(k, iter);
        uint64_t got;
        memcpy(&got, buf + 8 * k, 8);
        if (got != want) {
            wrong += bytes_differing((const unsigned char *)&got, (const unsigned char *)&want, 8);
        }
    }
    if (nbytes % 8 != 0) {
        uint64_t want = pattern_word(nwords, iter);
        wrong += bytes_differing(buf + 8 * nwords, (const unsigned char *)&want, nbytes % 8);
    }
    return wrong;
}

static obc_comm_t *shared_comm; /* -M: the communicator the buffers belong to */
static size_t data_offset; /* -A: bytes past a page boundary where buffers start */

void perf_data_use_shared(obc_comm_t *comm)
{
    shared_comm = comm;
}

void perf_data_set_offset(size_t offset)
{
    data_offset = offset;
}

/* Page-aligned like the anchors' buffers (or data_offset bytes past the
 * page boundary), and written once so that page faults are paid here and
 * never inside a timed call. NULL on failure. */
unsigned char *perf_data_alloc(size_t nbytes)
{
    void *p = NULL;
    size_t whole = nbytes + data_offset + (nbytes == 0);
    if (shared_comm != NULL ? obc_mem_alloc(&p, whole, shared_comm) != 0
                            : posix_memalign(&p, 4096, whole) != 0) {
        return NULL;
    }
    memset(p, 0, whole);
    return (unsigned char *)p + data_offset;
}

void perf_data_free(void *p)
{
    if (p == NULL) {
        return;
    }
    p = (unsigned char *)p - data_offset;
    if (shared_comm != NULL) {
        obc_mem_free(p, shared_comm);
    } else {
        free(p);
    }
}

/* The same, for setup code that has no way to go on without the buffer. */
unsigned char *perf_data_alloc_or_exit(size_t nbytes)
{
    unsigned char *p = perf_data_alloc(nbytes);
    if (p == NULL) {
        fprintf(stderr, "obc-perf: cannot allocate %zu bytes\n", nbytes);
        exit(1);
    }
    return p;
}
