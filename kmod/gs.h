/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of gpusched.ko. */
#ifndef GS_INTERNAL_H
#define GS_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/uidgid.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/gpusched.h>
#include "policy.h"

#define GS_HOLD_BUCKETS	256

/*
 * One GPU's token. Created on the first attach of its UUID; lives while it
 * has clients, or knobs an administrator set, or until max_gpus tokens
 * exist and a new UUID needs its place (gs_gpu_get()), so that sysfs paths
 * and knobs stay put while the GPU's processes come and go. The kobject's
 * reference count keeps it while gs_gpus, netlink or sysfs use it.
 */
struct gs_gpu {
	struct kobject kobj;		/* /sys/kernel/gpusched/gpu<index> */
	struct list_head node;		/* on gs_gpus, under gs_gpus_lock */
	u8 uuid[GPUSCHED_UUID_LEN];
	unsigned int index;
	/*
	 * Protects pol, every attached client's pol and status page, the
	 * trees and lists below, and the arming of timer. Taken from process
	 * context and from the timer's softirq, through gs_gpu_lock() (so
	 * with _bh). Never sleep under it. Every hold costs O(log n) in the
	 * number of clients, never O(n): each walk of the clients drops it
	 * between clients (Documentation/scale.md).
	 */
	spinlock_t lock;
	struct gs_pol_dev pol;
	struct rb_root clients;		/* gs_client.id_node, by id */
	struct rb_root clients_by_pid;	/* gs_client.pid_node, by (pid, id) */
	struct rb_root uids;		/* struct gs_uid_count, by uid */
	struct list_head overruns;	/* gs_client.overrun_node, to report */
	bool removed;			/* reclaimed (gs_gpu_unused()) */
	struct hrtimer timer;		/* fires at gs_pol_next_event() */
	/* Reports overruns (the overruns list) outside the lock. */
	struct work_struct overrun_work;
	/* Lock hold statistics (debug.c); under lock, used while enabled. */
	u64 hold_start;			/* this hold began; 0: not timed */
	struct gs_hold_stats {
		u64 holds, total_ns, max_ns;
		unsigned long max_ip;	/* where the longest hold ended */
		u32 hist[GS_HOLD_BUCKETS];	/* 4 per power of two of ns */
	} hold;
};

/* The number of a token's clients opened by one user (max_clients_per_uid). */
struct gs_uid_count {
	struct rb_node node;		/* on gs_gpu.uids */
	kuid_t uid;
	unsigned int n;
};

/* One open file of /dev/gpusched. */
struct gs_client {
	/* Serialises ATTACH; gpu is published once with release semantics. */
	struct mutex attach_lock;
	struct gs_gpu *gpu;
	struct gs_pol_client pol;	/* under gpu->lock */
	/* Status page, from open on; pol.page once attached (status.c). */
	struct gpusched_status *page;
	wait_queue_head_t wq;		/* woken when granted */
	/*
	 * An ACQUIRE interrupted by a signal, to be restarted by this task
	 * with this deadline (gs_client_acquire()). Under gpu->lock.
	 */
	struct task_struct *restart_task;
	u64 restart_deadline;
	struct gpusched_acquire restart_req;	/* the request, to match */
	bool restart_yield;
	/* Revoked, not yet reported (gs_gpu.overrun_work). Under gpu->lock. */
	bool overrun_pending;
	struct list_head overrun_node;	/* on gpu->overruns while pending */
	struct rb_node id_node;		/* on gpu->clients, under gpu->lock */
	struct rb_node pid_node;	/* on gpu->clients_by_pid, likewise */
	struct gs_uid_count *uid_count;	/* its opener's count on gpu */
	/* Numbered at attach; who opened the file, fixed at open. */
	u64 id;
	struct pid *pid;
	kuid_t uid;
	kgid_t gid;
	u64 cgroup_id;
	char comm[TASK_COMM_LEN];
	/*
	 * Where pol's weight, class and cap came from (GPUSCHED_PARAM_*):
	 * set by the policy daemon, or set by it and lowered by the client
	 * since. Under gpu->lock, with pol.
	 */
	u32 policy_set;
	u32 policy_lowered;
};

/* A client's identity and accounting, copied under gpu->lock. */
struct gs_client_snap {
	u64 id, cgroup_id;
	struct pid *pid;	/* valid while the client is */
	kuid_t uid;
	kgid_t gid;
	char comm[TASK_COMM_LEN];
	u32 gpu_index, weight, sched_class, cap_pct, state;
	u32 policy_set, policy_lowered;
	u64 held_ns, gpu_ns, grants, wait_ns_total, wait_ns_max, overruns, yields;
	u64 mem_total, mem_reserved, mem_limit, mem_refused;
};

/* A GPU's knobs and counters, copied under its lock (gs_gpu_state()). */
struct gs_gpu_state {
	struct gs_pol_params params;
	u64 grants, overruns, held_ns, mem_reserved;
	u32 nr_clients, nr_waiting;
	pid_t holder;
};

struct gs_defaults {
	unsigned int max_gpus;
	struct gs_pol_params params;
};

extern struct gs_defaults gs_defaults;
/* Clients one user may attach to one token; 0: no limit (main.c). */
extern unsigned int gs_max_clients_per_uid;

/* debug.c: timing of gpu->lock's holds, off unless asked for. */
DECLARE_STATIC_KEY_FALSE(gs_hold_stats_on);
void gs_hold_note(struct gs_gpu *gpu, unsigned long ip);
int gs_debug_init(void);
void gs_debug_exit(void);

/*
 * Take and drop a token's lock. While hold statistics are on (debugfs
 * gpusched/hold_stats) each hold is timed from when the lock is taken to
 * when it is dropped; off, this is spin_lock_bh() and spin_unlock_bh().
 */
static __always_inline void gs_gpu_lock(struct gs_gpu *gpu)
	__acquires(&gpu->lock)
{
	spin_lock_bh(&gpu->lock);
	if (static_branch_unlikely(&gs_hold_stats_on))
		gpu->hold_start = ktime_get_ns();
}

static __always_inline void gs_gpu_unlock(struct gs_gpu *gpu)
	__releases(&gpu->lock)
{
	if (static_branch_unlikely(&gs_hold_stats_on))
		gs_hold_note(gpu, _THIS_IP_);
	spin_unlock_bh(&gpu->lock);
}

/* token.c */
int gs_client_init(struct gs_client *c);
void gs_client_exit(struct gs_client *c);
int gs_client_attach(struct gs_client *c, const u8 *uuid, u64 mem_total);
int gs_client_mem(struct gs_client *c, u64 bytes, bool reserve);
int gs_client_acquire(struct gs_client *c, const struct gpusched_acquire *a,
		      bool yield);
int gs_client_release(struct gs_client *c, u64 gpu_ns);
int gs_client_set_params(struct gs_client *c, const struct gpusched_params *p);
int gs_client_info(struct gs_client *c, struct gpusched_client_info *info);
struct gs_gpu *gs_client_gpu(struct gs_client *c);
int gs_gpu_set_knobs(struct gs_gpu *gpu, const u32 *vals, unsigned int mask);
struct pid_namespace;
void gs_gpu_state(struct gs_gpu *gpu, struct gs_gpu_state *s,
		  struct pid_namespace *ns);
pid_t gs_pid_nr(struct pid *pid, struct pid_namespace *ns);
struct gs_gpu *gs_gpu_by_index(unsigned int index);
struct gs_gpu *gs_gpu_next(unsigned int index);
void gs_gpu_put(struct gs_gpu *gpu);
void gs_client_snap(struct gs_gpu *gpu, struct gs_client *c,
		    struct gs_client_snap *s, u64 now);
struct gs_client *gs_client_after_locked(struct gs_gpu *gpu, u64 id);
struct gs_client *gs_client_of_pid_after_locked(struct gs_gpu *gpu,
						struct pid *pid, u64 id);
int gs_client_admin_set_locked(struct gs_gpu *gpu, struct gs_client *c,
			       const struct gpusched_params *p, u32 policy);
void gs_gpus_exit(void);
void gs_restart_exit(void);

/* netlink.c */
int gs_netlink_init(void);
void gs_netlink_exit(void);
void gs_netlink_event(u8 cmd, const struct gs_client_snap *s);

/* sysfs.c */
int gs_sysfs_init(void);
void gs_sysfs_exit(void);
int gs_sysfs_add_gpu(struct gs_gpu *gpu);

/* chardev.c */
int gs_chardev_init(umode_t mode);
void gs_chardev_exit(void);

#endif /* GS_INTERNAL_H */
