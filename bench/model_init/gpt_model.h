/* SPDX-License-Identifier: MIT */
/*
 * gpt_model.h - the GPT-like model whose initialisation the model_init
 * benchmarks broadcast from rank 0: GPT-2 small's 148 tensors (12 layers of
 * width 768, 1024 positions) with a 32000-token vocabulary, 110.4 M float32
 * parameters, 441.8 MB. Header-only, so the MPI and the obc programs (built
 * by different compilers) share the shapes, the fill and the check.
 */
#ifndef GPT_MODEL_H
#define GPT_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GPT_TENSORS 148
#define GPT_LAYERS 12
#define GPT_WIDTH 768
#define GPT_VOCAB 32000
#define GPT_POSITIONS 1024

/* Element counts in state_dict order: embeddings, then per layer ln_1
 * (weight, bias), attention qkv (weight, bias) and projection (weight,
 * bias), ln_2, MLP up (weight, bias) and down (weight, bias); final ln_f. */
static inline void gpt_counts(size_t counts[GPT_TENSORS])
{
    const size_t d = GPT_WIDTH;
    const size_t layer[12] = {d, d, d * 3 * d, 3 * d, d * d,     d,
                              d, d, d * 4 * d, 4 * d, 4 * d * d, d};
    size_t n = 0;
    counts[n++] = (size_t)GPT_VOCAB * d;
    counts[n++] = (size_t)GPT_POSITIONS * d;
    for (int l = 0; l < GPT_LAYERS; l++) {
        for (int k = 0; k < 12; k++) {
            counts[n++] = layer[k];
        }
    }
    counts[n++] = d;
    counts[n++] = d;
}

/* The value of byte i of tensor t in repetition rep: rank 0 holds it; the
 * others are poisoned with its complement before each repetition. */
static inline unsigned char gpt_byte(int t, size_t i, int rep)
{
    return (unsigned char)((i * 131u) ^ ((size_t)t * 7u) ^ (size_t)rep * 29u);
}

static inline void gpt_fill(unsigned char *p, size_t nbytes, int t, int rep, int poison)
{
    for (size_t i = 0; i < nbytes; i++) {
        p[i] = (unsigned char)(poison ? ~gpt_byte(t, i, rep) : gpt_byte(t, i, rep));
    }
}

/* Bytes of tensor t that differ from rank 0's. */
static inline uint64_t gpt_wrong(const unsigned char *p, size_t nbytes, int t, int rep)
{
    uint64_t wrong = 0;
    for (size_t i = 0; i < nbytes; i++) {
        wrong += p[i] != gpt_byte(t, i, rep);
    }
    return wrong;
}

/* Every tensor of the model, for repetition rep: rank 0's values, or
 * (poison) their complement on the other ranks. */
static inline void gpt_fill_model(unsigned char *const t[GPT_TENSORS],
                                  const size_t counts[GPT_TENSORS], int rep, int poison)
{
    for (int i = 0; i < GPT_TENSORS; i++) {
        gpt_fill(t[i], counts[i] * 4, i, rep, poison);
    }
}

/* Bytes of the whole model that differ from rank 0's. */
static inline uint64_t gpt_wrong_model(unsigned char *const t[GPT_TENSORS],
                                       const size_t counts[GPT_TENSORS], int rep)
{
    uint64_t wrong = 0;
    for (int i = 0; i < GPT_TENSORS; i++) {
        wrong += gpt_wrong(t[i], counts[i] * 4, i, rep);
    }
    return wrong;
}

/* Median of n values (sorts them). */
static inline double gpt_median(double *v, int n)
{
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
