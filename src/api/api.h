/* SPDX-License-Identifier: MIT */
/* api.h - what every api_*.c file shares: the request object and the version
 * string (argument checks and launch paths are in api_impl.h). */
#ifndef OBC_API_H
#define OBC_API_H

#include "obc.h"
#include "core/check.h"
#include "core/status.h"

#define OBC_API_STR_(x) #x
#define OBC_API_STR(x) OBC_API_STR_(x)
#define OBC_API_VERSION_STRING \
    OBC_API_STR(OBC_VERSION_MAJOR) \
    "." OBC_API_STR(OBC_VERSION_MINOR) "." OBC_API_STR(OBC_VERSION_PATCH)

struct obc__engine;
struct obc_request {
    struct obc__op *op; /* NULL until the request's group has ended */
    struct obc__engine *engine;
};

#endif
