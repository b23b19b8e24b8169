/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * gpusched: one fair-share token per GPU, so that processes that each own a
 * CUDA context take turns on the GPU at kernel-launch boundaries instead of
 * leaving the driver to time-slice between them.
 *
 * This header is the whole contract between the module (gpusched.ko), the
 * user-space arbiter (gpuschedd --arbiter) and their clients (libgpusched,
 * gpuschedctl, the tests). Both token services implement it.
 *
 * Clients
 * -------
 * Every open file of /dev/gpusched is one client. A client attaches to one
 * GPU, named by its 16-byte UUID (the bytes of CUuuid; ordinals change with
 * CUDA_VISIBLE_DEVICES and containers, UUIDs do not). The module creates the
 * GPU's token on the first attach of a UUID, up to the module parameter
 * max_gpus. Closing the file, including by process death, releases the
 * token if held and removes the client.
 *
 * ABI version 2
 * -------------
 * GPUSCHED_ABI_VERSION is reported by GET_INFO (@abi_version) and on the
 * status page (@version is GPUSCHED_STATUS_VERSION). Version 2 changed the
 * sizes of the ioctl structs, and so the ioctl numbers: a client built for
 * version 1 gets ENOTTY and must be rebuilt. Version 1 was never declared
 * stable, so there is no compatibility path. Optional behaviour within a
 * version is announced by feature bits (enum gpusched_features) in GET_INFO
 * (@features) and on the status page (@features), never by a field being
 * 0 "on an older module".
 *
 * The ioctl magic is 0xE7 (GPUSCHED_IOC_MAGIC), numbers 0x00-0x07. It is
 * to be registered in the kernel's
 * Documentation/userspace-api/ioctl/ioctl-number.rst when the module is
 * submitted. _IOW/_IOR encode each struct's size and direction as well,
 * so an ioctl meant for another device that reaches this one is refused
 * with ENOTTY unless magic, number, size and direction all match.
 *
 * ioctls (all return 0 or -1 with errno; every struct is copied in or out at
 * exactly its size, and reserved fields and unknown flag bits must be zero:
 * unknown flag bits give EOPNOTSUPP, non-zero reserved fields EINVAL; every
 * struct keeps reserved room for later fields)
 *
 * GPUSCHED_IOC_ATTACH (struct gpusched_attach, in)
 *	Attach this client to the GPU with @uuid. EBUSY if already attached,
 *	ENOSPC if max_gpus tokens exist and @uuid is new, EUSERS if the
 *	file's opener (its effective uid) has max_clients_per_uid clients
 *	on this GPU already (module parameter; CAP_SYS_RESOURCE is exempt).
 *	@mem_total is the device memory the client's driver reports for
 *	that GPU (cuDeviceTotalMem), 0 if unknown; limits given in percent
 *	resolve against it (see "Device memory").
 *
 * GPUSCHED_IOC_ACQUIRE (struct gpusched_acquire, in)
 *	Wait until the policy grants this client the token. A signal ends
 *	the wait (EINTR when a handler ran; the call is restarted after a
 *	stop, ptrace or the freezer, and a timed wait then waits only for
 *	what is left of @timeout_ns). With GPUSCHED_ACQUIRE_TIMEOUT, wait at
 *	most @timeout_ns (ETIMEDOUT); without it @timeout_ns must be 0. With
 *	GPUSCHED_ACQUIRE_NONBLOCK, do not wait (EAGAIN); it excludes
 *	GPUSCHED_ACQUIRE_TIMEOUT (EINVAL). EALREADY if the client holds the
 *	token, ENOTCONN before ATTACH, EBUSY if another thread of the same
 *	file waits already. If the client was holding and asked to yield,
 *	use YIELD instead.
 *	With GPUSCHED_ACQUIRE_DUE (GPUSCHED_FEAT_DUE), the caller asks ahead
 *	of its need: its work comes @due_us microseconds from the call. The
 *	holder asked to yield for it sees when on its status page
 *	(@yield_due_ns) and may leave the work that ends by then running.
 *	Without the flag @due_us must be 0.
 *	With GPUSCHED_ACQUIRE_NUDGE (GPUSCHED_FEAT_NUDGE), the caller does
 *	not wait and is not queued: it is of the latency class and has
 *	launched work beside the holder, without the token. The holder is
 *	asked to let its queue run out once (@nudge_ns on its page) and
 *	then goes on holding: the driver runs the caller's work in between,
 *	and the token never changes hands. 0 when the holder was nudged;
 *	EALREADY when no other client holds the token; EPERM when the
 *	caller is not of the latency class; EBUSY when the class's budget
 *	(latency_pct) is spent. It excludes the other flags and YIELD
 *	(EINVAL). @gpu_ns is charged as for ACQUIRE, and spends the latency
 *	class's budget. With GPUSCHED_FEAT_NUDGE_AGE, @age_ns says how long
 *	before the call the caller launched that work: @nudge_ns is then
 *	that time, not the call's, so that the holder knows when the work
 *	was queued. Without GPUSCHED_ACQUIRE_NUDGE @age_ns must be 0.
 *	With GPUSCHED_ACQUIRE_NUDGE_DONE (GPUSCHED_FEAT_NUDGE_DONE), the
 *	caller, which nudged the holder last, says that the work it nudged
 *	for has ended: the holder's page then shows @nudge_done_ns equal to
 *	@nudge_ns, and a holder still letting its queue run out for that
 *	work launches on. It does not wait, is not queued and spends no
 *	budget. 0 when the holder was told; EALREADY when no other client
 *	holds the token; EPERM when the caller is not of the latency class;
 *	ENOENT when the caller's nudge is not the holder's last, or was
 *	answered already (another client nudged since, or the token changed
 *	hands). It excludes the other flags and YIELD (EINVAL); @gpu_ns is
 *	taken as for a nudge.
 *	@gpu_ns (GPUSCHED_FEAT_GPU_TIME): see "GPU time" below.
 *
 * GPUSCHED_IOC_RELEASE (struct gpusched_release, in)
 *	Give the token back. The grant is charged to the client (see "GPU
 *	time"). EPERM if the client does not hold the token (it may have been
 *	revoked); a @gpu_ns report is still taken then.
 *
 * GPUSCHED_IOC_YIELD (struct gpusched_acquire, in)
 *	RELEASE if holding, then ACQUIRE, as one step: the client is queued
 *	again before anyone else can be granted, so a yielding holder that
 *	still has work never drops out of the competition.
 *
 * GPUSCHED_IOC_SET_PARAMS (struct gpusched_params, in)
 *	Change the fields named in @mask of the caller's own client. Like
 *	nice(2), a caller without CAP_SYS_NICE may only lower its own share:
 *	a smaller weight, a lower class (latency -> normal -> batch), a cap
 *	that is set or smaller, a memory limit (@mem_limit,
 *	GPUSCHED_PARAM_MEM_LIMIT) that is set where the client had none or
 *	smaller. Anything else gives EPERM and changes nothing. EINVAL for a
 *	value out of range.
 *
 * GPUSCHED_IOC_GET_INFO (struct gpusched_client_info, out)
 *	The caller's own accounting and parameters, the service's
 *	@abi_version and @features.
 *
 * GPUSCHED_IOC_MEM_RESERVE (struct gpusched_mem, in; GPUSCHED_FEAT_MEM)
 *	Add @bytes to the caller's reservation of device memory on its GPU.
 *	EDQUOT if the reservation would then exceed the client's effective
 *	limit: nothing changes and the client's @mem_refused count goes up
 *	by one. EINVAL for @bytes 0 or a sum that overflows, ENOTCONN before
 *	ATTACH. Needs no token and never blocks.
 *
 * GPUSCHED_IOC_MEM_RETURN (struct gpusched_mem, in; GPUSCHED_FEAT_MEM)
 *	Subtract @bytes from the caller's reservation. EINVAL for @bytes 0
 *	or more than is reserved (nothing changes), ENOTCONN before ATTACH.
 *
 * Device memory
 * -------------
 * The token services keep the accounting of device memory; the client's
 * library enforces it. A library that supports it (GPUSCHED_FEAT_MEM)
 * reserves with MEM_RESERVE before it asks the driver for memory, returns
 * the reservation if the driver fails and again when the memory is freed,
 * and fails an allocation that MEM_RESERVE refuses. This is cooperative:
 * a process that allocates without the library (or bypasses it) is not
 * limited, and what the driver keeps for the context itself is not
 * counted. Closing the file, and so process death, returns everything.
 *
 * A client's effective limit is its own limit if one is set (SET_PARAMS,
 * or an administrator's SET_CLIENT), else the GPU's default, the knob
 * mem_default_pct percent of the client's @mem_total (0: none). Where
 * @mem_total is known and the GPU's knob mem_reserve_mb is not 0, the
 * limit is then at most @mem_total less that reserve, so that no limit
 * claims it (and a client with no limit gets that one). 0 means no limit.
 * A limit lowered below what the client has reserved refuses further
 * reservations but takes nothing back. The status page carries the
 * reservation and the effective limit (@mem_reserved, @mem_limit), kept
 * current under @seq whenever either changes, so a library can report
 * them (e.g. in cuMemGetInfo); only MEM_RESERVE's check is authoritative.
 *
 * GPU time
 * --------
 * A token cannot stop work that the holder queued: a client that hands the
 * token over early may leave kernels running on the GPU. So the client
 * reports, in @gpu_ns of ACQUIRE, YIELD and RELEASE, the GPU time of its
 * own work that completed since its previous report, measured on the GPU's
 * clock (e.g. cuEventElapsedTime between events it recorded itself); 0 is
 * nothing to report. Each grant is charged the larger of the time it held
 * the token and the GPU time reported for it. A report belongs to the
 * client's current grant, or to its last one when it holds none (it is
 * taken before an ACQUIRE or YIELD waits). A report is taken by every call
 * that gets past the argument checks (any result but EFAULT, EINVAL,
 * EOPNOTSUPP, ENOTCONN). Reports only ever raise the reporter's own charge,
 * so a client that reports too much only lowers its own share, and one that
 * reports too little is still charged the time it held the token. Each
 * report is clamped to 2^40 ns.
 *
 * Status page
 * -----------
 * mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ, MAP_SHARED, fd,
 *      GPUSCHED_STATUS_OFFSET) maps struct gpusched_status, which the token
 * service keeps current. It is read-only: a writable mapping gives EPERM, a
 * private one (MAP_PRIVATE) EINVAL, any other length or offset EINVAL. It is
 * not inherited across fork(). The mapping does not keep the client: close()
 * of the file releases the token even while the page is mapped, and the
 * page then keeps its last contents. Read @flags with an acquire load: while
 * GPUSCHED_ST_HOLDING is set and GPUSCHED_ST_YIELD is not, the client may
 * launch without a system call. @seq is a sequence count: the service makes
 * it odd before it changes any field and even again after, so a reader that
 * needs several fields consistent reads @seq (acquire), the fields, then
 * @seq again (after an acquire fence), and retries while it was odd or
 * changed. Times are CLOCK_MONOTONIC nanoseconds.
 *
 * Generic netlink family "gpusched"
 * ---------------------------------
 * Version GPUSCHED_GENL_VERSION. Reads need no privilege; every command that
 * changes state needs CAP_NET_ADMIN (GENL_ADMIN_PERM), and so does joining
 * the "events" multicast group. Pids are given and reported in the pid
 * namespace of the process that sent the request, for a whole dump however
 * many processes read it; clients not visible there are not listed. Uids
 * and gids are reported in the user namespace of the socket's opener,
 * whoever uses the socket. Unknown
 * attributes (and those of another command), wrong types and out-of-range
 * values are rejected (strict validation, one policy per command) with an
 * extended ack naming the attribute.
 *
 * GPUSCHED_CMD_GET_GPU (dump, or do with GPUSCHED_A_GPU_INDEX)
 *	Reply per GPU: GPUSCHED_A_GPU_* : INDEX, UUID, the knobs (TIMESLICE_US,
 *	GRACE_US, MIN_GRANT_US, STARVE_US, WINDOW_US, LATENCY_PCT,
 *	LATENCY_QUEUE_US, HANDOVER_US, MEM_DEFAULT_PCT, MEM_RESERVE_MB) and
 *	the state (NR_CLIENTS, NR_WAITING, HOLDER_PID, GRANTS, OVERRUNS,
 *	HELD_NS, MEM_RESERVED: the sum of its clients' reservations).
 *
 *	MEM_DEFAULT_PCT (0..100, 0: none) is the limit, in percent of a
 *	client's mem_total, of clients without their own; MEM_RESERVE_MB
 *	(MiB) is device memory that no limit may claim (see "Device memory").
 *
 *	LATENCY_QUEUE_US and HANDOVER_US are what the service promises a
 *	latency-class client, and every client sees them on its status page
 *	(@latency_queue_ns, @handover_ns): while a latency-class client is
 *	attached, a holder keeps at most LATENCY_QUEUE_US of GPU time queued;
 *	a holder that yields may leave at most HANDOVER_US of work running.
 *
 * GPUSCHED_CMD_SET_GPU (do, admin)
 *	GPUSCHED_A_GPU_INDEX (required) and any knobs; all are validated
 *	together and applied at once, or none is (EINVAL).
 *
 * GPUSCHED_CMD_GET_CLIENT (dump; optional GPUSCHED_A_CLIENT_GPU filter)
 *	Reply per client: GPUSCHED_A_CLIENT_* : GPU, ID (unique for the life
 *	of the module, never 0), PID (0 once the opener has exited), COMM,
 *	UID, GID, CGROUP_ID, WEIGHT, CLASS, CAP_PCT, STATE, HELD_NS, GRANTS,
 *	WAIT_NS_TOTAL, WAIT_NS_MAX, OVERRUNS, YIELDS, POLICY_SET,
 *	POLICY_LOWERED, MEM_RESERVED, MEM_LIMIT (the effective limit, 0:
 *	none), MEM_REFUSED (MEM_RESERVEs refused), MEM_TOTAL (the client's
 *	mem_total, 0: unknown), GPU_NS (the GPU time the client reported,
 *	all grants: see "GPU time"; absent from modules older than
 *	2026-12-03). Large dumps span several messages.
 *
 *	PID and COMM are left out for clients of another user (an effective
 *	uid other than the sender's) unless the sender has CAP_SYS_PTRACE or
 *	CAP_NET_ADMIN, as /proc's hidepid= hides their processes.
 *
 *	POLICY_SET and POLICY_LOWERED are masks of GPUSCHED_PARAM_* that say
 *	where the client's values came from, so that a policy daemon that
 *	starts again can take back what its predecessor gave:
 *	POLICY_SET: the value a SET_CLIENT marked as the policy's, unchanged
 *	since; POLICY_LOWERED: such a value that the client then lowered
 *	itself with SET_PARAMS (without CAP_SYS_NICE), so that it is its own
 *	only as far as it is below what the client would have without the
 *	policy. Any other change of a field (SET_PARAMS with CAP_SYS_NICE,
 *	SET_CLIENT without the mark) clears both bits of that field.
 *
 * GPUSCHED_CMD_SET_CLIENT (do, admin)
 *	GPUSCHED_A_CLIENT_ID or GPUSCHED_A_CLIENT_PID (every client of that
 *	process; with GPUSCHED_A_CLIENT_GPU, only on that GPU), and any of
 *	WEIGHT, CLASS, CAP_PCT, and MEM_LIMIT (bytes, 0: none) or
 *	MEM_LIMIT_PCT (1..100 of each client's mem_total; EINVAL at the
 *	first client matched that reported none), not both.
 *	ESRCH if nothing matches. Optional POLICY_SET: which of the fields
 *	set are the policy's (see above; GPUSCHED_PARAM_MEM_LIMIT for either
 *	memory attribute); EOPNOTSUPP for an unknown bit, EINVAL for a field
 *	not set.
 *
 * Events (multicast group "events"), with the attributes of a GET_CLIENT
 * reply for the client, PID as in the initial pid namespace, UID and GID as
 * in the initial user namespace (a detach carries the client's totals:
 * HELD_NS, GPU_NS, the memory it still held):
 *	GPUSCHED_CMD_EV_ATTACH, GPUSCHED_CMD_EV_DETACH, GPUSCHED_CMD_EV_OVERRUN
 *	(the last with OVERRUNS).
 *
 * User-space arbiter
 * ------------------
 * gpuschedd --arbiter serves the same ioctls, structs and status page on a
 * Unix socket. Its wire format and socket path are not kernel ABI: they are
 * in include/gpusched/arbiter_wire.h of the gpusched sources.
 */
#ifndef _UAPI_LINUX_GPUSCHED_H
#define _UAPI_LINUX_GPUSCHED_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define GPUSCHED_ABI_VERSION	2
#define GPUSCHED_DEVICE_PATH	"/dev/gpusched"
#define GPUSCHED_UUID_LEN	16

/* What a service of this ABI version can do beyond the version's base. */
enum gpusched_features {
	GPUSCHED_FEAT_DUE = 1U << 0,	/* GPUSCHED_ACQUIRE_DUE, yield_due_ns */
	GPUSCHED_FEAT_GPU_TIME = 1U << 1,	/* @gpu_ns reports are charged */
	GPUSCHED_FEAT_MEM = 1U << 2,	/* MEM_RESERVE/RETURN, mem_* fields */
	GPUSCHED_FEAT_NUDGE = 1U << 3,	/* GPUSCHED_ACQUIRE_NUDGE, nudge_ns */
	GPUSCHED_FEAT_NUDGE_AGE = 1U << 4,	/* a nudge's @age_ns */
	GPUSCHED_FEAT_NUDGE_DONE = 1U << 5,	/* ACQUIRE_NUDGE_DONE, nudge_done_ns */
};

enum gpusched_class {
	GPUSCHED_CLASS_LATENCY = 0,	/* preempts at the next launch, bounded */
	GPUSCHED_CLASS_NORMAL = 1,	/* weighted fair share (default) */
	GPUSCHED_CLASS_BATCH = 2,	/* runs when the others do not want it */
	__GPUSCHED_CLASS_MAX
};

#define GPUSCHED_CLASS_MAX	(__GPUSCHED_CLASS_MAX - 1)

#define GPUSCHED_WEIGHT_MIN	1
#define GPUSCHED_WEIGHT_MAX	10000
#define GPUSCHED_WEIGHT_DEFAULT	100
#define GPUSCHED_CAP_NONE	0	/* cap_pct: 1..100, or no cap */
#define GPUSCHED_MEM_LIMIT_NONE	0	/* mem_limit: bytes, or no limit */

struct gpusched_attach {
	__u8 uuid[GPUSCHED_UUID_LEN];
	__u32 flags;			/* none defined: must be 0 */
	__u32 reserved0;
	__u64 mem_total;		/* device memory in bytes; 0: unknown */
	__u64 reserved[1];
};

/*
 * Flag and mask sets grow: a service refuses bits it does not know
 * (EOPNOTSUPP), so no "all bits" mask is part of the ABI.
 */
enum gpusched_acquire_flags {
	GPUSCHED_ACQUIRE_NONBLOCK = 1U << 0,
	GPUSCHED_ACQUIRE_TIMEOUT = 1U << 1,
	GPUSCHED_ACQUIRE_DUE = 1U << 2,
	GPUSCHED_ACQUIRE_NUDGE = 1U << 3,
	GPUSCHED_ACQUIRE_NUDGE_DONE = 1U << 4,
};

/* ACQUIRE and YIELD */
struct gpusched_acquire {
	__u64 timeout_ns;		/* relative; with GPUSCHED_ACQUIRE_TIMEOUT */
	__u32 flags;			/* enum gpusched_acquire_flags */
	__u32 due_us;			/* relative; with GPUSCHED_ACQUIRE_DUE */
	__u64 gpu_ns;			/* GPU time since the last report; 0: none */
	__u64 age_ns;			/* with GPUSCHED_ACQUIRE_NUDGE */
	__u64 reserved[1];
};

struct gpusched_release {
	__u32 flags;			/* none defined: must be 0 */
	__u32 reserved0;
	__u64 gpu_ns;			/* GPU time since the last report; 0: none */
	__u64 reserved[2];
};

enum gpusched_params_mask {
	GPUSCHED_PARAM_WEIGHT = 1U << 0,
	GPUSCHED_PARAM_CLASS = 1U << 1,
	GPUSCHED_PARAM_CAP = 1U << 2,
	GPUSCHED_PARAM_MEM_LIMIT = 1U << 3,
};

struct gpusched_params {
	__u32 mask;			/* enum gpusched_params_mask */
	__u32 weight;			/* GPUSCHED_WEIGHT_MIN..MAX */
	__u32 sched_class;		/* enum gpusched_class */
	__u32 cap_pct;			/* 1..100, or GPUSCHED_CAP_NONE */
	__u64 mem_limit;		/* bytes, or GPUSCHED_MEM_LIMIT_NONE */
	__u64 reserved[1];
};

/* MEM_RESERVE and MEM_RETURN */
struct gpusched_mem {
	__u64 bytes;
	__u32 flags;			/* none defined: must be 0 */
	__u32 reserved0;
	__u64 reserved[2];
};

enum gpusched_client_state {
	GPUSCHED_STATE_DETACHED = 0,
	GPUSCHED_STATE_IDLE = 1,
	GPUSCHED_STATE_WAITING = 2,
	GPUSCHED_STATE_HOLDING = 3,
};

struct gpusched_client_info {
	__u32 size;			/* sizeof(struct gpusched_client_info) */
	__u32 state;			/* enum gpusched_client_state */
	__u8 uuid[GPUSCHED_UUID_LEN];
	__u32 weight;
	__u32 sched_class;		/* enum gpusched_class */
	__u32 cap_pct;
	__u32 gpu_index;		/* the GPU's sysfs directory gpu<N> */
	/* time charged, all grants: per grant, max(held, GPU time reported) */
	__u64 held_ns;
	__u64 grants;
	__u64 wait_ns_total;
	__u64 wait_ns_max;
	__u64 overruns;			/* grants revoked after the grace time */
	__u64 yields;			/* yield requests received */
	__u32 abi_version;		/* GPUSCHED_ABI_VERSION of the service */
	__u32 features;			/* enum gpusched_features */
	__u64 gpu_ns;			/* GPU time reported, all grants */
	/* GPUSCHED_FEAT_MEM: device memory, in bytes */
	__u64 mem_reserved;		/* reserved now */
	__u64 mem_limit;		/* effective limit; 0: none */
	__u64 mem_refused;		/* MEM_RESERVEs refused (EDQUOT) */
	__u64 reserved[1];
};

enum gpusched_status_flags {
	GPUSCHED_ST_ATTACHED = 1U << 0,
	GPUSCHED_ST_HOLDING = 1U << 1,
	GPUSCHED_ST_YIELD = 1U << 2,	/* release at the next launch */
	GPUSCHED_ST_REVOKED = 1U << 3,	/* the last grant was revoked */
};

#define GPUSCHED_STATUS_VERSION	2
#define GPUSCHED_STATUS_SIZE	4096
#define GPUSCHED_STATUS_OFFSET	0

struct gpusched_status {
	__u32 version;			/* GPUSCHED_STATUS_VERSION */
	__u32 size;			/* sizeof(struct gpusched_status) */
	__u32 flags;			/* enum gpusched_status_flags */
	__u32 seq;			/* sequence count: odd while changing */
	__u64 grant_gen;		/* number of this client's current grant */
	__u64 slice_end_ns;		/* CLOCK_MONOTONIC end of the slice */
	__u64 grace_ns;			/* time allowed to release once asked */
	/*
	 * Current on the holder's page, which is what needs them (is anyone
	 * waiting?); on other pages, as of this client's last change.
	 */
	__u32 nr_waiting;		/* clients waiting on this GPU */
	__u32 nr_clients;		/* clients attached to this GPU */
	__u64 held_ns;			/* as in gpusched_client_info */
	__u64 overruns;
	/*
	 * Latency-class clients attached (current where nr_clients is): a
	 * holder keeps at most @latency_queue_ns queued while one is.
	 */
	__u32 nr_latency;
	/*
	 * This client's class (enum gpusched_class) plus one, as it or an
	 * administrator (the policy daemon's rules) last set it; 0 only
	 * before ATTACH. A library learns from it a class it was not started
	 * with.
	 */
	__u32 class_plus_one;
	/*
	 * CLOCK_MONOTONIC time at which this holder was asked to yield,
	 * while YIELD is set; 0 otherwise. The holder learns from it when,
	 * not just that, a waiter came: a latency-class client's period.
	 */
	__u64 yield_ns;
	/*
	 * While YIELD is set: when the waiters need the GPU, where every one
	 * of them said so (GPUSCHED_ACQUIRE_DUE); 0 when one needs it now, and
	 * otherwise. Work of the holder's that ends by then delays nobody.
	 */
	__u64 yield_due_ns;
	__u32 features;			/* enum gpusched_features */
	__u32 reserved0;
	/*
	 * The GPU's promises to latency-class clients (its knobs
	 * latency_queue_us and handover_us): GPU time a holder keeps queued
	 * at most while a latency-class client is attached, and work a
	 * holder may leave running when it yields.
	 */
	__u64 latency_queue_ns;
	__u64 handover_ns;
	/*
	 * GPUSCHED_FEAT_MEM: this client's reservation and effective limit
	 * (0: none) in bytes, current whenever either changes.
	 */
	__u64 mem_reserved;
	__u64 mem_limit;
	/*
	 * GPUSCHED_FEAT_NUDGE: CLOCK_MONOTONIC time of the last nudge of this
	 * client (GPUSCHED_ACQUIRE_NUDGE) while it held the token, 0: none;
	 * with GPUSCHED_FEAT_NUDGE_AGE, when the nudging client launched its
	 * work (@age_ns before the nudge), but never the same time twice.
	 * A holder that sees it change lets its queue run out once, so that
	 * the latency-class work queued beside it runs, then launches on.
	 */
	__u64 nudge_ns;
	/*
	 * GPUSCHED_FEAT_NUDGE_DONE: @nudge_ns as it was when the client
	 * that nudged last said its work had ended (ACQUIRE_NUDGE_DONE).
	 * While it equals @nudge_ns, the latency-class work of the last
	 * nudge is done: a holder letting its queue run out for it may
	 * launch on at once.
	 */
	__u64 nudge_done_ns;
	__u64 reserved[4];
};

#define GPUSCHED_IOC_MAGIC	0xE7

#define GPUSCHED_IOC_ATTACH	_IOW(GPUSCHED_IOC_MAGIC, 0x00, struct gpusched_attach)
#define GPUSCHED_IOC_ACQUIRE	_IOW(GPUSCHED_IOC_MAGIC, 0x01, struct gpusched_acquire)
#define GPUSCHED_IOC_RELEASE	_IOW(GPUSCHED_IOC_MAGIC, 0x02, struct gpusched_release)
#define GPUSCHED_IOC_YIELD	_IOW(GPUSCHED_IOC_MAGIC, 0x03, struct gpusched_acquire)
#define GPUSCHED_IOC_SET_PARAMS	_IOW(GPUSCHED_IOC_MAGIC, 0x04, struct gpusched_params)
#define GPUSCHED_IOC_GET_INFO	_IOR(GPUSCHED_IOC_MAGIC, 0x05, struct gpusched_client_info)
#define GPUSCHED_IOC_MEM_RESERVE	_IOW(GPUSCHED_IOC_MAGIC, 0x06, struct gpusched_mem)
#define GPUSCHED_IOC_MEM_RETURN	_IOW(GPUSCHED_IOC_MAGIC, 0x07, struct gpusched_mem)

/* Generic netlink family; Documentation/netlink/specs/gpusched.yaml. */
#define GPUSCHED_GENL_NAME		"gpusched"
#define GPUSCHED_GENL_VERSION		1
#define GPUSCHED_GENL_MCGRP_EVENTS	"events"

enum gpusched_cmd {
	GPUSCHED_CMD_UNSPEC,
	GPUSCHED_CMD_GET_GPU,
	GPUSCHED_CMD_SET_GPU,
	GPUSCHED_CMD_GET_CLIENT,
	GPUSCHED_CMD_SET_CLIENT,
	GPUSCHED_CMD_EV_ATTACH,
	GPUSCHED_CMD_EV_DETACH,
	GPUSCHED_CMD_EV_OVERRUN,
	__GPUSCHED_CMD_MAX
};

#define GPUSCHED_CMD_MAX	(__GPUSCHED_CMD_MAX - 1)

enum gpusched_gpu_attrs {
	GPUSCHED_A_GPU_UNSPEC,
	GPUSCHED_A_GPU_PAD,
	GPUSCHED_A_GPU_INDEX,		/* u32 */
	GPUSCHED_A_GPU_UUID,		/* binary, GPUSCHED_UUID_LEN */
	GPUSCHED_A_GPU_TIMESLICE_US,	/* u32 */
	GPUSCHED_A_GPU_GRACE_US,	/* u32 */
	GPUSCHED_A_GPU_MIN_GRANT_US,	/* u32 */
	GPUSCHED_A_GPU_STARVE_US,	/* u32 */
	GPUSCHED_A_GPU_WINDOW_US,	/* u32 */
	GPUSCHED_A_GPU_LATENCY_PCT,	/* u32 */
	GPUSCHED_A_GPU_NR_CLIENTS,	/* u32 */
	GPUSCHED_A_GPU_NR_WAITING,	/* u32 */
	GPUSCHED_A_GPU_HOLDER_PID,	/* u32, 0: free */
	GPUSCHED_A_GPU_GRANTS,		/* u64 */
	GPUSCHED_A_GPU_OVERRUNS,	/* u64 */
	GPUSCHED_A_GPU_HELD_NS,		/* u64 */
	GPUSCHED_A_GPU_LATENCY_QUEUE_US,	/* u32 */
	GPUSCHED_A_GPU_HANDOVER_US,	/* u32 */
	GPUSCHED_A_GPU_MEM_DEFAULT_PCT,	/* u32, 0..100, 0: none */
	GPUSCHED_A_GPU_MEM_RESERVE_MB,	/* u32, MiB no limit may claim */
	GPUSCHED_A_GPU_MEM_RESERVED,	/* u64, bytes, sum over clients */
	__GPUSCHED_A_GPU_MAX
};

#define GPUSCHED_A_GPU_MAX	(__GPUSCHED_A_GPU_MAX - 1)

enum gpusched_client_attrs {
	GPUSCHED_A_CLIENT_UNSPEC,
	GPUSCHED_A_CLIENT_PAD,
	GPUSCHED_A_CLIENT_GPU,		/* u32, the GPU's index */
	GPUSCHED_A_CLIENT_ID,		/* u64 */
	GPUSCHED_A_CLIENT_PID,		/* u32 */
	GPUSCHED_A_CLIENT_COMM,		/* string */
	GPUSCHED_A_CLIENT_UID,		/* u32 */
	GPUSCHED_A_CLIENT_GID,		/* u32 */
	GPUSCHED_A_CLIENT_CGROUP_ID,	/* u64 */
	GPUSCHED_A_CLIENT_WEIGHT,	/* u32 */
	GPUSCHED_A_CLIENT_CLASS,	/* u32, enum gpusched_class */
	GPUSCHED_A_CLIENT_CAP_PCT,	/* u32 */
	GPUSCHED_A_CLIENT_STATE,	/* u32, enum gpusched_client_state */
	GPUSCHED_A_CLIENT_HELD_NS,	/* u64 */
	GPUSCHED_A_CLIENT_GRANTS,	/* u64 */
	GPUSCHED_A_CLIENT_WAIT_NS_TOTAL,	/* u64 */
	GPUSCHED_A_CLIENT_WAIT_NS_MAX,	/* u64 */
	GPUSCHED_A_CLIENT_OVERRUNS,	/* u64 */
	GPUSCHED_A_CLIENT_YIELDS,	/* u64 */
	GPUSCHED_A_CLIENT_POLICY_SET,	/* u32, enum gpusched_params_mask */
	GPUSCHED_A_CLIENT_POLICY_LOWERED,	/* u32, enum gpusched_params_mask */
	GPUSCHED_A_CLIENT_MEM_RESERVED,	/* u64, bytes */
	GPUSCHED_A_CLIENT_MEM_LIMIT,	/* u64, bytes, effective; 0: none */
	GPUSCHED_A_CLIENT_MEM_REFUSED,	/* u64, MEM_RESERVEs refused */
	GPUSCHED_A_CLIENT_MEM_TOTAL,	/* u64, bytes; 0: unknown */
	GPUSCHED_A_CLIENT_MEM_LIMIT_PCT,	/* u32, 1..100; SET_CLIENT only */
	GPUSCHED_A_CLIENT_GPU_NS,	/* u64, GPU time reported, all grants */
	__GPUSCHED_A_CLIENT_MAX
};

#define GPUSCHED_A_CLIENT_MAX	(__GPUSCHED_A_CLIENT_MAX - 1)

#endif /* _UAPI_LINUX_GPUSCHED_H */
