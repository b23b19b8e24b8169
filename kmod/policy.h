/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fair-share policy of one GPU token, in plain C.
 *
 * The module, the user-space arbiter and the host unit tests compile the
 * same policy.c: it has no kernel dependency, reads no clock (the caller
 * passes "now", CLOCK_MONOTONIC nanoseconds, which never goes backwards)
 * and never allocates. The caller serialises every call on one device with
 * its own lock. Documentation/design.md explains the policy and lists its
 * invariants.
 */
#ifndef GS_POLICY_H
#define GS_POLICY_H

/*
 * The kernel's lists, trees and barriers; user space has stand-ins with
 * their names.
 */
#ifdef __KERNEL__
#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/rbtree.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <string.h>
#include <kcompat/barrier.h>
#include <kcompat/list.h>
#include <kcompat/rbtree.h>
#include <kcompat/types.h>
#endif

#include "gs_abi.h"

#define GS_POL_NEVER	(~(u64)0)

enum gs_pol_state {
	GS_POL_IDLE,
	GS_POL_WAITING,
	GS_POL_HOLDING,
};

/* A rate limit with a burst: earns pct% of wall time, spends 100%. */
struct gs_pol_bucket {
	s64 credit;			/* in ns x 100 */
	u64 stamp;
};

struct gs_pol_params {
	u64 slice_ns;	/* a holder keeps the token this long if others wait */
	u64 grace_ns;	/* a holder asked to yield must release within this */
	u64 min_grant_ns;	/* caps and budgets never cut a grant shorter */
	u64 starve_ns;	/* a batch waiter waiting this long is served next */
	u64 window_ns;	/* burst allowed by caps and the latency budget */
	u32 latency_pct;	/* token time the latency class may take at priority */
	u64 latency_queue_ns;	/* queued GPU time while a latency client is attached */
	u64 handover_ns;	/* work a yielding holder may leave running */
	u32 mem_default_pct;	/* memory limit without a client's own (mem.c) */
	u64 mem_reserve;	/* device memory no limit may claim, bytes */
};

/*
 * The per-GPU knobs, one table for every interface that shows or sets them
 * (sysfs, netlink, the arbiter): a name, where the value lives in struct
 * gs_pol_params, the unit written (value = written x @scale) and the range
 * gs_pol_check_params() accepts, in written units.
 */
enum gs_pol_knob_id {
	GS_POL_KNOB_TIMESLICE,
	GS_POL_KNOB_GRACE,
	GS_POL_KNOB_MIN_GRANT,
	GS_POL_KNOB_STARVE,
	GS_POL_KNOB_WINDOW,
	GS_POL_KNOB_LATENCY_PCT,
	GS_POL_KNOB_LATENCY_QUEUE,
	GS_POL_KNOB_HANDOVER,
	GS_POL_KNOB_MEM_DEFAULT_PCT,
	GS_POL_KNOB_MEM_RESERVE,
	GS_POL_NR_KNOBS
};

struct gs_pol_knob {
	const char *name;	/* sysfs file and module parameter */
	int nl_attr;		/* GPUSCHED_A_GPU_* */
	size_t offset;		/* in struct gs_pol_params */
	bool is_u32;
	u32 scale;
	u32 min, max;
	u32 def;		/* default, in written units */
	const char *doc;	/* what it does, for the tools' help */
};

extern const struct gs_pol_knob gs_pol_knobs[GS_POL_NR_KNOBS];
extern const char *const gs_pol_class_names[GPUSCHED_CLASS_MAX + 1];

/* Knob @k of @p, in written units. */
u32 gs_pol_knob_get(const struct gs_pol_params *p, const struct gs_pol_knob *k);
/* Set knob @k of @p to @v written units; no range check (see check_params). */
void gs_pol_knob_set(struct gs_pol_params *p, const struct gs_pol_knob *k,
		     u32 v);

/*
 * A client's device memory (kmod/mem.c): what its driver reported at
 * ATTACH, its own limit, what it reserved, and its refused reservations.
 */
struct gs_pol_mem {
	u64 total;			/* bytes; 0: unknown */
	u64 limit;			/* its own limit, bytes; 0: none */
	u64 reserved;
	u64 refused;
};

/*
 * While a client waits it is on gs_pol_dev.waiting and in these trees of
 * its device, so that choosing the next holder, the virtual-time floor and
 * the next event cost O(log n) in the number of waiters, not O(n):
 * @qnode in queue[class] when it may be served now (no cap, or its cap has
 * credit), else in throttled until @throttled_until, and then @vnode in
 * throttled_vtime; @anode in starve while in queue[GPUSCHED_CLASS_BATCH];
 * @dnode in by_due while @due_at is set.
 */
struct gs_pol_client {
	struct list_head node;		/* on gs_pol_dev.clients */
	struct list_head wnode;		/* on gs_pol_dev.waiting while waiting */
	struct rb_node qnode;
	struct rb_node anode;
	struct rb_node vnode;
	struct rb_node dnode;
	u64 throttled_until;		/* cap credit from then on (in throttled) */
	bool throttled;			/* qnode is in throttled, not in queue[] */
	enum gs_pol_state state;
	u32 weight;
	u32 sched_class;		/* enum gpusched_class */
	u32 cap_pct;		/* 0: none */
	u32 rank;			/* priority it was granted at */
	u64 vtime;			/* held time x default weight / weight */
	u64 seq;			/* order of arrival, breaks ties */
	struct gs_pol_bucket cap;
	/* while waiting */
	u64 wait_start;
	u64 due_at;		/* when it needs the GPU (ACQUIRE_DUE); 0: now */
	/* while holding */
	u64 grant_start;
	u64 slice_end;		/* yield from here on if someone waits */
	u64 hard_end;		/* yield from here on regardless (cap) */
	u64 yield_at;		/* when asked to yield */
	u64 yield_due;		/* when the waiters need the GPU; 0: now */
	u64 nudge_at;		/* last nudged (ACQUIRE_NUDGE); 0: never */
	u64 nudge_done;		/* nudge_at when its nudger's work ended */
	bool yield_requested;
	bool revoked;			/* the last grant ended by revocation */
	/*
	 * The current (or last) grant: held time charged and GPU time
	 * reported for it. It is charged max(held, gpu), incrementally.
	 */
	u64 grant_held_ns;
	u64 grant_gpu_ns;
	/* accounting */
	u64 held_ns;			/* charged: held, or GPU time if more */
	u64 gpu_ns;			/* GPU time reported, all grants */
	u64 since;			/* attached: gpu_ns stays below now - since */
	u64 grants;
	u64 wait_ns_total;
	u64 wait_ns_max;
	u64 overruns;
	u64 yields;
	u64 nudges;			/* nudges of holders it made */
	struct gs_pol_mem mem;		/* device memory accounting (mem.c) */
	/*
	 * The service's (status.c): the client's status page, set after
	 * gs_pol_client_init() (NULL: none, as in the unit tests), and the
	 * number of its grants told there.
	 */
	struct gpusched_status *page;
	u64 grant_gen;
};

/*
 * A tree that keeps its least and its greatest node at hand: a waiter that
 * queues again has about the greatest key, and is put in place from the
 * greatest node (policy.c, queue_insert()).
 */
struct gs_pol_queue {
	struct rb_root_cached root;
	struct rb_node *rightmost;
};

struct gs_pol_dev {
	struct gs_pol_params p;
	struct list_head clients;
	struct list_head waiting;	/* every waiter, in arrival order */
	/* Waiters that may be served now, by (vtime, wait_start, seq). */
	struct gs_pol_queue queue[GPUSCHED_CLASS_MAX + 1];
	/* Those of queue[GPUSCHED_CLASS_BATCH] by (wait_start, seq). */
	struct gs_pol_queue starve;
	/* Capped waiters without credit, by throttled_until and by vtime. */
	struct rb_root_cached throttled;
	struct rb_root_cached throttled_vtime;
	struct rb_root_cached by_due;	/* waiters with due_at set, by it */
	u32 nr_due_now;			/* waiters without due_at (need it now) */
	/*
	 * The clients' reservations summed (kmod/mem.c), modulo 2^64, and
	 * how many times the sum wrapped: kept, so that reading it is O(1).
	 */
	u64 mem_reserved;
	u64 mem_reserved_wraps;
	struct gs_pol_client *holder;
	/* The client whose nudge of @holder is unanswered (nudge()); NULL: none */
	struct gs_pol_client *nudger;
	u64 min_vtime;		/* floor for clients that become active */
	u64 next_seq;
	struct gs_pol_bucket latency;	/* the latency class's budget */
	u32 nr_clients;
	u32 nr_waiting;
	u32 nr_latency;		/* clients of the latency class */
	/* totals */
	u64 grants;
	u64 overruns;
	u64 held_ns;
};

/* What a call changed that the caller must tell clients about. */
struct gs_pol_effects {
	struct gs_pol_client *granted;	/* newly holding: wake it */
	struct gs_pol_client *yield;	/* holder newly asked to yield */
	struct gs_pol_client *unyield;	/* holder no longer asked to yield */
	struct gs_pol_client *revoked;	/* lost the token after the grace time */
	struct gs_pol_client *released;	/* gave it back (or was removed) */
};

void gs_pol_default_params(struct gs_pol_params *p);
int gs_pol_check_params(const struct gs_pol_params *p);

void gs_pol_dev_init(struct gs_pol_dev *d, const struct gs_pol_params *p,
		     u64 now);
int gs_pol_set_dev_params(struct gs_pol_dev *d, const struct gs_pol_params *p,
			  u64 now, struct gs_pol_effects *fx);

void gs_pol_client_init(struct gs_pol_dev *d, struct gs_pol_client *c,
			u64 now);
void gs_pol_client_exit(struct gs_pol_dev *d, struct gs_pol_client *c,
			u64 now, struct gs_pol_effects *fx);

int gs_pol_check_client_params(u32 weight, u32 sched_class,
			       u32 cap_pct);
bool gs_pol_lowers(const struct gs_pol_client *c, u32 weight,
		   u32 sched_class, u32 cap_pct);
int gs_pol_set_client_params(struct gs_pol_dev *d, struct gs_pol_client *c,
			     u32 weight, u32 sched_class, u32 cap_pct,
			     u64 now, struct gs_pol_effects *fx);

/*
 * SET_PARAMS: the fields named in @p->mask, the others kept. Unless @priv,
 * only a change that lowers the client's share is allowed (-EPERM), as
 * with nice(2). -EINVAL for a value out of range; nothing changes then.
 */
struct gpusched_params;
struct gpusched_acquire;
struct gpusched_release;
int gs_pol_set_params_masked(struct gs_pol_dev *d, struct gs_pol_client *c,
			     const struct gpusched_params *p, bool priv,
			     u64 now, struct gs_pol_effects *fx);

void gs_pol_wait(struct gs_pol_dev *d, struct gs_pol_client *c, u64 now,
		 struct gs_pol_effects *fx);
void gs_pol_cancel_wait(struct gs_pol_dev *d, struct gs_pol_client *c,
			u64 now, struct gs_pol_effects *fx);
int gs_pol_release(struct gs_pol_dev *d, struct gs_pol_client *c,
		   u64 now, struct gs_pol_effects *fx);

/*
 * @c reports @gpu_ns of GPU time of its own work (0: nothing). It belongs
 * to @c's current grant, or to its last one when it holds none: that grant
 * is charged max(time held, GPU time reported for it), so a report only
 * ever raises @c's own charge. Callers report before anything else the
 * call does (RELEASE after the release, so that the held time is in).
 */
void gs_pol_report_gpu(struct gs_pol_dev *d, struct gs_pol_client *c,
		       u64 gpu_ns, u64 now, struct gs_pol_effects *fx);

/*
 * The checks of ACQUIRE/YIELD's and RELEASE's structs that both services
 * make: 0, -EOPNOTSUPP (unknown flags) or -EINVAL.
 */
int gs_pol_check_acquire(const struct gpusched_acquire *a);
int gs_pol_check_release(const struct gpusched_release *r);
struct gpusched_attach;
int gs_pol_check_attach(const struct gpusched_attach *a);
int gs_pol_check_set_params(const struct gpusched_params *p);
/* When @a's work comes (GPUSCHED_ACQUIRE_DUE), or came (a nudge's age),
 * or 0: now.
 */
u64 gs_pol_due(const struct gpusched_acquire *a, u64 now);

/*
 * ACQUIRE (and YIELD when @yield: release first) as both token services
 * run it, @flags the request's (GPUSCHED_ACQUIRE_*), @due the time @c
 * needs the GPU (0: now; a nudge's: its work's launch), @gpu_ns a report taken (gs_pol_report_gpu())
 * before the wait: 0 with @c holding or waiting, -EALREADY (holding),
 * -EBUSY (already waiting) or -EAGAIN (NONBLOCK and not granted at once);
 * with GPUSCHED_ACQUIRE_NUDGE, 0 with the holder nudged and @c as it was
 * (idle, or waiting for another call), or the errors the uapi header
 * lists. gs_pol_acquire_waits() says whether the call then waits. The effects of each step go to
 * @apply before the next step, since one struct gs_pol_effects holds one
 * client per kind.
 */
typedef void gs_pol_apply_fn(void *arg, struct gs_pol_effects *fx, u64 now);
int gs_pol_acquire(struct gs_pol_dev *d, struct gs_pol_client *c, bool yield,
		   u32 flags, u64 due, u64 gpu_ns, u64 now,
		   gs_pol_apply_fn *apply, void *arg);

/*
 * Does the call that gs_pol_acquire() answered with @err, for @flags,
 * wait for a grant? A nudge never does, also where @c already waits for
 * another call of its own (another thread's ACQUIRE on the same file).
 */
static inline bool gs_pol_acquire_waits(const struct gs_pol_client *c,
					u32 flags, int err)
{
	return !err &&
	       !(flags & (GPUSCHED_ACQUIRE_NUDGE | GPUSCHED_ACQUIRE_NUDGE_DONE)) &&
	       c->state == GS_POL_WAITING;
}
void gs_pol_tick(struct gs_pol_dev *d, u64 now,
		 struct gs_pol_effects *fx);
u64 gs_pol_next_event(const struct gs_pol_dev *d, u64 now);

/* The status page's GPUSCHED_ST_* flags for @c's state. */
u32 gs_pol_status_flags(const struct gs_pol_client *c);

struct gpusched_status;
void gs_pol_status_fill(const struct gs_pol_dev *d,
			const struct gs_pol_client *c, u64 grant_gen, u64 now,
			struct gpusched_status *st);

/*
 * What the services tell clients (kmod/status.c), under the device's lock
 * like the rest: status pages, a policy call's effects and GET_INFO.
 */
struct gs_status_ops {
	/* @c was granted the token and its page shows it: wake it. */
	void (*granted)(void *arg, struct gs_pol_client *c);
	/* @c was revoked and its page shows it: report the overrun. */
	void (*revoked)(void *arg, struct gs_pol_client *c);
};

struct gpusched_client_info;
void gs_status_sync(const struct gs_pol_dev *d, struct gs_pol_client *c,
		    u64 now);
void gs_status_apply(const struct gs_pol_dev *d,
		     const struct gs_pol_effects *fx, u64 now,
		     const struct gs_status_ops *ops, void *arg);
u32 gs_status_state(const struct gs_pol_client *c);
void gs_status_info(const struct gs_pol_dev *d, const struct gs_pol_client *c,
		    u64 now, struct gpusched_client_info *info);

/*
 * Test aid: check the trees against a walk of every waiter (what the next
 * holder, the floor and the waiters' due time would be if computed the
 * slow way). 0 when they agree, else a negative number naming the check.
 */
int gs_pol_check_queues(const struct gs_pol_dev *d, u64 now);

/* Held time of @c including the running grant. */
u64 gs_pol_held_now(const struct gs_pol_client *c, u64 now);

/*
 * Device memory accounting (kmod/mem.c), under the same lock as the rest
 * of the device. The services keep the count; clients' libraries enforce
 * it (MEM_RESERVE before they allocate).
 */
struct gpusched_mem;
int gs_mem_check(const struct gpusched_mem *m);
void gs_mem_attach(struct gs_pol_client *c, u64 total);
u64 gs_mem_limit(const struct gs_pol_dev *d, const struct gs_pol_client *c);
bool gs_mem_lowers(const struct gs_pol_dev *d, const struct gs_pol_client *c,
		   u64 limit);
int gs_mem_limit_pct(const struct gs_pol_client *c, u32 pct, u64 *bytes);
int gs_mem_reserve(struct gs_pol_dev *d, struct gs_pol_client *c,
		   u64 bytes);
int gs_mem_return(struct gs_pol_dev *d, struct gs_pol_client *c, u64 bytes);
void gs_mem_exit(struct gs_pol_dev *d, struct gs_pol_client *c);
u64 gs_mem_dev_reserved(const struct gs_pol_dev *d);

#endif /* GS_POLICY_H */
