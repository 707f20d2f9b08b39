/* SPDX-License-Identifier: MIT */
/*
 * api_algo.c - the public questions about algorithm choice:
 * obc_comm_algorithm (which algorithm a collective of a given size would
 * run on a communicator) and obc_comm_algorithm_forced (what OBC_ALGO
 * forces). Both ask the engine, which asks select.c with the very tuning
 * and context the runs use, so the answer cannot drift from the choice.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "core/comm.h"
#include "engine/engine.h"

/* Check the common arguments; on failure name is "" where it can be. */
static obc_result_t check_query(const char *fn, const obc_comm_t *comm, obc_coll_t coll, char *name,
                                size_t len)
{
    struct obc__err *err = comm != NULL ? &((struct obc_comm *)comm)->err : NULL;
    if (name != NULL && len > 0) {
        name[0] = '\0';
    }
    if (comm == NULL || name == NULL || len == 0) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: %s", fn,
                            comm == NULL ? "comm is NULL" : "name is NULL or len is 0");
    }
    if ((unsigned)coll >= OBC_COLL_COUNT) {
        return obc__err_set(err, OBC_ERR_INVALID_ARG, "%s: unknown collective %d", fn, (int)coll);
    }
    return OBC_SUCCESS;
}

static obc_result_t put_name(const char *fn, const obc_comm_t *comm, const char *algo, char *name,
                             size_t len)
{
    if (strlen(algo) >= len) {
        return obc__err_set(&((struct obc_comm *)comm)->err, OBC_ERR_INVALID_ARG,
                            "%s: '%s' needs %zu bytes, len is %zu", fn, algo, strlen(algo) + 1,
                            len);
    }
    snprintf(name, len, "%s", algo);
    return OBC_SUCCESS;
}

OBC_API obc_result_t obc_comm_algorithm(const obc_comm_t *comm, obc_coll_t coll, size_t nbytes,
                                        char *name, size_t len)
{
    OBC_CHECK(check_query("obc_comm_algorithm", comm, coll, name, len));
    /* The operation as the collective call would describe it: one
     * segment of bytes from root 0 (the choice depends on neither root nor
     * dtype); a barrier moves nothing. */
    struct obc__seg seg = {NULL, NULL, coll == OBC_COLL_BARRIER ? 0 : nbytes};
    struct obc__coll_args args;
    memset(&args, 0, sizeof(args));
    args.coll = coll;
    args.dtype = OBC_UINT8;
    args.count = seg.nbytes;
    args.nbytes = seg.nbytes;
    args.segs = &seg;
    args.nsegs = coll == OBC_COLL_BARRIER ? 0 : 1;
    struct obc__plan plan;
    const struct obc__algo *a = obc__engine_plan(comm->engine, &args, &plan, NULL, 0);
    return put_name("obc_comm_algorithm", comm, a->name, name, len);
}

OBC_API obc_result_t obc_comm_algorithm_forced(const obc_comm_t *comm, obc_coll_t coll, char *name,
                                               size_t len)
{
    OBC_CHECK(check_query("obc_comm_algorithm_forced", comm, coll, name, len));
    const struct obc__algo *a = obc__engine_forced(comm->engine, coll);
    return put_name("obc_comm_algorithm_forced", comm, a != NULL ? a->name : "", name, len);
}
