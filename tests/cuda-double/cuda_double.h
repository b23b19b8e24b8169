/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CUDA test double (tests only, never installed): what the double and
 * its test client share. The double is a libcuda.so.1 stand-in that models
 * GPUs that each run one process's work at a time; see cuda_double.c.
 */
#ifndef GS_CUDA_DOUBLE_H
#define GS_CUDA_DOUBLE_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define GSD_MAGIC	0x47534431U	/* "GSD1" */
#define GSD_MAX_GPUS	8

/*
 * Device memory a process holds on a modelled GPU; a slot whose pid has
 * exited counts nothing (the driver frees a dead process's memory).
 */
#define GSD_MEM_SLOTS	32
struct gsd_mem_slot {
	int32_t pid;		/* 0: free */
	int32_t pad;
	uint64_t bytes;
};

/*
 * When a process's kernels queued on a modelled GPU end, on its timeline
 * (each kernel starts when it is queued or when the one before ends). A
 * process claims a slot with its first kernel there; a slot whose pid has
 * exited may be claimed again.
 */
#define GSD_QUEUE_SLOTS	32
struct gsd_queue_slot {
	int32_t pid;		/* 0: free */
	int32_t pad;
	uint64_t until;		/* CLOCK_MONOTONIC ns */
};

/* One modelled GPU in the shared file named by $GS_DOUBLE_SHM. */
struct gsd_gpu {
	/* Held by the worker thread whose kernel runs. Robust: a process
	 * killed mid-kernel leaves it "owner died" as its threads exit,
	 * before its files (its token) are closed.
	 */
	pthread_mutex_t running;
	int32_t owner;		/* pid whose work runs now; 0: idle */
	int32_t pad;
	uint64_t violations;	/* work started while another pid's ran */
	uint64_t kernels;	/* kernels executed, all processes */
	uint64_t busy_us;	/* their nominal duration */
	uint64_t backlog_until;	/* CLOCK_MONOTONIC ns: the end of the owner's
				 * running and queued kernels */
	uint64_t overlap_max_us;	/* most of the old holder's queued work
					 * left when a violating kernel started */
	/* Device memory: the slots, under mem_lock (robust, shared). */
	pthread_mutex_t mem_lock;
	struct gsd_mem_slot mem[GSD_MEM_SLOTS];
	uint64_t mem_refused;	/* allocations refused for lack of memory */
	uint64_t kernels_running;	/* kernels running now, all processes (one
				 * killed mid-kernel is never taken off) */
	struct gsd_queue_slot queue[GSD_QUEUE_SLOTS];
};

struct gsd_shm {
	uint32_t magic;		/* set once the mutexes are initialised */
	uint32_t nr_gpus;
	struct gsd_gpu gpu[GSD_MAX_GPUS];
};

/*
 * Extra entry points of the double, for the test client (looked up with
 * dlsym, not part of CUDA): work this process completed, in nominal
 * microseconds, and the shared counters; CUDA_MPS_CLIENT_PRIORITY as the
 * first cuInit saw it ("unset" if it was not); launches over another
 * process's work.
 */
typedef uint64_t (*gsd_work_us_fn)(void);
#define GSD_WORK_US_SYM "gs_double_work_us"
typedef const char *(*gsd_mps_priority_fn)(void);
#define GSD_MPS_PRIORITY_SYM "gs_double_mps_priority"
/*
 * Kernels this process launched while another process's kernel ran on the
 * GPU: launched without the token, unless the other's work is what was
 * left of a grant that was revoked or handed over early. Exact while no
 * process is killed mid-kernel.
 */
typedef uint64_t (*gsd_launched_over_fn)(void);
#define GSD_LAUNCHED_OVER_SYM "gs_double_launched_over"
/* Waits the driver would spin for: cuEventSynchronize() on a pending event
 * made without CU_EVENT_BLOCKING_SYNC.
 */
typedef uint64_t (*gsd_spin_syncs_fn)(void);
#define GSD_SPIN_SYNCS_SYM "gs_double_spin_syncs"
/* Records of an event made with CU_EVENT_BLOCKING_SYNC behind queued work:
 * on the real driver, about twice the recording thread's time of a record
 * without blocking sync.
 */
typedef uint64_t (*gsd_blocking_records_fn)(void);
#define GSD_BLOCKING_RECORDS_SYM "gs_double_blocking_records"
/* Calls on a stream after it was destroyed (a handle the driver may have
 * freed or given to another stream).
 */
typedef uint64_t (*gsd_dead_stream_uses_fn)(void);
#define GSD_DEAD_STREAM_USES_SYM "gs_double_dead_stream_uses"
/* Gaps of $GS_DOUBLE_LATE_GAP_US (default 500) or more between this
 * process's kernels in which it had none queued.
 */
typedef uint64_t (*gsd_late_gaps_fn)(void);
#define GSD_LATE_GAPS_SYM "gs_double_late_gaps"
/* The most kernels one of this process's contexts had queued or running at
 * once since the last call (which starts the count again).
 */
typedef uint64_t (*gsd_queued_max_fn)(void);
#define GSD_QUEUED_MAX_SYM "gs_double_queued_max"
/* Launches that followed one of the program's own waits (a synchronize
 * not called by libgpusched) on the same thread, and of those the ones
 * before which libgpusched read the clock: with tests/host/libgs-clock.so
 * preloaded; 0 without it.
 */
typedef uint64_t (*gsd_waited_launches_fn)(void);
#define GSD_WAITED_LAUNCHES_SYM "gs_double_waited_launches"
typedef uint64_t (*gsd_clock_before_launch_fn)(void);
#define GSD_CLOCK_BEFORE_LAUNCH_SYM "gs_double_clock_before_launch"
/* cuCtxSynchronize() calls made by libgpusched. */
typedef uint64_t (*gsd_lib_ctx_syncs_fn)(void);
#define GSD_LIB_CTX_SYNCS_SYM "gs_double_lib_ctx_syncs"
/* The work other processes have queued or running on the current
 * context's GPU, in microseconds: on a GPU that runs one process's work at
 * a time, what a kernel launched now would wait for.
 */
typedef uint64_t (*gsd_others_queued_us_fn)(void);
#define GSD_OTHERS_QUEUED_US_SYM "gs_double_others_queued_us"

/* Whether the process of @pid (not 0) is alive, another user's too. */
static inline bool gsd_pid_alive(int32_t pid)
{
	return !kill(pid, 0) || errno == EPERM;
}

/* Bytes held on @g by processes alive now (read without its lock). */
static inline uint64_t gsd_mem_used(const struct gsd_gpu *g)
{
	uint64_t sum = 0;

	for (int i = 0; i < GSD_MEM_SLOTS; i++) {
		int32_t pid = __atomic_load_n(&g->mem[i].pid, __ATOMIC_RELAXED);

		if (pid && gsd_pid_alive(pid))
			sum += __atomic_load_n(&g->mem[i].bytes, __ATOMIC_RELAXED);
	}
	return sum;
}

/* $GS_DOUBLE_MEM: "N", "NK", "NM" or "NG" bytes; @def when unset or malformed. */
static inline uint64_t gsd_mem_size(const char *s, uint64_t def)
{
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return def;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'M' || *end == 'G') {
		v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
		end++;
	}
	return *end || !v ? def : v;
}

#define GSD_MEM_DEFAULT	(16ull << 30)

/* The uuid of physical GPU @i: "gs-double-gpu" then the index. */
static inline void gsd_uuid(int i, unsigned char u[16])
{
	static const char prefix[13] = { 'g', 's', '-', 'd', 'o', 'u', 'b',
					 'l', 'e', '-', 'g', 'p', 'u' };

	for (int k = 0; k < 13; k++)
		u[k] = (unsigned char)prefix[k];
	u[13] = 0;
	u[14] = 0;
	u[15] = (unsigned char)(i + 1);
}

#endif
