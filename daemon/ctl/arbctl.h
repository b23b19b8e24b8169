/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client of the user-space arbiter's control protocol (gpusched_ctl.h),
 * for gpuschedctl: the same calls and records as genl.h's for the module.
 * Every function returns 0 (or a count) or a negative errno.
 */
#ifndef GSD_ARBCTL_H
#define GSD_ARBCTL_H

#include <stddef.h>
#include <stdint.h>

#include "genl.h"

struct gs_arb;

/*
 * Connect to the arbiter listening on @path. -ENOENT or -ECONNREFUSED:
 * none listens there; -EPROTONOSUPPORT (from the first request): it is
 * an arbiter without a control interface.
 */
int gs_arb_open(const char *path, struct gs_arb **out);
void gs_arb_close(struct gs_arb *a);

/* Arrays are malloc()ed; the caller frees them. */
int gs_arb_get_gpus(struct gs_arb *a, struct gs_gpu_rec **gpus, size_t *n);
/* @gpu < 0: the clients of every GPU. */
int gs_arb_get_clients(struct gs_arb *a, int64_t gpu,
		       struct gs_client_rec **clients, size_t *n);
int gs_arb_set_gpu(struct gs_arb *a, uint32_t index,
		   const struct gs_knob_set *ks);
int gs_arb_set_client(struct gs_arb *a, uint64_t id, uint32_t pid,
		      int64_t gpu, const struct gpusched_params *p);

/* Events: subscribe (uid 0 only), then poll gs_arb_fd() and read. */
int gs_arb_subscribe(struct gs_arb *a);
int gs_arb_fd(const struct gs_arb *a);
/*
 * Deliver what has arrived to @fn (GS_NL_EV_ATTACH, _DETACH, _OVERRUN,
 * _LOST): 0 when drained, -ECONNRESET when the arbiter went away.
 */
int gs_arb_events_read(struct gs_arb *a, gs_nl_event_fn *fn, void *arg);

#endif /* GSD_ARBCTL_H */
