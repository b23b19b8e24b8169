// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/gpusched/gpu<N>/: one directory per token, with its knobs and
 * its state. Documentation/ABI/testing/sysfs-kernel-gpusched lists the files.
 */
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/ktime.h>
#include <linux/pid.h>
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

/* A snapshot of the counters, taken under the token's lock. */
struct gs_gpu_state {
	u64 grants, overruns, held_ns;
	u32 nr_clients, nr_waiting;
	pid_t holder;
};

static void gs_gpu_state(struct gs_gpu *gpu, struct gs_gpu_state *s)
{
	struct gs_pol_client *h;

	spin_lock_bh(&gpu->lock);
	h = gpu->pol.holder;
	s->grants = gpu->pol.grants;
	s->overruns = gpu->pol.overruns;
	s->held_ns = gpu->pol.held_ns;
	if (h)
		s->held_ns += ktime_get_ns() - h->grant_start;
	s->nr_clients = gpu->pol.nr_clients;
	s->nr_waiting = gpu->pol.nr_waiting;
	/* In the reader's pid namespace; 0 if free or not visible there. */
	s->holder = h ? pid_vnr(container_of(h, struct gs_client, pol)->pid) : 0;
	spin_unlock_bh(&gpu->lock);
}

#define GS_STATE_ATTR(name, fmt)					\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	struct gs_gpu_state s;						\
									\
	gs_gpu_state(to_gpu(kobj), &s);					\
	return sysfs_emit(buf, fmt "\n", s.name);			\
}									\
static struct kobj_attribute name##_attr = __ATTR_RO(name)

GS_STATE_ATTR(grants, "%llu");
GS_STATE_ATTR(overruns, "%llu");
GS_STATE_ATTR(held_ns, "%llu");
GS_STATE_ATTR(nr_clients, "%u");
GS_STATE_ATTR(nr_waiting, "%u");

static ssize_t holder_pid_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct gs_gpu_state s;

	gs_gpu_state(to_gpu(kobj), &s);
	return sysfs_emit(buf, "%d\n", s.holder);
}

static struct kobj_attribute holder_pid_attr = __ATTR_RO(holder_pid);
static struct kobj_attribute uuid_attr = __ATTR_RO(uuid);

/*
 * A knob reads and writes one field of the token's parameters in the unit
 * its name says; a write is validated as a whole by the policy, so a value
 * out of range gives -EINVAL and changes nothing.
 */
struct gs_knob {
	struct kobj_attribute attr;
	size_t offset;		/* in struct gs_pol_params */
	bool is_u32;
	u32 scale;		/* stored value = written value x scale */
};

#define GS_KNOB(_name, _field, _scale)					\
static struct gs_knob _name##_knob = {					\
	.attr = __ATTR(_name, 0644, gs_knob_show, gs_knob_store),	\
	.offset = offsetof(struct gs_pol_params, _field),		\
	.is_u32 = sizeof_field(struct gs_pol_params, _field) == 4,	\
	.scale = _scale,						\
}

static ssize_t gs_knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct gs_knob *k = container_of(attr, struct gs_knob, attr);
	struct gs_gpu *gpu = to_gpu(kobj);
	const void *field;
	u64 v;

	spin_lock_bh(&gpu->lock);
	field = (const char *)&gpu->pol.p + k->offset;
	v = k->is_u32 ? *(const u32 *)field : *(const u64 *)field;
	spin_unlock_bh(&gpu->lock);
	return sysfs_emit(buf, "%llu\n", div_u64(v, k->scale));
}

static ssize_t gs_knob_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t len)
{
	struct gs_knob *k = container_of(attr, struct gs_knob, attr);
	struct gs_gpu *gpu = to_gpu(kobj);
	struct gs_pol_params p;
	void *field;
	u64 v;
	int err;

	/* Too large for the type is out of range too: EINVAL, not ERANGE. */
	if (kstrtou64(buf, 10, &v) || v > U32_MAX)
		return -EINVAL;
	spin_lock_bh(&gpu->lock);
	p = gpu->pol.p;
	spin_unlock_bh(&gpu->lock);
	/* Concurrent writes of two knobs: the last one wins for both. */
	field = (char *)&p + k->offset;
	if (k->is_u32)
		*(u32 *)field = v * k->scale;
	else
		*(u64 *)field = v * k->scale;
	err = gs_gpu_set_params(gpu, &p);
	return err ? err : len;
}

GS_KNOB(timeslice_us, slice_ns, NSEC_PER_USEC);
GS_KNOB(grace_us, grace_ns, NSEC_PER_USEC);
GS_KNOB(min_grant_us, min_grant_ns, NSEC_PER_USEC);
GS_KNOB(starve_us, starve_ns, NSEC_PER_USEC);
GS_KNOB(window_us, window_ns, NSEC_PER_USEC);
GS_KNOB(latency_pct, latency_pct, 1);

static struct attribute *gs_gpu_attrs[] = {
	&uuid_attr.attr,
	&timeslice_us_knob.attr.attr,
	&grace_us_knob.attr.attr,
	&min_grant_us_knob.attr.attr,
	&starve_us_knob.attr.attr,
	&window_us_knob.attr.attr,
	&latency_pct_knob.attr.attr,
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

/* On failure @gpu has been freed. */
int gs_sysfs_add_gpu(struct gs_gpu *gpu)
{
	int err;

	err = kobject_init_and_add(&gpu->kobj, &gs_gpu_ktype, gs_root, "gpu%u",
				   gpu->index);
	if (err)
		kobject_put(&gpu->kobj);
	return err;
}

int gs_sysfs_init(void)
{
	gs_root = kobject_create_and_add("gpusched", kernel_kobj);
	return gs_root ? 0 : -ENOMEM;
}

void gs_sysfs_exit(void)
{
	kobject_put(gs_root);
}
