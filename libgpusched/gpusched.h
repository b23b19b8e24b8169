/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpusched, explicit face: take turns on a GPU with the other processes
 * that share it, through the gpusched token service (/dev/gpusched, or the
 * user-space arbiter `gpuschedd --arbiter` where the module is absent).
 *
 * Every function returns 0 (or a value >= 0 where documented) on success
 * and a negative errno value on failure. None of them sets errno. A handle
 * may be used from several threads at once. A handle does not survive
 * fork(): the child must gpusched_close() it (which then only frees
 * memory) and open its own. See gpusched(3).
 *
 * The header does not depend on CUDA: a GPU is named by the 16 bytes of its
 * CUuuid (cuDeviceGetUuid), which, unlike ordinals, do not change with
 * CUDA_VISIBLE_DEVICES.
 */
#ifndef GPUSCHED_H
#define GPUSCHED_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUSCHED_API __attribute__((visibility("default")))

struct gpusched;

/* Matches enum gpusched_class of the kernel interface. */
enum gpusched_sched_class {
	GPUSCHED_LATENCY = 0,
	GPUSCHED_NORMAL = 1,
	GPUSCHED_BATCH = 2,
};

/* For gpusched_set_params(): leave this parameter as it is. */
#define GPUSCHED_KEEP (-1)

/* For timeouts: wait as long as it takes. */
#define GPUSCHED_FOREVER (-1LL)

struct gpusched_info {
	uint32_t state;		/* 0 detached, 1 idle, 2 waiting, 3 holding */
	uint32_t weight;
	uint32_t sched_class;	/* enum gpusched_sched_class */
	uint32_t cap_pct;	/* 0: no cap */
	uint64_t held_ns;	/* token time charged to this handle */
	uint64_t grants;
	uint64_t wait_ns_total;
	uint64_t wait_ns_max;
	uint64_t overruns;	/* grants revoked after the grace time */
	uint64_t yields;	/* yield requests received */
	char backend[16];	/* "kmod" or "arbiter" */
};

/*
 * Open a client of the token of the GPU with @uuid. The token service is
 * /dev/gpusched if it exists, else the arbiter socket named by
 * $GPUSCHED_ARBITER (default /run/gpusched/arbiter.sock); $GPUSCHED_BACKEND
 * (auto, kmod, arbiter) forces one. -ENOENT or -ECONNREFUSED: no service.
 */
GPUSCHED_API int gpusched_open(const unsigned char uuid[16],
			       struct gpusched **out);
/* Release the token if held and free @g. Returns 0 or -errno (@g is freed
 * either way).
 */
GPUSCHED_API int gpusched_close(struct gpusched *g);

/*
 * Wait until the token is granted. @timeout_ns: GPUSCHED_FOREVER, 0 for a
 * try (-EAGAIN), or a relative limit (-ETIMEDOUT). -EINTR if a signal came
 * (kmod backend only; the arbiter backend retries internally). -EALREADY if
 * already holding.
 */
GPUSCHED_API int gpusched_acquire(struct gpusched *g, int64_t timeout_ns);
/* Give the token back. -EPERM if not holding (it may have been revoked). */
GPUSCHED_API int gpusched_release(struct gpusched *g);
/* Release and queue again as one step; the caller must have drained. */
GPUSCHED_API int gpusched_yield(struct gpusched *g, int64_t timeout_ns);

/*
 * Call before submitting GPU work. Returns 0 once the caller holds the
 * token. Without a system call while holding and not asked to yield; when
 * asked to yield, calls @drain(@arg) (wait for the work already submitted;
 * may be NULL if there is none) and then yields; when not holding,
 * acquires. A non-zero return of @drain is returned as is.
 */
GPUSCHED_API int gpusched_gate(struct gpusched *g, int (*drain)(void *arg),
			       void *arg);

/* From the status page, without a system call: 1 or 0. */
GPUSCHED_API int gpusched_holding(const struct gpusched *g);
GPUSCHED_API int gpusched_yield_requested(const struct gpusched *g);

/*
 * Set this client's weight (1..10000, default 100), class (enum
 * gpusched_sched_class) and cap (1..100 percent, 0 for none); pass
 * GPUSCHED_KEEP to leave one unchanged. Without CAP_SYS_NICE (root, for the
 * arbiter) a client may only lower its share: -EPERM otherwise. -EINVAL
 * for a value out of range.
 */
GPUSCHED_API int gpusched_set_params(struct gpusched *g, int weight,
				     int sched_class, int cap_pct);
GPUSCHED_API int gpusched_info(struct gpusched *g, struct gpusched_info *info);

/* Static string for an errno value returned by this library. */
GPUSCHED_API const char *gpusched_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* GPUSCHED_H */
