// SPDX-License-Identifier: GPL-2.0
/*
 * The per-GPU token: clients wait for it, hold it, are asked to yield it and
 * are revoked when they overrun. kmod/policy.c decides; this file keeps the
 * waiters, the status pages and the timer in step with its decisions.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/user_namespace.h>
#include <linux/ktime.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs.h"

/* Serialises creation and lookup of tokens; gs_nr_gpus and gs_gpus under it. */
static DEFINE_MUTEX(gs_gpus_lock);
static LIST_HEAD(gs_gpus);
static unsigned int gs_nr_gpus;
static atomic64_t gs_next_client_id = ATOMIC64_INIT(0);

static struct gs_client *to_client(struct gs_pol_client *pc)
{
	return container_of(pc, struct gs_client, pol);
}

/* Publish @c's state to its status page. Caller holds gpu->lock. */
static void gs_status_sync(struct gs_gpu *gpu, struct gs_client *c, u64 now)
{
	struct gpusched_status *st = c->page;
	struct gs_pol_client *pc = &c->pol;
	u32 flags = gs_pol_status_flags(pc);

	WRITE_ONCE(st->grant_gen, c->grant_gen);
	WRITE_ONCE(st->slice_end_ns, pc->slice_end);
	WRITE_ONCE(st->grace_ns, gpu->pol.p.grace_ns);
	WRITE_ONCE(st->nr_waiting, gpu->pol.nr_waiting);
	WRITE_ONCE(st->nr_clients, gpu->pol.nr_clients);
	WRITE_ONCE(st->nr_latency, gpu->pol.nr_latency);
	WRITE_ONCE(st->class_plus_one, pc->class + 1);
	WRITE_ONCE(st->held_ns, gs_pol_held_now(pc, now));
	WRITE_ONCE(st->overruns, pc->overruns);
	WRITE_ONCE(st->yield_ns, flags & GPUSCHED_ST_YIELD ? pc->yield_at : 0);
	WRITE_ONCE(st->yield_due_ns,
		   flags & GPUSCHED_ST_YIELD ? pc->yield_due : 0);
	/* Readers load flags with acquire: the fields above are valid then. */
	smp_store_release(&st->flags, flags);
	WRITE_ONCE(st->seq, st->seq + 1);
}

/*
 * Tell clients what the policy decided, and arm the timer for its next
 * decision. Caller holds gpu->lock; every policy call is followed by this.
 */
static void gs_apply(struct gs_gpu *gpu, struct gs_pol_effects *fx, u64 now)
{
	u64 next;

	if (fx->revoked) {
		struct gs_client *c = to_client(fx->revoked);
		struct gs_client_snap snap;

		gs_status_sync(gpu, c, now);
		gs_client_snap(gpu, c, &snap, now);
		gs_netlink_event(GPUSCHED_CMD_EV_OVERRUN, &snap);
		pr_warn_ratelimited("gpu%u: pid %d did not yield within %llu us: revoked\n",
				    gpu->index, pid_nr(c->pid),
				    div_u64(gpu->pol.p.grace_ns, NSEC_PER_USEC));
	}
	if (fx->released)
		gs_status_sync(gpu, to_client(fx->released), now);
	if (fx->granted) {
		struct gs_client *c = to_client(fx->granted);

		c->grant_gen++;
		gs_status_sync(gpu, c, now);
		wake_up(&c->wq);
	}
	/* The holder learns of yields and of new waiters from its page. */
	if (gpu->pol.holder)
		gs_status_sync(gpu, to_client(gpu->pol.holder), now);

	next = gs_pol_next_event(&gpu->pol, now);
	if (next == GS_POL_NEVER)
		hrtimer_try_to_cancel(&gpu->timer);
	else
		hrtimer_start(&gpu->timer, ns_to_ktime(next),
			      HRTIMER_MODE_ABS_SOFT);
}

static enum hrtimer_restart gs_timer_fn(struct hrtimer *t)
{
	struct gs_gpu *gpu = container_of(t, struct gs_gpu, timer);
	struct gs_pol_effects fx = {};
	u64 now;

	spin_lock_bh(&gpu->lock);
	now = ktime_get_ns();
	gs_pol_tick(&gpu->pol, now, &fx);
	gs_apply(gpu, &fx, now);
	spin_unlock_bh(&gpu->lock);
	/* gs_apply() re-armed the timer if the policy needs it. */
	return HRTIMER_NORESTART;
}

static struct gs_gpu *gs_gpu_find(const u8 *uuid)
{
	struct gs_gpu *gpu;

	lockdep_assert_held(&gs_gpus_lock);
	list_for_each_entry(gpu, &gs_gpus, node)
		if (!memcmp(gpu->uuid, uuid, GPUSCHED_UUID_LEN))
			return gpu;
	return NULL;
}

static struct gs_gpu *gs_gpu_get(const u8 *uuid)
{
	struct gs_gpu *gpu;
	int err;

	mutex_lock(&gs_gpus_lock);
	gpu = gs_gpu_find(uuid);
	if (gpu)
		goto out;
	if (gs_nr_gpus >= gs_defaults.max_gpus) {
		gpu = ERR_PTR(-ENOSPC);
		goto out;
	}
	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu) {
		gpu = ERR_PTR(-ENOMEM);
		goto out;
	}
	memcpy(gpu->uuid, uuid, GPUSCHED_UUID_LEN);
	gpu->index = gs_nr_gpus;
	spin_lock_init(&gpu->lock);
	INIT_LIST_HEAD(&gpu->clients);
	gs_pol_dev_init(&gpu->pol, &gs_defaults.params, ktime_get_ns());
	hrtimer_init(&gpu->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	gpu->timer.function = gs_timer_fn;
	/* On failure the kobject's release frees gpu. */
	err = gs_sysfs_add_gpu(gpu);
	if (err) {
		gpu = ERR_PTR(err);
		goto out;
	}
	list_add_tail(&gpu->node, &gs_gpus);
	gs_nr_gpus++;
out:
	mutex_unlock(&gs_gpus_lock);
	return gpu;
}

/* Tokens are freed only at module exit, so the pointer stays valid. */
struct gs_gpu *gs_gpu_by_index(unsigned int index)
{
	struct gs_gpu *gpu, *found = NULL;

	mutex_lock(&gs_gpus_lock);
	list_for_each_entry(gpu, &gs_gpus, node) {
		if (gpu->index == index) {
			found = gpu;
			break;
		}
	}
	mutex_unlock(&gs_gpus_lock);
	return found;
}

/* Called at module exit, when no file is open. */
void gs_gpus_exit(void)
{
	struct gs_gpu *gpu, *tmp;

	list_for_each_entry_safe(gpu, tmp, &gs_gpus, node) {
		list_del(&gpu->node);
		hrtimer_cancel(&gpu->timer);
		kobject_put(&gpu->kobj);
	}
	gs_nr_gpus = 0;
}

int gs_gpu_set_params(struct gs_gpu *gpu, const struct gs_pol_params *p)
{
	struct gs_pol_effects fx = {};
	u64 now;
	int err;

	spin_lock_bh(&gpu->lock);
	now = ktime_get_ns();
	err = gs_pol_set_dev_params(&gpu->pol, p, now, &fx);
	gs_apply(gpu, &fx, now);
	spin_unlock_bh(&gpu->lock);
	return err;
}

int gs_client_init(struct gs_client *c)
{
	/* Charged to the opener's memory cgroup, as the client struct is. */
	c->page = (struct gpusched_status *)get_zeroed_page(GFP_KERNEL_ACCOUNT);
	if (!c->page)
		return -ENOMEM;
	c->page->version = GPUSCHED_STATUS_VERSION;
	c->page->size = sizeof(*c->page);
	mutex_init(&c->attach_lock);
	init_waitqueue_head(&c->wq);
	INIT_LIST_HEAD(&c->node);
	c->pid = get_pid(task_tgid(current));
	c->uid = current_euid();
	c->gid = current_egid();
	get_task_comm(c->comm, current);
#ifdef CONFIG_CGROUPS
	rcu_read_lock();
	c->cgroup_id = cgroup_id(task_dfl_cgroup(current));
	rcu_read_unlock();
#endif
	return 0;
}

/* Caller holds gpu->lock. */
void gs_client_snap(struct gs_gpu *gpu, struct gs_client *c,
		    struct gs_client_snap *s, u64 now)
{
	static const u32 states[] = {
		[GS_POL_IDLE] = GPUSCHED_STATE_IDLE,
		[GS_POL_WAITING] = GPUSCHED_STATE_WAITING,
		[GS_POL_HOLDING] = GPUSCHED_STATE_HOLDING,
	};

	lockdep_assert_held(&gpu->lock);
	s->id = c->id;
	s->cgroup_id = c->cgroup_id;
	s->pid = c->pid;
	s->uid = c->uid;
	s->gid = c->gid;
	memcpy(s->comm, c->comm, sizeof(s->comm));
	s->gpu_index = gpu->index;
	s->weight = c->pol.weight;
	s->class = c->pol.class;
	s->cap_pct = c->pol.cap_pct;
	s->policy_set = c->policy_set;
	s->policy_lowered = c->policy_lowered;
	s->state = states[c->pol.state];
	s->held_ns = gs_pol_held_now(&c->pol, now);
	s->grants = c->pol.grants;
	s->wait_ns_total = c->pol.wait_ns_total;
	s->wait_ns_max = c->pol.wait_ns_max;
	s->overruns = c->pol.overruns;
	s->yields = c->pol.yields;
}

struct gs_gpu *gs_client_gpu(struct gs_client *c)
{
	/* Pairs with the release in gs_client_attach(). */
	return smp_load_acquire(&c->gpu);
}

/* The file is being closed: no other call on @c runs now or later. */
void gs_client_exit(struct gs_client *c)
{
	struct gs_gpu *gpu = c->gpu;

	if (gpu) {
		struct gs_pol_effects fx = {};
		struct gs_client_snap snap;
		u64 now;

		spin_lock_bh(&gpu->lock);
		now = ktime_get_ns();
		gs_pol_client_exit(&gpu->pol, &c->pol, now, &fx);
		list_del(&c->node);
		gs_client_snap(gpu, c, &snap, now);
		gs_apply(gpu, &fx, now);
		spin_unlock_bh(&gpu->lock);
		gs_netlink_event(GPUSCHED_CMD_EV_DETACH, &snap);
	}
	put_pid(c->pid);
	/* A mapping still holds its own reference to the page. */
	free_page((unsigned long)c->page);
	mutex_destroy(&c->attach_lock);
}

int gs_client_attach(struct gs_client *c, const u8 *uuid)
{
	struct gs_client_snap snap;
	struct gs_gpu *gpu;
	int err = 0;
	u64 now;

	mutex_lock(&c->attach_lock);
	if (c->gpu) {
		err = -EBUSY;
		goto out;
	}
	gpu = gs_gpu_get(uuid);
	if (IS_ERR(gpu)) {
		err = PTR_ERR(gpu);
		goto out;
	}
	spin_lock_bh(&gpu->lock);
	now = ktime_get_ns();
	/*
	 * Numbered here, under the lock, so that each GPU's list is in
	 * increasing id order: netlink dumps resume after the last id put.
	 */
	c->id = atomic64_inc_return(&gs_next_client_id);
	gs_pol_client_init(&gpu->pol, &c->pol, now);
	list_add_tail(&c->node, &gpu->clients);
	gs_status_sync(gpu, c, now);
	gs_client_snap(gpu, c, &snap, now);
	spin_unlock_bh(&gpu->lock);
	gs_netlink_event(GPUSCHED_CMD_EV_ATTACH, &snap);
	/* Other ioctls read gpu unlocked: publish it after the client is set up. */
	smp_store_release(&c->gpu, gpu);
out:
	mutex_unlock(&c->attach_lock);
	return err;
}

static bool gs_client_waiting(struct gs_client *c)
{
	return READ_ONCE(c->pol.state) == GS_POL_WAITING;
}

/* gs_pol_acquire()'s effects; called with gpu->lock held. */
static void gs_apply_cb(void *gpu, struct gs_pol_effects *fx, u64 now)
{
	gs_apply(gpu, fx, now);
}

/* ACQUIRE, or YIELD when @yield: release first, in the same critical section. */
int gs_client_acquire(struct gs_client *c, const struct gpusched_acquire *a,
		      bool yield)
{
	struct gs_gpu *gpu = gs_client_gpu(c);
	struct gs_pol_effects fx = {};
	bool waiting;
	u64 now, due = 0;
	int err;
	long ret;

	if (!gpu)
		return -ENOTCONN;

	spin_lock_bh(&gpu->lock);
	now = ktime_get_ns();
	if (a->flags & GPUSCHED_ACQUIRE_DUE)
		due = now + (u64)a->due_us * NSEC_PER_USEC;
	err = gs_pol_acquire(&gpu->pol, &c->pol, yield,
			     a->flags & GPUSCHED_ACQUIRE_NONBLOCK, due, now,
			     gs_apply_cb, gpu);
	/*
	 * Decided under the lock: a grant on another CPU sets the state
	 * before it writes the status page, so an unlocked look could return
	 * before the page shows the grant. Waiting relocks before returning.
	 */
	waiting = !err && c->pol.state == GS_POL_WAITING;
	spin_unlock_bh(&gpu->lock);
	if (!waiting)
		goto out;

	if (a->flags & GPUSCHED_ACQUIRE_TIMEOUT)
		ret = wait_event_interruptible_hrtimeout(c->wq,
							 !gs_client_waiting(c),
							 ns_to_ktime(min_t(u64, a->timeout_ns,
									   KTIME_MAX)));
	else
		ret = wait_event_interruptible(c->wq, !gs_client_waiting(c));

	spin_lock_bh(&gpu->lock);
	if (c->pol.state == GS_POL_WAITING) {
		memset(&fx, 0, sizeof(fx));
		now = ktime_get_ns();
		gs_pol_cancel_wait(&gpu->pol, &c->pol, now, &fx);
		gs_apply(gpu, &fx, now);
		err = ret == -ETIME ? -ETIMEDOUT : -EINTR;
	} else if (c->pol.state != GS_POL_HOLDING) {
		/* Granted, then revoked before this task got to run. */
		err = -EAGAIN;
	}
	spin_unlock_bh(&gpu->lock);
out:
	return err;
}

int gs_client_release(struct gs_client *c)
{
	struct gs_gpu *gpu = gs_client_gpu(c);
	struct gs_pol_effects fx = {};
	u64 now;
	int err;

	if (!gpu)
		return -ENOTCONN;
	spin_lock_bh(&gpu->lock);
	now = ktime_get_ns();
	err = gs_pol_release(&gpu->pol, &c->pol, now, &fx);
	gs_apply(gpu, &fx, now);
	spin_unlock_bh(&gpu->lock);
	return err;
}

/*
 * Change the fields of @p->mask. Unless @priv, only a change that lowers
 * the client's share is allowed, as with nice(2). Caller holds gpu->lock.
 */
static int gs_client_set_locked(struct gs_gpu *gpu, struct gs_client *c,
				const struct gpusched_params *p, bool priv)
{
	struct gs_pol_effects fx = {};
	u64 now = ktime_get_ns();
	int err;

	lockdep_assert_held(&gpu->lock);
	err = gs_pol_set_params_masked(&gpu->pol, &c->pol, p, priv, now, &fx);
	gs_apply(gpu, &fx, now);
	/* Its class is on its own page, whatever its state. */
	if (!err)
		gs_status_sync(gpu, c, now);
	return err;
}

/*
 * SET_CLIENT: an administrator's change, the fields of @policy marked as
 * the policy daemon's. Caller holds gpu->lock.
 */
int gs_client_admin_set_locked(struct gs_gpu *gpu, struct gs_client *c,
			       const struct gpusched_params *p, u32 policy)
{
	int err = gs_client_set_locked(gpu, c, p, true);

	if (!err) {
		c->policy_set = (c->policy_set & ~p->mask) | (policy & p->mask);
		c->policy_lowered &= ~p->mask;
	}
	return err;
}

int gs_client_set_params(struct gs_client *c, const struct gpusched_params *p)
{
	struct gs_gpu *gpu = gs_client_gpu(c);

	bool priv;
	int err;

	if (!gpu)
		return -ENOTCONN;
	/* Asked before locking: capability checks may sleep (audit, LSMs). */
	priv = ns_capable_noaudit(&init_user_ns, CAP_SYS_NICE);
	spin_lock_bh(&gpu->lock);
	err = gs_client_set_locked(gpu, c, p, priv);
	if (!err && priv) {
		/* Any value is the privileged client's own. */
		c->policy_set &= ~p->mask;
		c->policy_lowered &= ~p->mask;
	} else if (!err) {
		/* Lowered from the policy's value: below it, still from it. */
		c->policy_lowered |= c->policy_set & p->mask;
		c->policy_set &= ~p->mask;
	}
	spin_unlock_bh(&gpu->lock);
	return err;
}

int gs_client_info(struct gs_client *c, struct gpusched_client_info *info)
{
	struct gs_gpu *gpu = gs_client_gpu(c);
	struct gs_client_snap s;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->state = GPUSCHED_STATE_DETACHED;
	if (!gpu)
		return 0;

	spin_lock_bh(&gpu->lock);
	gs_client_snap(gpu, c, &s, ktime_get_ns());
	spin_unlock_bh(&gpu->lock);
	memcpy(info->uuid, gpu->uuid, GPUSCHED_UUID_LEN);
	info->state = s.state;
	info->weight = s.weight;
	info->class = s.class;
	info->cap_pct = s.cap_pct;
	info->gpu_index = s.gpu_index;
	info->held_ns = s.held_ns;
	info->grants = s.grants;
	info->wait_ns_total = s.wait_ns_total;
	info->wait_ns_max = s.wait_ns_max;
	info->overruns = s.overruns;
	info->yields = s.yields;
	return 0;
}
