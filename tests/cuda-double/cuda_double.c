// SPDX-License-Identifier: GPL-2.0
/*
 * The CUDA test double: a libcuda.so.1 stand-in for CPU-only tests of
 * libgpusched. It implements the driver entry points the library and the
 * test client use, and models GPUs that run one process's work at a time:
 *
 *  - a kernel's duration is its CUfunction (or CUgraphExec) handle, read
 *    as a number of microseconds; every context has one worker thread that
 *    runs its queued work in order (stricter than streams on a real GPU);
 *  - while a kernel "runs" (the worker sleeps its duration), the modelled
 *    GPU in the shared file $GS_DOUBLE_SHM is held by this pid (a robust
 *    process-shared mutex, so a killed process's kernel ends with it); a
 *    kernel that starts while another process's kernel runs counts a
 *    violation there (two processes on the GPU at once), and how much of
 *    the other's queued kernels was left then (the early hand-over's
 *    overlap);
 *  - a kernel launched while another process's kernel runs is counted
 *    for the launching process (gs_double_launched_over()): it launched
 *    without the token, or beside what was left of another's grant;
 *  - copies and memsets take no GPU time and do not mark the GPU: they run
 *    on copy engines, which libgpusched does not gate;
 *  - events time on the modelled GPU's timeline (cuEventElapsedTime): an
 *    event completes when the kernel before it ends as modelled, or when
 *    it was recorded if nothing was queued; events created with
 *    CU_EVENT_DISABLE_TIMING cannot be timed, as with the driver;
 *  - $GS_DOUBLE_STRETCH_PCT (default 0): each kernel takes its length
 *    plus a random 0 to that many percent of it, as a kernel time-sliced
 *    with other contexts' work does on a real GPU (its work counts as its
 *    length); the gaps of $GS_DOUBLE_LATE_GAP_US (default 500) or more
 *    between a context's kernels in which it had none queued are counted
 *    (gs_double_late_gaps()): the GPU waited for the process's host;
 *  - $GS_DOUBLE_SHARED_STREAMS=1: event timestamps as a GPU gives them
 *    where a context's kernels on different streams share it: an event
 *    takes the time its own stream's work before it ended (or when it
 *    was recorded, if later), so that a kernel framed by two events on
 *    its stream, run after another stream's, spans both, as kernels that
 *    divide the SMs between them each take longer than alone. Work still
 *    runs one item at a time, and completes (queries, waits) in order; a
 *    stream's wait for an event (cuStreamWaitEvent()) is a marker on it,
 *    after which its events take the time all work before them ended;
 *  - $GS_DOUBLE_LATE_WAKE_US (default 0): the worker that runs a
 *    context's kernels marks each done that long after its modelled end,
 *    as one woken late on a loaded host does: the host sees completions
 *    late, and events keep the modelled times;
 *  - $GS_DOUBLE_LOAD_US (default 0): the first launch of each kernel in a
 *    context spends that long in the call before it queues the kernel, as
 *    the driver's lazy loading does (the first 64 kernels remembered);
 *  - $GS_DOUBLE_LAUNCH_STALL_US (default 0): every second kernel launch
 *    call takes that long after it queued the kernel, as one whose thread
 *    is preempted (a virtual CPU held) right after submitting: the kernel
 *    runs meanwhile;
 *  - $GS_DOUBLE_RECORD_STALL_US (default 0): one in three calls of
 *    cuEventRecord() on an event that takes timestamps takes that long,
 *    as from a thread preempted on a loaded host: two such calls before
 *    the event is recorded (it takes its time when the call comes back),
 *    then two after, and so on, so that where a caller records events in
 *    pairs, the first and the second of a pair each meet both kinds;
 *  - a destroyed stream is kept, marked: any later call on its handle
 *    fails and is counted (gs_double_dead_stream_uses()), where the
 *    driver's behaviour is undefined;
 *  - cuEventSynchronize() on a pending event created without
 *    CU_EVENT_BLOCKING_SYNC is counted (gs_double_spin_syncs()): the
 *    driver spins a CPU for such a wait under the default scheduling;
 *  - cuEventRecord() of an event created with CU_EVENT_BLOCKING_SYNC
 *    while the context has work queued is counted
 *    (gs_double_blocking_records()): the real driver takes the recording
 *    thread about twice as long for such a timing event as for one
 *    without blocking sync;
 *  - cuCtxSynchronize() called from libgpusched (the caller's file, by
 *    dladdr()) is counted (gs_double_lib_ctx_syncs()): a drain that
 *    needs one makes the next launch wait for a driver call of
 *    microseconds;
 *  - at most $GS_DOUBLE_QUEUE (default 256) items queued per context;
 *    further launches block, as with a full push buffer; the most kernels
 *    a context had queued or running at once is kept for the process
 *    (gs_double_queued_max()); each process publishes when its queued
 *    kernels end, so that another can read what it would wait for on a
 *    GPU that ran one process's work at a time
 *    (gs_double_others_queued_us());
 *  - $GS_DOUBLE_GPUS physical GPUs (default 1), filtered and ordered by
 *    CUDA_VISIBLE_DEVICES as a list of indices; uuids from gsd_uuid();
 *  - device memory of $GS_DOUBLE_MEM bytes per GPU (K, M, G suffixes;
 *    default 16G), shared by all processes through the shared file, with
 *    allocations failing with CUDA_ERROR_OUT_OF_MEMORY at the total; see
 *    "Device memory" below. Each context takes $GS_DOUBLE_CTX_MEM bytes of
 *    it (default 0) while it lives, as a driver's context does, through
 *    no allocation entry point (so libgpusched cannot count it);
 *  - stream capture's rule on "potentially unsafe" calls (queries and
 *    waits, capture_check()): one made in global mode while another
 *    thread captures in global mode, or by a capturing thread, fails and
 *    invalidates that capture, and cuStreamEndCapture() says so.
 *
 * Unlike a real driver, a forked child may keep using its parent's
 * contexts (with its own workers and empty queues), so that the library's
 * fork handling can be exercised. Linked with -Bsymbolic: like libcuda,
 * the entry points cuGetProcAddress returns are the double's own, even
 * when libgpusched is preloaded in front of it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "cuda_double.h"

#define EXPORT __attribute__((visibility("default")))

struct item {
	struct item *next;
	uint64_t seq;
	uint64_t us;		/* 0: a copy or a marker */
	uint64_t wall_us;	/* us, stretched ($GS_DOUBLE_STRETCH_PCT) */
	uint64_t queued_at;
	CUstream stream;	/* as launched (special handles as given) */
	bool kernel;
};

/* Completion times kept per context, for the events of the last so many. */
#define END_RING 1024

/* Kernels a context remembers as loaded; launches of others load again. */
#define GSD_LOADED 64

struct CUctx_st {
	int phys;		/* physical GPU */
	CUdevice ordinal;
	bool primary;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *head, *tail;
	uint64_t submitted, completed;
	uint64_t kernels;	/* kernels submitted and not completed */
	uint64_t queue_end;	/* ns: the modelled end of its queued kernels */
	uint64_t end_at[END_RING];	/* by seq: when it completed, modelled */
	CUstream stream_at[END_RING];	/* by seq: the item's stream */
	bool worker;		/* worker thread started */
	bool dead;
	/* Kernels launched in it so far ($GS_DOUBLE_LOAD_US), under lock. */
	uintptr_t loaded[GSD_LOADED];
	unsigned int nr_loaded;
};

struct CUstream_st {
	CUcontext ctx;
	int capturing;
	/* While capturing (under cap_lock): how, by whom, whether a call
	 * that the capture forbids invalidated it (capture_check()).
	 */
	CUstreamCaptureMode capture_mode;
	pthread_t capture_thread;
	bool capture_invalid;
	CUstream cap_next;		/* on cap_list */
	bool destroyed;			/* kept, for gs_double_dead_stream_uses() */
};

struct CUevent_st {
	CUcontext ctx;
	uint64_t seq;
	uint64_t recorded_at;	/* 0: never recorded */
	CUstream stream;	/* recorded on */
	bool timing;
	bool blocking;		/* CU_EVENT_BLOCKING_SYNC */
	bool done_at_record;	/* nothing of seq pending: completes at once */
};

static struct {
	pthread_mutex_t lock;
	bool inited;
	int nr_phys;
	int nr_visible;
	int visible[GSD_MAX_GPUS];	/* ordinal -> physical */
	struct gsd_shm *shm;
	CUcontext primary[GSD_MAX_GPUS];
	int primary_refs[GSD_MAX_GPUS];	/* under lock */
	atomic_ullong work_us;
	atomic_ullong launched_over;	/* gs_double_launched_over() */
	atomic_ullong spin_syncs;	/* gs_double_spin_syncs() */
	atomic_ullong blocking_records;	/* gs_double_blocking_records() */
	atomic_ullong dead_stream_uses;	/* gs_double_dead_stream_uses() */
	atomic_ullong late_gaps;	/* gs_double_late_gaps() */
	atomic_ullong queued_max;	/* gs_double_queued_max() */
	atomic_ullong waited_launches;	/* gs_double_waited_launches() */
	atomic_ullong clock_before;	/* gs_double_clock_before_launch() */
	atomic_ullong lib_ctx_syncs;	/* gs_double_lib_ctx_syncs() */
	unsigned int stretch_pct;	/* $GS_DOUBLE_STRETCH_PCT */
	bool shared_streams;		/* $GS_DOUBLE_SHARED_STREAMS */
	uint64_t late_gap_ns;		/* $GS_DOUBLE_LATE_GAP_US */
	uint64_t late_wake_ns;		/* $GS_DOUBLE_LATE_WAKE_US */
	uint64_t load_ns;		/* $GS_DOUBLE_LOAD_US */
	uint64_t launch_stall_ns;	/* $GS_DOUBLE_LAUNCH_STALL_US */
	atomic_uint launch_calls;	/* ... every second one of these */
	uint64_t record_stall_ns;	/* $GS_DOUBLE_RECORD_STALL_US */
	atomic_uint timing_records;	/* ... one in three of these */
	/* This process's share of each GPU's count of running kernels,
	 * changed with it under run_lock, so that a launch can tell its
	 * own kernels from the others'.
	 */
	pthread_mutex_t run_lock;
	uint64_t mine[GSD_MAX_GPUS];
	/* This process's slot in each GPU's queue[], under run_lock. */
	struct gsd_queue_slot *queue_slot[GSD_MAX_GPUS];
	uint64_t max_queue;		/* work items a context may have queued */
	uint64_t mem_total;		/* device memory of each GPU, bytes */
	uint64_t ctx_mem;		/* what each context takes of it */
	/* CUDA_MPS_CLIENT_PRIORITY as the first cuInit found it: the real
	 * driver reads it when it connects to the MPS server.
	 */
	char mps_priority[16];
} D = { .lock = PTHREAD_MUTEX_INITIALIZER, .run_lock = PTHREAD_MUTEX_INITIALIZER };

/* A kernel of this process starts (@d 1) or ends (@d -1) on GPU @phys. */
static void running_add(int phys, int d)
{
	pthread_mutex_lock(&D.run_lock);
	D.mine[phys] += d;
	__atomic_add_fetch(&D.shm->gpu[phys].kernels_running, d, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&D.run_lock);
}

/* Whether another process's kernel runs on GPU @phys now. */
static bool others_running(int phys)
{
	bool r;

	pthread_mutex_lock(&D.run_lock);
	r = __atomic_load_n(&D.shm->gpu[phys].kernels_running, __ATOMIC_SEQ_CST) >
	    D.mine[phys];
	pthread_mutex_unlock(&D.run_lock);
	return r;
}

/*
 * This process's queued kernels on GPU @phys end at @until: published in
 * its slot of the shared file (claimed on first use; none free, none
 * published).
 */
static void queue_publish(int phys, uint64_t until)
{
	struct gsd_queue_slot *q;
	int32_t me = (int32_t)getpid();
	uint64_t old;

	pthread_mutex_lock(&D.run_lock);
	q = D.queue_slot[phys];
	for (int i = 0; !q && i < GSD_QUEUE_SLOTS; i++) {
		struct gsd_queue_slot *s = &D.shm->gpu[phys].queue[i];
		int32_t pid = __atomic_load_n(&s->pid, __ATOMIC_SEQ_CST);

		if ((!pid || !gsd_pid_alive(pid)) &&
		    __atomic_compare_exchange_n(&s->pid, &pid, me, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&s->until, 0, __ATOMIC_SEQ_CST);
			q = D.queue_slot[phys] = s;
		}
	}
	pthread_mutex_unlock(&D.run_lock);
	if (!q)
		return;
	/* The latest of this process's contexts on the GPU. */
	old = __atomic_load_n(&q->until, __ATOMIC_SEQ_CST);
	while (until > old &&
	       !__atomic_compare_exchange_n(&q->until, &old, until, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

#define MAX_STACK 16
static __thread CUcontext stack[MAX_STACK];
static __thread int depth;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep until CLOCK_MONOTONIC reads @t ns. */
static void sleep_until_ns(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull),
			       (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ------------------------------------------------------------------ */

static void *worker(void *arg)
{
	CUcontext c = arg;
	struct gsd_gpu *g = &D.shm->gpu[c->phys];
	int32_t me = (int32_t)getpid();
	uint64_t gpu_free_at = 0, done_at;

	/* Sleep as exactly as the host allows: kernel durations are short. */
	prctl(PR_SET_TIMERSLACK, 1UL);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct item *it;

		while (!c->head)
			pthread_cond_wait(&c->cond, &c->lock);
		it = c->head;
		pthread_mutex_unlock(&c->lock);
		done_at = 0;

		if (it->kernel) {
			uint64_t start, end, backlog;
			bool owned;
			int r;

			/* On the modelled GPU's timeline, a queued kernel
			 * starts when the previous one ends, however late
			 * this thread wakes up.
			 */
			start = it->queued_at > gpu_free_at ? it->queued_at : gpu_free_at;
			/* Queued after our last kernel ended: the GPU had
			 * none of our work meanwhile.
			 */
			if (gpu_free_at && start - gpu_free_at >= D.late_gap_ns)
				atomic_fetch_add(&D.late_gaps, 1);
			end = start + it->wall_us * 1000;
			gpu_free_at = end;
			done_at = end;

			r = pthread_mutex_trylock(&g->running);
			if (r == EOWNERDEAD) {
				/* Killed mid-kernel: its work died with it. */
				pthread_mutex_consistent(&g->running);
				r = 0;
			}
			owned = !r;
			/* The end of our queued kernels: items are
			 * appended, and removed only here.
			 */
			backlog = end;
			pthread_mutex_lock(&c->lock);
			for (struct item *q = it->next; q; q = q->next)
				if (q->kernel)
					backlog += q->wall_us * 1000;
			pthread_mutex_unlock(&c->lock);
			if (owned) {
				__atomic_store_n(&g->backlog_until, backlog, __ATOMIC_SEQ_CST);
				__atomic_store_n(&g->owner, me, __ATOMIC_SEQ_CST);
			} else if (__atomic_load_n(&g->owner, __ATOMIC_SEQ_CST) != me) {
				/*
				 * The two pids' work overlaps for as long as
				 * the shorter of the two queues lasts: the
				 * old holder's rest, whichever of the two
				 * started this kernel. Measured now, when the
				 * trylock failed: a worker woken late (a
				 * starved host) would compare its modelled
				 * start with the other pid's work of now.
				 */
				uint64_t until = __atomic_load_n(&g->backlog_until,
								 __ATOMIC_SEQ_CST);
				uint64_t t = now_ns(), left, max;

				if (backlog < until)
					until = backlog;
				left = until > t ? (until - t) / 1000 : 0;
				max = __atomic_load_n(&g->overlap_max_us, __ATOMIC_SEQ_CST);

				__atomic_fetch_add(&g->violations, 1, __ATOMIC_SEQ_CST);
				/* How early: what the other kernel had left. */
				while (left > max &&
				       !__atomic_compare_exchange_n(&g->overlap_max_us,
								    &max, left, false,
								    __ATOMIC_SEQ_CST,
								    __ATOMIC_SEQ_CST))
					;
			}
			running_add(c->phys, 1);
			sleep_until_ns(end);
			running_add(c->phys, -1);
			/* A worker woken late: the kernel's end is modelled,
			 * and only the host sees it late.
			 */
			if (D.late_wake_ns)
				sleep_until_ns(end + D.late_wake_ns);
			if (owned) {
				__atomic_store_n(&g->owner, 0, __ATOMIC_SEQ_CST);
				pthread_mutex_unlock(&g->running);
			}
			__atomic_fetch_add(&g->kernels, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&g->busy_us, it->us, __ATOMIC_RELAXED);
			atomic_fetch_add(&D.work_us, it->us);
		}

		pthread_mutex_lock(&c->lock);
		c->head = it->next;
		if (!c->head)
			c->tail = NULL;
		c->completed = it->seq;
		if (it->kernel)
			c->kernels--;
		/* A marker (an event, a copy) completes on the modelled
		 * timeline too: when the work before it ends, or when it was
		 * queued, not when this thread, woken late, got to it.
		 */
		if (!done_at)
			done_at = it->queued_at > gpu_free_at ? it->queued_at
							      : gpu_free_at;
		c->end_at[it->seq % END_RING] = done_at;
		c->stream_at[it->seq % END_RING] = it->stream;
		free(it);
		pthread_cond_broadcast(&c->cond);
	}
	return NULL;
}

static CUresult enqueue(CUcontext c, CUstream s, uint64_t us, bool kernel)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it)
		return CUDA_ERROR_OUT_OF_MEMORY;
	it->stream = s;
	it->us = us;
	it->wall_us = us;
	if (kernel && D.stretch_pct) {
		static __thread uint64_t rng;

		if (!rng)
			rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull | 1;
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		it->wall_us += us * (rng % (D.stretch_pct + 1)) / 100;
	}
	it->kernel = kernel;
	/* Launched while another process's kernel runs: by the caller's
	 * own account, it held no token then.
	 */
	if (kernel && others_running(c->phys))
		atomic_fetch_add(&D.launched_over, 1);
	pthread_mutex_lock(&c->lock);
	if (!c->worker) {
		pthread_t t;
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&t, NULL, worker, c)) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			pthread_mutex_unlock(&c->lock);
			free(it);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_detach(t);
		c->worker = true;
	}
	/* Like a full push buffer: the launching thread waits. */
	while (c->submitted - c->completed >= D.max_queue)
		pthread_cond_wait(&c->cond, &c->lock);
	/* Submitted now, not when the call began: a GPU cannot start work
	 * before the driver has handed it over.
	 */
	it->queued_at = now_ns();
	it->seq = ++c->submitted;
	if (kernel) {
		uint64_t n = ++c->kernels, max = atomic_load(&D.queued_max);

		while (n > max &&
		       !atomic_compare_exchange_weak(&D.queued_max, &max, n))
			;
		/* As the worker will model it: from when it is queued or
		 * when the kernel before it ends.
		 */
		c->queue_end = (it->queued_at > c->queue_end ? it->queued_at :
				c->queue_end) + it->wall_us * 1000;
		queue_publish(c->phys, c->queue_end);
	}
	if (c->tail)
		c->tail->next = it;
	else
		c->head = it;
	c->tail = it;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return CUDA_SUCCESS;
}

static void wait_seq(CUcontext c, uint64_t seq)
{
	pthread_mutex_lock(&c->lock);
	while (c->completed < seq)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

static CUcontext current(void)
{
	return depth ? stack[depth - 1] : NULL;
}

/* The context a stream belongs to; special handles mean the current one. */
/*
 * @s destroyed (cuStreamDestroy_v2()): a use is counted, and fails as
 * with an invalid handle.
 */
static bool stream_dead(CUstream s)
{
	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ||
	    !s->destroyed)
		return false;
	atomic_fetch_add(&D.dead_stream_uses, 1);
	return true;
}

static CUcontext stream_ctx(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return current();
	return stream_dead(s) ? NULL : s->ctx;
}

/* ------------------------------------------------------------------ */
/* Init and devices */

/* The first process to map the file sets it up; the others wait. */
static void shm_init(struct gsd_shm *shm, int nr)
{
	uint32_t zero = 0;

	if (__atomic_compare_exchange_n(&shm->magic, &zero, 1, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
		for (int i = 0; i < GSD_MAX_GPUS; i++) {
			pthread_mutex_init(&shm->gpu[i].running, &a);
			pthread_mutex_init(&shm->gpu[i].mem_lock, &a);
		}
		pthread_mutexattr_destroy(&a);
		shm->nr_gpus = (uint32_t)nr;
		__atomic_store_n(&shm->magic, GSD_MAGIC, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&shm->magic, __ATOMIC_ACQUIRE) != GSD_MAGIC)
		usleep(1000);
}

static void atfork_child(void);

EXPORT CUresult cuInit(unsigned int flags)
{
	const char *s;

	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&D.lock);
	if (D.inited)
		goto out;
	s = getenv("GS_DOUBLE_GPUS");
	D.nr_phys = s ? atoi(s) : 1;
	if (D.nr_phys < 1 || D.nr_phys > GSD_MAX_GPUS)
		D.nr_phys = 1;
	s = getenv("CUDA_VISIBLE_DEVICES");
	if (s) {
		char *copy = strdup(s), *save, *tok;

		for (tok = strtok_r(copy, ",", &save); tok && D.nr_visible < GSD_MAX_GPUS;
		     tok = strtok_r(NULL, ",", &save)) {
			int i = atoi(tok);

			/* Like CUDA: the list ends at the first invalid entry. */
			if (i < 0 || i >= D.nr_phys)
				break;
			D.visible[D.nr_visible++] = i;
		}
		free(copy);
	} else {
		for (int i = 0; i < D.nr_phys; i++)
			D.visible[D.nr_visible++] = i;
	}

	s = getenv("CUDA_MPS_CLIENT_PRIORITY");
	snprintf(D.mps_priority, sizeof(D.mps_priority), "%s", s ? s : "unset");

	s = getenv("GS_DOUBLE_QUEUE");
	D.max_queue = s && atoi(s) > 0 ? (uint64_t)atoi(s) : 256;

	s = getenv("GS_DOUBLE_STRETCH_PCT");
	D.stretch_pct = s ? (unsigned int)strtoul(s, NULL, 10) : 0;
	s = getenv("GS_DOUBLE_SHARED_STREAMS");
	D.shared_streams = s && !strcmp(s, "1");
	s = getenv("GS_DOUBLE_LATE_GAP_US");
	D.late_gap_ns = 1000ull * (s ? strtoull(s, NULL, 10) : 500);
	s = getenv("GS_DOUBLE_LATE_WAKE_US");
	D.late_wake_ns = 1000ull * (s ? strtoull(s, NULL, 10) : 0);
	s = getenv("GS_DOUBLE_LOAD_US");
	D.load_ns = 1000ull * (s ? strtoull(s, NULL, 10) : 0);
	s = getenv("GS_DOUBLE_LAUNCH_STALL_US");
	D.launch_stall_ns = 1000ull * (s ? strtoull(s, NULL, 10) : 0);
	s = getenv("GS_DOUBLE_RECORD_STALL_US");
	D.record_stall_ns = 1000ull * (s ? strtoull(s, NULL, 10) : 0);
	D.mem_total = gsd_mem_size(getenv("GS_DOUBLE_MEM"), GSD_MEM_DEFAULT);
	D.ctx_mem = gsd_mem_size(getenv("GS_DOUBLE_CTX_MEM"), 0);

	s = getenv("GS_DOUBLE_SHM");
	if (s && *s) {
		int fd = open(s, O_RDWR | O_CREAT | O_CLOEXEC, 0666);

		if (fd < 0 || ftruncate(fd, sizeof(struct gsd_shm))) {
			fprintf(stderr, "cuda-double: %s: %s\n", s, strerror(errno));
			abort();
		}
		D.shm = mmap(NULL, sizeof(struct gsd_shm), PROT_READ | PROT_WRITE,
			     MAP_SHARED, fd, 0);
		close(fd);
	} else {
		D.shm = mmap(NULL, sizeof(struct gsd_shm), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	if (D.shm == MAP_FAILED)
		abort();
	shm_init(D.shm, D.nr_phys);
	pthread_atfork(NULL, NULL, atfork_child);
	D.inited = true;
out:
	pthread_mutex_unlock(&D.lock);
	return D.nr_visible ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 12080;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	*n = D.nr_visible;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal < 0 || ordinal >= D.nr_visible)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = ordinal;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *u, CUdevice dev)
{
	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!u || dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_VALUE;
	gsd_uuid(D.visible[dev], (unsigned char *)u->bytes);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *u, CUdevice dev)
{
	return cuDeviceGetUuid_v2(u, dev);
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!name || len <= 0 || dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "CUDA test double GPU %d", D.visible[dev]);
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Contexts */

static CUresult phys_take(int phys, size_t n);
static void phys_give(int phys, size_t n);

/* A context, with its own device memory ($GS_DOUBLE_CTX_MEM); NULL: none. */
static CUcontext ctx_new(CUdevice dev, bool primary)
{
	CUcontext c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (D.ctx_mem && phys_take(D.visible[dev], D.ctx_mem)) {
		free(c);
		return NULL;
	}
	c->phys = D.visible[dev];
	c->ordinal = dev;
	c->primary = primary;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	return c;
}

static void ctx_drain(CUcontext c)
{
	uint64_t seq;

	pthread_mutex_lock(&c->lock);
	seq = c->submitted;
	pthread_mutex_unlock(&c->lock);
	wait_seq(c, seq);
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	CUcontext c;

	(void)flags;
	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx || dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_VALUE;
	c = ctx_new(dev, false);
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (depth < MAX_STACK)
		stack[depth++] = c;
	*pctx = c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext c)
{
	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	/* Like the driver: the context's work finishes first. The memory is
	 * kept (marked dead) so stale handles are caught, not dereferenced
	 * after free.
	 */
	ctx_drain(c);
	c->dead = true;
	if (D.ctx_mem)
		phys_give(c->phys, D.ctx_mem);
	for (int i = 0; i < depth; i++)
		if (stack[i] == c)
			stack[i] = NULL;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDestroy(CUcontext c)
{
	return cuCtxDestroy_v2(c);
}

/*
 * The primary context: counted references, active from a retain until the
 * last release or a reset, which destroy it as cuCtxDestroy() does (its
 * work finishes first); its handle stays the same, and a retain makes it
 * active again.
 */
static void primary_down_locked(CUdevice dev)
{
	CUcontext c = D.primary[dev];

	if (!c || c->dead)
		return;
	ctx_drain(c);
	c->dead = true;
	if (D.ctx_mem)
		phys_give(c->phys, D.ctx_mem);
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUcontext c;

	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx || dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&D.lock);
	c = D.primary[dev];
	if (!c) {
		c = D.primary[dev] = ctx_new(dev, true);
	} else if (c->dead) {
		if (D.ctx_mem && phys_take(c->phys, D.ctx_mem))
			c = NULL;
		else
			c->dead = false;
	}
	if (c)
		D.primary_refs[dev]++;
	*pctx = c;
	pthread_mutex_unlock(&D.lock);
	return c ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = CUDA_SUCCESS;

	if (dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&D.lock);
	if (D.primary_refs[dev] <= 0)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (!--D.primary_refs[dev])
		primary_down_locked(dev);
	pthread_mutex_unlock(&D.lock);
	return r;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return cuDevicePrimaryCtxRelease_v2(dev);
}

EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	if (dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&D.lock);
	primary_down_locked(dev);
	D.primary_refs[dev] = 0;
	pthread_mutex_unlock(&D.lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
	return cuDevicePrimaryCtxReset_v2(dev);
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
					   int *active)
{
	if (dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&D.lock);
	*flags = 0;
	*active = D.primary[dev] && !D.primary[dev]->dead;
	pthread_mutex_unlock(&D.lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = current();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
	if (c && c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!c) {
		if (depth)
			depth--;
		return CUDA_SUCCESS;
	}
	if (depth)
		stack[depth - 1] = c;
	else
		stack[depth++] = c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext c)
{
	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (depth >= MAX_STACK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	stack[depth++] = c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	if (!depth)
		return CUDA_ERROR_INVALID_CONTEXT;
	depth--;
	if (pctx)
		*pctx = stack[depth];
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
	CUcontext c = current();

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = c->ordinal;
	return CUDA_SUCCESS;
}

static CUresult capture_check(void);

static CUresult program_waited(const void *caller, CUresult r);

static CUresult ctx_sync(void)
{
	CUcontext c = current();

	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (capture_check() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	ctx_drain(c);
	return CUDA_SUCCESS;
}

/* Is @caller's code in libgpusched? */
static bool from_libgpusched(const void *caller)
{
	Dl_info i;

	return dladdr(caller, &i) && i.dli_fname &&
	       strstr(i.dli_fname, "libgpusched");
}

EXPORT CUresult cuCtxSynchronize(void)
{
	const void *caller = __builtin_return_address(0);

	if (from_libgpusched(caller))
		atomic_fetch_add(&D.lib_ctx_syncs, 1);
	return program_waited(caller, ctx_sync());
}

/*
 * Stream capture's rule on "potentially unsafe" calls (the waits and
 * queries below): a thread whose mode (cuThreadExchangeStreamCaptureMode())
 * is global may make none while it captures a stream itself or another
 * thread captures one in global mode; thread-local, none while it captures
 * itself; relaxed, any. Captures begun in relaxed mode forbid nothing. As
 * with the driver, such a call fails and invalidates the capture it
 * conflicts with: cuStreamEndCapture() then fails too.
 */
static __thread CUstreamCaptureMode thread_capture_mode;
static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static CUstream cap_list;	/* the streams capturing, under cap_lock */

static CUresult capture_check(void)
{
	CUresult r = CUDA_SUCCESS;

	if (thread_capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&cap_lock);
	for (CUstream s = cap_list; s; s = s->cap_next) {
		bool mine = pthread_equal(s->capture_thread, pthread_self());

		if (s->capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
			continue;
		if (mine || (thread_capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
			     s->capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
			s->capture_invalid = true;
			r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	}
	pthread_mutex_unlock(&cap_lock);
	return r;
}

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = thread_capture_mode;

	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	thread_capture_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Streams and events */

EXPORT CUresult cuStreamCreate(CUstream *ps, unsigned int flags)
{
	CUcontext c = current();
	CUstream s;

	(void)flags;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->ctx = c;
	*ps = s;
	return CUDA_SUCCESS;
}

/*
 * Its memory is kept, marked, so that a later use of the handle is told
 * apart (stream_dead()) where the driver's would be undefined; a new
 * stream never takes the handle over.
 */
EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD ||
	    stream_dead(s))
		return CUDA_ERROR_INVALID_HANDLE;
	s->destroyed = true;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *pc)
{
	CUcontext c = stream_ctx(s);

	if (!pc)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*pc = c;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *pc)
{
	return cuStreamGetCtx(s, pc);
}

static CUresult stream_sync(CUstream s)
{
	CUcontext c = stream_ctx(s);

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (capture_check() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	ctx_drain(c);	/* one queue per context */
	return CUDA_SUCCESS;
}

/*
 * The program's own waits (not libgpusched's), and whether libgpusched
 * read the clock between one and the launch after it on the same thread:
 * with tests/host/clock-preload.c preloaded (gs_lib_clock_reads()); a
 * wait is the library's where from_libgpusched() says so; without the
 * preload, never. A program that waits for each
 * kernel has the GPU idle from the kernel's end until the next launch
 * reaches the driver, and the library's work in between is on the path.
 */
static __thread bool t_waited;
static __thread unsigned long t_reads_at_wait;
static unsigned long (*lib_clock_reads)(void);
static pthread_once_t lib_clock_once = PTHREAD_ONCE_INIT;

static void lib_clock_init(void)
{
	*(void **)&lib_clock_reads = dlsym(RTLD_DEFAULT, "gs_lib_clock_reads");
}

/* A wait called from @caller returned @r. */
static CUresult program_waited(const void *caller, CUresult r)
{
	pthread_once(&lib_clock_once, lib_clock_init);
	if (r == CUDA_SUCCESS && lib_clock_reads &&
	    !from_libgpusched(caller)) {
		t_waited = true;
		t_reads_at_wait = lib_clock_reads();
	}
	return r;
}

/* A launch reached the driver. */
static void launch_after_wait(void)
{
	if (!t_waited)
		return;
	t_waited = false;
	atomic_fetch_add(&D.waited_launches, 1);
	if (lib_clock_reads() != t_reads_at_wait)
		atomic_fetch_add(&D.clock_before, 1);
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	return program_waited(__builtin_return_address(0), stream_sync(s));
}
EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s)
{
	return program_waited(__builtin_return_address(0), stream_sync(s));
}

static CUresult stream_query(CUstream s)
{
	CUcontext c = stream_ctx(s);
	CUresult r;

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (capture_check() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	pthread_mutex_lock(&c->lock);
	r = c->completed >= c->submitted ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&c->lock);
	return r;
}

/*
 * @s waits for @e: work runs one item at a time and in order here, so the
 * wait holds nothing up; it is queued as a marker on @s, which completes
 * (and, with $GS_DOUBLE_SHARED_STREAMS, ends @s's own work) once the work
 * before it ended, @e's included, as a join of streams does on a GPU.
 */
EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	CUcontext c = stream_ctx(s);

	(void)flags;
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!c || c != e->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD && s->capturing)
		return CUDA_ERROR_NOT_PERMITTED;
	return enqueue(c, s, 0, false);
}

EXPORT CUresult cuStreamQuery(CUstream s)
{
	return stream_query(s);
}
EXPORT CUresult cuStreamQuery_ptsz(CUstream s)
{
	return stream_query(s);
}

static CUresult is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
	if (!st)
		return CUDA_ERROR_INVALID_VALUE;
	if (stream_dead(s))
		return CUDA_ERROR_INVALID_HANDLE;
	*st = (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD && s->capturing) ?
	      CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	return is_capturing(s, st);
}

EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st)
{
	return is_capturing(s, st);
}

/* Capture is modelled only as far as the library cares: launches into a
 * capturing stream queue nothing.
 */
EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, int mode)
{
	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL ||
	    mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&cap_lock);
	if (s->capturing) {
		pthread_mutex_unlock(&cap_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	s->capturing = 1;
	s->capture_mode = (CUstreamCaptureMode)mode;
	s->capture_thread = pthread_self();
	s->capture_invalid = false;
	s->cap_next = cap_list;
	cap_list = s;
	pthread_mutex_unlock(&cap_lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream s, void **graph)
{
	CUresult r;

	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&cap_lock);
	if (!s->capturing) {
		pthread_mutex_unlock(&cap_lock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	for (CUstream *pp = &cap_list; *pp; pp = &(*pp)->cap_next)
		if (*pp == s) {
			*pp = s->cap_next;
			break;
		}
	s->capturing = 0;
	r = s->capture_invalid ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED :
				 CUDA_SUCCESS;
	pthread_mutex_unlock(&cap_lock);
	if (graph)
		*graph = NULL;
	return r;
}

EXPORT CUresult cuEventCreate(CUevent *pe, unsigned int flags)
{
	CUcontext c = current();
	CUevent e;

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->ctx = c;
	e->timing = !(flags & CU_EVENT_DISABLE_TIMING);
	e->blocking = flags & CU_EVENT_BLOCKING_SYNC;
	*pe = e;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	free(e);
	return CUDA_SUCCESS;
}

static CUresult event_record(CUevent e, CUstream s)
{
	CUcontext c = stream_ctx(s);
	int stall = 0;	/* $GS_DOUBLE_RECORD_STALL_US: 1 before, 2 after */

	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!c || c != e->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD && s->capturing)
		return CUDA_ERROR_NOT_PERMITTED;	/* would become a graph node */
	if (D.record_stall_ns && e->timing) {
		unsigned int n = atomic_fetch_add(&D.timing_records, 1);

		stall = n % 3 == 2 ? n / 6 % 2 + 1 : 0;
	}
	if (stall == 1)
		sleep_until_ns(now_ns() + D.record_stall_ns);
	pthread_mutex_lock(&c->lock);
	e->seq = c->submitted;
	e->stream = s;
	e->recorded_at = now_ns();
	e->done_at_record = c->completed >= e->seq;
	pthread_mutex_unlock(&c->lock);
	if (e->blocking && !e->done_at_record)
		atomic_fetch_add(&D.blocking_records, 1);
	if (stall == 2)
		sleep_until_ns(now_ns() + D.record_stall_ns);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	return event_record(e, s);
}
EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream s)
{
	return event_record(e, s);
}

EXPORT CUresult cuEventQuery(CUevent e)
{
	CUresult r;

	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	r = capture_check();
	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&e->ctx->lock);
	r = e->ctx->completed >= e->seq ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&e->ctx->lock);
	return r;
}

/* When @e completed, modelled; 0 if not yet. Caller holds e->ctx->lock. */
static uint64_t event_time(CUevent e)
{
	uint64_t end;

	if (e->done_at_record)
		return e->recorded_at;
	if (e->ctx->completed < e->seq)
		return 0;
	/* Recorded after the work before it ended as modelled, though the
	 * worker (woken late on a loaded host) had not yet marked it done:
	 * on a GPU it completes when recorded, not in the past.
	 */
	end = e->ctx->end_at[e->seq % END_RING];
	if (D.shared_streams) {
		/* When its own stream's last work before it ended; none
		 * that the ring still holds: when it was recorded.
		 */
		uint64_t k = e->seq;

		end = 0;
		for (; k && e->seq - k < END_RING; k--) {
			if (e->ctx->stream_at[k % END_RING] == e->stream) {
				end = e->ctx->end_at[k % END_RING];
				break;
			}
		}
	}
	return end > e->recorded_at ? end : e->recorded_at;
}

EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
	uint64_t t0, t1;
	CUresult r = CUDA_SUCCESS;

	if (!ms || !start || !end)
		return CUDA_ERROR_INVALID_VALUE;
	if (!start->timing || !end->timing || !start->recorded_at ||
	    !end->recorded_at)
		return CUDA_ERROR_INVALID_HANDLE;
	if (start->ctx != end->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&start->ctx->lock);
	t0 = event_time(start);
	t1 = event_time(end);
	/* Older than the ring keeps: not known any more. */
	if ((!start->done_at_record &&
	     start->ctx->completed - start->seq >= END_RING) ||
	    (!end->done_at_record && end->ctx->completed - end->seq >= END_RING))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (!t0 || !t1)
		r = CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&start->ctx->lock);
	if (r == CUDA_SUCCESS)
		*ms = (float)((double)((int64_t)t1 - (int64_t)t0) / 1e6);
	return r;
}

static CUresult event_sync(CUevent e)
{
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	if (capture_check() != CUDA_SUCCESS)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	bool pending = cuEventQuery(e) == CUDA_ERROR_NOT_READY;

	if (!e->blocking && pending)
		atomic_fetch_add(&D.spin_syncs, 1);
	wait_seq(e->ctx, e->seq);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
	return program_waited(__builtin_return_address(0), event_sync(e));
}

/* ------------------------------------------------------------------ */
/* Work */

static CUresult launch(CUstream s, uintptr_t us)
{
	CUcontext c = stream_ctx(s);
	CUresult r;

	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!us)
		return CUDA_ERROR_INVALID_HANDLE;
	if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD && s->capturing)
		return CUDA_SUCCESS;	/* captured: a graph node, no work */
	if (D.load_ns) {
		bool seen = false;

		pthread_mutex_lock(&c->lock);
		for (unsigned int i = 0; i < c->nr_loaded && !seen; i++)
			seen = c->loaded[i] == us;
		if (!seen && c->nr_loaded < GSD_LOADED)
			c->loaded[c->nr_loaded++] = us;
		pthread_mutex_unlock(&c->lock);
		if (!seen)	/* loaded lazily, in the call */
			sleep_until_ns(now_ns() + D.load_ns);
	}
	r = enqueue(c, s, us, true);
	if (r == CUDA_SUCCESS && D.launch_stall_ns &&
	    atomic_fetch_add(&D.launch_calls, 1) % 2)
		sleep_until_ns(now_ns() + D.launch_stall_ns);
	return r;
}

#define KPARAMS CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
	unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem, \
	CUstream s

EXPORT CUresult cuLaunchKernel(KPARAMS, void **p, void **e)
{
	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem;
	(void)p; (void)e;
	launch_after_wait();
	return launch(s, (uintptr_t)f);
}

EXPORT CUresult cuLaunchKernel_ptsz(KPARAMS, void **p, void **e)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, p, e);
}

EXPORT CUresult cuLaunchCooperativeKernel(KPARAMS, void **p)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, p, NULL);
}

EXPORT CUresult cuLaunchCooperativeKernel_ptsz(KPARAMS, void **p)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, p, NULL);
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f,
				 void **p, void **e)
{
	(void)p; (void)e;
	if (!cfg)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(cfg->hStream, (uintptr_t)f);
}

EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f,
				      void **p, void **e)
{
	return cuLaunchKernelEx(cfg, f, p, e);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
	return launch(s, (uintptr_t)g);
}

EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
	return launch(s, (uintptr_t)g);
}

static CUresult copy(CUstream s)
{
	CUcontext c = stream_ctx(s);

	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	return enqueue(c, s, 0, false);
}

/* ------------------------------------------------------------------ */
/*
 * Device memory. Each modelled GPU has D.mem_total bytes, shared by every
 * process of the shared file: a process's use is its slot there, and a
 * slot of a process that exited counts nothing (the driver frees what a
 * dead process held). Allocations are anonymous mappings, never touched
 * unless the program writes them, so totals of gigabytes cost nothing.
 * Pools (cuMemAllocAsync, cuMemAllocFromPoolAsync) keep freed blocks,
 * still counted as used, until cuMemPoolTrimTo or cuMemPoolDestroy (as a
 * release threshold of UINT64_MAX would), and reuse one large enough. Frees
 * are immediate: the double has no stream order for memory.
 */

enum blk_kind { BLK_MEM, BLK_POOL, BLK_HANDLE };

struct CUmemPoolHandle_st {
	int phys;		/* -1: host memory (CU_MEM_LOCATION_TYPE_HOST) */
	struct blk *cached;	/* freed blocks the pool keeps */
};

struct blk {
	struct blk *next;
	enum blk_kind kind;
	uint64_t key;		/* address, or handle */
	size_t size;
	int phys;
	CUmemoryPool pool;
};

static struct {
	pthread_mutex_t lock;	/* the lists and pools below */
	struct blk *live;
	uint64_t next_handle;
	struct CUmemPoolHandle_st def_pool[GSD_MAX_GPUS];
	int slot[GSD_MAX_GPUS];	/* ours in gpu->mem, +1; 0: none yet */
} M = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_handle = 1 };

static void mem_lock(struct gsd_gpu *g)
{
	if (pthread_mutex_lock(&g->mem_lock) == EOWNERDEAD)
		pthread_mutex_consistent(&g->mem_lock);
}

/* This process's slot on @g, claiming a free or dead one. Under mem_lock. */
static struct gsd_mem_slot *mem_slot(int phys, struct gsd_gpu *g)
{
	int32_t me = (int32_t)getpid();

	if (M.slot[phys])
		return &g->mem[M.slot[phys] - 1];
	for (int i = 0; i < GSD_MEM_SLOTS; i++) {
		if (g->mem[i].pid && gsd_pid_alive(g->mem[i].pid))
			continue;
		g->mem[i].pid = me;
		g->mem[i].bytes = 0;
		M.slot[phys] = i + 1;
		return &g->mem[i];
	}
	return NULL;
}

/* Take @n bytes of physical GPU @phys's memory, or say there is none. */
static CUresult phys_take(int phys, size_t n)
{
	struct gsd_gpu *g = &D.shm->gpu[phys];
	struct gsd_mem_slot *sl;
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;

	mem_lock(g);
	sl = mem_slot(phys, g);
	if (sl && n <= D.mem_total && gsd_mem_used(g) <= D.mem_total - n) {
		sl->bytes += n;
		r = CUDA_SUCCESS;
	} else {
		g->mem_refused++;
	}
	pthread_mutex_unlock(&g->mem_lock);
	return r;
}

static void phys_give(int phys, size_t n)
{
	struct gsd_gpu *g = &D.shm->gpu[phys];
	struct gsd_mem_slot *sl;

	mem_lock(g);
	sl = mem_slot(phys, g);
	if (sl)
		sl->bytes -= n < sl->bytes ? n : sl->bytes;
	pthread_mutex_unlock(&g->mem_lock);
}

/* A new block of @n bytes on @phys: its memory, mapped, and listed. */
static CUresult blk_new(int phys, size_t n, enum blk_kind kind,
			CUmemoryPool pool, uint64_t *key)
{
	struct blk *b;
	void *m = MAP_FAILED;
	CUresult r;

	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	b = calloc(1, sizeof(*b));
	if (!b)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = phys < 0 ? CUDA_SUCCESS : phys_take(phys, n);
	if (r == CUDA_SUCCESS && kind != BLK_HANDLE) {
		m = mmap(NULL, n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED) {
			if (phys >= 0)
				phys_give(phys, n);
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	if (r != CUDA_SUCCESS) {
		free(b);
		return r;
	}
	b->kind = kind;
	b->size = n;
	b->phys = phys;
	b->pool = pool;
	pthread_mutex_lock(&M.lock);
	b->key = kind == BLK_HANDLE ? M.next_handle++ : (uint64_t)(uintptr_t)m;
	b->next = M.live;
	M.live = b;
	pthread_mutex_unlock(&M.lock);
	*key = b->key;
	return CUDA_SUCCESS;
}

static void blk_destroy(struct blk *b)
{
	if (b->kind != BLK_HANDLE)
		munmap((void *)(uintptr_t)b->key, b->size);
	if (b->phys >= 0)
		phys_give(b->phys, b->size);
	free(b);
}

/* Unlist the live block @key of a kind in @kinds (a mask of 1 << kind). */
static struct blk *blk_take(uint64_t key, unsigned int kinds)
{
	struct blk **pp, *b = NULL;

	pthread_mutex_lock(&M.lock);
	for (pp = &M.live; *pp; pp = &(*pp)->next) {
		if ((*pp)->key == key && (kinds & (1U << (*pp)->kind))) {
			b = *pp;
			*pp = b->next;
			break;
		}
	}
	pthread_mutex_unlock(&M.lock);
	return b;
}

static CUresult ctx_phys(int *phys)
{
	CUcontext c = current();

	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	*phys = c->phys;
	return CUDA_SUCCESS;
}

static CUresult mem_alloc(CUdeviceptr *p, size_t n)
{
	CUresult r;
	int phys;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	r = ctx_phys(&phys);
	if (r == CUDA_SUCCESS)
		r = blk_new(phys, n, BLK_MEM, NULL, p);
	return r;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	return mem_alloc(p, n);
}

/* Rows aligned to 512 bytes; elements of 4, 8 or 16 bytes, as documented. */
EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t width,
				   size_t height, unsigned int elem)
{
	size_t row, n;
	CUresult r;

	if (!pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
		return CUDA_ERROR_INVALID_VALUE;
	row = (width + 511) & ~(size_t)511;
	if (row < width || __builtin_mul_overflow(row, height, &n))
		return CUDA_ERROR_INVALID_VALUE;
	r = mem_alloc(p, n);
	if (r == CUDA_SUCCESS)
		*pitch = row;
	return r;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
	if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
		return CUDA_ERROR_INVALID_VALUE;
	return mem_alloc(p, n);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	struct blk *b;

	if (!p)
		return CUDA_SUCCESS;
	b = blk_take(p, 1U << BLK_MEM);
	if (!b)
		return CUDA_ERROR_INVALID_VALUE;
	blk_destroy(b);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	struct gsd_gpu *g;
	uint64_t used;
	CUresult r;
	int phys;

	if (!free_b || !total)
		return CUDA_ERROR_INVALID_VALUE;
	r = ctx_phys(&phys);
	if (r != CUDA_SUCCESS)
		return r;
	g = &D.shm->gpu[phys];
	mem_lock(g);
	used = gsd_mem_used(g);
	pthread_mutex_unlock(&g->mem_lock);
	*total = D.mem_total;
	*free_b = used < D.mem_total ? D.mem_total - used : 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!bytes || dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = D.mem_total;
	return CUDA_SUCCESS;
}

/* Stream-ordered allocation: a cached block large enough, else a new one. */
static CUresult pool_alloc(CUdeviceptr *p, size_t n, CUmemoryPool pool,
			   CUstream s)
{
	struct blk **pp, *b = NULL;
	CUcontext c = stream_ctx(s);

	if (!p || !pool || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&M.lock);
	for (pp = &pool->cached; *pp; pp = &(*pp)->next) {
		if ((*pp)->size >= n) {
			b = *pp;
			*pp = b->next;
			b->next = M.live;
			M.live = b;
			break;
		}
	}
	pthread_mutex_unlock(&M.lock);
	if (b) {
		*p = b->key;
		return CUDA_SUCCESS;
	}
	return blk_new(pool->phys, n, BLK_POOL, pool, p);
}

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool || dev < 0 || dev >= D.nr_visible)
		return CUDA_ERROR_INVALID_VALUE;
	M.def_pool[D.visible[dev]].phys = D.visible[dev];
	*pool = &M.def_pool[D.visible[dev]];
	return CUDA_SUCCESS;
}

/* The device's current pool: the double has no cuDeviceSetMemPool. */
EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	return cuDeviceGetDefaultMemPool(pool, dev);
}

/* On a device, or in host memory (which no GPU's count includes). */
EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	bool host = props && props->location.type == CU_MEM_LOCATION_TYPE_HOST;
	CUmemoryPool np;

	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool || !props ||
	    (!host && (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		       props->location.id < 0 ||
		       props->location.id >= D.nr_visible)))
		return CUDA_ERROR_INVALID_VALUE;
	np = calloc(1, sizeof(*np));
	if (!np)
		return CUDA_ERROR_OUT_OF_MEMORY;
	np->phys = host ? -1 : D.visible[props->location.id];
	*pool = np;
	return CUDA_SUCCESS;
}

/* Give back cached blocks of @pool until at most @keep bytes are cached. */
EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
	struct blk *gone = NULL, *b;
	size_t cached = 0;

	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&M.lock);
	for (b = pool->cached; b; b = b->next)
		cached += b->size;
	while (pool->cached && cached > keep) {
		b = pool->cached;
		pool->cached = b->next;
		cached -= b->size;
		b->next = gone;
		gone = b;
	}
	pthread_mutex_unlock(&M.lock);
	while (gone) {
		b = gone;
		gone = b->next;
		blk_destroy(b);
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	if (!pool || (pool >= M.def_pool && pool < M.def_pool + GSD_MAX_GPUS))
		return CUDA_ERROR_INVALID_VALUE;
	cuMemPoolTrimTo(pool, 0);
	free(pool);	/* its live blocks stay until freed, as the double's */
	return CUDA_SUCCESS;
}

static CUresult alloc_async(CUdeviceptr *p, size_t n, CUstream s)
{
	CUcontext c = stream_ctx(s);
	CUmemoryPool pool;
	CUresult r;

	if (!c || c->dead)
		return CUDA_ERROR_INVALID_CONTEXT;
	r = cuDeviceGetDefaultMemPool(&pool, c->ordinal);
	return r == CUDA_SUCCESS ? pool_alloc(p, n, pool, s) : r;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	return alloc_async(p, n, s);
}

EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
	return alloc_async(p, n, s);
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n,
					CUmemoryPool pool, CUstream s)
{
	return pool_alloc(p, n, pool, s);
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n,
					     CUmemoryPool pool, CUstream s)
{
	return pool_alloc(p, n, pool, s);
}

/* Back to its pool's cache; a plain allocation is freed as cuMemFree. */
static CUresult free_async(CUdeviceptr p, CUstream s)
{
	struct blk *b;

	(void)s;
	b = blk_take(p, 1U << BLK_MEM | 1U << BLK_POOL);
	if (!b)
		return CUDA_ERROR_INVALID_VALUE;
	if (b->kind == BLK_MEM) {
		blk_destroy(b);
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&M.lock);
	b->next = b->pool->cached;
	b->pool->cached = b;
	pthread_mutex_unlock(&M.lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	return free_async(p, s);
}

EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	return free_async(p, s);
}

/* Physical memory for the virtual memory management API: 2 MiB granules. */
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t n,
			    const CUmemAllocationProp *prop,
			    unsigned long long flags)
{
	uint64_t key;
	CUresult r;

	if (!D.inited)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!h || !prop || flags || !n || (n & ((2u << 20) - 1)) ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
	    prop->location.id < 0 || prop->location.id >= D.nr_visible)
		return CUDA_ERROR_INVALID_VALUE;
	r = blk_new(D.visible[prop->location.id], n, BLK_HANDLE, NULL, &key);
	if (r == CUDA_SUCCESS)
		*h = key;
	return r;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	struct blk *b = blk_take(h, 1U << BLK_HANDLE);

	if (!b)
		return CUDA_ERROR_INVALID_HANDLE;
	blk_destroy(b);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
	memcpy((void *)(uintptr_t)d, h, n);
	return copy(s);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *h, size_t n, CUstream s)
{
	return cuMemcpyHtoDAsync_v2(d, h, n, s);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s)
{
	memcpy(h, (void *)(uintptr_t)d, n);
	return copy(s);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *h, CUdeviceptr d, size_t n, CUstream s)
{
	return cuMemcpyDtoHAsync_v2(h, d, n, s);
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
{
	memmove((void *)(uintptr_t)d, (void *)(uintptr_t)src, n);
	return copy(s);
}

EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
{
	return cuMemcpyAsync(d, src, n, s);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	memset((void *)(uintptr_t)d, v, n);
	return copy(s);
}

EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return cuMemsetD8Async(d, v, n, s);
}

/* ------------------------------------------------------------------ */
/* Errors and entry points */

EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
	const char *m;

	switch (r) {
	case CUDA_SUCCESS:
		m = "no error";
		break;
	case CUDA_ERROR_INVALID_VALUE:
		m = "invalid argument";
		break;
	case CUDA_ERROR_OUT_OF_MEMORY:
		m = "out of memory";
		break;
	case CUDA_ERROR_NOT_INITIALIZED:
		m = "initialization error";
		break;
	case CUDA_ERROR_INVALID_CONTEXT:
		m = "invalid device context";
		break;
	case CUDA_ERROR_INVALID_HANDLE:
		m = "invalid resource handle";
		break;
	case CUDA_ERROR_NOT_READY:
		m = "device not ready";
		break;
	case CUDA_ERROR_NOT_PERMITTED:
		m = "operation not permitted";
		break;
	case CUDA_ERROR_NOT_SUPPORTED:
		m = "operation not supported";
		break;
	default:
		m = NULL;
		break;
	}
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	*s = m;
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
	return cuGetErrorString(r, s);
}

/*
 * Entry points by base name, as the driver resolves them: the newest ABI
 * version the caller's cudaVersion allows, the _ptsz flavour when asked.
 */
struct entry {
	const char *base;
	int since;		/* cudaVersion that introduced @fn */
	bool ptsz;		/* @fn is the per-thread-stream flavour */
	void *fn;
};

EXPORT CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
EXPORT CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
				    CUdriverProcAddressQueryResult *);

#define E(b, v, p, f) { b, v, p, (void *)f }
static const struct entry entries[] = {
	E("cuInit", 2000, false, cuInit),
	E("cuDriverGetVersion", 2020, false, cuDriverGetVersion),
	E("cuDeviceGet", 2000, false, cuDeviceGet),
	E("cuDeviceGetCount", 2000, false, cuDeviceGetCount),
	E("cuDeviceGetName", 2000, false, cuDeviceGetName),
	E("cuDeviceGetUuid", 9020, false, cuDeviceGetUuid),
	E("cuDeviceGetUuid", 11040, false, cuDeviceGetUuid_v2),
	E("cuCtxCreate", 3020, false, cuCtxCreate_v2),
	E("cuCtxDestroy", 4000, false, cuCtxDestroy_v2),
	E("cuCtxGetCurrent", 4000, false, cuCtxGetCurrent),
	E("cuCtxSetCurrent", 4000, false, cuCtxSetCurrent),
	E("cuCtxPushCurrent", 4000, false, cuCtxPushCurrent_v2),
	E("cuCtxPopCurrent", 4000, false, cuCtxPopCurrent_v2),
	E("cuCtxGetDevice", 2000, false, cuCtxGetDevice),
	E("cuCtxSynchronize", 2000, false, cuCtxSynchronize),
	E("cuDevicePrimaryCtxRetain", 7000, false, cuDevicePrimaryCtxRetain),
	E("cuDevicePrimaryCtxRelease", 11000, false, cuDevicePrimaryCtxRelease_v2),
	E("cuDevicePrimaryCtxReset", 11000, false, cuDevicePrimaryCtxReset_v2),
	E("cuDevicePrimaryCtxGetState", 7000, false, cuDevicePrimaryCtxGetState),
	E("cuThreadExchangeStreamCaptureMode", 10010, false, cuThreadExchangeStreamCaptureMode),
	E("cuStreamCreate", 2000, false, cuStreamCreate),
	E("cuStreamGetCtx", 9020, false, cuStreamGetCtx),
	E("cuStreamGetCtx", 9020, true, cuStreamGetCtx_ptsz),
	E("cuStreamDestroy", 4000, false, cuStreamDestroy_v2),
	E("cuStreamSynchronize", 2000, false, cuStreamSynchronize),
	E("cuStreamSynchronize", 7000, true, cuStreamSynchronize_ptsz),
	E("cuStreamQuery", 2000, false, cuStreamQuery),
	E("cuStreamQuery", 7000, true, cuStreamQuery_ptsz),
	E("cuStreamIsCapturing", 10000, false, cuStreamIsCapturing),
	E("cuStreamIsCapturing", 10000, true, cuStreamIsCapturing_ptsz),
	E("cuStreamBeginCapture", 10010, false, cuStreamBeginCapture_v2),
	E("cuStreamEndCapture", 10000, false, cuStreamEndCapture),
	E("cuEventCreate", 2000, false, cuEventCreate),
	E("cuEventDestroy", 4000, false, cuEventDestroy_v2),
	E("cuEventRecord", 2000, false, cuEventRecord),
	E("cuEventRecord", 7000, true, cuEventRecord_ptsz),
	E("cuEventQuery", 2000, false, cuEventQuery),
	E("cuEventSynchronize", 2000, false, cuEventSynchronize),
	E("cuEventElapsedTime", 2000, false, cuEventElapsedTime),
	E("cuLaunchKernel", 4000, false, cuLaunchKernel),
	E("cuLaunchKernel", 7000, true, cuLaunchKernel_ptsz),
	E("cuLaunchKernelEx", 11060, false, cuLaunchKernelEx),
	E("cuLaunchKernelEx", 11060, true, cuLaunchKernelEx_ptsz),
	E("cuLaunchCooperativeKernel", 9000, false, cuLaunchCooperativeKernel),
	E("cuLaunchCooperativeKernel", 9000, true, cuLaunchCooperativeKernel_ptsz),
	E("cuGraphLaunch", 10000, false, cuGraphLaunch),
	E("cuGraphLaunch", 10000, true, cuGraphLaunch_ptsz),
	E("cuMemAlloc", 3020, false, cuMemAlloc_v2),
	E("cuMemAllocPitch", 3020, false, cuMemAllocPitch_v2),
	E("cuMemAllocManaged", 6000, false, cuMemAllocManaged),
	E("cuMemFree", 3020, false, cuMemFree_v2),
	E("cuMemGetInfo", 3020, false, cuMemGetInfo_v2),
	E("cuDeviceTotalMem", 3020, false, cuDeviceTotalMem_v2),
	E("cuDeviceGetDefaultMemPool", 11020, false, cuDeviceGetDefaultMemPool),
	E("cuDeviceGetMemPool", 11020, false, cuDeviceGetMemPool),
	E("cuMemPoolCreate", 11020, false, cuMemPoolCreate),
	E("cuMemPoolDestroy", 11020, false, cuMemPoolDestroy),
	E("cuMemPoolTrimTo", 11020, false, cuMemPoolTrimTo),
	E("cuMemAllocAsync", 11020, false, cuMemAllocAsync),
	E("cuMemAllocAsync", 11020, true, cuMemAllocAsync_ptsz),
	E("cuMemAllocFromPoolAsync", 11020, false, cuMemAllocFromPoolAsync),
	E("cuMemAllocFromPoolAsync", 11020, true, cuMemAllocFromPoolAsync_ptsz),
	E("cuMemFreeAsync", 11020, false, cuMemFreeAsync),
	E("cuMemFreeAsync", 11020, true, cuMemFreeAsync_ptsz),
	E("cuMemCreate", 10020, false, cuMemCreate),
	E("cuMemRelease", 10020, false, cuMemRelease),
	E("cuMemcpyHtoDAsync", 3020, false, cuMemcpyHtoDAsync_v2),
	E("cuMemcpyHtoDAsync", 7000, true, cuMemcpyHtoDAsync_v2_ptsz),
	E("cuMemcpyDtoHAsync", 3020, false, cuMemcpyDtoHAsync_v2),
	E("cuMemcpyDtoHAsync", 7000, true, cuMemcpyDtoHAsync_v2_ptsz),
	E("cuMemcpyAsync", 4000, false, cuMemcpyAsync),
	E("cuMemcpyAsync", 7000, true, cuMemcpyAsync_ptsz),
	E("cuMemsetD8Async", 3020, false, cuMemsetD8Async),
	E("cuMemsetD8Async", 7000, true, cuMemsetD8Async_ptsz),
	E("cuGetErrorString", 6000, false, cuGetErrorString),
	E("cuGetErrorName", 6000, false, cuGetErrorName),
	E("cuGetProcAddress", 11030, false, cuGetProcAddress),
	E("cuGetProcAddress", 12000, false, cuGetProcAddress_v2),
};

static CUresult get_proc(const char *sym, void **pfn, int ver, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *st)
{
	bool want_ptsz = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const struct entry *best = NULL;
	bool found = false;

	if (!sym || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	if (ver > 13000)
		return CUDA_ERROR_INVALID_VALUE;	/* newer than this "driver" */
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		const struct entry *e = &entries[i];

		if (strcmp(e->base, sym))
			continue;
		found = true;
		if (e->since > ver)
			continue;
		/* The per-thread flavour where one exists, else the plain. */
		if (e->ptsz && !want_ptsz)
			continue;
		if (!best || e->since > best->since || (e->ptsz && !best->ptsz))
			best = e;
	}
	*pfn = best ? best->fn : NULL;
	if (st)
		*st = best ? CU_GET_PROC_ADDRESS_SUCCESS :
		      found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
			      CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver,
				 cuuint64_t flags)
{
	return get_proc(sym, pfn, ver, flags, NULL);
}

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver,
				    cuuint64_t flags,
				    CUdriverProcAddressQueryResult *st)
{
	return get_proc(sym, pfn, ver, flags, st);
}

EXPORT uint64_t gs_double_work_us(void)
{
	return atomic_load(&D.work_us);
}

EXPORT uint64_t gs_double_launched_over(void)
{
	return atomic_load(&D.launched_over);
}

EXPORT uint64_t gs_double_late_gaps(void)
{
	return atomic_load(&D.late_gaps);
}

EXPORT uint64_t gs_double_others_queued_us(void)
{
	CUcontext c = current();
	struct gsd_gpu *g;
	int32_t me = (int32_t)getpid();
	uint64_t t = now_ns(), sum = 0;

	if (!c || !D.shm)
		return 0;
	g = &D.shm->gpu[c->phys];
	for (int i = 0; i < GSD_QUEUE_SLOTS; i++) {
		int32_t pid = __atomic_load_n(&g->queue[i].pid, __ATOMIC_SEQ_CST);
		uint64_t until = __atomic_load_n(&g->queue[i].until, __ATOMIC_SEQ_CST);

		if (pid && pid != me && until > t && gsd_pid_alive(pid))
			sum += until - t;
	}
	return sum / 1000;
}

EXPORT uint64_t gs_double_queued_max(void)
{
	return atomic_exchange(&D.queued_max, 0);
}

EXPORT uint64_t gs_double_waited_launches(void)
{
	return atomic_load(&D.waited_launches);
}

EXPORT uint64_t gs_double_clock_before_launch(void)
{
	return atomic_load(&D.clock_before);
}

EXPORT uint64_t gs_double_lib_ctx_syncs(void)
{
	return atomic_load(&D.lib_ctx_syncs);
}

EXPORT uint64_t gs_double_spin_syncs(void)
{
	return atomic_load(&D.spin_syncs);
}

EXPORT uint64_t gs_double_blocking_records(void)
{
	return atomic_load(&D.blocking_records);
}

EXPORT uint64_t gs_double_dead_stream_uses(void)
{
	return atomic_load(&D.dead_stream_uses);
}

EXPORT const char *gs_double_mps_priority(void)
{
	return D.mps_priority;
}

/* The child has no workers and none of the parent's work or memory. */
static void atfork_child(void)
{
	pthread_mutex_init(&D.lock, NULL);
	pthread_mutex_init(&M.lock, NULL);
	M.live = NULL;		/* leaked: the parent's */
	memset(M.slot, 0, sizeof(M.slot));
	for (int i = 0; i < GSD_MAX_GPUS; i++)
		M.def_pool[i].cached = NULL;
	atomic_store(&D.work_us, 0);
	atomic_store(&D.launched_over, 0);
	atomic_store(&D.spin_syncs, 0);
	atomic_store(&D.blocking_records, 0);
	atomic_store(&D.dead_stream_uses, 0);
	atomic_store(&D.late_gaps, 0);
	atomic_store(&D.queued_max, 0);
	pthread_mutex_init(&D.run_lock, NULL);
	memset(D.mine, 0, sizeof(D.mine));
	memset(D.queue_slot, 0, sizeof(D.queue_slot));
	for (int i = 0; i < GSD_MAX_GPUS; i++) {
		CUcontext c = D.primary[i];

		if (!c)
			continue;
		pthread_mutex_init(&c->lock, NULL);
		pthread_cond_init(&c->cond, NULL);
		c->head = c->tail = NULL;	/* leaked: the parent's */
		c->completed = c->submitted;
		c->kernels = 0;
		c->queue_end = 0;
		c->worker = false;
	}
	for (int i = 0; i < depth; i++) {
		CUcontext c = stack[i];

		if (!c || c->primary)
			continue;
		pthread_mutex_init(&c->lock, NULL);
		pthread_cond_init(&c->cond, NULL);
		c->head = c->tail = NULL;
		c->completed = c->submitted;
		c->kernels = 0;
		c->queue_end = 0;
		c->worker = false;
	}
}

/* Like context teardown at exit: queued work finishes first. */
__attribute__((destructor)) static void double_exit(void)
{
	for (int i = 0; i < GSD_MAX_GPUS; i++)
		if (D.primary[i] && D.primary[i]->worker)
			ctx_drain(D.primary[i]);
}
