/* SPDX-License-Identifier: MIT */
/*
 * check.h - the only two macros that may hide a `return` (STYLE.md).
 *
 * OBC_CHECK(expr): evaluate an obc_result_t expression; on failure log the
 * site at TRACE and return the code. OBC_CHECK_GOTO(expr, res, label): the
 * same, but store the code in `res` and jump to the cleanup label.
 */
#ifndef OBC_CORE_CHECK_H
#define OBC_CORE_CHECK_H

#include "obc.h"
#include "core/log.h"

#define OBC_CHECK(expr) \
    do { \
        obc_result_t obc_check_res_ = (expr); \
        if (obc_check_res_ != OBC_SUCCESS) { \
            OBC_TRACE(OBC_LOG_INIT, "%s failed: %s", #expr, obc_strerror(obc_check_res_)); \
            return obc_check_res_; \
        } \
    } while (0)

#define OBC_CHECK_GOTO(expr, res, label) \
    do { \
        (res) = (expr); \
        if ((res) != OBC_SUCCESS) { \
            OBC_TRACE(OBC_LOG_INIT, "%s failed: %s", #expr, obc_strerror(res)); \
            goto label; \
        } \
    } while (0)

#endif
