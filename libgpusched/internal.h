/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals of libgpusched shared by its files. Nothing here is exported:
 * the version script keeps every symbol local that it does not name.
 */
#ifndef GS_INTERNAL_H
#define GS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/gpusched.h>
#include <gpusched/arbiter_wire.h>

#include "gpusched.h"

#define GS_HIDDEN __attribute__((visibility("hidden")))
#define GS_PRINTF(a, b) __attribute__((format(printf, a, b)))

struct gpusched;

/* A token service: the module's character device or the arbiter socket. */
struct gs_backend {
	const char *name;
	/* Connect, ATTACH to @uuid, map the status page into g->st. */
	int (*open)(struct gpusched *g, const unsigned char uuid[16]);
	/* One GPUSCHED_IOC_* command: 0 or -errno. */
	int (*call)(struct gpusched *g, unsigned int cmd, void *arg);
	/* Whether the service is still there (never blocks). */
	bool (*alive)(struct gpusched *g);
	/* Unmap and close; with @forked, only drop the child's copies. */
	void (*close)(struct gpusched *g, bool forked);
};

struct gpusched {
	const struct gs_backend *be;
	int fd;
	const struct gpusched_status *st;	/* read-only mapping */
	unsigned char uuid[GPUSCHED_UUID_LEN];
	uint64_t mem_total;		/* reported at ATTACH */
	/* Serialises requests on one arbiter connection: the wire format
	 * has no request id, so replies come back in request order.
	 */
	pthread_mutex_t io_lock;
	/*
	 * The arbiter's memory channel (backend_arbiter.c): a second
	 * connection for MEM_RESERVE, MEM_RETURN and GET_INFO, so that they
	 * never wait behind a parked ACQUIRE; -1 without one. mem_lock
	 * serialises its requests (the arbiter answers them at once).
	 */
	int mem_fd;
	pthread_mutex_t mem_lock;
	/* enum gpusched_features of the service, from the status page */
	uint32_t features;
	/*
	 * GPU time of our own work not yet reported to the service
	 * (gs_report_gpu()); sent with the next ACQUIRE, YIELD or RELEASE,
	 * which takes it out as it goes (gpu_take()).
	 */
	atomic_ullong gpu_pending_ns;
	/* When the current grant began, as we saw it (0: none held) */
	atomic_ullong held_at;
};

/*
 * Over all clients of the process: token time held as the library saw it
 * (from each grant's return to the release or yield that ended it) and
 * GPU time reported, for GPUSCHED_DEBUG=stats beside the service's charge.
 */
extern atomic_ullong gs_held_ns_total GS_HIDDEN;
extern atomic_ullong gs_reported_ns_total GS_HIDDEN;

/*
 * GPUSCHED_ACQUIRE_NUDGE: our latency-class work, launched at @at
 * (CLOCK_MONOTONIC ns; 0: now), is queued beside the holder; ask it to let
 * its queue run out once. The holder's page says @at where the service
 * takes a nudge's age (GPUSCHED_FEAT_NUDGE_AGE), else the call's time.
 * Never waits. Only where gs_nudge_supported().
 */
int gs_nudge(struct gpusched *g, uint64_t at) GS_HIDDEN;
bool gs_nudge_supported(const struct gpusched *g) GS_HIDDEN;

/*
 * GPUSCHED_ACQUIRE_NUDGE_DONE: the work our last nudge was for has ended;
 * a holder still letting its queue run out for it may launch on. Never
 * waits. -EOPNOTSUPP where the service does not take it
 * (GPUSCHED_FEAT_NUDGE_DONE).
 */
int gs_nudge_done(struct gpusched *g) GS_HIDDEN;

/*
 * @ns of GPU time of this client's own work completed (measured on the
 * GPU's clock), to be reported with the next ACQUIRE, YIELD or RELEASE
 * issued on @g. Safe from any thread; never blocks.
 */
void gs_report_gpu(struct gpusched *g, uint64_t ns) GS_HIDDEN;

/*
 * Take up to @ns back from what gs_report_gpu() left pending on @g: GPU
 * time counted twice. What was sent, or is out with a call, is the
 * service's. Safe from any thread; never blocks.
 */
void gs_unreport_gpu(struct gpusched *g, uint64_t ns) GS_HIDDEN;

/*
 * A consistent copy of the status page (the service's seqcount, retried
 * while it changes): for readers of several fields at once. Readers of
 * one field, e.g. @flags, need not.
 */
void gs_status_read(const struct gpusched *g,
		    struct gpusched_status *out) GS_HIDDEN;

extern const struct gs_backend gs_backend_kmod GS_HIDDEN;
extern const struct gs_backend gs_backend_arbiter GS_HIDDEN;
/* Both backends' close: unmap the page (not in a forked child), close. */
void gs_backend_close(struct gpusched *g, bool forked) GS_HIDDEN;

static inline uint32_t gs_status_flags(const struct gpusched *g)
{
	return __atomic_load_n(&g->st->flags, __ATOMIC_ACQUIRE);
}

/* Status flags: the token ours, and nobody asking for it; or somebody. */
#define HELD_ONLY(fl) \
	(((fl) & (GPUSCHED_ST_HOLDING | GPUSCHED_ST_YIELD)) == GPUSCHED_ST_HOLDING)
#define YIELD_ASKED(fl) \
	(((fl) & (GPUSCHED_ST_HOLDING | GPUSCHED_ST_YIELD)) == \
	 (GPUSCHED_ST_HOLDING | GPUSCHED_ST_YIELD))

/* Environment configuration, read once (config.c). */
enum gs_fail_mode { GS_FAIL_OPEN, GS_FAIL_CLOSED };
enum gs_backend_choice { GS_BACKEND_AUTO, GS_BACKEND_KMOD, GS_BACKEND_ARBITER };

struct gs_config {
	int weight;			/* -1: leave the service's default */
	int sched_class;		/* -1: leave */
	int cap_pct;			/* -1: leave */
	/* GPUSCHED_MEM_LIMIT: bytes, or percent of the GPU; 0, 0: none */
	uint64_t mem_limit;
	unsigned int mem_limit_pct;
	enum gs_fail_mode fail;
	enum gs_backend_choice backend;
	/* The internal constants of tune.h, as GPUSCHED_TUNE left them. */
	uint64_t idle_ns;
	unsigned int queue;		/* launches allowed on the GPU unfinished */
	uint64_t queue_ns;		/* and GPU time queued, once known, */
	uint64_t queue_alone_ns;	/* when nobody else uses the GPU */
	uint64_t queue_latency_ns;	/* beside a latency client; 0: service's */
	uint64_t handover_ns;		/* yield with this much work left */
	bool handover_set;		/* ... set by GPUSCHED_TUNE, not service's */
	uint64_t spin_ns;		/* poll, not sleep, so near running dry */
	bool latency_predict;		/* follow a latency client's period */
	uint64_t idle_wanted_ns;	/* idle time to release when waited for;
					 * -1: by class (idle_wanted()) */
	bool beside;			/* latency class: launch beside the holder */
	bool mps_beside;		/* GPUSCHED_MPS and latency class: ungated */
	bool mps_below;			/* GPUSCHED_MPS, other classes: low MPS priority */
	bool debug;
	bool stats;
	char arbiter[108];		/* sun_path */
	char label[64];
};

GS_HIDDEN const struct gs_config *gs_config_read(void);
extern struct gs_config gs_cfg GS_HIDDEN;
extern atomic_bool gs_cfg_ready GS_HIDDEN;

/*
 * The configuration, read on first use. Every launch asks for it several
 * times: once it is read, a flag says so here, without a call into
 * pthread_once() each time.
 */
static inline const struct gs_config *gs_config(void)
{
	if (__builtin_expect(atomic_load_explicit(&gs_cfg_ready,
						  memory_order_acquire), 1))
		return &gs_cfg;
	return gs_config_read();
}
GS_HIDDEN void gs_log(const char *fmt, ...) GS_PRINTF(1, 2);
GS_HIDDEN void gs_debug(const char *fmt, ...) GS_PRINTF(1, 2);
GS_HIDDEN uint64_t gs_now_ns(void);
GS_HIDDEN void gs_format_uuid(const unsigned char uuid[16], char out[42]);

/* token.c, for the interposer. */
/* @mem_total: the GPU's memory for ATTACH, bytes; 0: unknown */
GS_HIDDEN int gs_open(const unsigned char uuid[16], uint64_t mem_total,
		      struct gpusched **out);
GS_HIDDEN void gs_close_forked(struct gpusched *g);

/* hooks.c: the real dlsym, for dlsym.S and hooks.c itself. */
typedef void *(*gs_dlsym_fn)(void *, const char *);
GS_HIDDEN gs_dlsym_fn gs_real_dlsym(void);

#endif /* GS_INTERNAL_H */
