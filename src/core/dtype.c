/* SPDX-License-Identifier: MIT */
/*
 * dtype.c - element sizes and names of the public dtypes, in one table each.
 */
#include "core/dtype.h"

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

static const char *const dtype_names[] = {
    [OBC_INT8] = "int8",       [OBC_UINT8] = "uint8",       [OBC_INT32] = "int32",
    [OBC_UINT32] = "uint32",   [OBC_INT64] = "int64",       [OBC_UINT64] = "uint64",
    [OBC_FLOAT16] = "float16", [OBC_BFLOAT16] = "bfloat16", [OBC_FLOAT32] = "float32",
    [OBC_FLOAT64] = "float64",
};
static_assert(sizeof(dtype_names) / sizeof(dtype_names[0]) == OBC_FLOAT64 + 1,
              "every dtype needs a name");

const char *obc__dtype_name(obc_dtype_t t)
{
    return (unsigned)t > OBC_FLOAT64 ? "dtype?" : dtype_names[t];
}
