/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the in-VM tests of gpusched.ko: ioctl wrappers that
 * return 0 or -errno, the status page, the sysfs knobs, time, and child
 * processes that cannot outlive their test.
 *
 * Tokens live until rmmod and max_gpus bounds them, so every program owns
 * one GPU UUID from enum gs_test_gpu and sets the knobs it relies on in its
 * fixture (capacity and unload reload the module).
 */
#ifndef GS_TEST_H
#define GS_TEST_H

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
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

#include "kselftest_harness.h"
#include "gs_module.h"		/* GS_PARAM_DIR, gs_module_*() */

#define GS_SYSFS_DIR	"/sys/kernel/gpusched"

enum gs_test_gpu {
	GS_GPU_BASICS = 1,
	GS_GPU_BADINPUT,
	GS_GPU_EXCLUSION,
	GS_GPU_SHARE,
	GS_GPU_KILL,
	GS_GPU_OVERRUN,
	GS_GPU_TIMESLICE,
	GS_GPU_MANY,
	GS_GPU_NL_DUMP = 0x40,
	GS_GPU_NAMESPACES,
	GS_GPU_GRANT_PAGE,
	GS_GPU_HARDENING,
	GS_GPU_FAULT = 0x50,	/* to 0x5f */
	GS_GPU_CAP_BATCH = 0x60,
	GS_GPU_TWO,		/* two-gpus.c: this and GS_GPU_TWO_B */
	GS_GPU_TWO_B,
	GS_GPU_MEM = 0x70,	/* mem.c */
	GS_GPU_UID_LIMIT = 0x74,	/* uid-limit.c: this and _B */
	GS_GPU_UID_LIMIT_B,
	GS_GPU_UNLOAD,		/* unload.c */
	GS_GPU_CAPACITY = 0x80,	/* + n for its n-th token */
};

/* Skip the whole program, before the harness starts, without the device. */
static void __attribute__((constructor)) gs_require_device(void)
{
	if (access(GPUSCHED_DEVICE_PATH, R_OK | W_OK) == 0)
		return;
	printf("TAP version 13\n1..0 # SKIP %s: %s\n", GPUSCHED_DEVICE_PATH,
	       strerror(errno));
	exit(KSFT_SKIP);
}

static inline void gs_uuid(__u8 uuid[GPUSCHED_UUID_LEN], unsigned int id)
{
	static const char tag[] = "gsTEST";

	memset(uuid, 0, GPUSCHED_UUID_LEN);
	memcpy(uuid, tag, sizeof(tag) - 1);
	uuid[GPUSCHED_UUID_LEN - 1] = id;
}

static inline uint64_t gs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void gs_sleep_us(uint64_t us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static inline int gs_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int gs_open(void)
{
	int fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Attach to the GPU of test UUID @id (enum gs_test_gpu). */
static inline int gs_attach(int fd, unsigned int id)
{
	struct gpusched_attach a = { 0 };

	gs_uuid(a.uuid, id);
	return gs_ioctl(fd, GPUSCHED_IOC_ATTACH, &a);
}

/* A new client attached to test UUID @id: an fd, or -errno. */
static inline int gs_open_attached(unsigned int id)
{
	int fd = gs_open(), err;

	if (fd < 0)
		return fd;
	err = gs_attach(fd, id);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static inline int gs_acquire(int fd, __u32 flags, __u64 timeout_ns)
{
	struct gpusched_acquire a = { .flags = flags, .timeout_ns = timeout_ns };

	return gs_ioctl(fd, GPUSCHED_IOC_ACQUIRE, &a);
}

static inline int gs_yield(int fd)
{
	struct gpusched_acquire a = { 0 };

	return gs_ioctl(fd, GPUSCHED_IOC_YIELD, &a);
}

static inline int gs_release(int fd)
{
	struct gpusched_release r = { 0 };

	return gs_ioctl(fd, GPUSCHED_IOC_RELEASE, &r);
}

/* RELEASE with a report of @gpu_ns of GPU time (GPUSCHED_FEAT_GPU_TIME). */
static inline int gs_release_gpu(int fd, __u64 gpu_ns)
{
	struct gpusched_release r = { .gpu_ns = gpu_ns };

	return gs_ioctl(fd, GPUSCHED_IOC_RELEASE, &r);
}

static inline int gs_set_weight(int fd, __u32 weight)
{
	struct gpusched_params p = {
		.mask = GPUSCHED_PARAM_WEIGHT, .weight = weight,
	};

	return gs_ioctl(fd, GPUSCHED_IOC_SET_PARAMS, &p);
}

static inline int gs_info(int fd, struct gpusched_client_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	return gs_ioctl(fd, GPUSCHED_IOC_GET_INFO, ci);
}

/* The status page, or NULL with errno set. */
static inline const struct gpusched_status *gs_map_status(int fd)
{
	void *p = mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ, MAP_SHARED, fd,
		       GPUSCHED_STATUS_OFFSET);

	return p == MAP_FAILED ? NULL : p;
}

static inline void gs_unmap_status(const struct gpusched_status *st)
{
	if (st)
		munmap((void *)st, GPUSCHED_STATUS_SIZE);
}

/* The kernel writes the page concurrently: acquire loads, as documented. */
static inline __u32 gs_st_flags(const struct gpusched_status *st)
{
	return __atomic_load_n(&st->flags, __ATOMIC_ACQUIRE);
}

static inline __u32 gs_st_nr_waiting(const struct gpusched_status *st)
{
	return __atomic_load_n(&st->nr_waiting, __ATOMIC_ACQUIRE);
}

/* sysfs: 0 or -errno. */
static inline int gs_sysfs_write_path(const char *path, const char *val)
{
	ssize_t len = strlen(val), n;
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	if (n < 0)
		err = -errno;
	else if (n != len)
		err = -EIO;
	close(fd);
	return err;
}

static inline int gs_sysfs_read_path(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		err = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return err;
}

static inline void gs_gpu_path(char *path, size_t size, unsigned int index,
			       const char *attr)
{
	snprintf(path, size, GS_SYSFS_DIR "/gpu%u/%s", index, attr);
}

static inline int gs_gpu_write(unsigned int index, const char *attr,
			       const char *val)
{
	char path[256];

	gs_gpu_path(path, sizeof(path), index, attr);
	return gs_sysfs_write_path(path, val);
}

static inline int gs_gpu_write_u64(unsigned int index, const char *attr,
				   unsigned long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", val);
	return gs_gpu_write(index, attr, buf);
}

/* A number from a sysfs file; -1 if it cannot be read or parsed. */
static inline long long gs_read_number(const char *path)
{
	char buf[64], *end;
	long long v;

	if (gs_sysfs_read_path(path, buf, sizeof(buf)))
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -1;
	return v;
}

static inline long long gs_gpu_read(unsigned int index, const char *attr)
{
	char path[256];

	gs_gpu_path(path, sizeof(path), index, attr);
	return gs_read_number(path);
}

static inline long long gs_param_read(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), GS_PARAM_DIR "/%s", name);
	return gs_read_number(path);
}

/*
 * Wait until @n clients wait on GPU @index. Only the holder's status page
 * is kept current on other clients' events, so ask sysfs.
 */
static inline bool gs_gpu_wait_waiting(unsigned int index, long long n)
{
	uint64_t end = gs_now_ns() + 5000000000ull;

	while (gs_gpu_read(index, "nr_waiting") != n) {
		if (gs_now_ns() > end)
			return false;
		gs_sleep_us(1000);
	}
	return true;
}

/* The sysfs index of the GPU that @fd is attached to, or -errno. */
static inline int gs_gpu_index(int fd)
{
	struct gpusched_client_info ci;
	int err = gs_info(fd, &ci);

	return err ? err : (int)ci.gpu_index;
}

/* Tokens (GPUs) the module has, by their sysfs directories. */
static inline int gs_count_tokens(void)
{
	DIR *dir = opendir(GS_SYSFS_DIR);
	struct dirent *d;
	int n = 0;

	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		n += !strncmp(d->d_name, "gpu", 3);
	closedir(dir);
	return n;
}

/*
 * Fork a child that dies with its parent (the test process), so that a
 * failed or timed-out test leaves no client attached behind it. The child
 * must leave with _exit().
 */
static inline pid_t gs_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
	}
	return pid;
}

/* Exit status of a child, or 128 + signal, or -1 if waitpid fails. */
static inline int gs_wait(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

#define GS_NOBODY	65534

/*
 * Become nobody: uid and gid GS_NOBODY, no supplementary groups. With
 * @keep_root the saved uid stays 0, so that seteuid(0) takes root back.
 * 0 or -errno.
 */
static inline int gs_become_nobody(bool keep_root)
{
	if (setgroups(0, NULL) || setresgid(GS_NOBODY, GS_NOBODY, GS_NOBODY) ||
	    setresuid(GS_NOBODY, GS_NOBODY, keep_root ? 0 : GS_NOBODY))
		return -errno;
	return 0;
}

/*
 * gs_fork() a child that becomes nobody (gs_become_nobody()): its pid in
 * the parent, 0 in the child, or -errno. A child that cannot become
 * nobody says why and exits with 126.
 */
static inline pid_t gs_fork_nobody(bool keep_root)
{
	pid_t pid = gs_fork();
	int err;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		err = gs_become_nobody(keep_root);
		if (err) {
			ksft_print_msg("cannot become nobody: %s\n", strerror(-err));
			_exit(126);
		}
	}
	return pid;
}

/*
 * In a TEST_F() body, "if (!gs_nobody_child(_metadata, keep_root)) return;"
 * goes on in a child that is nobody (gs_fork_nobody()), while the test
 * waits for it and passes only if it exits 0: true in the child, false in
 * the test. The child ends with _exit(_metadata->passed ? 0 : 1).
 */
static inline bool gs_nobody_child(struct __test_metadata *_metadata,
				   bool keep_root)
{
	pid_t pid = gs_fork_nobody(keep_root);

	EXPECT_LE(0, pid) TH_LOG("fork: %s", strerror(-pid));
	if (pid > 0)
		EXPECT_EQ(0, gs_wait(pid));
	return pid == 0;
}

/* Spin until @cond or @timeout_ms passes; the value of @cond. */
#define gs_wait_until(cond, timeout_ms) ({				\
	uint64_t __end = gs_now_ns() + (uint64_t)(timeout_ms) * 1000000; \
	bool __ok;							\
	while (!(__ok = (cond)) && gs_now_ns() < __end)		\
		gs_sleep_us(1000);					\
	__ok;								\
})

/*
 * A client that always has work, as the library would drive it: hold the
 * token until the kernel asks for it back, then YIELD, until @end_ns.
 * Shared memory between the parent and its busy children.
 *
 * Each child times its grants on its own CLOCK_MONOTONIC, so that tests
 * judge the module by what its clients saw rather than by the module's
 * own figures (held_ns).
 */
#define GS_BUSY_GRANTS	4096	/* grants recorded per child */

struct gs_grant {
	uint64_t granted_ns;	/* ACQUIRE or YIELD returned */
	uint64_t asked_ns;	/* the yield request seen; 0: none (the run ended) */
	uint64_t yielded_ns;	/* YIELD or RELEASE called */
	int64_t slice_left_ns;	/* the page's slice end less granted_ns */
	bool late;		/* the request was there when it woke */
	int child;
};

struct gs_busy {
	int ready;			/* children attached and set up */
	uint64_t end_ns;		/* 0 until the parent says go */
	struct gs_busy_result {
		int err;		/* 0, or the step that failed */
		uint64_t held_ns, grants, overruns;	/* GET_INFO */
		uint64_t acquire_ns;	/* ACQUIRE called */
		/* Its own time with the token: granted_ns to yielded_ns, summed. */
		uint64_t own_ns;
		/*
		 * Every grant, the last one (ended by RELEASE) included. Yield
		 * requests seen before the page's slice end are counted.
		 */
		unsigned int n;
		unsigned int lost;	/* past GS_BUSY_GRANTS */
		unsigned int early_yields;
		struct gs_grant grant[GS_BUSY_GRANTS];
	} res[2];
};

static inline int gs_busy_run(unsigned int id, __u32 weight,
			      struct gs_busy *b, struct gs_busy_result *res)
{
	const struct gpusched_status *st;
	struct gpusched_client_info ci;
	struct gs_grant g = { .child = res - b->res };
	uint64_t end, slice_end;
	bool ended = false;
	int fd;

	fd = gs_open_attached(id);
	if (fd < 0)
		return 1;
	if (gs_set_weight(fd, weight))
		return 2;
	st = gs_map_status(fd);
	if (!st)
		return 3;
	__atomic_add_fetch(&b->ready, 1, __ATOMIC_SEQ_CST);
	while (!(end = __atomic_load_n(&b->end_ns, __ATOMIC_ACQUIRE)))
		gs_sleep_us(1000);

	res->acquire_ns = gs_now_ns();
	if (gs_acquire(fd, 0, 0))
		return 4;
	while (!ended) {
		g.granted_ns = gs_now_ns();
		slice_end = __atomic_load_n(&st->slice_end_ns, __ATOMIC_RELAXED);
		g.slice_left_ns = slice_end - g.granted_ns;
		g.late = gs_st_flags(st) & GPUSCHED_ST_YIELD;
		while (!(gs_st_flags(st) & GPUSCHED_ST_YIELD) &&
		       gs_now_ns() < end)
			;
		g.asked_ns = gs_now_ns();
		ended = g.asked_ns >= end;
		if (ended)
			g.asked_ns = 0;
		/* The page's slice end only moves later; the request follows it. */
		else if (g.asked_ns < slice_end)
			res->early_yields++;
		g.yielded_ns = gs_now_ns();
		res->own_ns += g.yielded_ns - g.granted_ns;
		if (res->n < GS_BUSY_GRANTS)
			res->grant[res->n++] = g;
		else
			res->lost++;
		if (!ended && gs_yield(fd))
			return 5;
	}
	if (gs_release(fd))
		return 6;
	if (gs_info(fd, &ci))
		return 7;
	res->held_ns = ci.held_ns;
	res->grants = ci.grants;
	res->overruns = ci.overruns;
	return 0;
}

/*
 * Run two busy children on test UUID @id for @run_ms; 0, or the first
 * error seen.
 */
static inline int gs_busy_pair(unsigned int id, const __u32 weight[2],
			       unsigned int run_ms, struct gs_busy *b)
{
	pid_t pid[2];
	int i, err = 0, status;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < 2; i++) {
		pid[i] = gs_fork();
		if (pid[i] < 0)
			return -errno;
		if (pid[i] == 0)
			_exit(gs_busy_run(id, weight[i], b, &b->res[i]));
	}
	if (!gs_wait_until(__atomic_load_n(&b->ready, __ATOMIC_SEQ_CST) == 2,
			   10000))
		err = -ETIMEDOUT;
	__atomic_store_n(&b->end_ns, gs_now_ns() + run_ms * 1000000ull,
			 __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		if (err)
			kill(pid[i], SIGKILL);
		status = gs_wait(pid[i]);
		b->res[i].err = status;
		if (status && !err)
			err = status;
	}
	return err;
}

static inline int gs_grant_cmp(const void *a, const void *b)
{
	const struct gs_grant *x = a, *y = b;

	return x->granted_ns < y->granted_ns ? -1 :
	       x->granted_ns > y->granted_ns;
}

/*
 * Both children's grants of a gs_busy_pair() run in @g (room for
 * 2 * GS_BUSY_GRANTS), in time order; their number. A grant began in the
 * kernel no earlier than @from[i]: the call that ended the grant before it
 * (a client is granted only once the holder gave the token back), or the
 * child's ACQUIRE for the first. @overlap: grants that began, by the
 * children's clocks, before the one before them had ended: two holders at
 * once.
 */
static inline unsigned int gs_busy_grants(const struct gs_busy *b,
					  struct gs_grant *g, uint64_t *from,
					  unsigned int *overlap)
{
	unsigned int i, n = 0;

	for (i = 0; i < 2; i++) {
		memcpy(g + n, b->res[i].grant, b->res[i].n * sizeof(*g));
		n += b->res[i].n;
	}
	qsort(g, n, sizeof(*g), gs_grant_cmp);
	*overlap = 0;
	for (i = 0; i < n; i++) {
		from[i] = b->res[g[i].child].acquire_ns;
		if (i && g[i - 1].yielded_ns > g[i].granted_ns)
			(*overlap)++;
		if (i && g[i - 1].yielded_ns > from[i])
			from[i] = g[i - 1].yielded_ns;
	}
	return n;
}

#endif /* GS_TEST_H */
