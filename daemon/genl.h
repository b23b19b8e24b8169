/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A client of the generic netlink family "gpusched" (libnl-genl-3), for
 * gpuschedd and gpuschedctl: dumps of GPUs and clients, the set commands,
 * and the "events" multicast group. Every function returns 0 (or a count)
 * or a negative errno; after a request the kernel refused, gs_nl_errmsg()
 * has the kernel's own explanation (extended ack), if it gave one.
 */
#ifndef GSD_GENL_H
#define GSD_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/gpusched.h>

#include "knobs.h"

struct gs_gpu_rec {
	uint32_t index;
	uint8_t uuid[GPUSCHED_UUID_LEN];
	struct gs_knob_set knobs;
	uint32_t nr_clients, nr_waiting;
	uint32_t holder_pid;		/* 0: free (or not visible) */
	uint64_t grants, overruns, held_ns;
	uint64_t mem_reserved;		/* bytes, all clients */
};

struct gs_client_rec {
	uint32_t gpu;
	uint64_t id;
	uint32_t pid;
	char comm[16];
	uint32_t uid, gid;
	uint64_t cgroup_id;
	uint32_t weight, class, cap_pct, state;
	uint64_t held_ns, grants, wait_ns_total, wait_ns_max;
	uint64_t overruns, yields;
	/*
	 * GPU time the client reported, all grants (held_ns charges the
	 * larger of it and the time held, per grant); has_gpu_ns: the
	 * service reports it (a module older than 2026-12-03 does not).
	 */
	uint64_t gpu_ns;
	bool has_gpu_ns;
	/*
	 * GPUSCHED_PARAM_* whose value the policy set, and those the client
	 * lowered itself since; has_marks: the module reports them (one
	 * older than 2026-11-30 does not).
	 */
	uint32_t policy_set, policy_lowered;
	bool has_marks;
	/* Device memory in bytes; has_mem: the service reports it. */
	uint64_t mem_total, mem_reserved, mem_limit, mem_refused;
	bool has_mem;
	/*
	 * What the process uses on the GPU beyond its reservations, from
	 * NVML (nvml.h); has_mem_ctx: NVML said. No service reports it.
	 */
	uint64_t mem_ctx;
	bool has_mem_ctx;
};

struct gs_nl;

/*
 * Connect and resolve the family. -ENOENT: the family is not registered
 * (gpusched.ko is not loaded); -EPROTONOSUPPORT: no generic netlink.
 */
int gs_nl_open(struct gs_nl **out);
void gs_nl_close(struct gs_nl *nl);

/* The kernel's message about the last refused request, or "". */
const char *gs_nl_errmsg(const struct gs_nl *nl);

/* Arrays are malloc()ed; the caller frees them. */
int gs_nl_get_gpus(struct gs_nl *nl, struct gs_gpu_rec **gpus, size_t *n);
int gs_nl_get_gpu(struct gs_nl *nl, uint32_t index, struct gs_gpu_rec *gpu);
/* @gpu < 0: the clients of every GPU. */
int gs_nl_get_clients(struct gs_nl *nl, int64_t gpu,
		      struct gs_client_rec **clients, size_t *n);

int gs_nl_set_gpu(struct gs_nl *nl, uint32_t index,
		  const struct gs_knob_set *ks);
/*
 * The client @id (if non-zero) or every client of process @pid (if
 * non-zero), only on GPU @gpu if @gpu >= 0; the fields in @p->mask, those
 * in @policy marked as the policy's (GPUSCHED_A_CLIENT_POLICY_SET) if
 * @policy >= 0, which only modules that report marks accept.
 */
int gs_nl_set_client(struct gs_nl *nl, uint64_t id, uint32_t pid,
		     int64_t gpu, const struct gpusched_params *p,
		     int64_t policy);

/*
 * Events. A gs_nl_events socket follows the family itself (nlctrl's
 * "notify" group), so that a daemon can start before the module is
 * loaded and survive its reload, and joins "events" while the family
 * exists. Reading never blocks.
 */
enum gs_nl_event_kind {
	GS_NL_EV_FAMILY_NEW,		/* gpusched registered: resync */
	GS_NL_EV_FAMILY_DEL,		/* unregistered (module unloaded) */
	GS_NL_EV_ATTACH,
	GS_NL_EV_DETACH,
	GS_NL_EV_OVERRUN,
	GS_NL_EV_LOST,			/* the socket overflowed: resync */
};

struct gs_nl_events;

typedef void gs_nl_event_fn(void *arg, enum gs_nl_event_kind kind,
			    const struct gs_client_rec *c);

int gs_nl_events_open(struct gs_nl_events **out);
void gs_nl_events_close(struct gs_nl_events *ev);
int gs_nl_events_fd(const struct gs_nl_events *ev);
/*
 * Join the family's "events" group: 0, -ENOENT without the family,
 * -EPERM without CAP_NET_ADMIN.
 */
int gs_nl_events_join(struct gs_nl_events *ev);
/* Deliver what has arrived to @fn: 0 when drained, or -errno. */
int gs_nl_events_read(struct gs_nl_events *ev, gs_nl_event_fn *fn, void *arg);

/* A person's reading of a GPUSCHED_A_CLIENT_* or _GPU_* attribute. */
const char *gs_nl_client_attr_name(int attr);
const char *gs_nl_gpu_attr_name(int attr);

#endif /* GSD_GENL_H */
