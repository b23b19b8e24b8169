// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/gpusched/gpu<N>/: one directory per token, with its knobs and
 * its state. Documentation/ABI/testing/sysfs-kernel-gpusched lists the files.
 */
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/ktime.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "gs.h"

static struct kobject *gs_root;

static struct gs_gpu *to_gpu(struct kobject *kobj)
{
	return container_of(kobj, struct gs_gpu, kobj);
}

static ssize_t uuid_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	const u8 *u = to_gpu(kobj)->uuid;

	return sysfs_emit(buf, "GPU-%4phN-%2phN-%2phN-%2phN-%6phN\n",
			  u, u + 4, u + 6, u + 8, u + 10);
}

#define GS_STATE_ATTR(name, fmt)					\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	struct gs_gpu_state s;						\
									\
	gs_gpu_state(to_gpu(kobj), &s, task_active_pid_ns(current));	\
	return sysfs_emit(buf, fmt "\n", s.name);			\
}									\
static struct kobj_attribute name##_attr = __ATTR_RO(name)

GS_STATE_ATTR(grants, "%llu");
GS_STATE_ATTR(overruns, "%llu");
GS_STATE_ATTR(held_ns, "%llu");
GS_STATE_ATTR(nr_clients, "%u");
GS_STATE_ATTR(nr_waiting, "%u");
GS_STATE_ATTR(mem_reserved, "%llu");

static ssize_t holder_pid_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct gs_gpu_state s;

	gs_gpu_state(to_gpu(kobj), &s, task_active_pid_ns(current));
	return sysfs_emit(buf, "%d\n", s.holder);
}

static struct kobj_attribute holder_pid_attr = __ATTR_RO(holder_pid);
static struct kobj_attribute uuid_attr = __ATTR_RO(uuid);

/*
 * A knob reads and writes one field of the token's parameters in the unit
 * its name says (kmod/policy.c's knob table); a write is validated as a
 * whole by the policy, so a value out of range gives -EINVAL and changes
 * nothing.
 */
struct gs_knob_attr {
	struct kobj_attribute attr;
	enum gs_pol_knob_id id;
};

static ssize_t gs_knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct gs_knob_attr *k = container_of(attr, struct gs_knob_attr, attr);
	struct gs_gpu_state s;

	gs_gpu_state(to_gpu(kobj), &s, task_active_pid_ns(current));
	return sysfs_emit(buf, "%u\n",
			  gs_pol_knob_get(&s.params, &gs_pol_knobs[k->id]));
}

static ssize_t gs_knob_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t len)
{
	struct gs_knob_attr *k = container_of(attr, struct gs_knob_attr, attr);
	u32 vals[GS_POL_NR_KNOBS] = {};
	int err;

	/* Too large for the type is out of range too: EINVAL, not ERANGE. */
	if (kstrtou32(buf, 10, &vals[k->id]))
		return -EINVAL;
	err = gs_gpu_set_knobs(to_gpu(kobj), vals, 1U << k->id);
	return err ? err : len;
}

#define GS_KNOB(_name, _id)						\
static struct gs_knob_attr _name##_knob = {				\
	.attr = __ATTR(_name, 0644, gs_knob_show, gs_knob_store),	\
	.id = _id,							\
}

GS_KNOB(timeslice_us, GS_POL_KNOB_TIMESLICE);
GS_KNOB(grace_us, GS_POL_KNOB_GRACE);
GS_KNOB(min_grant_us, GS_POL_KNOB_MIN_GRANT);
GS_KNOB(starve_us, GS_POL_KNOB_STARVE);
GS_KNOB(window_us, GS_POL_KNOB_WINDOW);
GS_KNOB(latency_pct, GS_POL_KNOB_LATENCY_PCT);
GS_KNOB(latency_queue_us, GS_POL_KNOB_LATENCY_QUEUE);
GS_KNOB(handover_us, GS_POL_KNOB_HANDOVER);
GS_KNOB(mem_default_pct, GS_POL_KNOB_MEM_DEFAULT_PCT);
GS_KNOB(mem_reserve_mb, GS_POL_KNOB_MEM_RESERVE);

static struct attribute *gs_gpu_attrs[] = {
	&uuid_attr.attr,
	&timeslice_us_knob.attr.attr,
	&grace_us_knob.attr.attr,
	&min_grant_us_knob.attr.attr,
	&starve_us_knob.attr.attr,
	&window_us_knob.attr.attr,
	&latency_pct_knob.attr.attr,
	&latency_queue_us_knob.attr.attr,
	&handover_us_knob.attr.attr,
	&mem_default_pct_knob.attr.attr,
	&mem_reserve_mb_knob.attr.attr,
	&mem_reserved_attr.attr,
	&nr_clients_attr.attr,
	&nr_waiting_attr.attr,
	&holder_pid_attr.attr,
	&grants_attr.attr,
	&overruns_attr.attr,
	&held_ns_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(gs_gpu);

static void gs_gpu_kobj_release(struct kobject *kobj)
{
	kfree(to_gpu(kobj));
}

static const struct kobj_type gs_gpu_ktype = {
	.release = gs_gpu_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = gs_gpu_groups,
};

/**
 * gs_sysfs_add_gpu() - give a token its directory /sys/kernel/gpusched/gpu<N>
 * @gpu: the token, whose life the kobject's reference count then rules
 *
 * Return: 0, or an error after which @gpu has been freed.
 */
int gs_sysfs_add_gpu(struct gs_gpu *gpu)
{
	int err;

	err = kobject_init_and_add(&gpu->kobj, &gs_gpu_ktype, gs_root, "gpu%u",
				   gpu->index);
	if (err)
		kobject_put(&gpu->kobj);
	return err;
}

/**
 * gs_sysfs_init() - create /sys/kernel/gpusched
 *
 * Return: 0 or -ENOMEM.
 */
int gs_sysfs_init(void)
{
	gs_root = kobject_create_and_add("gpusched", kernel_kobj);
	return gs_root ? 0 : -ENOMEM;
}

/**
 * gs_sysfs_exit() - remove /sys/kernel/gpusched, after every token's
 * directory
 */
void gs_sysfs_exit(void)
{
	kobject_put(gs_root);
}
