/* SPDX-License-Identifier: MIT */
/* api_impl.h - argument checks shared by the blocking and async calls. */
#ifndef OBC_API_IMPL_H
#define OBC_API_IMPL_H

#include "obc.h"

obc_result_t obc__api_check_comm(const char *fn, obc_comm_t *comm);
obc_result_t obc__api_check_bcast(const char *fn, const void *sendbuf, void *recvbuf, size_t count,
                                  obc_dtype_t dtype, int root, obc_comm_t *comm);

#endif
