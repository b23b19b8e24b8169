/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of gpusched.ko. */
#ifndef GS_INTERNAL_H
#define GS_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/uidgid.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/gpusched.h>
#include "policy.h"

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
	 * Protects pol, every attached client's pol and status page, and the
	 * arming of timer. Taken from process context and from the timer's
	 * softirq, so always with _bh. Never sleep under it.
	 */
	spinlock_t lock;
	struct gs_pol_dev pol;
	struct list_head clients;	/* gs_client.node, under lock */
	struct hrtimer timer;		/* fires at gs_pol_next_event() */
	/* Reports overruns (gs_client.overrun_pending) outside the lock. */
	struct work_struct overrun_work;
};

/* One open file of /dev/gpusched. */
struct gs_client {
	/* Serialises ATTACH; gpu is published once with release semantics. */
	struct mutex attach_lock;
	struct gs_gpu *gpu;
	struct gs_pol_client pol;	/* under gpu->lock */
	struct gpusched_status *page;	/* status page; written under gpu->lock */
	wait_queue_head_t wq;		/* woken when granted */
	u64 grant_gen;			/* under gpu->lock */
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
	struct list_head node;		/* on gpu->clients, under gpu->lock */
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
int gs_client_admin_set_locked(struct gs_gpu *gpu, struct gs_client *c,
			       const struct gpusched_params *p, u32 policy);
void gs_gpus_exit(void);

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
