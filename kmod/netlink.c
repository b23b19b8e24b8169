// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "gpusched": list GPUs and clients with their
 * accounting, change knobs and client parameters (admin only), and an
 * "events" multicast group. The uapi header documents the attributes.
 */
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>
#include "gs.h"

/*
 * The knobs' ranges, from the policy's knob table (gs_pol_knobs) at init.
 * Not const: 6.1's nla_policy points to them without const.
 */
static struct netlink_range_validation gs_knob_range[GS_POL_NR_KNOBS];

#define GS_KNOB_POLICY(attr, knob) \
	[attr] = NLA_POLICY_FULL_RANGE(NLA_U32, &gs_knob_range[knob])

/*
 * What each request may carry, per operation; everything else, read-only
 * attributes included, is refused (strict validation).
 */
static const struct nla_policy gs_get_gpu_policy[GPUSCHED_A_GPU_MAX + 1] = {
	[GPUSCHED_A_GPU_INDEX] = { .type = NLA_U32 },
};

static const struct nla_policy gs_set_gpu_policy[GPUSCHED_A_GPU_MAX + 1] = {
	[GPUSCHED_A_GPU_INDEX] = { .type = NLA_U32 },
	GS_KNOB_POLICY(GPUSCHED_A_GPU_TIMESLICE_US, GS_POL_KNOB_TIMESLICE),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_GRACE_US, GS_POL_KNOB_GRACE),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_MIN_GRANT_US, GS_POL_KNOB_MIN_GRANT),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_STARVE_US, GS_POL_KNOB_STARVE),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_WINDOW_US, GS_POL_KNOB_WINDOW),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_LATENCY_PCT, GS_POL_KNOB_LATENCY_PCT),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_LATENCY_QUEUE_US, GS_POL_KNOB_LATENCY_QUEUE),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_HANDOVER_US, GS_POL_KNOB_HANDOVER),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_MEM_DEFAULT_PCT, GS_POL_KNOB_MEM_DEFAULT_PCT),
	GS_KNOB_POLICY(GPUSCHED_A_GPU_MEM_RESERVE_MB, GS_POL_KNOB_MEM_RESERVE),
};

static const struct nla_policy gs_get_client_policy[GPUSCHED_A_CLIENT_MAX + 1] = {
	[GPUSCHED_A_CLIENT_GPU] = { .type = NLA_U32 },
};

static const struct nla_policy gs_set_client_policy[GPUSCHED_A_CLIENT_MAX + 1] = {
	[GPUSCHED_A_CLIENT_GPU] = { .type = NLA_U32 },
	[GPUSCHED_A_CLIENT_ID] = { .type = NLA_U64 },
	[GPUSCHED_A_CLIENT_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[GPUSCHED_A_CLIENT_WEIGHT] = NLA_POLICY_RANGE(NLA_U32, GPUSCHED_WEIGHT_MIN,
						      GPUSCHED_WEIGHT_MAX),
	[GPUSCHED_A_CLIENT_CLASS] = NLA_POLICY_MAX(NLA_U32, GPUSCHED_CLASS_MAX),
	[GPUSCHED_A_CLIENT_CAP_PCT] = NLA_POLICY_MAX(NLA_U32, 100),
	[GPUSCHED_A_CLIENT_MEM_LIMIT] = { .type = NLA_U64 },
	[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT] = NLA_POLICY_RANGE(NLA_U32, 1, 100),
	[GPUSCHED_A_CLIENT_POLICY_SET] = { .type = NLA_U32 },
};

static struct genl_family gs_family;

/* The holder's pid is given as seen from @ns. */
static int gs_put_gpu(struct sk_buff *skb, struct gs_gpu *gpu,
		      struct pid_namespace *ns, u32 portid, u32 seq, int flags)
{
	struct gs_gpu_state st;
	void *hdr;
	int i;

	gs_gpu_state(gpu, &st, ns);
	hdr = genlmsg_put(skb, portid, seq, &gs_family, flags,
			  GPUSCHED_CMD_GET_GPU);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, GPUSCHED_A_GPU_INDEX, gpu->index) ||
	    nla_put(skb, GPUSCHED_A_GPU_UUID, GPUSCHED_UUID_LEN, gpu->uuid))
		goto full;
	for (i = 0; i < GS_POL_NR_KNOBS; i++)
		if (nla_put_u32(skb, gs_pol_knobs[i].nl_attr,
				gs_pol_knob_get(&st.params, &gs_pol_knobs[i])))
			goto full;
	if (nla_put_u32(skb, GPUSCHED_A_GPU_NR_CLIENTS, st.nr_clients) ||
	    nla_put_u32(skb, GPUSCHED_A_GPU_NR_WAITING, st.nr_waiting) ||
	    nla_put_u32(skb, GPUSCHED_A_GPU_HOLDER_PID, st.holder) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_GPU_GRANTS, st.grants,
			      GPUSCHED_A_GPU_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_GPU_OVERRUNS, st.overruns,
			      GPUSCHED_A_GPU_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_GPU_HELD_NS, st.held_ns,
			      GPUSCHED_A_GPU_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_GPU_MEM_RESERVED, st.mem_reserved,
			      GPUSCHED_A_GPU_PAD))
		goto full;
	genlmsg_end(skb, hdr);
	return 0;

full:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* The GPU a request names, with a reference (gs_gpu_put()), or ERR_PTR. */
static struct gs_gpu *gs_nl_gpu(struct genl_info *info, int attr)
{
	struct gs_gpu *gpu;

	if (GENL_REQ_ATTR_CHECK(info, attr))
		return ERR_PTR(-EINVAL);
	gpu = gs_gpu_by_index(nla_get_u32(info->attrs[attr]));
	if (!gpu) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[attr], "no such GPU");
		return ERR_PTR(-ENODEV);
	}
	return gpu;
}

static int gs_nl_get_gpu_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct gs_gpu *gpu = gs_nl_gpu(info, GPUSCHED_A_GPU_INDEX);
	struct sk_buff *msg;
	int err;

	if (IS_ERR(gpu))
		return PTR_ERR(gpu);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	err = msg ? gs_put_gpu(msg, gpu, task_active_pid_ns(current),
			       info->snd_portid, info->snd_seq, 0) : -ENOMEM;
	gs_gpu_put(gpu);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/*
 * Pids in a reply are those of the pid namespace of the process that sent
 * the request: a socket records none, and the kernel gives a pid as seen
 * by the task it is given to (SCM_CREDENTIALS, SO_PEERCRED, taskstats).
 * The rest of a dump is built in whichever process calls recvmsg(), so the
 * sender's namespace is kept in cb->args[GS_DUMP_PIDNS] from the dump's
 * start to its end: one dump, one numbering.
 */
enum { GS_DUMP_WHO = 4, GS_DUMP_PIDNS = 5 };

/*
 * Whose clients' pid and command a dump shows, as /proc hides processes
 * (hidepid=) from whoever may not ptrace them: the sender's own (its
 * effective uid, as a client's uid is its opener's) and, with
 * CAP_SYS_PTRACE or CAP_NET_ADMIN, everyone's. Kept in
 * cb->args[GS_DUMP_WHO] from the dump's start, as the namespace is:
 * GS_DUMP_ALL, else the sender's euid. Checked without an audit record:
 * an ordinary user's listing is no denied attempt.
 */
#define GS_DUMP_ALL	(-1L)

static int gs_nl_dump_start(struct netlink_callback *cb)
{
	bool all = ns_capable_noaudit(&init_user_ns, CAP_SYS_PTRACE) ||
		   ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN);

	cb->args[GS_DUMP_WHO] = all ? GS_DUMP_ALL :
				      (long)__kuid_val(current_euid());
	cb->args[GS_DUMP_PIDNS] =
		(long)get_pid_ns(task_active_pid_ns(current));
	return 0;
}

/* May the sender of dump @cb see who opened the client of @s? */
static bool gs_dump_sees(struct netlink_callback *cb,
			 const struct gs_client_snap *s)
{
	long who = cb->args[GS_DUMP_WHO];

	return who == GS_DUMP_ALL || (long)__kuid_val(s->uid) == who;
}

static int gs_nl_dump_done(struct netlink_callback *cb)
{
	put_pid_ns((struct pid_namespace *)cb->args[GS_DUMP_PIDNS]);
	return 0;
}

static struct pid_namespace *gs_dump_pid_ns(struct netlink_callback *cb)
{
	return (struct pid_namespace *)cb->args[GS_DUMP_PIDNS];
}

/*
 * Uids and gids are those of the socket's user namespace, its opener's, as
 * the kernel's socket diagnostics give them: fixed for the socket's life,
 * whoever uses it.
 */
static struct user_namespace *gs_nl_user_ns(struct sk_buff *skb)
{
	return sk_user_ns(NETLINK_CB(skb).sk);
}

/* cb->args[0]: lowest index of the GPUs still to dump. */
static int gs_nl_get_gpu_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct gs_gpu *gpu;
	int err;

	while ((gpu = gs_gpu_next(cb->args[0]))) {
		err = gs_put_gpu(skb, gpu, gs_dump_pid_ns(cb),
				 NETLINK_CB(cb->skb).portid,
				 cb->nlh->nlmsg_seq, NLM_F_MULTI);
		cb->args[0] = gpu->index + (err ? 0 : 1);
		gs_gpu_put(gpu);
		if (err)
			break;
	}
	return skb->len;
}

static int gs_nl_set_gpu(struct sk_buff *skb, struct genl_info *info)
{
	struct gs_gpu *gpu = gs_nl_gpu(info, GPUSCHED_A_GPU_INDEX);
	u32 vals[GS_POL_NR_KNOBS] = {};
	unsigned int mask = 0;
	int i;

	int err;

	if (IS_ERR(gpu))
		return PTR_ERR(gpu);
	for (i = 0; i < GS_POL_NR_KNOBS; i++) {
		struct nlattr *a = info->attrs[gs_pol_knobs[i].nl_attr];

		if (a) {
			vals[i] = nla_get_u32(a);
			mask |= 1U << i;
		}
	}
	err = gs_gpu_set_knobs(gpu, vals, mask);
	gs_gpu_put(gpu);
	return err;
}

/*
 * Ids are given as seen from @pid (a number) and @ns; @pid < 0: the pid and
 * command are not the reader's to see (gs_dump_sees()), left out.
 */
static int gs_put_client(struct sk_buff *skb, const struct gs_client_snap *s,
			 pid_t pid, struct user_namespace *ns, u8 cmd,
			 u32 portid, u32 seq, int flags)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &gs_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, GPUSCHED_A_CLIENT_GPU, s->gpu_index) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_ID, s->id,
			      GPUSCHED_A_CLIENT_PAD) ||
	    (pid >= 0 &&
	     (nla_put_u32(skb, GPUSCHED_A_CLIENT_PID, pid) ||
	      nla_put_string(skb, GPUSCHED_A_CLIENT_COMM, s->comm))) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_UID, from_kuid_munged(ns, s->uid)) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_GID, from_kgid_munged(ns, s->gid)) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_CGROUP_ID, s->cgroup_id,
			      GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_WEIGHT, s->weight) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_CLASS, s->sched_class) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_CAP_PCT, s->cap_pct) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_STATE, s->state) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_HELD_NS, s->held_ns,
			      GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_GRANTS, s->grants,
			      GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_WAIT_NS_TOTAL,
			      s->wait_ns_total, GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_WAIT_NS_MAX,
			      s->wait_ns_max, GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_OVERRUNS, s->overruns,
			      GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_YIELDS, s->yields,
			      GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_POLICY_SET, s->policy_set) ||
	    nla_put_u32(skb, GPUSCHED_A_CLIENT_POLICY_LOWERED,
			s->policy_lowered) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_MEM_RESERVED,
			      s->mem_reserved, GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_MEM_LIMIT, s->mem_limit,
			      GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_MEM_REFUSED,
			      s->mem_refused, GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_MEM_TOTAL, s->mem_total,
			      GPUSCHED_A_CLIENT_PAD) ||
	    nla_put_u64_64bit(skb, GPUSCHED_A_CLIENT_GPU_NS, s->gpu_ns,
			      GPUSCHED_A_CLIENT_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static struct nlattr **gs_dump_attrs(struct netlink_callback *cb)
{
#ifdef GS_HAVE_GENL_INFO_DUMP
	/* 6.6 moved the parsed attributes into a genl_info. */
	return genl_info_dump(cb)->attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * cb->args[0]: index of the GPU being dumped; cb->args[1]: id of the last
 * client put. Clients join a GPU's list in increasing id order, so a dump
 * resumes after that id even if clients left in between.
 */
static int gs_nl_get_client_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	struct nlattr *filter = gs_dump_attrs(cb)[GPUSCHED_A_CLIENT_GPU];
	struct user_namespace *user_ns = gs_nl_user_ns(cb->skb);
	struct pid_namespace *ns = gs_dump_pid_ns(cb);
	struct gs_gpu *gpu;
	bool full = false;

	if (filter && cb->args[0] < nla_get_u32(filter))
		cb->args[0] = nla_get_u32(filter);
	while (!full && (gpu = filter ? gs_gpu_by_index(cb->args[0]) :
				       gs_gpu_next(cb->args[0]))) {
		unsigned int index = gpu->index;

		if (index != cb->args[0]) {	/* the next GPU */
			cb->args[0] = index;
			cb->args[1] = 0;
		}
		/*
		 * One client per hold of the token's lock, found after the
		 * last id put in O(log n): the hold does not grow with the
		 * clients, nor the dump with their square.
		 */
		for (;;) {
			struct gs_client_snap s;
			struct gs_client *c;
			pid_t pid;

			gs_gpu_lock(gpu);
			c = gs_client_after_locked(gpu, cb->args[1]);
			if (c) {
				gs_client_snap(gpu, c, &s, ktime_get_ns());
				get_pid(s.pid);
			}
			gs_gpu_unlock(gpu);
			if (!c)
				break;
			/* Not visible from the caller's namespace: not listed. */
			if (pid_nr_ns(s.pid, ns)) {
				pid = !gs_dump_sees(cb, &s) ? -1 :
				      gs_pid_nr(s.pid, ns);	/* 0 once exited */
				full = gs_put_client(skb, &s, pid, user_ns,
						     GPUSCHED_CMD_GET_CLIENT,
						     NETLINK_CB(cb->skb).portid,
						     cb->nlh->nlmsg_seq,
						     NLM_F_MULTI);
			}
			put_pid(s.pid);
			if (full)
				break;
			cb->args[1] = s.id;
		}
		gs_gpu_put(gpu);
		if (full || filter)
			break;
		cb->args[0] = index + 1;
		cb->args[1] = 0;
	}
	return skb->len;
}

static int gs_nl_set_client(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct gpusched_params p = {};
	struct pid *target = NULL;
	u32 pid = 0, only_gpu = U32_MAX, policy = 0, mem_pct = 0;
	unsigned int index;
	struct gs_gpu *gpu;
	int matched = 0, err = 0;
	u64 id = 0;

	if (attrs[GPUSCHED_A_CLIENT_ID])
		id = nla_get_u64(attrs[GPUSCHED_A_CLIENT_ID]);
	if (attrs[GPUSCHED_A_CLIENT_PID])
		pid = nla_get_u32(attrs[GPUSCHED_A_CLIENT_PID]);
	if (!id && !pid) {
		NL_SET_ERR_MSG(info->extack, "client ID or PID required");
		return -EINVAL;
	}
	if (attrs[GPUSCHED_A_CLIENT_GPU])
		only_gpu = nla_get_u32(attrs[GPUSCHED_A_CLIENT_GPU]);
	if (attrs[GPUSCHED_A_CLIENT_WEIGHT]) {
		p.mask |= GPUSCHED_PARAM_WEIGHT;
		p.weight = nla_get_u32(attrs[GPUSCHED_A_CLIENT_WEIGHT]);
	}
	if (attrs[GPUSCHED_A_CLIENT_CLASS]) {
		p.mask |= GPUSCHED_PARAM_CLASS;
		p.sched_class = nla_get_u32(attrs[GPUSCHED_A_CLIENT_CLASS]);
	}
	if (attrs[GPUSCHED_A_CLIENT_CAP_PCT]) {
		p.mask |= GPUSCHED_PARAM_CAP;
		p.cap_pct = nla_get_u32(attrs[GPUSCHED_A_CLIENT_CAP_PCT]);
	}
	if (attrs[GPUSCHED_A_CLIENT_MEM_LIMIT] &&
	    attrs[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT],
				    "MEM_LIMIT and MEM_LIMIT_PCT exclude each other");
		return -EINVAL;
	}
	if (attrs[GPUSCHED_A_CLIENT_MEM_LIMIT]) {
		p.mask |= GPUSCHED_PARAM_MEM_LIMIT;
		p.mem_limit = nla_get_u64(attrs[GPUSCHED_A_CLIENT_MEM_LIMIT]);
	}
	if (attrs[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT]) {
		/* Resolved per client, against the memory it reported. */
		p.mask |= GPUSCHED_PARAM_MEM_LIMIT;
		mem_pct = nla_get_u32(attrs[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT]);
	}
	if (!p.mask) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to set: give WEIGHT, CLASS, CAP_PCT, MEM_LIMIT or MEM_LIMIT_PCT");
		return -EINVAL;
	}
	if (attrs[GPUSCHED_A_CLIENT_POLICY_SET]) {
		struct nlattr *a = attrs[GPUSCHED_A_CLIENT_POLICY_SET];

		policy = nla_get_u32(a);
		if (policy & ~GS_PARAM_MASK) {
			NL_SET_ERR_MSG_ATTR(info->extack, a, "unknown parameter bit");
			return -EOPNOTSUPP;
		}
		if (policy & ~p.mask) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "marks a parameter this request does not set");
			return -EINVAL;
		}
	}

	/*
	 * The process a pid names now: a client whose opener has exited
	 * holds another struct pid, so a reused number does not match it.
	 */
	if (pid) {
		rcu_read_lock();
		target = get_pid(find_pid_ns(pid, ns));
		rcu_read_unlock();
		if (!target || !pid_has_task(target, PIDTYPE_TGID))
			goto out;
	}
	index = 0;
	while (!err && (gpu = gs_gpu_next(index))) {
		u64 after = id ? id - 1 : 0;

		index = gpu->index + 1;
		if (only_gpu != U32_MAX && gpu->index != only_gpu) {
			gs_gpu_put(gpu);
			continue;
		}
		/* Each client found in O(log n), one per hold of the lock. */
		for (;;) {
			struct gs_client *c;

			gs_gpu_lock(gpu);
			c = target ? gs_client_of_pid_after_locked(gpu, target, after) :
				     gs_client_after_locked(gpu, after);
			if (c && id && c->id != id)
				c = NULL;
			if (c && mem_pct) {
				err = gs_mem_limit_pct(&c->pol, mem_pct, &p.mem_limit);
				if (err)
					NL_SET_ERR_MSG_ATTR(info->extack,
							    attrs[GPUSCHED_A_CLIENT_MEM_LIMIT_PCT],
							    "a client matched reported no device memory");
			}
			if (c && !err) {
				after = c->id;
				err = gs_client_admin_set_locked(gpu, c, &p, policy);
				matched += !err;
			}
			gs_gpu_unlock(gpu);
			if (!c || err || id)
				break;
		}
		gs_gpu_put(gpu);
	}
out:
	put_pid(target);
	if (!err && !matched) {
		NL_SET_ERR_MSG(info->extack, "no such client");
		err = -ESRCH;
	}
	return err;
}

static const struct genl_ops gs_nl_ops[] = {
	{
		.cmd = GPUSCHED_CMD_GET_GPU,
		.doit = gs_nl_get_gpu_doit,
		.start = gs_nl_dump_start,
		.dumpit = gs_nl_get_gpu_dumpit,
		.done = gs_nl_dump_done,
		.policy = gs_get_gpu_policy,
		.maxattr = GPUSCHED_A_GPU_MAX,
	},
	{
		.cmd = GPUSCHED_CMD_SET_GPU,
		.doit = gs_nl_set_gpu,
		.policy = gs_set_gpu_policy,
		.maxattr = GPUSCHED_A_GPU_MAX,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = GPUSCHED_CMD_GET_CLIENT,
		.start = gs_nl_dump_start,
		.dumpit = gs_nl_get_client_dumpit,
		.done = gs_nl_dump_done,
		.policy = gs_get_client_policy,
		.maxattr = GPUSCHED_A_CLIENT_MAX,
	},
	{
		.cmd = GPUSCHED_CMD_SET_CLIENT,
		.doit = gs_nl_set_client,
		.policy = gs_set_client_policy,
		.maxattr = GPUSCHED_A_CLIENT_MAX,
		.flags = GENL_ADMIN_PERM,
	},
};

enum { GS_MCGRP_EVENTS };

static const struct genl_multicast_group gs_nl_mcgrps[] = {
	/* Events name other users' processes: admins only. */
	[GS_MCGRP_EVENTS] = { .name = GPUSCHED_GENL_MCGRP_EVENTS,
			      .flags = GENL_MCAST_CAP_NET_ADMIN },
};

static struct genl_family gs_family __ro_after_init = {
	.name = GPUSCHED_GENL_NAME,
	.version = GPUSCHED_GENL_VERSION,
	.module = THIS_MODULE,
	.ops = gs_nl_ops,
	.n_ops = ARRAY_SIZE(gs_nl_ops),
	.mcgrps = gs_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(gs_nl_mcgrps),
	/* Every command validates the header's reserved fields. */
	.resv_start_op = 0,
	/*
	 * No genl_mutex: every operation takes the tokens' list mutex and
	 * each token's lock itself, and dumps keep their place in cb->args.
	 */
	.parallel_ops = true,
};

/* What gs_put_client() puts, so that events cost listeners no more. */
static size_t gs_client_msg_size(void)
{
	return nla_total_size(sizeof(u32)) * 10 +	/* u32 attributes */
	       nla_total_size_64bit(sizeof(u64)) * 13 +	/* u64 attributes */
	       nla_total_size(TASK_COMM_LEN);		/* comm */
}

/**
 * gs_netlink_event() - multicast a client event to the "events" group
 * @cmd: GPUSCHED_CMD_EV_ATTACH, _EV_DETACH or _EV_OVERRUN
 * @s: the client, as gs_client_snap() copied it
 *
 * Called in process context, outside the GPUs' locks (overruns from a
 * work item). An event that cannot be built is not dropped silently: the
 * listeners get ENOBUFS, as when their socket overflows, and know to
 * resync with a dump.
 */
void gs_netlink_event(u8 cmd, const struct gs_client_snap *s)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&gs_family, &init_net, GS_MCGRP_EVENTS))
		return;
	might_sleep();
	msg = genlmsg_new(gs_client_msg_size(), GFP_KERNEL);
	if (!msg)
		goto lost;
	if (gs_put_client(msg, s, gs_pid_nr(s->pid, &init_pid_ns), &init_user_ns,
			  cmd, 0, 0, 0)) {
		nlmsg_free(msg);
		goto lost;
	}
	genlmsg_multicast(&gs_family, msg, 0, GS_MCGRP_EVENTS, GFP_KERNEL);
	return;

lost:
	genl_set_err(&gs_family, &init_net, 0, GS_MCGRP_EVENTS, -ENOBUFS);
}

/**
 * gs_netlink_init() - register the generic netlink family "gpusched"
 *
 * Return: 0 or what genl_register_family() returned.
 */
int gs_netlink_init(void)
{
	int i;

	for (i = 0; i < GS_POL_NR_KNOBS; i++) {
		gs_knob_range[i].min = gs_pol_knobs[i].min;
		gs_knob_range[i].max = gs_pol_knobs[i].max;
	}
	return genl_register_family(&gs_family);
}

/**
 * gs_netlink_exit() - unregister the family; no request runs after it
 */
void gs_netlink_exit(void)
{
	genl_unregister_family(&gs_family);
}
