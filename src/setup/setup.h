/* SPDX-License-Identifier: MIT */
/*
 * setup.h - the setup layer's one header: assembling a communicator and
 * taking it apart. Setup sits above bootstrap, transport and engine and
 * below api: it joins the rendezvous, computes the host layout once, builds
 * the host arena and the p2p links, and starts the engine on them.
 */
#ifndef OBC_SETUP_H
#define OBC_SETUP_H

#include "obc.h"
#include "bootstrap/bootstrap.h"
#include "core/comm.h"

/* Join the rendezvous at ep as rank/nranks, learn where every rank runs,
 * set up the host arena and the links to other hosts, start the engine.
 * cfg is the snapshot the communicator keeps. Collective over all nranks;
 * blocks until every rank is in or cfg's timeout passes. On failure *out
 * is NULL, and the message is in the thread's error buffer. */
obc_result_t obc__setup_comm_create(const struct obc__config *cfg,
                                    const struct obc__boot_endpoint *ep, int rank, int nranks,
                                    struct obc_comm **out);
/* Finish the engine's queue, stop it, close the transports (letting remote
 * peers drain what this rank sent, unless it is broken), free comm. The
 * engine's result (the first failure since the last synchronize). */
obc_result_t obc__setup_comm_destroy(struct obc_comm *comm);

/* obc_comm_split over parent (arguments already checked): an allgather of
 * colors and keys over parent, then the child is assembled like any
 * communicator, its setup rounds carried by allgathers over parent (no
 * rendezvous server), with parent's config snapshot and parent's view of
 * every member's machine and host. Collective over parent (six of its
 * collectives on every rank, whatever the color); *out is NULL for color
 * OBC_UNDEFINED. */
obc_result_t obc__setup_comm_split(struct obc_comm *parent, int color, int key,
                                   struct obc_comm **out);

#endif
