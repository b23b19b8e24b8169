// SPDX-License-Identifier: GPL-2.0
/*
 * gs-scale: what a token hand-off costs with many clients (in the VM, as
 * root, with gpusched.ko loaded). Documentation/scale.md has the table it
 * makes and how to run it.
 *
 * For each client count N it attaches N clients to one new GPU token; N-1
 * of them (or W, with -w) wait, each in a thread of its own, and pass the
 * token round: every holder releases at once, and the next holder's
 * ACQUIRE returns. The other clients stay attached and idle. With -H HOT,
 * the first HOT waiters have the greatest weight and the others the least,
 * so that most hand-offs pass the token among the same HOT clients while
 * all the waiters stay in the policy's trees: what the number of waiters
 * costs apart from the memory of clients not served for long. Every waiter
 * starts at the same virtual time, so the first round serves each once:
 * with -H those hand-offs are not timed.
 * It reports
 *  - the hand-off latency: from the holder's RELEASE call to the return
 *    of the next holder's ACQUIRE, on CLOCK_MONOTONIC (p50, p99);
 *  - the longest hold of the token's lock in each phase (attach, the
 *    hand-offs, a netlink dump of all clients, SET_CLIENT by pid on all
 *    of them, close), timed by the module itself (debugfs
 *    gpusched/hold_stats, off except while this program runs).
 *
 * It is a measurement, not a test: it prints numbers and judges none.
 * Without arguments it makes one small run (10 clients) as a functional
 * check with TAP output: every grant taken, never two holders at once, the
 * dump lists every client. That run joins the VM suite.
 *
 * Usage: gs-scale [-g GRANTS] [-w WAITERS] [-H HOT] N...   (a row for each N)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <linux/gpusched.h>
#include "../fuzz/fuzz-nl.h"

#define HOLD_STATS	"/sys/kernel/debug/gpusched/hold_stats"
#define STACK_SIZE	(64 * 1024)

struct phase_hold {
	unsigned long long holds, total_ns, p50_ns, p99_ns, max_ns;
	char at[128];
};

struct result {
	unsigned int clients, grants;
	uint64_t p50, p99, max;
	struct phase_hold attach, handoff, dump, set, close;
	unsigned int listed, set_matched, overlaps, errors, served, revoked;
	unsigned int served_hot;
	double seconds;
};

struct run {
	int *fds;
	unsigned int n, waiters, grants, hot;
	unsigned int skip;		/* hand-offs not timed, first */
	_Atomic uint64_t release_ns;
	atomic_uint next;		/* grants taken */
	atomic_uint holders;
	atomic_uint overlaps, errors, served, revoked, served_hot;
	atomic_bool stop;
	uint64_t *lat;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "gs-scale: %s: %s\n", what, strerror(err));
	exit(1);
}

static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int acquire(int fd)
{
	struct gpusched_acquire a = { 0 };

	return ioc(fd, GPUSCHED_IOC_ACQUIRE, &a);
}

static int release(int fd)
{
	struct gpusched_release r = { 0 };

	return ioc(fd, GPUSCHED_IOC_RELEASE, &r);
}

static bool hold_write(const char *v)
{
	int fd = open(HOLD_STATS, O_WRONLY);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, v, strlen(v)) == (ssize_t)strlen(v);
	close(fd);
	return ok;
}

/* This token's figures since the last hold_write("1"). */
static void hold_read(unsigned int gpu, struct phase_hold *h)
{
	FILE *f = fopen(HOLD_STATS, "r");
	char line[512];

	memset(h, 0, sizeof(*h));
	strcpy(h->at, "n/a");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned int g;

		if (sscanf(line, "gpu%u holds %llu total_ns %llu p50_ns %llu p99_ns %llu max_ns %llu at %127s",
			   &g, &h->holds, &h->total_ns, &h->p50_ns, &h->p99_ns,
			   &h->max_ns, h->at) == 7 &&
		    g == gpu)
			break;
		memset(h, 0, sizeof(*h));
		strcpy(h->at, "n/a");
	}
	fclose(f);
}

static long long sysfs_number(unsigned int gpu, const char *attr)
{
	char path[128], buf[64];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/gpusched/gpu%u/%s", gpu, attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = 0;
	return strtoll(buf, NULL, 10);
}

struct waiter_arg {
	struct run *r;
	int fd;
	bool hot;
};

static int sysfs_write(unsigned int gpu, const char *attr, const char *v)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/sys/kernel/gpusched/gpu%u/%s", gpu, attr);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		err = -errno;
	close(fd);
	return err;
}

static void *waiter_fn(void *p)
{
	struct waiter_arg *w = p;
	struct run *r = w->r;

	for (;;) {
		uint64_t t, rel;
		unsigned int i;
		bool stop;

		int err = acquire(w->fd);

		if (err == -EAGAIN) {	/* revoked before it ran: a slow VM */
			atomic_fetch_add(&r->revoked, 1);
			continue;
		}
		if (err) {
			atomic_fetch_add(&r->errors, 1);
			break;
		}
		t = now_ns();
		if (atomic_fetch_add(&r->holders, 1))
			atomic_fetch_add(&r->overlaps, 1);
		atomic_fetch_add(&r->served, 1);
		rel = atomic_load(&r->release_ns);
		stop = atomic_load(&r->stop);
		if (!stop) {
			i = atomic_fetch_add(&r->next, 1);
			/* The lock holds, too, counted from the first timed. */
			if (r->skip && i == r->skip)
				hold_write("1");
			if (i >= r->skip && i - r->skip < r->grants) {
				r->lat[i - r->skip] = t - rel;
				if (w->hot)
					atomic_fetch_add(&r->served_hot, 1);
			}
			if (i + 1 >= r->grants + r->skip)
				atomic_store(&r->stop, true);
		}
		atomic_fetch_sub(&r->holders, 1);
		stop = atomic_load(&r->stop);
		atomic_store(&r->release_ns, now_ns());
		if (release(w->fd)) {
			atomic_fetch_add(&r->errors, 1);
			break;
		}
		if (stop)
			break;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A dump's clients, each with its id. */
static int count_client(const struct nlattr *const *tb, unsigned int datagram,
			void *arg)
{
	(void)datagram;
	if (!tb[GPUSCHED_A_CLIENT_ID])
		return -EBADMSG;
	++*(int *)arg;
	return 0;
}

/* Clients of @gpu listed by a GET_CLIENT dump, or -errno. */
static int dump_count(unsigned int gpu)
{
	int family, count = 0, err, fd = gs_nl_open_family(&family);

	if (fd < 0)
		return fd;
	err = gs_nl_client_dump(fd, family, gpu, 10000, count_client, &count);
	close(fd);
	return err < 0 ? err : count;
}

/* SET_CLIENT by this process's pid on @gpu: 0 or -errno. */
static int set_by_pid(unsigned int gpu)
{
	int family, err, fd = gs_nl_open_family(&family);
	struct gs_msg m;

	if (fd < 0)
		return fd;
	gs_msg_init(&m, family, NLM_F_REQUEST, GPUSCHED_CMD_SET_CLIENT,
		    GPUSCHED_GENL_VERSION);
	gs_msg_u32(&m, GPUSCHED_A_CLIENT_GPU, gpu);
	gs_msg_u32(&m, GPUSCHED_A_CLIENT_PID, getpid());
	gs_msg_u32(&m, GPUSCHED_A_CLIENT_WEIGHT, GPUSCHED_WEIGHT_DEFAULT);
	err = gs_nl_ack(fd, &m, 60000);
	close(fd);
	return err;
}

static void one_run(unsigned int n, unsigned int waiters, unsigned int hot,
		    unsigned int grants, unsigned int uuid_id, struct result *res)
{
	struct gpusched_attach at = { 0 };
	struct gpusched_client_info ci = { 0 };
	struct waiter_arg *args;
	pthread_t *threads;
	pthread_attr_t attr;
	struct run r = { 0 };
	unsigned int i, gpu;
	uint64_t t0;
	int err;

	memset(res, 0, sizeof(*res));
	res->clients = n;
	r.n = n;
	r.waiters = waiters && waiters < n ? waiters : n - 1;
	r.grants = grants;
	r.hot = hot;
	r.skip = hot ? r.waiters : 0;
	r.fds = calloc(n, sizeof(*r.fds));
	r.lat = calloc(grants, sizeof(*r.lat));
	threads = calloc(n, sizeof(*threads));
	args = calloc(n, sizeof(*args));
	if (!r.fds || !r.lat || !threads || !args)
		die("memory", ENOMEM);
	memcpy(at.uuid, "gsSCALE", 7);
	at.uuid[GPUSCHED_UUID_LEN - 1] = uuid_id;

	hold_write("1");
	for (i = 0; i < n; i++) {
		r.fds[i] = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (r.fds[i] < 0)
			die("open " GPUSCHED_DEVICE_PATH, errno);
		err = ioc(r.fds[i], GPUSCHED_IOC_ATTACH, &at);
		if (err)
			die("attach", -err);
	}
	err = ioc(r.fds[0], GPUSCHED_IOC_GET_INFO, &ci);
	if (err)
		die("info", -err);
	gpu = ci.gpu_index;
	hold_read(gpu, &res->attach);
	/*
	 * Hand-offs by RELEASE alone: no slice ends and no revocation while
	 * thousands of threads line up in a slow VM.
	 */
	err = sysfs_write(gpu, "timeslice_us", "10000000") ?:
	      sysfs_write(gpu, "grace_us", "10000000");
	if (err)
		die("setting timeslice_us and grace_us", -err);

	/* The last client holds while the others line up. */
	err = acquire(r.fds[n - 1]);
	if (err)
		die("acquire", -err);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	for (i = 0; hot && i < r.waiters; i++) {
		struct gpusched_params p = {
			.mask = GPUSCHED_PARAM_WEIGHT,
			.weight = i < hot ? GPUSCHED_WEIGHT_MAX : GPUSCHED_WEIGHT_MIN,
		};

		err = ioc(r.fds[i], GPUSCHED_IOC_SET_PARAMS, &p);
		if (err)
			die("SET_PARAMS", -err);
	}
	for (i = 0; i < r.waiters; i++) {
		args[i].r = &r;
		args[i].fd = r.fds[i];
		args[i].hot = i < hot;
		err = pthread_create(&threads[i], &attr, waiter_fn, &args[i]);
		if (err)
			die("pthread_create", err);
	}
	for (t0 = now_ns(); sysfs_number(gpu, "nr_waiting") != r.waiters;) {
		if (now_ns() - t0 > 600ull * 1000000000 || atomic_load(&r.errors))
			die("waiters lining up", ETIMEDOUT);
		usleep(10000);
	}
	hold_write("1");
	t0 = now_ns();
	atomic_store(&r.release_ns, now_ns());
	err = release(r.fds[n - 1]);
	if (err)
		die("release", -err);
	for (i = 0; i < r.waiters; i++)
		pthread_join(threads[i], NULL);
	res->seconds = (now_ns() - t0) / 1e9;
	hold_read(gpu, &res->handoff);

	hold_write("1");
	res->listed = dump_count(gpu);
	hold_read(gpu, &res->dump);

	hold_write("1");
	err = set_by_pid(gpu);
	res->set_matched = err ? 0 : n;
	hold_read(gpu, &res->set);

	hold_write("1");
	for (i = 0; i < n; i++)
		close(r.fds[i]);
	hold_read(gpu, &res->close);
	hold_write("0");

	i = atomic_load(&r.next) > r.skip ? atomic_load(&r.next) - r.skip : 0;
	res->grants = i < grants ? i : grants;
	res->overlaps = atomic_load(&r.overlaps);
	res->errors = atomic_load(&r.errors);
	res->served = atomic_load(&r.served);
	res->revoked = atomic_load(&r.revoked);
	res->served_hot = atomic_load(&r.served_hot);
	qsort(r.lat, res->grants, sizeof(*r.lat), cmp_u64);
	if (res->grants) {
		res->p50 = r.lat[res->grants / 2];
		res->p99 = r.lat[res->grants * 99 / 100];
		res->max = r.lat[res->grants - 1];
	}
	pthread_attr_destroy(&attr);
	free(threads);
	free(args);
	free(r.lat);
	free(r.fds);
}

static void setup(unsigned int most)
{
	struct rlimit rl = { most + 64, most + 64 };

	if (access(HOLD_STATS, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE", errno);
}

static double us(uint64_t ns)
{
	return ns / 1000.0;
}

static int smoke(void)
{
	const unsigned int n = 10, grants = 200;
	struct result res;

	setup(n);
	printf("TAP version 13\n1..4\n");
	one_run(n, 0, 0, grants, 1, &res);
	printf("%s 1 - %u grants passed round %u waiters, no error (%u)\n",
	       res.grants == grants && !res.errors ? "ok" : "not ok",
	       res.grants, n - 1, res.errors);
	/*
	 * The holder of the last timed grant stops; each other waiter takes
	 * one more grant to see the stop.
	 */
	printf("%s 2 - every grant taken: %u = %u + %u\n",
	       res.served == grants + n - 2 ? "ok" : "not ok",
	       res.served, grants, n - 2);
	printf("%s 3 - never two holders at once (%u)\n",
	       res.overlaps ? "not ok" : "ok", res.overlaps);
	printf("%s 4 - the dump lists all %u clients (%u), SET_CLIENT by pid %s\n",
	       res.listed == n && res.set_matched == n ? "ok" : "not ok", n,
	       res.listed, res.set_matched == n ? "matched" : "failed");
	printf("# hand-off p50 %.1f us, p99 %.1f us; longest lock hold %.1f us\n",
	       us(res.p50), us(res.p99), us(res.handoff.max_ns));
	return res.grants == grants && !res.errors && !res.overlaps &&
	       res.served == grants + n - 2 && res.listed == n &&
	       res.set_matched == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	unsigned int grants = 20000, waiters = 0, hot = 0, most = 0, k = 0;
	int i, first = 1;

	if (argc == 1)
		return smoke();
	while (first + 1 < argc && argv[first][0] == '-') {
		if (!strcmp(argv[first], "-g"))
			grants = strtoul(argv[first + 1], NULL, 0);
		else if (!strcmp(argv[first], "-w"))
			waiters = strtoul(argv[first + 1], NULL, 0);
		else if (!strcmp(argv[first], "-H"))
			hot = strtoul(argv[first + 1], NULL, 0);
		else
			break;
		first += 2;
	}
	for (i = first; i < argc; i++)
		if (strtoul(argv[i], NULL, 0) > most)
			most = strtoul(argv[i], NULL, 0);
	if (most < 2 || !grants) {
		fprintf(stderr, "usage: gs-scale [-g GRANTS] [-w WAITERS] [-H HOT] N... (N >= 2)\n");
		return 2;
	}
	setup(most);
	printf("# gs-scale -g %u -w %u -H %u:", grants, waiters, hot);
	for (i = first; i < argc; i++)
		printf(" %s", argv[i]);
	printf(" (waiting clients: %s; times in us)\n", waiters ? "-w" : "all but one");
	printf("| clients | hand-off p50 | hand-off p99 | lock hold during hand-offs: p50 / p99 / max | attach: p99 / max | dump | SET_CLIENT by pid | close |\n");
	printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (i = first; i < argc; i++, k++) {
		unsigned int n = strtoul(argv[i], NULL, 0);
		struct result res;

		one_run(n, waiters, hot, grants, 0x20 + k, &res);
		printf("| %u | %.1f | %.1f | %.1f / %.1f / %.0f | %.1f / %.0f | %.1f / %.0f | %.1f / %.0f | %.1f / %.0f |\n",
		       n, us(res.p50), us(res.p99), us(res.handoff.p50_ns),
		       us(res.handoff.p99_ns), us(res.handoff.max_ns),
		       us(res.attach.p99_ns), us(res.attach.max_ns),
		       us(res.dump.p99_ns), us(res.dump.max_ns),
		       us(res.set.p99_ns), us(res.set.max_ns),
		       us(res.close.p99_ns), us(res.close.max_ns));
		printf("# %u clients: %u hand-offs in %.1f s (%u served, %u timed of hot clients, %u revoked), %llu holds timed, mean %.1f us; %u listed, %u errors, %u overlaps; longest hand-off hold at %s\n",
		       n, res.grants, res.seconds, res.served, res.served_hot, res.revoked,
		       res.handoff.holds,
		       res.handoff.holds ? us(res.handoff.total_ns) / res.handoff.holds : 0,
		       res.listed, res.errors, res.overlaps, res.handoff.at);
		fflush(stdout);
	}
	return 0;
}
