// SPDX-License-Identifier: GPL-2.0
/*
 * Every allocation and user copy that the module's entry points reach is
 * failed in turn: open, ATTACH (new and existing token), ACQUIRE, RELEASE,
 * YIELD, SET_PARAMS, GET_INFO, mmap of the status page, close, the sysfs
 * files, and the netlink family's commands and dumps.
 * /proc/thread-self/fail-nth fails the Nth fault point of the task
 * (kmalloc, page allocation, user copy), for N = 1, 2, ... until the
 * operation runs with none failed.
 *
 * Each run must succeed, or fail with ENOMEM, EFAULT or ENOBUFS, and leave
 * the client as it was before the failed call; once its files are closed
 * no client, waiter or holder may remain (sysfs, the GET_CLIENT dump) and a
 * new client must get the token at once. The VM's init has kmemleak scan
 * after the tests, which finds what was leaked.
 *
 * Needs CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and
 * CONFIG_FAULT_INJECTION_DEBUG_FS (tests/debug/kcsan.config, make
 * check-kcsan); skips on other kernels.
 */
#include <dirent.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include "gs_test.h"
#include "../fuzz/fuzz-nl.h"

#define FI_NTH		"/proc/thread-self/fail-nth"
#define FI_DEBUGFS	"/sys/kernel/debug/"
#define FI_MAX_N	3000	/* more fault points than any operation has */
#define FI_CROWD	150	/* clients in the dump: several messages */

/* The fault points fail-nth counts follow the knobs of each capability. */
static const char *const fi_knobs[][2] = {
	/* GFP_KERNEL allocations too, not only atomic ones. */
	{ "failslab/ignore-gfp-wait", "N" },
	{ "fail_page_alloc/ignore-gfp-wait", "N" },
	{ "fail_page_alloc/ignore-gfp-highmem", "N" },
	/* Single pages too: the status page is one. */
	{ "fail_page_alloc/min-order", "0" },
	/* No stack dump per failure: the runner fails on "Call Trace". */
	{ "failslab/verbose", "0" },
	{ "fail_page_alloc/verbose", "0" },
	{ "fail_usercopy/verbose", "0" },	/* if there: optional */
};

static void __attribute__((constructor)) fi_require(void)
{
	char path[256];
	unsigned int i;
	int err;

	if (access(FI_NTH, R_OK | W_OK)) {
		printf("TAP version 13\n1..0 # SKIP %s: %s (no CONFIG_FAULT_INJECTION)\n",
		       FI_NTH, strerror(errno));
		exit(KSFT_SKIP);
	}
	/* Global, but harmless: with probability 0 only fail-nth fails. */
	for (i = 0; i < ARRAY_SIZE(fi_knobs); i++) {
		snprintf(path, sizeof(path), FI_DEBUGFS "%s", fi_knobs[i][0]);
		err = gs_sysfs_write_path(path, fi_knobs[i][1]);
		if (err == -ENOENT && strstr(path, "/fail_usercopy/"))
			continue;
		if (err) {
			printf("TAP version 13\n1..0 # SKIP %s: %s (no failslab, fail_page_alloc or debugfs)\n",
			       path, strerror(-err));
			exit(KSFT_SKIP);
		}
	}
}

enum { FI_GPU = GS_GPU_FAULT, FI_GPU_CROWD, FI_GPU_NEW };

struct fi_ctx {
	int nth;		/* /proc/thread-self/fail-nth */
	int ev;			/* in the "events" group: events allocate too */
	int family;
	int gpu;		/* index of the token the operations use */
	int crowd_gpu;		/* index of the token of the dump's crowd */
	int crowd[FI_CROWD];
	unsigned int nr_crowd;
	unsigned int new_id;	/* UUID of the next new token */
	unsigned int new_max;	/* the last UUID the walk may use */
	char params[512];	/* module parameters, to reload it */
	int new_gpu;		/* index of the last token created, or -1 */
	int nr_tokens;		/* tokens that exist */
	int fd, fd2;		/* the operation's clients */
	void *map;		/* the status page */
	int nl;			/* the operation's netlink socket */
	unsigned int dumped;	/* clients of this process the dump listed */
};

/* One operation: @run is what has its fault points failed in turn. */
struct fi_op {
	const char *name;
	int expect;
	/* The event a listener gets when @run succeeds, if any. */
	__u8 event;
	int (*setup)(struct fi_ctx *x);
	int (*run)(struct fi_ctx *x);
	/* Unarmed, after @run returned @err: NULL, or what is wrong. */
	const char *(*check)(struct fi_ctx *x, int err, bool fired);
};

static int fi_write(int fd, const char *s)
{
	ssize_t len = strlen(s);

	return pwrite(fd, s, len, 0) == len ? 0 : -errno;
}

/* The Nth fault point from now on fails, in this thread only. */
static int fi_arm(int nth, unsigned int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", n);
	return fi_write(nth, buf);
}

/*
 * Whether the armed failure was injected, and disarm. The read gives the
 * count before its own copy to user space, which is a fault point too: a
 * count of 0 means that the failure happened before, and a read that
 * fails means the count was still 1. Writing 0 always disarms: if its own
 * copy fails, that used up the count.
 */
static bool fi_fired(int nth)
{
	char buf[16];
	ssize_t n;

	n = pread(nth, buf, sizeof(buf) - 1, 0);
	fi_write(nth, "0");
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strtoul(buf, NULL, 10) == 0;
}

static bool fi_clean_error(int err)
{
	return err == -ENOMEM || err == -EFAULT || err == -ENOBUFS;
}

static int fi_state(int fd)
{
	struct gpusched_client_info ci;

	return gs_info(fd, &ci) ? -1 : (int)ci.state;
}

static unsigned char fi_rx[GS_NL_BUF];

/*
 * Send @m on @nl and read until the answer is complete: an ack, or the end
 * of a dump. Counts in x->dumped the clients of this process listed. 0, a
 * negative errno from an error ack or the end of a dump, or the first
 * error of send or recv. After ENOBUFS a dump is not read further: the
 * kernel resumes it only when a message is read, and none may be queued.
 */
static int fi_nl_call(struct fi_ctx *x, struct gs_msg *m, bool dump)
{
	const struct nlattr *tb[GPUSCHED_A_CLIENT_MAX + 1];
	int me = getpid();
	ssize_t n;

	x->dumped = 0;
	if (send(x->nl, m->b, m->len, 0) < 0)
		return -errno;
	for (;;) {
		const struct nlmsghdr *h = (const void *)fi_rx;

		n = recv(x->nl, fi_rx, sizeof(fi_rx), 0);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				return *(const int *)NLMSG_DATA(h);
			if (dump && gs_nl_attrs(h, tb, GPUSCHED_A_CLIENT_MAX) &&
			    tb[GPUSCHED_A_CLIENT_PID] &&
			    gs_nla_u32(tb[GPUSCHED_A_CLIENT_PID]) == (__u32)me)
				x->dumped++;
		}
	}
}

/* A fresh netlink socket for each run: nothing of a failed one carries on. */
static int fi_nl_setup(struct fi_ctx *x)
{
	struct timeval tv = { .tv_sec = 5 };

	x->nl = gs_nl_open();
	if (x->nl < 0)
		return x->nl;
	if (setsockopt(x->nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

/* How many clients of this process the GET_CLIENT dump lists, or -errno. */
static int fi_my_clients(struct fi_ctx *x)
{
	struct gs_msg m;
	int err;

	err = fi_nl_setup(x);
	if (!err) {
		gs_msg_init(&m, x->family, NLM_F_REQUEST | NLM_F_DUMP,
			    GPUSCHED_CMD_GET_CLIENT, GPUSCHED_GENL_VERSION);
		err = fi_nl_call(x, &m, true);
	}
	close(x->nl);
	x->nl = -1;
	return err ? err : (int)x->dumped;
}

/* Whether token @index is free and unused. */
static bool fi_token_clean(int index)
{
	return index < 0 || (gs_gpu_read(index, "nr_clients") == 0 &&
			     gs_gpu_read(index, "nr_waiting") == 0 &&
			     gs_gpu_read(index, "holder_pid") == 0);
}

/* After the run's files are closed: nothing of them may remain. */
static const char *fi_leftovers(struct fi_ctx *x)
{
	int fd, err;

	if (!fi_token_clean(x->gpu) || !fi_token_clean(x->new_gpu))
		return "a client, waiter or holder left on the token (sysfs)";
	if (fi_my_clients(x) != (int)x->nr_crowd)
		return "the GET_CLIENT dump lists a client of a closed file";
	if (gs_count_tokens() != x->nr_tokens)
		return "a token appeared or went";
	/* The token is not lost: a new client gets it at once. */
	fd = gs_open_attached(FI_GPU);
	if (fd < 0)
		return "cannot attach afterwards";
	err = gs_acquire(fd, GPUSCHED_ACQUIRE_NONBLOCK, 0);
	close(fd);
	return err ? "the token cannot be taken afterwards" : NULL;
}

static void fi_drain(int fd)
{
	while (recv(fd, fi_rx, sizeof(fi_rx), MSG_DONTWAIT) > 0 ||
	       errno == ENOBUFS)
		;
}

/*
 * Whether the events listener got event @cmd of this process, or learnt
 * with ENOBUFS that it lost events (and must resync, as gpuschedd does).
 */
static bool fi_event_seen(struct fi_ctx *x, __u8 cmd)
{
	const struct nlattr *tb[GPUSCHED_A_CLIENT_MAX + 1];
	ssize_t n;

	while ((n = recv(x->ev, fi_rx, sizeof(fi_rx), MSG_DONTWAIT)) > 0) {
		const struct nlmsghdr *h = (const void *)fi_rx;

		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			const struct genlmsghdr *g = NLMSG_DATA(h);

			if (h->nlmsg_type == x->family && g->cmd == cmd &&
			    gs_nl_attrs(h, tb, GPUSCHED_A_CLIENT_MAX) &&
			    tb[GPUSCHED_A_CLIENT_PID] &&
			    gs_nla_u32(tb[GPUSCHED_A_CLIENT_PID]) == (__u32)getpid())
				return true;
		}
	}
	return n < 0 && errno == ENOBUFS;
}

static void fi_put(struct fi_ctx *x)
{
	if (x->map)
		munmap(x->map, GPUSCHED_STATUS_SIZE);
	if (x->fd >= 0)
		close(x->fd);
	if (x->fd2 >= 0)
		close(x->fd2);
	if (x->nl >= 0)
		close(x->nl);
	x->map = NULL;
	x->fd = x->fd2 = x->nl = -1;
	fi_drain(x->ev);
}

static void fi_walk(struct __test_metadata *_metadata, struct fi_ctx *x,
		    const struct fi_op *op)
{
	unsigned int n, injected = 0, usual = 0, enomem = 0, efault = 0;
	unsigned int enobufs = 0;
	const char *bad = NULL;
	bool fired = true;
	int err = 0;

	for (n = 1; n <= FI_MAX_N && fired; n++) {
		x->fd = x->fd2 = x->nl = -1;
		x->map = NULL;
		err = op->setup ? op->setup(x) : 0;
		ASSERT_EQ(0, err) TH_LOG("%s: setup: %s", op->name, strerror(-err));
		fi_drain(x->ev);
		ASSERT_EQ(0, fi_arm(x->nth, n));
		err = op->run(x);
		fired = fi_fired(x->nth);
		if (fired) {
			injected++;
			usual += err == op->expect;
			enomem += err == -ENOMEM;
			efault += err == -EFAULT;
			enobufs += err == -ENOBUFS;
		}
		if (!fired && err != op->expect)
			bad = "not what it gives without a failure";
		else if (fired && err != op->expect && !fi_clean_error(err))
			bad = "an error other than ENOMEM, EFAULT, ENOBUFS";
		if (!bad && op->check)
			bad = op->check(x, err, fired);
		if (!bad && !err && op->event && !fi_event_seen(x, op->event))
			bad = "the event was lost, and the listener was not told";
		fi_put(x);
		if (!bad)
			bad = fi_leftovers(x);
		if (bad) {
			TH_LOG("%s, fault point %u (%s): returned %d (%s): %s",
			       op->name, n, fired ? "failed" : "not failed",
			       err, strerror(-err), bad);
			break;
		}
	}
	ASSERT_TRUE(!bad);
	ASSERT_FALSE(fired) TH_LOG("%s: more than %d fault points", op->name,
				   FI_MAX_N);
	ksft_print_msg("%s: %u fault points: ENOMEM %u, EFAULT %u, ENOBUFS %u, as without a failure %u\n",
		       op->name, injected, enomem, efault, enobufs, usual);
}

FIXTURE(fi) {
	struct fi_ctx x;
};

FIXTURE_SETUP(fi)
{
	struct fi_ctx *x = &self->x;
	__u32 grp;
	int fd;

	memset(x, 0, sizeof(*x));
	x->fd = x->fd2 = x->nl = -1;
	x->new_gpu = -1;
	x->new_id = FI_GPU_NEW;
	x->nth = open(FI_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, x->nth);
	x->ev = gs_nl_open();
	ASSERT_LE(0, x->ev);
	x->family = gs_nl_family(x->ev, &grp);
	ASSERT_LT(0, x->family);
	ASSERT_EQ(0, setsockopt(x->ev, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				&grp, sizeof(grp)));
	fd = gs_open_attached(FI_GPU);
	ASSERT_LE(0, fd);
	x->gpu = gs_gpu_index(fd);
	close(fd);
	ASSERT_LE(0, x->gpu);
	x->nr_tokens = gs_count_tokens();
	ASSERT_LT(0, x->nr_tokens);
}

FIXTURE_TEARDOWN(fi)
{
	struct fi_ctx *x = &self->x;
	unsigned int i;

	fi_put(x);
	for (i = 0; i < x->nr_crowd; i++)
		close(x->crowd[i]);
	close(x->ev);
	close(x->nth);
	/* Braces: the harness's EXPECT is more than one statement. */
	if (x->params[0]) {
		EXPECT_EQ(0, gs_module_reload(x->params))
			TH_LOG("reloading with %s", x->params);
	}
}

/* --- /dev/gpusched */

static int fi_run_open(struct fi_ctx *x)
{
	x->fd = gs_open();
	return x->fd < 0 ? x->fd : 0;
}

static const char *fi_check_open(struct fi_ctx *x, int err, bool fired)
{
	if (!err && fi_state(x->fd) != GPUSCHED_STATE_DETACHED)
		return "a new client is not detached";
	return NULL;
}

static int fi_setup_open(struct fi_ctx *x)
{
	x->fd = gs_open();
	return x->fd < 0 ? x->fd : 0;
}

static int fi_setup_attached(struct fi_ctx *x)
{
	x->fd = gs_open_attached(FI_GPU);
	return x->fd < 0 ? x->fd : 0;
}

static int fi_setup_holding(struct fi_ctx *x)
{
	int err = fi_setup_attached(x);

	return err ? err : gs_acquire(x->fd, GPUSCHED_ACQUIRE_NONBLOCK, 0);
}

/* x->fd2 holds the token, x->fd is attached. */
static int fi_setup_contended(struct fi_ctx *x)
{
	int err;

	x->fd2 = gs_open_attached(FI_GPU);
	if (x->fd2 < 0)
		return x->fd2;
	err = gs_acquire(x->fd2, GPUSCHED_ACQUIRE_NONBLOCK, 0);
	return err ? err : fi_setup_attached(x);
}

static int fi_run_attach(struct fi_ctx *x)
{
	return gs_attach(x->fd, FI_GPU);
}

/* A failed ATTACH leaves the client detached, and it can attach again. */
static const char *fi_check_attach(struct fi_ctx *x, int err, bool fired)
{
	if (!err)
		return gs_gpu_index(x->fd) == x->gpu ? NULL : "attached elsewhere";
	if (fi_state(x->fd) != GPUSCHED_STATE_DETACHED)
		return "attached after a failed ATTACH";
	return gs_attach(x->fd, FI_GPU) ? "cannot ATTACH after a failed ATTACH" : NULL;
}

static int fi_run_attach_new(struct fi_ctx *x)
{
	return gs_attach(x->fd, x->new_id);
}

/*
 * Creating a token: a failed ATTACH creates none. A new UUID after each
 * success, which creates one (tokens live until rmmod).
 */
static const char *fi_check_attach_new(struct fi_ctx *x, int err, bool fired)
{
	if (err) {
		if (fi_state(x->fd) != GPUSCHED_STATE_DETACHED)
			return "attached after a failed ATTACH";
		return NULL;	/* fi_leftovers() counts the tokens */
	}
	x->new_gpu = gs_gpu_index(x->fd);
	x->nr_tokens++;
	if (x->new_gpu < 0 || fi_state(x->fd) != GPUSCHED_STATE_IDLE)
		return "not attached to the new token";
	if (fired && ++x->new_id > x->new_max)
		return "more tokens created than max_gpus allows";
	return NULL;
}

static int fi_run_acquire(struct fi_ctx *x)
{
	return gs_acquire(x->fd, 0, 0);
}

static int fi_run_acquire_nonblock(struct fi_ctx *x)
{
	return gs_acquire(x->fd, GPUSCHED_ACQUIRE_NONBLOCK, 0);
}

/* Granted and shown so, or not granted and not waiting. */
static const char *fi_check_acquire(struct fi_ctx *x, int err, bool fired)
{
	int state = fi_state(x->fd);

	if (!err)
		return state == GPUSCHED_STATE_HOLDING &&
		       gs_gpu_read(x->gpu, "holder_pid") == getpid() ?
		       NULL : "ACQUIRE gave 0 but the client does not hold";
	if (state != GPUSCHED_STATE_IDLE || gs_gpu_read(x->gpu, "nr_waiting"))
		return "a failed ACQUIRE left the client holding or waiting";
	return gs_acquire(x->fd, GPUSCHED_ACQUIRE_NONBLOCK, 0) ?
	       "cannot ACQUIRE after a failed ACQUIRE" : NULL;
}

static int fi_run_acquire_timeout(struct fi_ctx *x)
{
	return gs_acquire(x->fd, GPUSCHED_ACQUIRE_TIMEOUT, 2000000);
}

/* The waiter gave up and waits no longer. */
static const char *fi_check_contended(struct fi_ctx *x, int err, bool fired)
{
	if (fi_state(x->fd) != GPUSCHED_STATE_IDLE ||
	    gs_gpu_read(x->gpu, "nr_waiting"))
		return "the waiter is still waiting";
	return NULL;
}

static int fi_run_release(struct fi_ctx *x)
{
	return gs_release(x->fd);
}

static const char *fi_check_release(struct fi_ctx *x, int err, bool fired)
{
	int state = fi_state(x->fd);

	if (!err)
		return state == GPUSCHED_STATE_IDLE ? NULL : "holding after RELEASE";
	if (state != GPUSCHED_STATE_HOLDING)
		return "a failed RELEASE changed the state";
	return gs_release(x->fd) ? "cannot RELEASE after a failed RELEASE" : NULL;
}

static int fi_run_yield(struct fi_ctx *x)
{
	return gs_yield(x->fd);
}

/* Alone on the token, a yield gets it back at once. */
static const char *fi_check_yield(struct fi_ctx *x, int err, bool fired)
{
	if (fi_state(x->fd) != GPUSCHED_STATE_HOLDING)
		return "not holding after YIELD alone on the token";
	return NULL;
}

static int fi_run_set_params(struct fi_ctx *x)
{
	return gs_set_weight(x->fd, 50);
}

static const char *fi_check_set_params(struct fi_ctx *x, int err, bool fired)
{
	struct gpusched_client_info ci;

	if (gs_info(x->fd, &ci))
		return "GET_INFO fails";
	if (ci.weight != (err ? GPUSCHED_WEIGHT_DEFAULT : 50))
		return err ? "a failed SET_PARAMS changed the weight" :
			     "SET_PARAMS gave 0 and did not set the weight";
	return NULL;
}

static int fi_run_get_info(struct fi_ctx *x)
{
	struct gpusched_client_info ci;
	int err = gs_info(x->fd, &ci);

	if (!err && (ci.size != sizeof(ci) || ci.state != GPUSCHED_STATE_IDLE))
		return -EPROTO;
	return err;
}

static int fi_run_mmap(struct fi_ctx *x)
{
	x->map = (void *)gs_map_status(x->fd);
	return x->map ? 0 : -errno;
}

static const char *fi_check_mmap(struct fi_ctx *x, int err, bool fired)
{
	const struct gpusched_status *st = x->map;

	if (err)
		return NULL;
	if (st->version != GPUSCHED_STATUS_VERSION ||
	    !(gs_st_flags(st) & GPUSCHED_ST_ATTACHED))
		return "the mapped page is not the client's status page";
	return NULL;
}

/* Holding, with a second client attached. */
static int fi_setup_close(struct fi_ctx *x)
{
	int err = fi_setup_holding(x);

	if (err)
		return err;
	x->fd2 = gs_open_attached(FI_GPU);
	return x->fd2 < 0 ? x->fd2 : 0;
}

/* The last reference to the file: the client goes on return to user space. */
static int fi_run_close(struct fi_ctx *x)
{
	int err = close(x->fd) ? -errno : 0;

	x->fd = -1;
	return err;
}

/* The token went free with the holder. */
static const char *fi_check_close(struct fi_ctx *x, int err, bool fired)
{
	if (gs_acquire(x->fd2, GPUSCHED_ACQUIRE_NONBLOCK, 0))
		return "the token is not free after its holder closed";
	return NULL;
}

/* The same, but the file closed already: the mapping holds the last reference. */
static int fi_setup_munmap(struct fi_ctx *x)
{
	int err = fi_setup_close(x);

	if (err)
		return err;
	x->map = (void *)gs_map_status(x->fd);
	if (!x->map)
		return -errno;
	return fi_run_close(x);
}

/* munmap can fail too (ENOMEM): then the client stays, mapped. */
static const char *fi_check_munmap(struct fi_ctx *x, int err, bool fired)
{
	return err ? NULL : fi_check_close(x, err, fired);
}

static int fi_run_munmap(struct fi_ctx *x)
{
	const struct gpusched_status *st = x->map;
	int err;

	if (st->version != GPUSCHED_STATUS_VERSION)
		return -EPROTO;
	err = munmap(x->map, GPUSCHED_STATUS_SIZE) ? -errno : 0;
	if (!err)
		x->map = NULL;
	return err;
}

/*
 * The slice tests change FI_SLICE_OLD to FI_SLICE_NEW, neither of them the
 * default, so that a change that was not made cannot pass for one.
 */
#define FI_SLICE_OLD 10000
#define FI_SLICE_NEW 30000

static int fi_setup_slice(struct fi_ctx *x)
{
	return gs_gpu_write(x->gpu, "timeslice_us", "10000");
}

/* sysfs: open, write or read, close, all with their fault points. */
static int fi_run_sysfs_write(struct fi_ctx *x)
{
	return gs_gpu_write(x->gpu, "timeslice_us", "30000\n");
}

static const char *fi_check_sysfs_write(struct fi_ctx *x, int err, bool fired)
{
	long long slice = gs_gpu_read(x->gpu, "timeslice_us");

	if (!err && slice != FI_SLICE_NEW)
		return "the write succeeded and did not set the slice";
	if (err && slice != FI_SLICE_OLD)
		return "a failed write changed the slice";
	return NULL;
}

static int fi_run_sysfs_read(struct fi_ctx *x)
{
	char path[256], buf[64];

	gs_gpu_path(path, sizeof(path), x->gpu, "nr_clients");
	return gs_sysfs_read_path(path, buf, sizeof(buf));
}

static const struct fi_op fi_dev_ops[] = {
	{ "open", 0, 0, NULL, fi_run_open, fi_check_open },
	{ "ATTACH, existing token", 0, GPUSCHED_CMD_EV_ATTACH, fi_setup_open,
	  fi_run_attach, fi_check_attach },
	{ "ACQUIRE", 0, 0, fi_setup_attached, fi_run_acquire, fi_check_acquire },
	{ "ACQUIRE, NONBLOCK", 0, 0, fi_setup_attached, fi_run_acquire_nonblock,
	  fi_check_acquire },
	{ "ACQUIRE, NONBLOCK, token held", -EAGAIN, 0, fi_setup_contended,
	  fi_run_acquire_nonblock, fi_check_contended },
	{ "ACQUIRE, 2 ms TIMEOUT, token held", -ETIMEDOUT, 0, fi_setup_contended,
	  fi_run_acquire_timeout, fi_check_contended },
	{ "RELEASE", 0, 0, fi_setup_holding, fi_run_release, fi_check_release },
	{ "YIELD", 0, 0, fi_setup_holding, fi_run_yield, fi_check_yield },
	{ "SET_PARAMS", 0, 0, fi_setup_attached, fi_run_set_params,
	  fi_check_set_params },
	{ "GET_INFO", 0, 0, fi_setup_attached, fi_run_get_info, NULL },
	{ "mmap", 0, 0, fi_setup_attached, fi_run_mmap, fi_check_mmap },
	{ "close, holding", 0, GPUSCHED_CMD_EV_DETACH, fi_setup_close,
	  fi_run_close, fi_check_close },
	{ "munmap, holding, file closed", 0, GPUSCHED_CMD_EV_DETACH,
	  fi_setup_munmap, fi_run_munmap, fi_check_munmap },
	{ "sysfs: open, write timeslice_us, close", 0, 0, fi_setup_slice,
	  fi_run_sysfs_write, fi_check_sysfs_write },
	{ "sysfs: open, read nr_clients, close", 0, 0, NULL, fi_run_sysfs_read,
	  NULL },
};

TEST_F_TIMEOUT(fi, dev, 1200)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fi_dev_ops); i++)
		fi_walk(_metadata, &self->x, &fi_dev_ops[i]);
}

TEST_F_TIMEOUT(fi, attach_new_token, 600)
{
	static const struct fi_op op = {
		"ATTACH, new token", 0, GPUSCHED_CMD_EV_ATTACH, fi_setup_open,
		fi_run_attach_new, fi_check_attach_new,
	};
	struct fi_ctx *x = &self->x;
	long long max = gs_param_read("max_gpus");

	/*
	 * Every failure that ATTACH survives after the token was made (an
	 * event, kmemleak's own records) costs a token: reload the module
	 * afterwards, as the runner loaded it, so that the next programs
	 * find max_gpus free.
	 */
	if (access(GS_MODULE_PATH, R_OK))
		SKIP(return, "%s: not in the test VM", GS_MODULE_PATH);
	ASSERT_EQ(0, gs_module_params(x->params, sizeof(x->params)));
	x->new_max = FI_GPU_NEW + max - x->nr_tokens - 1;
	fi_walk(_metadata, x, &op);
}

/* --- the netlink family */

static int fi_run_get_gpu(struct fi_ctx *x)
{
	struct gs_msg m;

	gs_msg_init(&m, x->family, NLM_F_REQUEST | NLM_F_ACK,
		    GPUSCHED_CMD_GET_GPU, GPUSCHED_GENL_VERSION);
	gs_msg_u32(&m, GPUSCHED_A_GPU_INDEX, x->gpu);
	return fi_nl_call(x, &m, false);
}

static int fi_run_dump_gpus(struct fi_ctx *x)
{
	struct gs_msg m;

	gs_msg_init(&m, x->family, NLM_F_REQUEST | NLM_F_DUMP,
		    GPUSCHED_CMD_GET_GPU, GPUSCHED_GENL_VERSION);
	return fi_nl_call(x, &m, true);
}

static int fi_run_dump_clients(struct fi_ctx *x)
{
	struct gs_msg m;

	gs_msg_init(&m, x->family, NLM_F_REQUEST | NLM_F_DUMP,
		    GPUSCHED_CMD_GET_CLIENT, GPUSCHED_GENL_VERSION);
	gs_msg_u32(&m, GPUSCHED_A_CLIENT_GPU, x->crowd_gpu);
	return fi_nl_call(x, &m, true);
}

/* A dump that ends without an error lists every client, once. */
static const char *fi_check_dump_clients(struct fi_ctx *x, int err, bool fired)
{
	if (!err && x->dumped != x->nr_crowd)
		return "the dump did not list every client once";
	return NULL;
}

static int fi_run_set_gpu(struct fi_ctx *x)
{
	struct gs_msg m;

	gs_msg_init(&m, x->family, NLM_F_REQUEST | NLM_F_ACK,
		    GPUSCHED_CMD_SET_GPU, GPUSCHED_GENL_VERSION);
	gs_msg_u32(&m, GPUSCHED_A_GPU_INDEX, x->gpu);
	gs_msg_u32(&m, GPUSCHED_A_GPU_TIMESLICE_US, FI_SLICE_NEW);
	return fi_nl_call(x, &m, false);
}

static int fi_setup_set_gpu(struct fi_ctx *x)
{
	int err = fi_setup_slice(x);

	return err ? err : fi_nl_setup(x);
}

static const char *fi_check_set_gpu(struct fi_ctx *x, int err, bool fired)
{
	long long slice = gs_gpu_read(x->gpu, "timeslice_us");

	/* An error ack may follow a change that was made: the ack failed. */
	if (!err && slice != FI_SLICE_NEW)
		return "SET_GPU acknowledged and did not set the slice";
	if (slice != FI_SLICE_OLD && slice != FI_SLICE_NEW)
		return "the slice is neither the old nor the new value";
	return NULL;
}

static int fi_setup_nl_attached(struct fi_ctx *x)
{
	int err = fi_setup_attached(x);

	return err ? err : fi_nl_setup(x);
}

static int fi_run_set_client(struct fi_ctx *x)
{
	struct gs_msg m;

	gs_msg_init(&m, x->family, NLM_F_REQUEST | NLM_F_ACK,
		    GPUSCHED_CMD_SET_CLIENT, GPUSCHED_GENL_VERSION);
	gs_msg_u32(&m, GPUSCHED_A_CLIENT_PID, getpid());
	gs_msg_u32(&m, GPUSCHED_A_CLIENT_GPU, x->gpu);
	gs_msg_u32(&m, GPUSCHED_A_CLIENT_WEIGHT, 50);
	return fi_nl_call(x, &m, false);
}

static const char *fi_check_set_client(struct fi_ctx *x, int err, bool fired)
{
	struct gpusched_client_info ci;

	if (gs_info(x->fd, &ci))
		return "GET_INFO fails";
	if (!err && ci.weight != 50)
		return "SET_CLIENT acknowledged and did not set the weight";
	return NULL;
}

static const struct fi_op fi_nl_ops[] = {
	{ "GET_GPU", 0, 0, fi_nl_setup, fi_run_get_gpu, NULL },
	{ "GET_GPU dump", 0, 0, fi_nl_setup, fi_run_dump_gpus, NULL },
	{ "GET_CLIENT dump, several messages", 0, 0, fi_nl_setup,
	  fi_run_dump_clients, fi_check_dump_clients },
	{ "SET_GPU", 0, 0, fi_setup_set_gpu, fi_run_set_gpu, fi_check_set_gpu },
	{ "SET_CLIENT", 0, 0, fi_setup_nl_attached, fi_run_set_client,
	  fi_check_set_client },
};

TEST_F_TIMEOUT(fi, netlink, 1200)
{
	struct fi_ctx *x = &self->x;
	unsigned int i;

	for (i = 0; i < FI_CROWD; i++) {
		x->crowd[i] = gs_open_attached(FI_GPU_CROWD);
		ASSERT_LE(0, x->crowd[i]);
		x->nr_crowd++;
	}
	x->crowd_gpu = gs_gpu_index(x->crowd[0]);
	x->nr_tokens = gs_count_tokens();
	for (i = 0; i < ARRAY_SIZE(fi_nl_ops); i++)
		fi_walk(_metadata, x, &fi_nl_ops[i]);
}

TEST_HARNESS_MAIN
