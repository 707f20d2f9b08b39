/* SPDX-License-Identifier: MIT */
/*
 * dtype.c - element sizes of the public dtypes, in one table.
 */
#include "obc.h"

#include <assert.h>

static const size_t dtype_bytes[] = {
    [OBC_INT8] = 1,   [OBC_UINT8] = 1,   [OBC_INT32] = 4,    [OBC_UINT32] = 4,  [OBC_INT64] = 8,
    [OBC_UINT64] = 8, [OBC_FLOAT16] = 2, [OBC_BFLOAT16] = 2, [OBC_FLOAT32] = 4, [OBC_FLOAT64] = 8,
};
static_assert(sizeof(dtype_bytes) / sizeof(dtype_bytes[0]) == OBC_FLOAT64 + 1,
              "every dtype needs a row");

OBC_API size_t obc_dtype_size(obc_dtype_t t)
{
    if ((unsigned)t > OBC_FLOAT64) {
        return 0;
    }
    return dtype_bytes[t];
}
