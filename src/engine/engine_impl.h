/* SPDX-License-Identifier: MIT */
/* engine_impl.h - what op.c, progress.c and group.c share, private to src/engine. */
#ifndef OBC_ENGINE_IMPL_H
#define OBC_ENGINE_IMPL_H

#include "engine/engine.h"

void obc__op_finish(struct obc__op *op, obc_result_t result);

#endif
