/* SPDX-License-Identifier: MIT */
/* dtype.h - names of the public dtypes, for messages. */
#ifndef OBC_CORE_DTYPE_H
#define OBC_CORE_DTYPE_H

#include "obc.h"

/* "float32", ...; "dtype?" for an invalid value. */
const char *obc__dtype_name(obc_dtype_t t);

#endif
