/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * What this implementation of the uapi header knows, for both token
 * services, the daemon and the tests. Private, not ABI: a service refuses
 * bits it does not know (EOPNOTSUPP), so a client must not compile in the
 * set of bits its copy of the header had.
 */
#ifndef GS_ABI_H
#define GS_ABI_H

#include <linux/gpusched.h>

#define GS_ACQUIRE_FLAGS	(GPUSCHED_ACQUIRE_NONBLOCK | GPUSCHED_ACQUIRE_TIMEOUT | \
				 GPUSCHED_ACQUIRE_DUE | GPUSCHED_ACQUIRE_NUDGE | \
				 GPUSCHED_ACQUIRE_NUDGE_DONE)
#define GS_PARAM_MASK		(GPUSCHED_PARAM_WEIGHT | GPUSCHED_PARAM_CLASS | \
				 GPUSCHED_PARAM_CAP | GPUSCHED_PARAM_MEM_LIMIT)
/*
 * The default of max_clients_per_uid (the module's parameter, the
 * arbiter's --max-clients-per-uid): clients one user may attach to one
 * GPU. Enough for every process of a user's job on one GPU; it keeps one
 * user from filling a token with clients.
 */
#define GS_MAX_CLIENTS_PER_UID	256
/* What both token services (module and arbiter) report. */
#define GS_FEATURES		(GPUSCHED_FEAT_DUE | GPUSCHED_FEAT_GPU_TIME | \
				 GPUSCHED_FEAT_MEM | GPUSCHED_FEAT_NUDGE | \
				 GPUSCHED_FEAT_NUDGE_AGE | GPUSCHED_FEAT_NUDGE_DONE)

#endif /* GS_ABI_H */
