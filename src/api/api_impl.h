/* SPDX-License-Identifier: MIT */
/* api_impl.h - argument checks and launch paths shared by the api_*.c files. */
#ifndef OBC_API_IMPL_H
#define OBC_API_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "obc.h"

obc_result_t obc__api_check_comm(const char *fn, obc_comm_t *comm);
obc_result_t obc__api_check_bcast(const char *fn, const void *sendbuf, void *recvbuf, size_t count,
                                  obc_dtype_t dtype, int root, obc_comm_t *comm);

/* Do the byte ranges [a, a+an) and [b, b+bn) share a byte? */
bool obc__api_overlap(const void *a, size_t an, const void *b, size_t bn);

struct obc__op;
/* Run a described op as a blocking call (or collect it into the group). */
obc_result_t obc__api_run_blocking(obc_comm_t *comm, struct obc__op *op);
/* Queue a heap op for a non-blocking call; *req receives its request. */
obc_result_t obc__api_start_async(obc_comm_t *comm, struct obc__op *op, obc_request_t **req);
/* req must not be NULL; sets *req = NULL. */
obc_result_t obc__api_check_req_out(const char *fn, obc_comm_t *comm, obc_request_t **req);

#endif
