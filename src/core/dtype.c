/* SPDX-License-Identifier: MIT */
/*
 * dtype.c - element sizes and names of the public dtypes, in one table.
 */
#include "core/dtype.h"

#include <assert.h>

static const struct {
    size_t nbytes;
    const char *name;
} dtypes[] = {
    [OBC_INT8] = {1, "int8"},       [OBC_UINT8] = {1, "uint8"},
    [OBC_INT32] = {4, "int32"},     [OBC_UINT32] = {4, "uint32"},
    [OBC_INT64] = {8, "int64"},     [OBC_UINT64] = {8, "uint64"},
    [OBC_FLOAT16] = {2, "float16"}, [OBC_BFLOAT16] = {2, "bfloat16"},
    [OBC_FLOAT32] = {4, "float32"}, [OBC_FLOAT64] = {8, "float64"},
};
static_assert(sizeof(dtypes) / sizeof(dtypes[0]) == OBC_FLOAT64 + 1, "every dtype needs a row");

OBC_API size_t obc_dtype_size(obc_dtype_t t)
{
    if ((unsigned)t > OBC_FLOAT64) {
        return 0;
    }
    return dtypes[t].nbytes;
}

const char *obc__dtype_name(obc_dtype_t t)
{
    if ((unsigned)t > OBC_FLOAT64) {
        return "invalid";
    }
    return dtypes[t].name;
}
