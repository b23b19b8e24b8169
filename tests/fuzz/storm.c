// SPDX-License-Identifier: GPL-2.0
/*
 * storm: fault storms on gpusched.ko, in the VM.
 *
 * 1. contend: C clients (processes) x N acquire/release each on one token,
 *    checking at every grant that no other live client is inside its
 *    critical section (at most one holder), with a grace time so long that
 *    no revocation is expected (and none must happen).
 * 2. kill: K SIGKILLs of random clients of a busy token, holders and
 *    waiters alike, each replaced by a new one; the same invariant; then
 *    the token must be free and a new client must get it at once (no lost
 *    token), and no client, waiter or holder may be left behind.
 * 3. unload: rmmod attempts (delete_module) while clients are attached and
 *    while one holds the token must fail and change nothing; then, with no
 *    client left, R unload/reload cycles with clients between them (the
 *    module is reloaded from /gpusched.ko with the parameters it had).
 *
 * storm [-c CLIENTS] [-n OPS] [-k KILLS] [-r RELOADS] [-s SEED] [-p SECONDS]
 * (GSSTORM_CLIENTS, GSSTORM_OPS, GSSTORM_KILLS, GSSTORM_RELOADS,
 * GSSTORM_SEED, GSSTORM_PROGRESS in the environment; the defaults, 8 x 250,
 * 100 kills and 2 reloads, keep `make check` short; check-debug asks for
 * more, `make check-storm` for the issue's 64 x 10^4 and 1,000 kills.)
 * Prints TAP, one test per phase, and the contention's progress every
 * -p seconds (default 60; 0: never).
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "fuzz-common.h"
#include "../kselftest/gs_module.h"
#include "one-holder.h"

#define STORM_GPU	2	/* "gsFUZZ" + 2: not the fuzzers' */
#define MAX_CLIENTS	GS_HOLD_SLOTS

struct storm {
	/* No revocation: a client found inside is a second holder at once. */
	struct gs_holders hold;
	uint64_t grants;
	uint64_t ops;
	int stop;
	int ready;
};

static struct storm *S;
static unsigned int gpu_index;
static __u8 storm_uuid[GPUSCHED_UUID_LEN];

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int open_attached(void)
{
	struct gpusched_attach a = { 0 };
	int fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	memcpy(a.uuid, storm_uuid, sizeof(a.uuid));
	if (xioctl(fd, GPUSCHED_IOC_ATTACH, &a)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The token to storm: our own, or, when every slot is taken (zz-capacity
 * fills them, and storm runs after it), the first GPU's.
 */
static int pick_uuid(void)
{
	struct gpusched_attach a = { 0 };
	char hex[64];
	unsigned int i, n = 0;
	int fd, err;

	gs_fuzz_uuid(storm_uuid, STORM_GPU);
	fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memcpy(a.uuid, storm_uuid, sizeof(a.uuid));
	err = xioctl(fd, GPUSCHED_IOC_ATTACH, &a);
	close(fd);
	if (err != -ENOSPC)
		return err;
	if (gs_file_read(GS_FUZZ_SYSFS "/gpu0/uuid", hex, sizeof(hex)))
		return err;
	/* GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx */
	for (i = 4; hex[i] && hex[i] != '\n' && n < GPUSCHED_UUID_LEN; i++) {
		unsigned int b;

		if (hex[i] == '-')
			continue;
		if (sscanf(hex + i, "%2x", &b) != 1)
			return -EINVAL;
		storm_uuid[n++] = b;
		i++;
	}
	return n == GPUSCHED_UUID_LEN ? 0 : -EINVAL;
}

/* One client: acquire, a short critical section, release; @n times or
 * until told to stop. Holds for up to @hold_us. */
static int client(int me, unsigned int n, unsigned int hold_us, uint64_t seed)
{
	struct gpusched_acquire aq = { 0 };
	struct gpusched_release rl = { 0 };
	struct gs_rng rng;
	unsigned int i;
	int fd, err;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	gs_rng_init(&rng, seed, me);
	fd = open_attached();
	if (fd < 0)
		return 1;
	__atomic_add_fetch(&S->ready, 1, __ATOMIC_SEQ_CST);
	for (i = 0; (!n || i < n) && !__atomic_load_n(&S->stop, __ATOMIC_RELAXED); i++) {
		err = xioctl(fd, GPUSCHED_IOC_ACQUIRE, &aq);
		if (err)
			return 2;
		gs_hold_enter(&S->hold, me, false);
		__atomic_add_fetch(&S->grants, 1, __ATOMIC_RELAXED);
		if (hold_us)
			gs_fuzz_sleep_us(gs_below(&rng, hold_us));
		gs_hold_leave(&S->hold, me);
		err = xioctl(fd, GPUSCHED_IOC_RELEASE, &rl);
		if (err && err != -EPERM)	/* EPERM: revoked */
			return 3;
		gs_hold_released(&S->hold, me, !err);
		__atomic_add_fetch(&S->ops, 1, __ATOMIC_RELAXED);
	}
	close(fd);
	return 0;
}

static pid_t spawn(int me, unsigned int n, unsigned int hold_us, uint64_t seed)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/*
		 * Not the parent's clients: a copy of a holder's file would
		 * keep it holding after the parent closes it, until it is
		 * revoked (phase_unload waited out the grace time that way).
		 */
		close_range(3, ~0U, 0);
		_exit(client(me, n, hold_us, seed));
	}
	return pid;
}

static int exit_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return exit_status(st);
}

/*
 * Wait for the @nr clients of @pids, saying every progress_s seconds how
 * far they got (a long storm is otherwise silent until it ends); the
 * number that did not exit 0.
 */
static unsigned int progress_s = 60;

static int wait_clients(const pid_t *pids, int nr, uint64_t t0)
{
	uint64_t next = t0 + progress_s * 1000000000ull;
	int left = nr, bad = 0, i, st;
	pid_t pid;

	while (left) {
		pid = waitpid(-1, &st, WNOHANG);
		if (pid < 0 && errno != EINTR)
			break;
		if (pid <= 0) {
			if (progress_s && gs_fuzz_now_ns() >= next) {
				printf("# ... %" PRIu64 " acquire/release, %" PRIu64 " grants, %" PRIu64 " violations at %.0f s\n",
				       __atomic_load_n(&S->ops, __ATOMIC_RELAXED),
				       __atomic_load_n(&S->grants, __ATOMIC_RELAXED),
				       __atomic_load_n(&S->hold.violations, __ATOMIC_RELAXED),
				       (gs_fuzz_now_ns() - t0) / 1e9);
				next += progress_s * 1000000000ull;
			}
			gs_fuzz_sleep_us(20000);
			continue;
		}
		for (i = 0; i < nr && pids[i] != pid; i++)
			;
		if (i == nr)
			continue;	/* not one of these */
		left--;
		if (exit_status(st)) {
			printf("# client %d: exit status %d\n", i, exit_status(st));
			bad++;
		}
	}
	return bad + left;
}

/* No client left, the token free, and a new client gets it at once. */
static const char *token_sane(void)
{
	struct gpusched_acquire nb = { .flags = GPUSCHED_ACQUIRE_NONBLOCK };
	struct gpusched_release rl = { 0 };
	uint64_t end = gs_fuzz_now_ns() + 10000000000ull;
	int fd, err;

	while (gs_gpu_state(gpu_index, "nr_clients") && gs_fuzz_now_ns() < end)
		gs_fuzz_sleep_us(10000);
	if (gs_gpu_state(gpu_index, "nr_clients"))
		return "clients left behind";
	if (gs_gpu_state(gpu_index, "nr_waiting"))
		return "waiters left behind";
	if (gs_gpu_state(gpu_index, "holder_pid"))
		return "a holder left behind";
	fd = open_attached();
	if (fd < 0)
		return "cannot attach";
	err = xioctl(fd, GPUSCHED_IOC_ACQUIRE, &nb);
	if (!err)
		err = xioctl(fd, GPUSCHED_IOC_RELEASE, &rl);
	close(fd);
	return err ? "token lost: a new client cannot take it" : NULL;
}

static void knob(const char *name, unsigned long long v)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), GS_FUZZ_SYSFS "/gpu%u/%s", gpu_index, name);
	snprintf(buf, sizeof(buf), "%llu\n", v);
	gs_file_write(path, buf, strlen(buf));
}

/*
 * Where a phase's time went: the VM's CPUs (busy, idle: /proc/stat) and
 * the clients' own CPU time, user (the storm's checking) and system (the
 * ioctls, the module, the scheduler).
 */
struct cpu_use {
	unsigned long long busy, idle;	/* USER_HZ ticks, all CPUs */
	struct rusage ru;		/* reaped children */
};

static void cpu_use(struct cpu_use *u)
{
	unsigned long long v[8] = { 0 };
	char buf[256];

	memset(u, 0, sizeof(*u));
	getrusage(RUSAGE_CHILDREN, &u->ru);
	if (gs_file_read("/proc/stat", buf, sizeof(buf)) ||
	    sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
		return;
	u->idle = v[3] + v[4];
	u->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

static double tv_s(struct timeval a, struct timeval b)
{
	return (b.tv_sec - a.tv_sec) + (b.tv_usec - a.tv_usec) / 1e6;
}

static void cpu_report(const struct cpu_use *a)
{
	unsigned long long busy, idle;
	struct cpu_use b;

	cpu_use(&b);
	busy = b.busy - a->busy;
	idle = b.idle - a->idle;
	printf("# CPU: the VM's %ld CPUs %.0f%% busy; clients %.1f s user, %.1f s system\n",
	       sysconf(_SC_NPROCESSORS_ONLN),
	       busy + idle ? 100.0 * busy / (busy + idle) : 0.0,
	       tv_s(a->ru.ru_utime, b.ru.ru_utime),
	       tv_s(a->ru.ru_stime, b.ru.ru_stime));
}

static int phase_contend(int nr, unsigned int ops, uint64_t seed)
{
	long long grants0 = gs_gpu_state(gpu_index, "grants");
	long long overruns0 = gs_gpu_state(gpu_index, "overruns");
	pid_t pids[MAX_CLIENTS];
	uint64_t t0 = gs_fuzz_now_ns();
	struct cpu_use cpu;
	const char *why;
	int i, bad;

	memset(S, 0, sizeof(*S));
	knob("timeslice_us", 100);
	knob("grace_us", 10000000);
	cpu_use(&cpu);
	for (i = 0; i < nr; i++)
		pids[i] = spawn(i, ops, 0, seed);
	bad = wait_clients(pids, nr, t0);
	cpu_report(&cpu);
	why = token_sane();
	printf("# %d clients x %u: %" PRIu64 " acquire/release in %.1f s, %lld grants, %lld overruns, %" PRIu64 " violations\n",
	       nr, ops, S->ops, (gs_fuzz_now_ns() - t0) / 1e9,
	       gs_gpu_state(gpu_index, "grants") - grants0,
	       gs_gpu_state(gpu_index, "overruns") - overruns0, S->hold.violations);
	if (why)
		printf("# %s\n", why);
	return bad || why || S->hold.violations ||
	       S->ops != (uint64_t)nr * ops ||
	       gs_gpu_state(gpu_index, "overruns") != overruns0;
}

static int phase_kill(int nr, unsigned int kills, uint64_t seed)
{
	long long overruns0 = gs_gpu_state(gpu_index, "overruns");
	long long overruns;
	pid_t pids[MAX_CLIENTS];
	unsigned int k, holders = 0;
	struct gs_rng rng;
	uint64_t t0 = gs_fuzz_now_ns();
	const char *why;
	int i, c, bad = 0;

	memset(S, 0, sizeof(*S));
	gs_rng_init(&rng, seed, 4242);
	knob("timeslice_us", 1000);
	knob("grace_us", 10000000);
	for (i = 0; i < nr; i++)
		pids[i] = spawn(i, 0, 2000, seed + i);
	for (k = 0; k < kills; k++) {
		gs_fuzz_sleep_us(gs_below(&rng, 3000));
		i = gs_below(&rng, nr);
		/*
		 * Half the time the holder, if one is in its critical section
		 * (one draw, then a look at every client: a draw per client
		 * looked at the first few alone, and found the holder in 1%
		 * of the kills among 64 clients).
		 */
		for (c = gs_chance(&rng, 50) ? 0 : nr; c < nr; c++) {
			if (gs_hold_inside(&S->hold, c)) {
				i = c;
				break;
			}
		}
		__atomic_store_n(&S->hold.dying[i], 1, __ATOMIC_SEQ_CST);
		holders += gs_hold_inside(&S->hold, i);
		kill(pids[i], SIGKILL);
		if (wait_status(pids[i]) != 128 + SIGKILL)
			bad++;
		gs_hold_leave(&S->hold, i);
		__atomic_store_n(&S->hold.dying[i], 0, __ATOMIC_SEQ_CST);
		pids[i] = spawn(i, 0, 2000, seed + kills + k);
	}
	__atomic_store_n(&S->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < nr; i++) {
		int st;

		/* A client may wait for the token: the holder's release ends it. */
		st = wait_status(pids[i]);
		if (st)
			bad++;
	}
	why = token_sane();
	/* A killed holder's close releases: the grace time never runs out. */
	overruns = gs_gpu_state(gpu_index, "overruns") - overruns0;
	printf("# %u SIGKILLs (%u of a holder) among %d clients in %.1f s: %" PRIu64 " grants, %" PRIu64 " violations, %lld overruns, %d bad exits\n",
	       kills, holders, nr, (gs_fuzz_now_ns() - t0) / 1e9, S->grants,
	       S->hold.violations, overruns, bad);
	if (why)
		printf("# %s\n", why);
	return bad || why || S->hold.violations || overruns;
}

/*
 * After a reload: create the token again (tokens do not survive it), find
 * its index, and set the storm's slice and grace time on it.
 */
static int set_knobs_again(unsigned long long slice_us)
{
	struct gpusched_client_info ci;
	int fd = open_attached(), err;

	if (fd < 0)
		return -ENOTCONN;
	err = xioctl(fd, GPUSCHED_IOC_GET_INFO, &ci);
	close(fd);
	if (err)
		return err;
	gpu_index = ci.gpu_index;
	knob("timeslice_us", slice_us);
	knob("grace_us", 10000000);
	return 0;
}

static int phase_unload(int reloads, uint64_t seed)
{
	long long overruns0 = gs_gpu_state(gpu_index, "overruns");
	struct gpusched_acquire aq = { 0 };
	uint64_t t0 = gs_fuzz_now_ns();
	long long overruns;
	char params[512];
	int fds[8], i, r, err, refused = 0, bad = 0, cycles = 0;
	pid_t pid;

	if (gs_module_params(params, sizeof(params)))
		return 1;	/* it says which */
	/* Attached clients, one holding: every attempt must fail. */
	for (i = 0; i < 8; i++)
		fds[i] = open_attached();
	if (fds[0] < 0 || xioctl(fds[0], GPUSCHED_IOC_ACQUIRE, &aq))
		bad++;
	memset(S, 0, sizeof(*S));
	pid = spawn(9, 0, 500, seed);		/* and one contending */
	for (r = 0; r < 50; r++) {
		err = gs_module_unload();
		if (err == -EBUSY || err == -EAGAIN)
			refused++;
		else
			bad++;
		gs_fuzz_sleep_us(2000);
	}
	__atomic_store_n(&S->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < 8; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (wait_status(pid))
		bad++;
	if (token_sane())
		bad++;
	/* The holder released by closing: the contender never revoked it. */
	overruns = gs_gpu_state(gpu_index, "overruns") - overruns0;
	if (overruns)
		bad++;
	printf("# %d rmmod attempts with clients attached: %d refused, %lld overruns, %.1f s\n",
	       r, refused, overruns, (gs_fuzz_now_ns() - t0) / 1e9);

	/* No client left: unload and reload, with clients in between. */
	if (access(GS_MODULE_PATH, R_OK)) {
		printf("# no %s: unload/reload cycles skipped\n", GS_MODULE_PATH);
		return bad;
	}
	for (r = 0; r < reloads && !bad; r++) {
		err = gs_module_unload();
		if (err) {
			printf("# unload %d: %s\n", r, strerror(-err));
			bad++;
			break;
		}
		err = gs_module_load(params);
		if (err) {
			printf("# reload %d (%s): %s\n", r, params, strerror(-err));
			bad++;
			break;
		}
		cycles++;
		/*
		 * The new token has the module's grace time (100 ms by
		 * default), which a client descheduled inside its critical
		 * section can overrun on a slow VM: revoked, it would count
		 * as a second holder. The storm's knobs again, then.
		 */
		err = set_knobs_again(1000);
		if (err) {
			printf("# reload %d: no token to set: %s\n", r, strerror(-err));
			bad++;
			break;
		}
		overruns0 = gs_gpu_state(gpu_index, "overruns");
		memset(S, 0, sizeof(*S));
		for (i = 0; i < 4; i++)
			fds[i] = spawn(i, 50, 100, seed + r);
		for (i = 0; i < 4; i++) {
			err = wait_status(fds[i]);
			if (err) {
				printf("# reload %d: client %d exit status %d\n", r, i, err);
				bad++;
			}
		}
		overruns = gs_gpu_state(gpu_index, "overruns") - overruns0;
		if (S->hold.violations || overruns) {
			printf("# reload %d: %" PRIu64 " violations, %lld overruns\n", r,
			       S->hold.violations, overruns);
			bad++;
		}
	}
	printf("# %d unload/reload cycles (%s)\n", cycles, params);
	return bad;
}

int main(int argc, char **argv)
{
	unsigned int ops = 250, kills = 100, reloads = 2, nr = 8;
	uint64_t seed = gs_fuzz_now_ns();
	const char *env;
	int c, fd, t = 0, failed = 0;
	struct gpusched_client_info ci;

	if ((env = getenv("GSSTORM_OPS")))
		ops = atoi(env);
	if ((env = getenv("GSSTORM_KILLS")))
		kills = atoi(env);
	if ((env = getenv("GSSTORM_CLIENTS")))
		nr = atoi(env);
	if ((env = getenv("GSSTORM_RELOADS")))
		reloads = atoi(env);
	if ((env = getenv("GSSTORM_SEED")))
		seed = strtoull(env, NULL, 0);
	if ((env = getenv("GSSTORM_PROGRESS")))
		progress_s = atoi(env);
	while ((c = getopt(argc, argv, "c:n:k:r:s:p:")) != -1) {
		switch (c) {
		case 'c': nr = atoi(optarg); break;
		case 'n': ops = atoi(optarg); break;
		case 'k': kills = atoi(optarg); break;
		case 'r': reloads = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'p': progress_s = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: storm [-c CLIENTS] [-n OPS] [-k KILLS] [-r RELOADS] [-s SEED] [-p SECONDS]\n");
			return 2;
		}
	}
	if (nr < 2 || nr > MAX_CLIENTS)
		nr = 16;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..3\n");
	if (access(GPUSCHED_DEVICE_PATH, R_OK | W_OK)) {
		printf("ok 1 # SKIP %s: %s\nok 2 # SKIP\nok 3 # SKIP\n",
		       GPUSCHED_DEVICE_PATH, strerror(errno));
		return 4;
	}
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	c = pick_uuid();
	if (c)
		printf("# no token to storm: %s\n", strerror(-c));
	fd = open_attached();
	if (S == MAP_FAILED || fd < 0 || xioctl(fd, GPUSCHED_IOC_GET_INFO, &ci)) {
		printf("Bail out! cannot attach\n");
		return 1;
	}
	close(fd);
	gpu_index = ci.gpu_index;
	printf("# seed %#" PRIx64 ", gpu%u\n", seed, gpu_index);

	c = phase_contend(nr, ops, seed);
	printf("%s %d - contend: %d clients x %u acquire/release, at most one holder\n",
	       c ? "not ok" : "ok", ++t, nr, ops);
	failed |= c;
	c = phase_kill(nr, kills, seed);
	printf("%s %d - kill: %u SIGKILLs of clients, no lost token\n",
	       c ? "not ok" : "ok", ++t, kills);
	failed |= c;
	c = phase_unload(reloads, seed);
	printf("%s %d - unload: rmmod refused while in use, %u reload cycles\n",
	       c ? "not ok" : "ok", ++t, reloads);
	failed |= c;
	return failed;
}
