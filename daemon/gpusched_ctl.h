/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The control protocol of the user-space arbiter (gpuschedd --arbiter):
 * what the generic netlink family "gpusched" is to gpusched.ko, for
 * gpuschedctl and anything else that reads or changes the arbiter's GPUs
 * and clients. Written in the style of the uapi header, whose types it
 * uses, so that it can move there as it is.
 *
 * Transport: the arbiter's SOCK_SEQPACKET socket, the one libgpusched
 * uses. A connection's first token command (ATTACH) or first control
 * request decides what it is: a client or a control connection. The other
 * kind of request then gets -EISCONN. Control messages start with
 * GPUSCHED_CTL_MAGIC, the library's with GPUSCHED_WIRE_MAGIC, so neither
 * can be taken for the other; an arbiter without this protocol answers a
 * control request with a struct gpusched_wire_rep carrying -EPROTO.
 *
 * Every message, both ways, is one struct gpusched_ctl_hdr followed by
 * @nr_recs records of @rec_size bytes each, and nothing else. A request
 * carries the command's argument struct as its one record (or none, where
 * the command takes none), at exactly the struct's size. Replies echo the
 * request's @cmd and @seq; a reply may span several messages, each with
 * GPUSCHED_CTL_F_MULTI set except the last, which has GPUSCHED_CTL_F_DONE
 * and @error: 0 or a negative errno. A reader takes records of any
 * @rec_size at least as large as the struct it knows (newer arbiters may
 * append fields) and ignores the tail. Requests are answered in order;
 * the next request is read once the previous reply is sent whole.
 *
 * Errors: a message that is not a whole header and its records, a wrong
 * magic or version: -EPROTO (and the message is otherwise ignored); an
 * unknown command: -EOPNOTSUPP; a record of the wrong size: -EMSGSIZE;
 * unknown flag or mask bits: -EOPNOTSUPP; non-zero reserved fields or a
 * missing required field: -EINVAL; a value out of the range the module's
 * netlink policy allows: -ERANGE; knobs that are valid alone but not
 * together: -EINVAL.
 *
 * Authority comes from SO_PEERCRED when the connection is made: reads are
 * for anyone, as the module's dumps are; SET_GPU, SET_CLIENT and SUBSCRIBE
 * need uid 0 (the module asks for CAP_NET_ADMIN) and give -EPERM otherwise,
 * changing nothing.
 *
 * GPUSCHED_CTL_GET_GPUS (no argument)
 *	Records: struct gpusched_ctl_gpu, one per GPU, in index order.
 *
 * GPUSCHED_CTL_GET_CLIENTS (optional struct gpusched_ctl_filter)
 *	Records: struct gpusched_ctl_client, by GPU index, then client id.
 *	Large lists span several messages; a client that attaches or
 *	detaches meanwhile may or may not be listed, every other one is,
 *	once. @pid and @comm are 0 and empty for another user's client
 *	(an effective uid at connect() other than the caller's) unless the
 *	caller is root with CAP_SYS_PTRACE or CAP_NET_ADMIN.
 *
 * GPUSCHED_CTL_SET_GPU (struct gpusched_ctl_set_gpu, admin)
 *	The knobs in @mask of GPU @index, validated together and applied at
 *	once, or none is. -ENODEV for an unknown GPU.
 *
 * GPUSCHED_CTL_SET_CLIENT (struct gpusched_ctl_set_client, admin)
 *	The client @id, or every client of process @pid (only on GPU @gpu
 *	with GPUSCHED_CTL_F_GPU), gets the fields in @params.mask. -ESRCH if
 *	nothing matches.
 *
 * GPUSCHED_CTL_SUBSCRIBE (no argument, admin)
 *	Reply, then events on this connection until it closes: EV_ATTACH,
 *	EV_DETACH and EV_OVERRUN with one struct gpusched_ctl_client each,
 *	@seq 0. A subscriber that does not read is not waited for: events
 *	are dropped and EV_LOST (no record) follows once it reads again.
 */
#ifndef _GPUSCHED_CTL_H
#define _GPUSCHED_CTL_H

#include <linux/types.h>
#include <linux/gpusched.h>
#include <gpusched/arbiter_wire.h>

#define GPUSCHED_CTL_MAGIC	0x47504343U	/* "GPCC" */
#define GPUSCHED_CTL_VERSION	3
/* No message either way is longer. */
#define GPUSCHED_CTL_MSG_MAX	16384

enum gpusched_ctl_cmd {
	GPUSCHED_CTL_UNSPEC,
	GPUSCHED_CTL_GET_GPUS,
	GPUSCHED_CTL_GET_CLIENTS,
	GPUSCHED_CTL_SET_GPU,
	GPUSCHED_CTL_SET_CLIENT,
	GPUSCHED_CTL_SUBSCRIBE,
	GPUSCHED_CTL_EV_ATTACH,
	GPUSCHED_CTL_EV_DETACH,
	GPUSCHED_CTL_EV_OVERRUN,
	GPUSCHED_CTL_EV_LOST,
	__GPUSCHED_CTL_MAX
};

#define GPUSCHED_CTL_MAX	(__GPUSCHED_CTL_MAX - 1)

enum gpusched_ctl_hdr_flags {
	GPUSCHED_CTL_F_MULTI = 1U << 0,	/* a reply message, more follow */
	GPUSCHED_CTL_F_DONE = 1U << 1,	/* the reply's last message */
};

struct gpusched_ctl_hdr {
	__u32 magic;			/* GPUSCHED_CTL_MAGIC */
	__u16 version;			/* GPUSCHED_CTL_VERSION */
	__u16 cmd;			/* enum gpusched_ctl_cmd */
	__u32 seq;			/* the request's, in its replies */
	__u32 flags;			/* replies: gpusched_ctl_hdr_flags */
	__s32 error;			/* replies: 0 or -errno; requests: 0 */
	__u16 rec_size;			/* bytes of each record */
	__u16 nr_recs;			/* records that follow */
};

enum gpusched_ctl_filter_flags {
	GPUSCHED_CTL_F_GPU = 1U << 0,	/* only the GPU with index @gpu */
	GPUSCHED_CTL_F_ALL = GPUSCHED_CTL_F_GPU,
};

struct gpusched_ctl_filter {
	__u32 flags;			/* gpusched_ctl_filter_flags */
	__u32 gpu;
	__u64 reserved;
};

/* Bits of gpusched_ctl_set_gpu.mask, one per knob. */
enum gpusched_ctl_knobs {
	GPUSCHED_CTL_TIMESLICE = 1U << 0,
	GPUSCHED_CTL_GRACE = 1U << 1,
	GPUSCHED_CTL_MIN_GRANT = 1U << 2,
	GPUSCHED_CTL_STARVE = 1U << 3,
	GPUSCHED_CTL_WINDOW = 1U << 4,
	GPUSCHED_CTL_LATENCY_PCT = 1U << 5,
	GPUSCHED_CTL_LATENCY_QUEUE = 1U << 6,
	GPUSCHED_CTL_HANDOVER = 1U << 7,
	GPUSCHED_CTL_MEM_DEFAULT_PCT = 1U << 8,
	GPUSCHED_CTL_MEM_RESERVE = 1U << 9,
	GPUSCHED_CTL_KNOBS_ALL = (1U << 10) - 1,
};

#define GPUSCHED_CTL_NR_KNOBS	10

struct gpusched_ctl_set_gpu {
	__u32 index;
	__u32 mask;			/* gpusched_ctl_knobs */
	/* in the order of the mask bits: TIMESLICE_US .. WINDOW_US,
	 * LATENCY_PCT, LATENCY_QUEUE_US, HANDOVER_US, MEM_DEFAULT_PCT,
	 * MEM_RESERVE_MB, with the module's units and ranges */
	__u32 val[GPUSCHED_CTL_NR_KNOBS];
	__u64 reserved[2];
};

struct gpusched_ctl_set_client {
	__u64 id;			/* 0: by @pid */
	__u32 pid;			/* 0: by @id only */
	__u32 gpu;			/* with GPUSCHED_CTL_F_GPU */
	__u32 flags;			/* gpusched_ctl_filter_flags */
	__u32 reserved;
	/*
	 * mask, weight, sched_class, cap_pct, mem_limit: bytes, or with
	 * GS_MEM_PCT_FLAG (bit 63) set, a percentage (1..100) of each
	 * client's mem_total, as GPUSCHED_A_CLIENT_MEM_LIMIT_PCT: -EINVAL
	 * at the first client matched that reported none
	 */
	struct gpusched_params params;
};

struct gpusched_ctl_gpu {
	__u32 index;
	__u8 uuid[GPUSCHED_UUID_LEN];
	__u32 val[GPUSCHED_CTL_NR_KNOBS];	/* as in set_gpu */
	__u32 nr_clients;
	__u32 nr_waiting;
	__u32 holder_pid;		/* 0: free */
	__u32 reserved0[2];
	__u64 grants;
	__u64 overruns;
	__u64 held_ns;
	__u64 mem_reserved;		/* bytes, all clients */
	__u64 reserved[1];
};

struct gpusched_ctl_client {
	__u64 id;			/* unique for the life of the arbiter */
	__u32 gpu;			/* the GPU's index */
	__u32 pid;			/* in the arbiter's pid namespace */
	char comm[16];
	__u32 uid;
	__u32 gid;
	__u64 cgroup_id;		/* 0: unknown */
	__u32 weight;
	__u32 sched_class;		/* enum gpusched_class */
	__u32 cap_pct;
	__u32 state;			/* enum gpusched_client_state */
	__u64 held_ns;
	__u64 grants;
	__u64 wait_ns_total;
	__u64 wait_ns_max;
	__u64 overruns;
	__u64 yields;
	/* device memory, bytes, as GPUSCHED_A_CLIENT_MEM_* */
	__u64 mem_total;
	__u64 mem_reserved;
	__u64 mem_limit;		/* effective; 0: none */
	__u64 mem_refused;
	/*
	 * GPU time the client reported, all grants (GPUSCHED_A_CLIENT_GPU_NS);
	 * reserved, so 0, in arbiters older than 2026-12-03
	 */
	__u64 gpu_ns;
	__u64 reserved[1];
};

#endif /* _GPUSCHED_CTL_H */
