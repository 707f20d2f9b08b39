/* SPDX-License-Identifier: MIT */
/* dtype.h - dtype names (sizes are public: obc_dtype_size). */
#ifndef OBC_CORE_DTYPE_H
#define OBC_CORE_DTYPE_H

#include "obc.h"

const char *obc__dtype_name(obc_dtype_t t);

#endif
