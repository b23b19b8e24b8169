/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the in-VM fuzzers (fuzz-dev, fuzz-netlink) share: a seeded random
 * generator, the run's options, counters and the first failure in memory
 * shared by every worker process, a watchdog that names a worker stuck in
 * the kernel, and a snapshot of every GPU's knobs, put back at the end so
 * that the fuzzers leave the tests after them the state they found.
 *
 * Reproducing a run: every worker draws its operations from a generator
 * seeded with (seed, worker number), so a seed gives the same sequence of
 * operations per worker; the interleaving of workers, and the kernel's
 * answers that steer later choices, are not reproducible. Each failure
 * prints the seed, the worker and its operation number.
 */
#ifndef GS_FUZZ_COMMON_H
#define GS_FUZZ_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/gpusched.h>

#include "one-holder.h"

#define GS_FUZZ_SYSFS		"/sys/kernel/gpusched"
#define GS_FUZZ_MAX_WORKERS	64
#define GS_FUZZ_MAX_COUNTERS	48
#define GS_FUZZ_NOBODY		65534

/* The fuzzers' own GPUs ("gsFUZZ" + n), apart from the tests' "gsTEST". */
#define GS_FUZZ_NR_GPUS		2

static inline void gs_fuzz_uuid(__u8 uuid[GPUSCHED_UUID_LEN], unsigned int n)
{
	static const char tag[] = "gsFUZZ";

	memset(uuid, 0, GPUSCHED_UUID_LEN);
	memcpy(uuid, tag, sizeof(tag) - 1);
	uuid[GPUSCHED_UUID_LEN - 1] = n;
}

/* splitmix64: small, fast, and any seed is a good one. */
struct gs_rng {
	uint64_t s;
};

static inline uint64_t gs_rnd(struct gs_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void gs_rng_init(struct gs_rng *r, uint64_t seed, uint64_t stream)
{
	r->s = seed ^ (stream * 0xd1b54a32d192ed03ull);
	gs_rnd(r);
}

/* Uniform in [0, n), n > 0. */
static inline uint64_t gs_below(struct gs_rng *r, uint64_t n)
{
	return gs_rnd(r) % n;
}

/* An index into @w[@n], drawn with probability proportional to its weight. */
static inline unsigned int gs_pick(struct gs_rng *r, const unsigned int *w,
				   unsigned int n)
{
	unsigned int total = 0, i, x;

	for (i = 0; i < n; i++)
		total += w[i];
	x = gs_below(r, total);
	for (i = 0; x >= w[i]; i++)
		x -= w[i];
	return i;
}

static inline bool gs_chance(struct gs_rng *r, unsigned int pct)
{
	return gs_below(r, 100) < pct;
}

/* Values that find off-by-ones and overflows more often than uniform ones. */
static inline uint64_t gs_interesting(struct gs_rng *r)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 7, 8, 9, 10, 16, 50, 90, 91, 99, 100, 101, 127, 128,
		255, 256, 999, 1000, 1001, 4095, 4096, 9999, 10000, 10001,
		65535, 65536, 100000, 1000000, 10000000, 10000001, 60000000,
		60000001, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
		0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
		0xffffffffffffffffull, 1ull << 40, (1ull << 40) + 1,
	};

	switch (gs_below(r, 4)) {
	case 0:
		return gs_rnd(r);
	case 1:
		return gs_rnd(r) & 0xffffffff;
	case 2:
		return gs_below(r, 20000);
	default:
		return v[gs_below(r, sizeof(v) / sizeof(v[0]))];
	}
}

static inline uint64_t gs_fuzz_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void gs_fuzz_sleep_us(uint64_t us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);	/* a signal may cut it short: fine */
}

/* Shared by every process of a run (MAP_SHARED anonymous memory). */
struct gs_fuzz_shared {
	uint64_t seed;
	uint64_t end_ns;		/* workers stop starting operations */
	int stop;
	int failures;
	char failure[1024];		/* the first one */
	uint64_t count[GS_FUZZ_MAX_COUNTERS];
	struct gs_fuzz_beat {
		uint64_t beat;		/* bumped after every operation */
		uint64_t ops;
		int tid;
		int op;			/* running, -1 between operations */
	} beat[GS_FUZZ_MAX_WORKERS];
};

static struct gs_fuzz_shared *gs_sh;
static const char *const *gs_op_names;
static const char *gs_prog = "fuzz";

static inline void gs_fuzz_shared_init(void)
{
	gs_sh = mmap(NULL, sizeof(*gs_sh), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (gs_sh == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
}

static inline void gs_count(unsigned int i, uint64_t n)
{
	__atomic_add_fetch(&gs_sh->count[i], n, __ATOMIC_RELAXED);
}

/* Record a failure; the first one is kept whole, all are counted. */
static inline void __attribute__((format(printf, 2, 3)))
gs_fail(int worker, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (__atomic_fetch_add(&gs_sh->failures, 1, __ATOMIC_SEQ_CST) == 0) {
		snprintf(gs_sh->failure, sizeof(gs_sh->failure),
			 "seed %#" PRIx64 " worker %d op #%" PRIu64 ": %s",
			 gs_sh->seed, worker,
			 worker >= 0 ? gs_sh->beat[worker].ops : 0, msg);
	}
	fprintf(stderr, "# %s: FAIL worker %d: %s\n", gs_prog, worker, msg);
}

static inline bool gs_stopping(void)
{
	return __atomic_load_n(&gs_sh->stop, __ATOMIC_RELAXED) ||
	       gs_fuzz_now_ns() >= gs_sh->end_ns;
}

static inline void gs_beat_begin(int w, int op)
{
	gs_sh->beat[w].op = op;
}

static inline void gs_beat_end(int w)
{
	gs_sh->beat[w].op = -1;
	gs_sh->beat[w].ops++;
	__atomic_add_fetch(&gs_sh->beat[w].beat, 1, __ATOMIC_RELEASE);
}

static inline int gs_gettid(void)
{
	return syscall(SYS_gettid);
}

/* Options: -s SEED -t SECONDS -p PROCS -j THREADS, then the environment. */
struct gs_fuzz_opts {
	uint64_t seed;
	unsigned int seconds;
	unsigned int procs;
	unsigned int threads;
	unsigned int hang_s;		/* no progress this long: a hang */
};

static inline void gs_fuzz_usage(void)
{
	fprintf(stderr,
		"usage: %s [-s SEED] [-t SECONDS] [-p PROCS] [-j THREADS] [-H HANG_S]\n"
		"  environment: GSFUZZ_SEED, GSFUZZ_SECONDS (options win)\n",
		gs_prog);
	exit(2);
}

static inline void gs_fuzz_parse(int argc, char **argv, struct gs_fuzz_opts *o)
{
	const char *env;
	int c;

	env = getenv("GSFUZZ_SEED");
	o->seed = env ? strtoull(env, NULL, 0) : 0;
	if (!o->seed)
		o->seed = gs_fuzz_now_ns() ^ ((uint64_t)getpid() << 32);
	env = getenv("GSFUZZ_SECONDS");
	if (env && atoi(env) > 0)
		o->seconds = atoi(env);
	while ((c = getopt(argc, argv, "s:t:p:j:H:")) != -1) {
		switch (c) {
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			o->seconds = atoi(optarg);
			break;
		case 'p':
			o->procs = atoi(optarg);
			break;
		case 'j':
			o->threads = atoi(optarg);
			break;
		case 'H':
			o->hang_s = atoi(optarg);
			break;
		default:
			gs_fuzz_usage();
		}
	}
	if (!o->seconds || !o->procs || !o->threads ||
	    o->procs * o->threads > GS_FUZZ_MAX_WORKERS)
		gs_fuzz_usage();
}

/*
 * A fuzzer's start: its options, "TAP version 13" and a plan of one test,
 * a skip (exit status 4) without the device, and the shared memory with
 * the seed in it. @ops: the names of its operations, for the counts.
 */
static inline void gs_fuzz_start(const char *prog, const char *const *ops,
				 int argc, char **argv, struct gs_fuzz_opts *o)
{
	gs_prog = prog;
	gs_op_names = ops;
	gs_fuzz_parse(argc, argv, o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..1\n");
	if (access(GPUSCHED_DEVICE_PATH, R_OK | W_OK)) {
		printf("ok 1 # SKIP %s: %s\n", GPUSCHED_DEVICE_PATH, strerror(errno));
		exit(4);
	}
	gs_fuzz_shared_init();
	gs_sh->seed = o->seed;
}

/*
 * A fuzzer's verdict, its test line: failed if any worker recorded a
 * failure or @bad problems were found after the run. Its exit status.
 */
static inline int gs_fuzz_verdict(uint64_t seed, const char *what,
				  uint64_t total, int bad)
{
	if (gs_sh->failures || bad) {
		printf("# %d failures; first: %s\n", gs_sh->failures, gs_sh->failure);
		printf("not ok 1 - %s seed %#" PRIx64 "\n", gs_prog, seed);
		return 1;
	}
	printf("ok 1 - %s seed %#" PRIx64 ": %" PRIu64 " %s, no failure\n",
	       gs_prog, seed, total, what);
	return 0;
}

/* The GPUs' knobs, saved at the start and written back at the end. */
static const char *const gs_knob_names[] = {
	"timeslice_us", "grace_us", "min_grant_us", "starve_us", "window_us",
	"latency_pct", "mem_default_pct", "mem_reserve_mb",
};
#define GS_NR_KNOBS	(sizeof(gs_knob_names) / sizeof(gs_knob_names[0]))

struct gs_knob_snap {
	int n;
	struct {
		unsigned int index;
		char val[GS_NR_KNOBS][32];
	} gpu[64];
};

static inline int gs_file_read(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static inline int gs_file_write(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	close(fd);
	return n < 0 ? -errno : 0;
}

static inline void gs_knobs_save(struct gs_knob_snap *s)
{
	DIR *d = opendir(GS_FUZZ_SYSFS);
	struct dirent *e;
	char path[300];
	unsigned int i, idx;

	s->n = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && s->n < 64) {
		if (sscanf(e->d_name, "gpu%u", &idx) != 1)
			continue;
		s->gpu[s->n].index = idx;
		for (i = 0; i < GS_NR_KNOBS; i++) {
			snprintf(path, sizeof(path), GS_FUZZ_SYSFS "/gpu%u/%s",
				 idx, gs_knob_names[i]);
			if (gs_file_read(path, s->gpu[s->n].val[i],
					 sizeof(s->gpu[s->n].val[i])))
				s->gpu[s->n].val[i][0] = '\0';
		}
		s->n++;
	}
	closedir(d);
}

/* Returns how many knobs could not be restored. */
static inline int gs_knobs_restore(const struct gs_knob_snap *s)
{
	char path[300];
	int g, bad = 0;
	unsigned int i;

	for (g = 0; g < s->n; g++) {
		for (i = 0; i < GS_NR_KNOBS; i++) {
			const char *v = s->gpu[g].val[i];

			if (!*v)
				continue;
			snprintf(path, sizeof(path), GS_FUZZ_SYSFS "/gpu%u/%s",
				 s->gpu[g].index, gs_knob_names[i]);
			if (gs_file_write(path, v, strlen(v))) {
				fprintf(stderr, "# cannot restore %s to %s", path, v);
				bad++;
			}
		}
	}
	return bad;
}

/* A GPU's state file as a number; -1 if unreadable. */
static inline long long gs_gpu_state(unsigned int index, const char *attr)
{
	char path[300], buf[64];

	snprintf(path, sizeof(path), GS_FUZZ_SYSFS "/gpu%u/%s", index, attr);
	if (gs_file_read(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

/* The sysfs index of each fuzz GPU, filled by gs_fuzz_find_gpus(). */
static unsigned int fuzz_gpu_index[GS_FUZZ_NR_GPUS];

/* Attach to each fuzz GPU once (creating its token): 0 or -errno. */
static inline int gs_fuzz_find_gpus(void)
{
	struct gpusched_client_info ci;
	struct gpusched_attach a = { 0 };
	unsigned int i;
	int fd, err;

	for (i = 0; i < GS_FUZZ_NR_GPUS; i++) {
		fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		gs_fuzz_uuid(a.uuid, i);
		err = ioctl(fd, GPUSCHED_IOC_ATTACH, &a) ? -errno : 0;
		if (!err)
			err = ioctl(fd, GPUSCHED_IOC_GET_INFO, &ci) ? -errno : 0;
		close(fd);
		if (err)
			return err;
		fuzz_gpu_index[i] = ci.gpu_index;
	}
	return 0;
}

/* "# N what in S s:" and the first nr_counters counters, six a line. */
static inline uint64_t gs_fuzz_print_counts(const char *what, uint64_t start_ns,
					    unsigned int nr_ops,
					    unsigned int nr_counters)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < nr_ops; i++)
		total += gs_sh->count[i];
	printf("# %" PRIu64 " %s in %.1f s:", total, what,
	       (gs_fuzz_now_ns() - start_ns) / 1e9);
	for (i = 0; i < nr_counters; i++)
		printf("%s %s %" PRIu64, i % 6 ? "," : "\n#  ", gs_op_names[i],
		       gs_sh->count[i]);
	return total;
}

/* What a stuck worker is doing in the kernel, as far as /proc tells. */
static inline void gs_dump_task(int pid, int tid)
{
	static const char *const files[] = { "wchan", "stack", "syscall" };
	char path[128], buf[2048];
	unsigned int i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", pid, tid,
			 files[i]);
		if (!gs_file_read(path, buf, sizeof(buf)))
			fprintf(stderr, "#   %s: %s\n", files[i], buf);
	}
}

/*
 * Watch the workers until they all exit: any worker whose heartbeat stays
 * still for hang_s while inside an operation is hung; then kill them all.
 * Returns true on a hang. Workers are reaped here.
 */
static inline bool gs_watch(pid_t *pids, int nr_pids, int nr_workers,
			    const struct gs_fuzz_opts *o)
{
	uint64_t last[GS_FUZZ_MAX_WORKERS] = { 0 };
	uint64_t since[GS_FUZZ_MAX_WORKERS];
	uint64_t hard_end = gs_sh->end_ns + (uint64_t)o->hang_s * 2000000000ull;
	int alive = nr_pids, w, i, status;
	bool hung = false;

	for (w = 0; w < nr_workers; w++)
		since[w] = gs_fuzz_now_ns();
	while (alive) {
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid > 0) {
			for (i = 0; i < nr_pids; i++) {
				if (pids[i] != pid)
					continue;
				pids[i] = 0;
				alive--;
				if (WIFSIGNALED(status) && !hung)
					gs_fail(-1, "worker process %d died of signal %d",
						i, WTERMSIG(status));
				else if (WIFEXITED(status) && WEXITSTATUS(status) && !hung)
					gs_fail(-1, "worker process %d exited with %d",
						i, WEXITSTATUS(status));
			}
			continue;
		}
		gs_fuzz_sleep_us(200000);
		for (w = 0; w < nr_workers && !hung; w++) {
			uint64_t b = __atomic_load_n(&gs_sh->beat[w].beat,
						     __ATOMIC_ACQUIRE);
			uint64_t now = gs_fuzz_now_ns();

			if (b != last[w] || gs_sh->beat[w].op < 0 ||
			    !gs_sh->beat[w].tid) {
				last[w] = b;
				since[w] = now;
				continue;
			}
			if (now - since[w] < (uint64_t)o->hang_s * 1000000000ull)
				continue;
			gs_fail(w, "hang: no progress for %u s in %s", o->hang_s,
				gs_op_names[gs_sh->beat[w].op]);
			for (i = 0; i < nr_pids; i++)
				if (pids[i] > 0)
					gs_dump_task(pids[i], gs_sh->beat[w].tid);
			hung = true;
		}
		if (hung || gs_fuzz_now_ns() > hard_end) {
			if (!hung) {
				gs_fail(-1, "workers still running %u s after the end",
					o->hang_s * 2);
				hung = true;
			}
			__atomic_store_n(&gs_sh->stop, 1, __ATOMIC_RELAXED);
			for (i = 0; i < nr_pids; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
		}
	}
	return hung;
}

static inline void gs_drop_privileges(void)
{
	if (setgroups(0, NULL) ||
	    setresgid(GS_FUZZ_NOBODY, GS_FUZZ_NOBODY, GS_FUZZ_NOBODY) ||
	    setresuid(GS_FUZZ_NOBODY, GS_FUZZ_NOBODY, GS_FUZZ_NOBODY))
		gs_fail(-1, "cannot become nobody: %s", strerror(errno));
}

/*
 * The at-most-one-holder check (one-holder.h) while a fuzzer runs:
 * GS_WITNESSES threads of the parent per fuzz GPU, each a client of its
 * own, take the token (with a timeout, so that a fuzzed holder cannot keep
 * them past the end), hold it a moment and give it back, until the run
 * ends. The fuzzers write the knobs, so a witness may be revoked: two
 * sections seen at once are judged when both RELEASEs have answered, and a
 * RELEASE refused (EPERM) must come with a revocation counted (GET_INFO
 * overruns): a token taken away in silence would hide a second holder.
 */
#define GS_WITNESSES	2

static struct gs_holders gs_witness_hold[GS_FUZZ_NR_GPUS];
static pthread_t gs_witness_th[GS_FUZZ_NR_GPUS * GS_WITNESSES];

static inline void *gs_witness(void *arg)
{
	unsigned int id = (uintptr_t)arg, gpu = id / GS_WITNESSES;
	unsigned int slot = id % GS_WITNESSES;
	struct gs_holders *h = &gs_witness_hold[gpu];
	struct gpusched_attach a = { 0 };
	struct gpusched_release rl = { 0 };
	struct gpusched_client_info ci;
	uint64_t overruns = 0;
	struct gs_rng rng;
	int fd, err = 0;

	gs_rng_init(&rng, gs_sh->seed, 1000 + id);
	fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	gs_fuzz_uuid(a.uuid, gpu);
	if (fd < 0 || ioctl(fd, GPUSCHED_IOC_ATTACH, &a)) {
		gs_fail(-1, "witness %u: cannot attach: %s", id, strerror(errno));
		goto out;
	}
	while (!gs_stopping()) {
		struct gpusched_acquire aq = {
			.flags = GPUSCHED_ACQUIRE_TIMEOUT,
			.timeout_ns = 20000000,
		};

		err = ioctl(fd, GPUSCHED_IOC_ACQUIRE, &aq) ? -errno : 0;
		/* EAGAIN: granted, then revoked before the thread ran. */
		if (err == -EAGAIN && !ioctl(fd, GPUSCHED_IOC_GET_INFO, &ci))
			overruns = ci.overruns;
		if (err == -ETIMEDOUT || err == -EINTR || err == -EAGAIN)
			continue;
		if (err) {
			gs_fail(-1, "witness %u: ACQUIRE: %s", id, strerror(-err));
			break;
		}
		gs_hold_enter(h, slot, true);
		gs_fuzz_sleep_us(gs_below(&rng, 200));
		gs_hold_leave(h, slot);
		err = ioctl(fd, GPUSCHED_IOC_RELEASE, &rl) ? -errno : 0;
		if (err && err != -EPERM) {	/* EPERM: revoked */
			gs_fail(-1, "witness %u: RELEASE: %s", id, strerror(-err));
			break;
		}
		if (err && (ioctl(fd, GPUSCHED_IOC_GET_INFO, &ci) ||
			    ci.overruns == overruns)) {
			gs_fail(-1, "gpu%u: witness %u lost the token with no revocation counted (%" PRIu64 " overruns)",
				fuzz_gpu_index[gpu], id, overruns);
			break;
		}
		if (err)
			overruns = ci.overruns;
		if (gs_hold_released(h, slot, !err))
			gs_fail(-1, "gpu%u: two holders: witness %u and another held the token at once (both RELEASEs succeeded)",
				fuzz_gpu_index[gpu], id);
	}
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* After gs_fuzz_find_gpus(): 0, or the number of witnesses not started. */
static inline int gs_witness_start(void)
{
	unsigned int i;
	int bad = 0;

	memset(gs_witness_hold, 0, sizeof(gs_witness_hold));
	for (i = 0; i < GS_FUZZ_NR_GPUS * GS_WITNESSES; i++) {
		if (pthread_create(&gs_witness_th[i], NULL, gs_witness,
				   (void *)(uintptr_t)i)) {
			gs_fail(-1, "cannot start witness %u", i);
			gs_witness_th[i] = 0;
			bad++;
		}
	}
	return bad;
}

/*
 * Once the run has ended: wait for the witnesses and say what they saw.
 * Returns the number of failures: second holders, and a GPU on which no
 * critical section was judged (the check would have checked nothing).
 */
static inline int gs_witness_stop(void)
{
	unsigned int i;
	int bad = 0;

	for (i = 0; i < GS_FUZZ_NR_GPUS * GS_WITNESSES; i++)
		if (gs_witness_th[i])
			pthread_join(gs_witness_th[i], NULL);
	for (i = 0; i < GS_FUZZ_NR_GPUS; i++) {
		const struct gs_holders *h = &gs_witness_hold[i];

		printf("# gpu%u: at most one holder: %u witnesses in %" PRIu64 " critical sections, %" PRIu64 " ended holding (%" PRIu64 " seen beside another, revoked), %" PRIu64 " second holders\n",
		       fuzz_gpu_index[i], GS_WITNESSES, h->entered, h->judged,
		       h->pairs, h->violations);
		bad += h->violations;
		if (!h->judged) {
			gs_fail(-1, "gpu%u: no critical section of a witness ended holding the token: nothing was checked",
				fuzz_gpu_index[i]);
			bad++;
		}
	}
	return bad;
}

#endif /* GS_FUZZ_COMMON_H */
