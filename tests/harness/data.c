/* SPDX-License-Identifier: MIT */
/*
 * data.c - the byte pattern, guarded buffers and their checks (see data.h).
 *
 * Byte i of pattern (seed, rank) is byte i%8 (little-endian) of the word
 * mix(key(seed, rank) + i/8 * phi): every 8-byte position of every case and
 * rank is distinct, so stale, shifted or wrong-root data never passes.
 */
#include "data.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "obct.h"

#define MMAP_MIN (1u << 20)
/* From this size a buffer asks for transparent huge pages. On a paravirtualised VM
 * each 4 KiB page fault costs microseconds, and faulting fresh 64 MiB buffers on 8
 * ranks was three quarters of a matrix test's time; with 2 MiB pages it is a few
 * faults. Smaller buffers (the 1 MiB classes) keep 4 KiB pages, so both kinds of
 * memory stay under test. */
#define HUGE_MIN ((size_t)8 << 20)

/* Freed mappings kept for the next buffer that needs as many pages. A matrix
 * runs each size in several modes, dtypes and misalignments back to back, and
 * the kernel's faulting and zeroing of fresh pages was a fifth of a reduction
 * matrix's time and two thirds of an 8-rank broadcast matrix's (perf, 2
 * cores). Mappings are matched by their page count, which is what mmap maps
 * anyway, so a write past a buffer meets the end of the mapping where a fresh
 * one would put it. At most CACHE_BYTES are kept per process, so the large
 * tests' gigabyte buffers are never held beside the next one. */
#define CACHE_SLOTS 4
#define CACHE_BYTES ((size_t)160 << 20)

struct cached_map {
    void *base;
    size_t bytes;
};
static struct cached_map g_cache[CACHE_SLOTS]; /* oldest first */
static int g_ncached;
static size_t g_cached_bytes;
static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER; /* tests allocate in threads */

static struct cached_map cache_remove(int i)
{
    struct cached_map m = g_cache[i];
    memmove(&g_cache[i], &g_cache[i + 1], sizeof(g_cache[0]) * (size_t)(g_ncached - i - 1));
    g_ncached--;
    g_cached_bytes -= m.bytes;
    return m;
}

static void *cache_take(size_t bytes)
{
    void *p = NULL;
    pthread_mutex_lock(&g_cache_lock);
    for (int i = 0; i < g_ncached && p == NULL; i++) {
        if (g_cache[i].bytes == bytes) {
            p = cache_remove(i).base;
        }
    }
    pthread_mutex_unlock(&g_cache_lock);
    return p;
}

static void cache_put(void *base, size_t bytes)
{
    if (bytes > CACHE_BYTES) {
        munmap(base, bytes);
        return;
    }
    pthread_mutex_lock(&g_cache_lock);
    while (g_ncached == CACHE_SLOTS || g_cached_bytes + bytes > CACHE_BYTES) {
        struct cached_map old = cache_remove(0);
        munmap(old.base, old.bytes);
    }
    g_cache[g_ncached++] = (struct cached_map){base, bytes};
    g_cached_bytes += bytes;
    pthread_mutex_unlock(&g_cache_lock);
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t pattern_key(uint64_t seed, int rank)
{
    return mix64(seed * 0x2545F4914F6CDD1Dull ^ ((uint64_t)(unsigned)(rank + 7) << 40));
}

/* Word w of the pattern, in memory order (byte j of memory = byte j of the result on a
 * little-endian host, which is what obct_pattern_byte assumes). */
static uint64_t pattern_word(uint64_t key, uint64_t w)
{
    uint64_t v = mix64(key + w * 0x9E3779B97F4A7C15ull);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

uint8_t obct_pattern_byte(uint64_t seed, int rank, size_t index)
{
    uint64_t v = mix64(pattern_key(seed, rank) + (uint64_t)(index / 8) * 0x9E3779B97F4A7C15ull);
    return (uint8_t)(v >> (8 * (index % 8)));
}

void obct_fill(void *p, size_t nbytes, uint64_t seed, int rank)
{
    unsigned char *c = p;
    uint64_t key = pattern_key(seed, rank);
    size_t nwords = nbytes / 8;
    for (size_t w = 0; w < nwords; w++) {
        uint64_t v = pattern_word(key, w);
        memcpy(c + w * 8, &v, 8);
    }
    for (size_t i = nwords * 8; i < nbytes; i++) {
        c[i] = obct_pattern_byte(seed, rank, i);
    }
}

void obct_poison(void *p, size_t nbytes)
{
    if (nbytes > 0) {
        memset(p, OBCT_POISON, nbytes);
    }
}

/* Count bad bytes and report the first; expect(i) gives byte i. */
static int report_bad(const char *file, int line, const char *what, const unsigned char *c,
                      size_t nbytes, uint64_t seed, int rank, int is_poison)
{
    size_t first = SIZE_MAX;
    size_t last = 0;
    size_t nbad = 0;
    for (size_t i = 0; i < nbytes; i++) {
        uint8_t want = is_poison ? OBCT_POISON : obct_pattern_byte(seed, rank, i);
        if (c[i] != want) {
            if (first == SIZE_MAX) {
                first = i;
            }
            last = i;
            nbad++;
        }
    }
    if (nbad == 0) {
        return 0;
    }
    obct_soft_fail(file, line,
                   "%s: %zu of %zu bytes wrong; first bad index %zu: expected 0x%02x got 0x%02x; "
                   "last bad index %zu (pattern seed=%llu rank=%d)",
                   what, nbad, nbytes, first,
                   is_poison ? OBCT_POISON : obct_pattern_byte(seed, rank, first), c[first], last,
                   (unsigned long long)seed, is_poison ? -1 : rank);
    return -1;
}

int obct_verify_at(const char *file, int line, const char *what, const void *p, size_t nbytes,
                   uint64_t seed, int rank)
{
    const unsigned char *c = p;
    uint64_t key = pattern_key(seed, rank);
    size_t nwords = nbytes / 8;
    for (size_t w = 0; w < nwords; w++) {
        uint64_t v;
        memcpy(&v, c + w * 8, 8);
        if (v != pattern_word(key, w)) {
            return report_bad(file, line, what, c, nbytes, seed, rank, 0);
        }
    }
    for (size_t i = nwords * 8; i < nbytes; i++) {
        if (c[i] != obct_pattern_byte(seed, rank, i)) {
            return report_bad(file, line, what, c, nbytes, seed, rank, 0);
        }
    }
    return 0;
}

int obct_verify_poison_at(const char *file, int line, const char *what, const void *p,
                          size_t nbytes)
{
    const unsigned char *c = p;
    uint64_t want;
    size_t nwords = nbytes / 8;
    memset(&want, OBCT_POISON, sizeof(want));
    for (size_t w = 0; w < nwords; w++) {
        uint64_t v;
        memcpy(&v, c + w * 8, 8);
        if (v != want) {
            return report_bad(file, line, what, c, nbytes, 0, 0, 1);
        }
    }
    for (size_t i = nwords * 8; i < nbytes; i++) {
        if (c[i] != OBCT_POISON) {
            return report_bad(file, line, what, c, nbytes, 0, 0, 1);
        }
    }
    return 0;
}

/* Guard byte j before the payload and after it; position-dependent so a shifted
 * or constant write is visible. */
static uint8_t guard_before(size_t j)
{
    return (uint8_t)(0x5A + 3 * j);
}

static uint8_t guard_after(size_t j)
{
    return (uint8_t)(0xA5 + 5 * j);
}

void obct_buf_alloc(struct obct_buf *b, size_t nbytes, size_t misalign)
{
    size_t total = misalign % OBCT_GUARD + 2 * OBCT_GUARD + nbytes;
    OBCT_ASSERT_MSG(total > nbytes, "buffer size %zu overflows", nbytes);
    if (total >= MMAP_MIN) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        total = (total + page - 1) / page * page;
        void *p = cache_take(total);
        if (p == NULL) {
            p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            OBCT_ASSERT_MSG(p != MAP_FAILED, "mmap of %zu bytes failed", total);
            if (total >= HUGE_MIN) {
                (void)madvise(p, total, MADV_HUGEPAGE); /* a hint: no THP support is no error */
            }
        }
        b->base = p;
    } else {
        void *p = NULL;
        OBCT_ASSERT_MSG(posix_memalign(&p, OBCT_GUARD, total) == 0, "malloc %zu failed", total);
        b->base = p;
    }
    b->alloc_bytes = total;
    b->nbytes = nbytes;
    b->data = b->base + misalign % OBCT_GUARD + OBCT_GUARD;
    for (size_t j = 0; j < OBCT_GUARD; j++) {
        b->data[-(ptrdiff_t)OBCT_GUARD + (ptrdiff_t)j] = guard_before(j);
        b->data[nbytes + j] = guard_after(j);
    }
}

void obct_buf_free(struct obct_buf *b)
{
    if (b->base == NULL) {
        return;
    }
    if (b->alloc_bytes >= MMAP_MIN) {
        cache_put(b->base, b->alloc_bytes);
    } else {
        free(b->base);
    }
    memset(b, 0, sizeof(*b));
}

int obct_buf_check_at(const char *file, int line, const char *what, const struct obct_buf *b)
{
    int res = 0;
    for (size_t j = 0; j < OBCT_GUARD; j++) {
        uint8_t got = b->data[-(ptrdiff_t)OBCT_GUARD + (ptrdiff_t)j];
        if (got != guard_before(j)) {
            obct_soft_fail(file, line,
                           "%s: guard byte %zd (before the payload) overwritten: expected 0x%02x "
                           "got 0x%02x",
                           what, (ptrdiff_t)j - OBCT_GUARD, guard_before(j), got);
            res = -1;
            break;
        }
    }
    for (size_t j = 0; j < OBCT_GUARD; j++) {
        uint8_t got = b->data[b->nbytes + j];
        if (got != guard_after(j)) {
            obct_soft_fail(file, line,
                           "%s: guard byte at payload+%zu (after %zu payload bytes) overwritten: "
                           "expected 0x%02x got 0x%02x",
                           what, b->nbytes + j, b->nbytes, guard_after(j), got);
            res = -1;
            break;
        }
    }
    return res;
}

size_t obct_peak_rss(void)
{
    char line[256];
    size_t kib = 0;
    FILE *f = fopen("/proc/self/status", "r");
    OBCT_ASSERT_MSG(f != NULL, "cannot open /proc/self/status");
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = (size_t)strtoull(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    OBCT_ASSERT_MSG(kib > 0, "no VmHWM in /proc/self/status");
    return kib * 1024;
}
