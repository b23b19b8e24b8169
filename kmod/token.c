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
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/restart_block.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "gs.h"

/*
 * Serialises creation, reclaim and lookup of tokens, and a client's
 * registration with its token; gs_nr_gpus and gs_gpus under it. Taken
 * before a token's lock, never under it.
 */
static DEFINE_MUTEX(gs_gpus_lock);
static LIST_HEAD(gs_gpus);
static unsigned int gs_nr_gpus;
static atomic64_t gs_next_client_id = ATOMIC64_INIT(0);

static struct gs_client *to_client(struct gs_pol_client *pc)
{
	return container_of(pc, struct gs_client, pol);
}

/* Publish @c's state on its status page; gpu->lock makes this its writer. */
static void gs_status_sync_locked(struct gs_gpu *gpu, struct gs_client *c,
				  u64 now)
{
	lockdep_assert_held(&gpu->lock);
	gs_status_sync(&gpu->pol, &c->pol, now);
}

static void gs_granted(void *gpu, struct gs_pol_client *pc)
{
	wake_up(&to_client(pc)->wq);
}

/* Said outside the lock (an event allocates; printk is slow). */
static void gs_revoked(void *arg, struct gs_pol_client *pc)
{
	struct gs_client *c = to_client(pc);
	struct gs_gpu *gpu = arg;

	if (!c->overrun_pending) {
		c->overrun_pending = true;
		list_add_tail(&c->overrun_node, &gpu->overruns);
	}
	schedule_work(&gpu->overrun_work);
}

static const struct gs_status_ops gs_status_ops = {
	.granted = gs_granted,
	.revoked = gs_revoked,
};

/*
 * Tell clients what the policy decided, and arm the timer for its next
 * decision. Caller holds gpu->lock; every policy call is followed by this.
 */
static void gs_apply(struct gs_gpu *gpu, struct gs_pol_effects *fx, u64 now)
{
	u64 next;

	lockdep_assert_held(&gpu->lock);
	gs_status_apply(&gpu->pol, fx, now, &gs_status_ops, gpu);
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

	gs_gpu_lock(gpu);
	now = ktime_get_ns();
	gs_pol_tick(&gpu->pol, now, &fx);
	gs_apply(gpu, &fx, now);
	gs_gpu_unlock(gpu);
	/* gs_apply() re-armed the timer if the policy needs it. */
	return HRTIMER_NORESTART;
}

/*
 * Tell of a revoked holder: the event and the log line. Uses no token: the
 * token may be reclaimed once its last client has left.
 */
static void gs_overrun_report(struct gs_client_snap *snap, u64 grace_ns)
{
	gs_netlink_event(GPUSCHED_CMD_EV_OVERRUN, snap);
	pr_warn_ratelimited("gpu%u: pid %d did not yield within %llu us: revoked\n",
			    snap->gpu_index, gs_pid_nr(snap->pid, &init_pid_ns),
			    div_u64(grace_ns, NSEC_PER_USEC));
}

/*
 * The overruns gs_apply() marked, one client at a time, each snapshot
 * taken under the lock and reported after it.
 */
static void gs_overrun_work(struct work_struct *work)
{
	struct gs_gpu *gpu = container_of(work, struct gs_gpu, overrun_work);

	for (;;) {
		struct gs_client_snap snap;
		struct gs_client *found;
		u64 grace_ns;

		gs_gpu_lock(gpu);
		found = list_first_entry_or_null(&gpu->overruns, struct gs_client,
						 overrun_node);
		if (found) {
			list_del_init(&found->overrun_node);
			found->overrun_pending = false;
			gs_client_snap(gpu, found, &snap, ktime_get_ns());
			/* The client may close once the lock is dropped. */
			get_pid(snap.pid);
		}
		grace_ns = gpu->pol.p.grace_ns;
		gs_gpu_unlock(gpu);
		if (!found)
			break;
		gs_overrun_report(&snap, grace_ns);
		put_pid(snap.pid);
	}
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

/* Stop a token that no client uses and drop the list's reference. */
static void gs_gpu_remove(struct gs_gpu *gpu)
{
	list_del(&gpu->node);
	gs_nr_gpus--;
	hrtimer_cancel(&gpu->timer);
	cancel_work_sync(&gpu->overrun_work);
	/* Its sysfs name may be taken by the next token at once. */
	kobject_del(&gpu->kobj);
	kobject_put(&gpu->kobj);
}

/*
 * A token that may be reclaimed for a new UUID: no client, and knobs no
 * administrator changed (those are kept: only root can change them, so
 * made-up UUIDs cannot pin tokens that way).
 */
static struct gs_gpu *gs_gpu_unused(void)
{
	struct gs_gpu *gpu;

	lockdep_assert_held(&gs_gpus_lock);
	list_for_each_entry(gpu, &gs_gpus, node) {
		bool unused;
		int i;

		gs_gpu_lock(gpu);
		unused = !gpu->pol.nr_clients;
		for (i = 0; unused && i < GS_POL_NR_KNOBS; i++)
			unused = gs_pol_knob_get(&gpu->pol.p, &gs_pol_knobs[i]) ==
				 gs_pol_knob_get(&gs_defaults.params,
						 &gs_pol_knobs[i]);
		/* In the same hold: a knob stored after it would be lost. */
		gpu->removed = unused;
		gs_gpu_unlock(gpu);
		if (unused)
			return gpu;
	}
	return NULL;
}

/* The lowest index no token has. */
static unsigned int gs_gpu_free_index(void)
{
	unsigned int index = 0;
	struct gs_gpu *gpu;

again:
	list_for_each_entry(gpu, &gs_gpus, node) {
		if (gpu->index == index) {
			index++;
			goto again;
		}
	}
	return index;
}

/*
 * The token of @uuid, created if new. When max_gpus tokens exist, an
 * unused one (gs_gpu_unused()) makes room: tokens of made-up UUIDs that
 * nobody attaches to any more cannot keep real GPUs out.
 */
static struct gs_gpu *gs_gpu_get(const u8 *uuid)
{
	struct gs_gpu *gpu;
	int err;

	lockdep_assert_held(&gs_gpus_lock);
	gpu = gs_gpu_find(uuid);
	if (gpu)
		return gpu;
	if (gs_nr_gpus >= gs_defaults.max_gpus) {
		gpu = gs_gpu_unused();
		if (!gpu)
			return ERR_PTR(-ENOSPC);
		gs_gpu_remove(gpu);
	}
	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return ERR_PTR(-ENOMEM);
	memcpy(gpu->uuid, uuid, GPUSCHED_UUID_LEN);
	gpu->index = gs_gpu_free_index();
	spin_lock_init(&gpu->lock);
	gpu->clients = RB_ROOT;
	gpu->clients_by_pid = RB_ROOT;
	gpu->uids = RB_ROOT;
	INIT_LIST_HEAD(&gpu->overruns);
	gs_pol_dev_init(&gpu->pol, &gs_defaults.params, ktime_get_ns());
	hrtimer_init(&gpu->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	gpu->timer.function = gs_timer_fn;
	INIT_WORK(&gpu->overrun_work, gs_overrun_work);
	/* On failure the kobject's release frees gpu. */
	err = gs_sysfs_add_gpu(gpu);
	if (err)
		return ERR_PTR(err);
	list_add_tail(&gpu->node, &gs_gpus);
	gs_nr_gpus++;
	return gpu;
}

/**
 * gs_gpu_next() - the token with the lowest index at least @index
 * @index: where to start
 *
 * Tokens may be reclaimed (gs_gpu_get()), so their indexes may have gaps.
 *
 * Return: the token with a reference that the caller drops with
 * gs_gpu_put(), or NULL.
 */
struct gs_gpu *gs_gpu_next(unsigned int index)
{
	struct gs_gpu *gpu, *found = NULL;

	mutex_lock(&gs_gpus_lock);
	list_for_each_entry(gpu, &gs_gpus, node)
		if (gpu->index >= index && (!found || gpu->index < found->index))
			found = gpu;
	if (found)
		kobject_get(&found->kobj);
	mutex_unlock(&gs_gpus_lock);
	return found;
}

/**
 * gs_gpu_by_index() - the token with index @index
 * @index: its sysfs directory's number
 *
 * Return: the token with a reference (gs_gpu_put()), or NULL.
 */
struct gs_gpu *gs_gpu_by_index(unsigned int index)
{
	struct gs_gpu *gpu = gs_gpu_next(index);

	if (gpu && gpu->index != index) {
		gs_gpu_put(gpu);
		gpu = NULL;
	}
	return gpu;
}

/**
 * gs_gpu_put() - drop a reference that gs_gpu_next() or gs_gpu_by_index()
 * gave
 * @gpu: the token
 */
void gs_gpu_put(struct gs_gpu *gpu)
{
	kobject_put(&gpu->kobj);
}

/**
 * gs_gpus_exit() - free every token
 *
 * Called at module exit, when no file is open (no client exists) and the
 * netlink family and the character device are gone.
 */
void gs_gpus_exit(void)
{
	struct gs_gpu *gpu, *tmp;

	mutex_lock(&gs_gpus_lock);
	list_for_each_entry_safe(gpu, tmp, &gs_gpus, node)
		gs_gpu_remove(gpu);
	mutex_unlock(&gs_gpus_lock);
}

/**
 * gs_gpu_set_knobs() - set some of a GPU's knobs, all at once or none
 * @gpu: the token
 * @vals: values in the knobs' written units, indexed by enum gs_pol_knob_id
 * @mask: which of @vals to set (bit n: knob n)
 *
 * The one setter of sysfs and netlink: the knobs not in @mask are read and
 * written back under the same lock, so concurrent writers of different
 * knobs do not undo each other.
 *
 * Return: 0, -EINVAL when a value is out of range (nothing changes), or
 * -ENODEV when the token is being reclaimed for another UUID.
 */
int gs_gpu_set_knobs(struct gs_gpu *gpu, const u32 *vals, unsigned int mask)
{
	struct gs_pol_effects fx = {};
	struct gs_pol_params p;
	u64 now, id = 0;
	int err, i;

	gs_gpu_lock(gpu);
	if (gpu->removed) {
		gs_gpu_unlock(gpu);
		return -ENODEV;
	}
	p = gpu->pol.p;
	for (i = 0; i < GS_POL_NR_KNOBS; i++)
		if (mask & (1U << i))
			gs_pol_knob_set(&p, &gs_pol_knobs[i], vals[i]);
	now = ktime_get_ns();
	err = gs_pol_set_dev_params(&gpu->pol, &p, now, &fx);
	gs_apply(gpu, &fx, now);
	gs_gpu_unlock(gpu);
	/*
	 * Every page shows the knobs that define the latency class's promise:
	 * one client per hold, so that the hold does not grow with them.
	 */
	while (!err) {
		struct gs_client *c;

		gs_gpu_lock(gpu);
		c = gs_client_after_locked(gpu, id);
		if (c) {
			id = c->id;
			gs_status_sync_locked(gpu, c, ktime_get_ns());
		}
		gs_gpu_unlock(gpu);
		if (!c)
			break;
	}
	return err;
}

/**
 * gs_pid_nr() - a client's process id as seen from a pid namespace
 * @pid: the opener's thread group, as kept by the client
 * @ns: the namespace of whoever reads it
 *
 * A number is only meaningful while the process lives: once it has exited
 * the number may belong to another process, so 0 is reported instead.
 *
 * Return: the pid in @ns, or 0 if not visible there or exited.
 */
pid_t gs_pid_nr(struct pid *pid, struct pid_namespace *ns)
{
	if (!pid || !pid_has_task(pid, PIDTYPE_TGID))
		return 0;
	return pid_nr_ns(pid, ns);
}

/**
 * gs_gpu_state() - a snapshot of a GPU's knobs and counters
 * @gpu: the token
 * @s: filled in, under the token's lock
 * @ns: the pid namespace of whoever reads it
 *
 * The holder's pid is given in @ns (0: free, not visible there, or exited).
 */
void gs_gpu_state(struct gs_gpu *gpu, struct gs_gpu_state *s,
		  struct pid_namespace *ns)
{
	struct gs_pol_client *h;

	gs_gpu_lock(gpu);
	h = gpu->pol.holder;
	s->params = gpu->pol.p;
	s->grants = gpu->pol.grants;
	s->overruns = gpu->pol.overruns;
	s->held_ns = gpu->pol.held_ns;
	if (h)
		s->held_ns += gs_pol_held_now(h, ktime_get_ns()) - h->held_ns;
	s->nr_clients = gpu->pol.nr_clients;
	s->nr_waiting = gpu->pol.nr_waiting;
	s->mem_reserved = gs_mem_dev_reserved(&gpu->pol);
	s->holder = h ? gs_pid_nr(to_client(h)->pid, ns) : 0;
	gs_gpu_unlock(gpu);
}

/**
 * gs_client_init() - set up a client for a file being opened
 * @c: zeroed client
 *
 * Allocates its status page and records who opened the file.
 *
 * Return: 0 or -ENOMEM.
 */
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
	INIT_LIST_HEAD(&c->overrun_node);
	RB_CLEAR_NODE(&c->id_node);
	RB_CLEAR_NODE(&c->pid_node);
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

/**
 * gs_client_snap() - copy a client's identity and accounting
 * @gpu: its token, whose lock the caller holds
 * @c: the client
 * @s: filled in; s->pid is valid while @c is (or with a reference taken)
 * @now: CLOCK_MONOTONIC time, for the running grant's held time
 */
void gs_client_snap(struct gs_gpu *gpu, struct gs_client *c,
		    struct gs_client_snap *s, u64 now)
{
	lockdep_assert_held(&gpu->lock);
	s->id = c->id;
	s->cgroup_id = c->cgroup_id;
	s->pid = c->pid;
	s->uid = c->uid;
	s->gid = c->gid;
	memcpy(s->comm, c->comm, sizeof(s->comm));
	s->gpu_index = gpu->index;
	s->weight = c->pol.weight;
	s->sched_class = c->pol.sched_class;
	s->cap_pct = c->pol.cap_pct;
	s->policy_set = c->policy_set;
	s->policy_lowered = c->policy_lowered;
	s->state = gs_status_state(&c->pol);
	s->held_ns = gs_pol_held_now(&c->pol, now);
	s->gpu_ns = c->pol.gpu_ns;
	s->grants = c->pol.grants;
	s->wait_ns_total = c->pol.wait_ns_total;
	s->wait_ns_max = c->pol.wait_ns_max;
	s->overruns = c->pol.overruns;
	s->yields = c->pol.yields;
	s->mem_total = c->pol.mem.total;
	s->mem_reserved = c->pol.mem.reserved;
	s->mem_limit = gs_mem_limit(&gpu->pol, &c->pol);
	s->mem_refused = c->pol.mem.refused;
}

/**
 * gs_client_gpu() - the token a client attached to
 * @c: the client
 *
 * Return: the token, or NULL before ATTACH. Valid while @c is attached.
 */
struct gs_gpu *gs_client_gpu(struct gs_client *c)
{
	/* Pairs with the release in gs_client_attach(). */
	return smp_load_acquire(&c->gpu);
}

/*
 * A token's clients by id, so that a walk (a netlink dump) resumes after
 * the last id it saw in O(log n), and by (pid, id), so that SET_CLIENT by
 * pid finds a process's clients without a walk of all. Pids compare by
 * their struct pid: the process, not the number, which may be reused.
 */
static struct gs_client *gs_id_client(const struct rb_node *n)
{
	return rb_entry(n, struct gs_client, id_node);
}

static struct gs_client *gs_pid_client(const struct rb_node *n)
{
	return rb_entry(n, struct gs_client, pid_node);
}

static bool gs_id_less(struct rb_node *a, const struct rb_node *b)
{
	return gs_id_client(a)->id < gs_id_client(b)->id;
}

/* Is (@pid, @id) before @c's (pid, id)? */
static bool gs_pid_id_before(const struct pid *pid, u64 id,
			     const struct gs_client *c)
{
	if (pid != c->pid)
		return (unsigned long)pid < (unsigned long)c->pid;
	return id < c->id;
}

static bool gs_pid_less(struct rb_node *a, const struct rb_node *b)
{
	const struct gs_client *c = gs_pid_client(a);

	return gs_pid_id_before(c->pid, c->id, gs_pid_client(b));
}

/**
 * gs_client_after_locked() - a token's client with the least id above @id
 * @gpu: the token, whose lock the caller holds
 * @id: 0 for the first client
 *
 * Return: the client, valid while the lock is held, or NULL.
 */
struct gs_client *gs_client_after_locked(struct gs_gpu *gpu, u64 id)
{
	struct rb_node *n = gpu->clients.rb_node;
	struct gs_client *found = NULL;

	lockdep_assert_held(&gpu->lock);
	while (n) {
		struct gs_client *c = gs_id_client(n);

		if (c->id > id) {
			found = c;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}

/**
 * gs_client_of_pid_after_locked() - a process's client with the least id
 * above @id on a token
 * @gpu: the token, whose lock the caller holds
 * @pid: the process (its thread group's struct pid)
 * @id: 0 for the first client
 *
 * Return: the client, valid while the lock is held, or NULL.
 */
struct gs_client *gs_client_of_pid_after_locked(struct gs_gpu *gpu,
						struct pid *pid, u64 id)
{
	struct rb_node *n = gpu->clients_by_pid.rb_node;
	struct gs_client *found = NULL;

	lockdep_assert_held(&gpu->lock);
	while (n) {
		struct gs_client *c = gs_pid_client(n);

		if (gs_pid_id_before(pid, id, c)) {
			found = c;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found && found->pid == pid ? found : NULL;
}

/* @uid's count of clients on @gpu, or NULL. Caller holds gpu->lock. */
static struct gs_uid_count *gs_uid_find(struct gs_gpu *gpu, kuid_t uid)
{
	struct rb_node *n = gpu->uids.rb_node;

	while (n) {
		struct gs_uid_count *uc = rb_entry(n, struct gs_uid_count, node);

		if (uid_eq(uid, uc->uid))
			return uc;
		n = uid_lt(uid, uc->uid) ? n->rb_left : n->rb_right;
	}
	return NULL;
}

static void gs_uid_insert(struct gs_gpu *gpu, struct gs_uid_count *new)
{
	struct rb_node **link = &gpu->uids.rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (uid_lt(new->uid,
			   rb_entry(parent, struct gs_uid_count, node)->uid))
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&new->node, parent, link);
	rb_insert_color(&new->node, &gpu->uids);
}

/*
 * One client of @uc's user fewer. Caller holds gpu->lock. Return: @uc to
 * free once the lock is dropped when it counts no client any more, or NULL.
 */
static struct gs_uid_count *gs_uid_put(struct gs_gpu *gpu,
				       struct gs_uid_count *uc)
{
	if (--uc->n)
		return NULL;
	rb_erase(&uc->node, &gpu->uids);
	return uc;
}

/**
 * gs_client_exit() - remove a client whose file is being closed
 * @c: the client; no other call on it runs now or later
 *
 * Releases the token if held, tells listeners (EV_DETACH, and an overrun
 * not yet told) and frees the client's reference to its status page.
 */
void gs_client_exit(struct gs_client *c)
{
	struct gs_gpu *gpu = c->gpu;

	if (gpu) {
		struct gs_pol_effects fx = {};
		struct gs_client_snap snap;
		struct gs_uid_count *uc;
		bool overrun;
		u64 now, grace_ns;

		gs_gpu_lock(gpu);
		now = ktime_get_ns();
		gs_pol_client_exit(&gpu->pol, &c->pol, now, &fx);
		rb_erase(&c->id_node, &gpu->clients);
		rb_erase(&c->pid_node, &gpu->clients_by_pid);
		uc = gs_uid_put(gpu, c->uid_count);
		gs_client_snap(gpu, c, &snap, now);
		gs_apply(gpu, &fx, now);
		/* An overrun the work has not told of yet: told here. */
		overrun = c->overrun_pending;
		list_del_init(&c->overrun_node);
		grace_ns = gpu->pol.p.grace_ns;
		gs_gpu_unlock(gpu);
		kfree(uc);
		if (overrun)
			gs_overrun_report(&snap, grace_ns);
		gs_netlink_event(GPUSCHED_CMD_EV_DETACH, &snap);
	}
	put_pid(c->pid);
	/* A mapping still holds its own reference to the page. */
	free_page((unsigned long)c->page);
	mutex_destroy(&c->attach_lock);
}

/**
 * gs_client_attach() - ATTACH a client to the token of @uuid
 * @c: the client
 * @uuid: the GPU's UUID, not all zero
 * @mem_total: the GPU's memory as the client's driver reports it; 0: unknown
 *
 * Creates the token if it is new (reclaiming an unused one when max_gpus
 * exist, see gs_gpu_get()). A user may attach max_clients_per_uid clients
 * (files opened with that effective uid) to one token, unless the caller
 * has CAP_SYS_RESOURCE.
 *
 * Return: 0, -EBUSY if attached already, -ENOSPC, -ENOMEM, -EUSERS (the
 * user's limit).
 */
int gs_client_attach(struct gs_client *c, const u8 *uuid, u64 mem_total)
{
	bool exempt = ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE);
	unsigned int limit = READ_ONCE(gs_max_clients_per_uid);
	struct gs_uid_count *uc, *uc_new;
	struct gs_client_snap snap;
	struct gs_gpu *gpu;
	int err = 0;
	u64 now;

	/* Allocated before the lock in case the user has no count yet. */
	uc_new = kzalloc(sizeof(*uc_new), GFP_KERNEL_ACCOUNT);
	if (!uc_new)
		return -ENOMEM;
	mutex_lock(&c->attach_lock);
	if (c->gpu) {
		err = -EBUSY;
		goto out;
	}
	/* Held until the client counts, so the token cannot be reclaimed. */
	mutex_lock(&gs_gpus_lock);
	gpu = gs_gpu_get(uuid);
	if (IS_ERR(gpu)) {
		mutex_unlock(&gs_gpus_lock);
		err = PTR_ERR(gpu);
		goto out;
	}
	gs_gpu_lock(gpu);
	uc = gs_uid_find(gpu, c->uid);
	if (uc && limit && uc->n >= limit && !exempt) {
		gs_gpu_unlock(gpu);
		mutex_unlock(&gs_gpus_lock);
		err = -EUSERS;
		goto out;
	}
	if (!uc) {
		uc = uc_new;
		uc_new = NULL;
		uc->uid = c->uid;
		gs_uid_insert(gpu, uc);
	}
	uc->n++;
	c->uid_count = uc;
	now = ktime_get_ns();
	/* Numbered here: dumps resume after the last id put (by_id). */
	c->id = atomic64_inc_return(&gs_next_client_id);
	gs_pol_client_init(&gpu->pol, &c->pol, now);
	c->pol.page = c->page;
	gs_mem_attach(&c->pol, mem_total);
	rb_add(&c->id_node, &gpu->clients, gs_id_less);
	rb_add(&c->pid_node, &gpu->clients_by_pid, gs_pid_less);
	gs_status_sync_locked(gpu, c, now);
	gs_client_snap(gpu, c, &snap, now);
	gs_gpu_unlock(gpu);
	mutex_unlock(&gs_gpus_lock);
	gs_netlink_event(GPUSCHED_CMD_EV_ATTACH, &snap);
	/* Other ioctls read gpu unlocked: publish it after the client is set up. */
	smp_store_release(&c->gpu, gpu);
out:
	mutex_unlock(&c->attach_lock);
	kfree(uc_new);
	return err;
}

/*
 * Has the wait that started at grant number @gen ended: granted since, or
 * no longer waiting? Several threads may share the file: another thread's
 * YIELD may already have given a grant away and queued again, so the state
 * alone does not say whether this wait was served.
 */
static bool gs_client_wait_done(struct gs_client *c, u64 gen)
{
	return READ_ONCE(c->pol.grant_gen) != gen ||
	       READ_ONCE(c->pol.state) != GS_POL_WAITING;
}

/* gs_pol_acquire()'s effects; called with gpu->lock held. */
static void gs_apply_cb(void *gpu, struct gs_pol_effects *fx, u64 now)
{
	gs_apply(gpu, fx, now);
}

/*
 * Marks the task's restart block while an ACQUIRE that a stop, ptrace or
 * the freezer interrupted is to be restarted (-ERESTARTNOHAND): a signal
 * handler's sigreturn resets the block, so a restarted call can tell
 * itself from a new one that the caller made after EINTR. Never called.
 */
static long gs_restart_marker(struct restart_block *rb)
{
	return -EINTR;
}

/*
 * What the block holds with no restart pending: the kernel's own
 * do_no_restart_syscall(), which a handler's sigreturn writes too (not
 * exported; read from the idle task, which makes no system call). No
 * address of this module may stay in a task's block: restart_syscall(2)
 * calls it, after an unload too.
 */
static long (*gs_no_restart(void))(struct restart_block *)
{
	return READ_ONCE(init_task.restart_block.fn);
}

/**
 * gs_restart_exit() - take the restart marker out of every task
 *
 * Called at module exit. A restart consumes its marker when it comes back
 * to the module (gs_client_restarted()); one that never does (its file
 * closed by another thread before it ran) leaves the marker until the
 * task's next sigreturn. cmpxchg(): a task may write its own block
 * meanwhile.
 */
void gs_restart_exit(void)
{
	long (*none)(struct restart_block *rb) = gs_no_restart();
	struct task_struct *p, *t;

	rcu_read_lock();
	for_each_process_thread(p, t)
		cmpxchg(&t->restart_block.fn, gs_restart_marker, none);
	rcu_read_unlock();
}

/*
 * Is this ACQUIRE the restart of the one that returned -ERESTARTNOHAND on
 * @c? The same task, no handler run since (the marker is still there),
 * and the same request. Consumes the task's marker either way (it is the
 * task's, whichever file set it), and @c's pending restart if it is this
 * task's: another thread's ACQUIRE on the file leaves that one alone.
 * Caller holds the token's lock.
 */
static bool gs_client_restarted(struct gs_client *c,
				const struct gpusched_acquire *a, bool yield)
{
	bool marked = current->restart_block.fn == gs_restart_marker;
	bool restarted = marked && c->restart_task == current &&
			 c->restart_yield == yield &&
			 !memcmp(&c->restart_req, a, sizeof(*a));

	if (marked)
		current->restart_block.fn = gs_no_restart();
	if (c->restart_task == current)
		c->restart_task = NULL;
	return restarted;
}

/**
 * gs_client_acquire() - ACQUIRE, or YIELD: release first, in one section
 * @c: the client
 * @a: the request, checked by gs_pol_check_acquire()
 * @yield: YIELD: release the token if held, then wait
 *
 * A @a->gpu_ns report is taken before the wait. A signal ends the wait:
 * -ERESTARTNOHAND, so that the call is restarted after a stop, ptrace or
 * the freezer, and the caller gets -EINTR when a handler ran. The
 * restarted call waits until the first call's deadline and does not take
 * the report again.
 *
 * Return: 0 when granted (or, GPUSCHED_ACQUIRE_NUDGE, the holder nudged;
 * GPUSCHED_ACQUIRE_NUDGE_DONE, told); -ENOTCONN, -EALREADY, -EBUSY,
 * -EPERM (a nudge), -ENOENT (a nudge's answer), -EAGAIN (would wait, or
 * the grant ended before this thread ran), -ETIMEDOUT, -ERESTARTNOHAND.
 */
int gs_client_acquire(struct gs_client *c, const struct gpusched_acquire *a,
		      bool yield)
{
	struct gs_gpu *gpu = gs_client_gpu(c);
	bool timed = a->flags & GPUSCHED_ACQUIRE_TIMEOUT;
	struct gs_pol_effects fx = {};
	u64 now, due, gpu_ns = a->gpu_ns, deadline = 0, gen;
	bool waiting, restarted;
	int err;
	long ret;

	if (!gpu)
		return -ENOTCONN;

	gs_gpu_lock(gpu);
	now = ktime_get_ns();
	restarted = gs_client_restarted(c, a, yield);
	if (timed)
		deadline = restarted ? c->restart_deadline :
			   now + min_t(u64, a->timeout_ns, KTIME_MAX - now);
	if (restarted)
		gpu_ns = 0;	/* the interrupted call took it */
	due = gs_pol_due(a, now);
	err = gs_pol_acquire(&gpu->pol, &c->pol, yield, a->flags, due,
			     gpu_ns, now, gs_apply_cb, gpu);
	if (gpu_ns)
		gs_status_sync_locked(gpu, c, now);	/* held_ns may have grown */
	/*
	 * Decided under the lock: a grant on another CPU sets the state
	 * before it writes the status page, so an unlocked look could return
	 * before the page shows the grant. Waiting relocks before returning.
	 */
	waiting = gs_pol_acquire_waits(&c->pol, a->flags, err);
	gen = c->pol.grant_gen;
	gs_gpu_unlock(gpu);
	if (!waiting)
		goto out;

	if (timed)
		ret = wait_event_interruptible_hrtimeout(c->wq,
							 gs_client_wait_done(c, gen),
							 ns_to_ktime(deadline > now ?
								     deadline - now : 0));
	else
		ret = wait_event_interruptible(c->wq,
					       gs_client_wait_done(c, gen));

	gs_gpu_lock(gpu);
	if (c->pol.state == GS_POL_WAITING && c->pol.grant_gen == gen) {
		/* Still this call's own wait: no other can start meanwhile. */
		memset(&fx, 0, sizeof(fx));
		now = ktime_get_ns();
		gs_pol_cancel_wait(&gpu->pol, &c->pol, now, &fx);
		gs_apply(gpu, &fx, now);
		if (ret == -ETIME) {
			err = -ETIMEDOUT;
		} else {
			err = -ERESTARTNOHAND;
			c->restart_task = current;
			c->restart_deadline = deadline;
			c->restart_req = *a;
			c->restart_yield = yield;
			current->restart_block.fn = gs_restart_marker;
		}
	} else if (c->pol.state != GS_POL_HOLDING) {
		/*
		 * Granted, then the grant ended before this thread ran:
		 * revoked, or given away by another thread of the file.
		 */
		err = -EAGAIN;
	}
	gs_gpu_unlock(gpu);
out:
	return err;
}

/**
 * gs_client_release() - RELEASE: give the token back, then take a report
 * @c: the client
 * @gpu_ns: GPU time reported (0: none), charged to the grant just ended
 *
 * Return: 0, -ENOTCONN before ATTACH, or -EPERM if @c does not hold the
 * token (the report is taken all the same).
 */
int gs_client_release(struct gs_client *c, u64 gpu_ns)
{
	struct gs_gpu *gpu = gs_client_gpu(c);
	struct gs_pol_effects fx = {};
	u64 now;
	int err;

	if (!gpu)
		return -ENOTCONN;
	gs_gpu_lock(gpu);
	now = ktime_get_ns();
	err = gs_pol_release(&gpu->pol, &c->pol, now, &fx);
	gs_apply(gpu, &fx, now);
	if (gpu_ns) {
		memset(&fx, 0, sizeof(fx));
		gs_pol_report_gpu(&gpu->pol, &c->pol, gpu_ns, now, &fx);
		gs_apply(gpu, &fx, now);
		gs_status_sync_locked(gpu, c, now);
	}
	gs_gpu_unlock(gpu);
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
		gs_status_sync_locked(gpu, c, now);
	return err;
}

/**
 * gs_client_admin_set_locked() - SET_CLIENT: an administrator's change
 * @gpu: the client's token, whose lock the caller holds
 * @c: the client
 * @p: the fields of @p->mask to set
 * @policy: which of them to mark as the policy daemon's (POLICY_SET)
 *
 * Return: 0 or -EINVAL (a value out of range; nothing changes).
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

/**
 * gs_client_set_params() - SET_PARAMS: a client changes its own share
 * @c: the client
 * @p: the fields of @p->mask to set
 *
 * Without CAP_SYS_NICE only a change that lowers the share is allowed.
 *
 * Return: 0, -ENOTCONN, -EINVAL or -EPERM (nothing changes then).
 */
int gs_client_set_params(struct gs_client *c, const struct gpusched_params *p)
{
	struct gs_gpu *gpu = gs_client_gpu(c);

	bool priv;
	int err;

	if (!gpu)
		return -ENOTCONN;
	/* Asked before locking: capability checks may sleep (audit, LSMs). */
	priv = ns_capable_noaudit(&init_user_ns, CAP_SYS_NICE);
	gs_gpu_lock(gpu);
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
	gs_gpu_unlock(gpu);
	return err;
}

/**
 * gs_client_mem() - MEM_RESERVE or MEM_RETURN device memory
 * @c: the client
 * @bytes: checked by gs_mem_check()
 * @reserve: reserve, else return
 *
 * Needs no token and never waits. The client's status page shows the new
 * reservation when this returns.
 *
 * Return: 0, -ENOTCONN before ATTACH, -EDQUOT past the client's limit,
 * -EINVAL for an overflow or more returned than reserved.
 */
int gs_client_mem(struct gs_client *c, u64 bytes, bool reserve)
{
	struct gs_gpu *gpu = gs_client_gpu(c);
	int err;

	if (!gpu)
		return -ENOTCONN;
	gs_gpu_lock(gpu);
	err = reserve ? gs_mem_reserve(&gpu->pol, &c->pol, bytes) :
			gs_mem_return(&gpu->pol, &c->pol, bytes);
	if (!err)
		gs_status_sync_locked(gpu, c, ktime_get_ns());
	gs_gpu_unlock(gpu);
	return err;
}

/**
 * gs_client_info() - GET_INFO: a client's own accounting and parameters
 * @c: the client
 * @info: filled in whole; the service's ABI version and features even
 *        before ATTACH
 *
 * Return: 0.
 */
int gs_client_info(struct gs_client *c, struct gpusched_client_info *info)
{
	struct gs_gpu *gpu = gs_client_gpu(c);

	if (!gpu) {
		gs_status_info(NULL, NULL, 0, info);
		return 0;
	}
	gs_gpu_lock(gpu);
	gs_status_info(&gpu->pol, &c->pol, ktime_get_ns(), info);
	info->gpu_index = gpu->index;
	gs_gpu_unlock(gpu);
	memcpy(info->uuid, gpu->uuid, GPUSCHED_UUID_LEN);
	return 0;
}
