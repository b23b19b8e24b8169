// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedctl on a scenario: three clients that always have work, with
 * weights 100, 200 and 300. `gpuschedctl clients` shows shares of the GPU
 * over its interval that match the weights within 5 points, in its table
 * and in its JSON, which a real JSON parser (Python's) reads; `status`,
 * `top` and `watch` give JSON that parses too; `set` changes what it says.
 */
#include <poll.h>
#include "nl_test.h"

#define NR_BUSY		3
#define TOLERANCE_PCT	5
#define INTERVAL	"3"

static const __u32 weights[NR_BUSY] = { 100, 200, 300 };

struct busy {
	int ready;
	int stop;
	int err[NR_BUSY];
};

/* Hold the token until asked to yield, then yield, until told to stop. */
static int busy_run(struct busy *b, __u32 weight)
{
	const struct gpusched_status *st;
	int fd = gs_open_attached(NL_GPU_CTL);

	if (fd < 0)
		return 1;
	if (gs_set_weight(fd, weight))
		return 2;
	st = gs_map_status(fd);
	if (!st)
		return 3;
	__atomic_add_fetch(&b->ready, 1, __ATOMIC_SEQ_CST);
	if (gs_acquire(fd, 0, 0))
		return 4;
	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		if (!(gs_st_flags(st) & GPUSCHED_ST_YIELD))
			continue;
		if (gs_yield(fd))
			return 5;
	}
	gs_release(fd);
	return 0;
}

/* Run @argv as root; its stdout in @out (NUL-terminated), its exit status. */
static int run(char *out, size_t size, char *const argv[])
{
	return nlt_run(argv[0], argv, 0, false, out, size);
}

/* Feed @json to Python's json module and run @code on it (as d). */
static int python_json(const char *json, const char *code, char *out, size_t size)
{
	char path[] = "/tmp/nl-ctl-XXXXXX", prog[2048];
	char *argv[] = { NL_PYTHON, "-c", prog, path, NULL };
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return -1;
	if (write(fd, json, strlen(json)) != (ssize_t)strlen(json)) {
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(prog, sizeof(prog),
		 "import json, sys\n"
		 "text = open(sys.argv[1]).read()\n"
		 "docs = [json.loads(l) for l in text.splitlines() if l.strip()]\n"
		 "d = docs[0]\n"
		 "%s\n", code);
	setenv("PYTHONHOME", "/usr", 1);
	rc = run(out, size, argv);
	unlink(path);
	return rc;
}

FIXTURE(ctl) {
	int fd;
	int gpu;
	struct busy *b;
	pid_t pid[NR_BUSY];
};

FIXTURE_SETUP(ctl)
{
	int i;

	if (access(NL_GPUSCHEDCTL, X_OK))
		SKIP(return, "%s is not in the VM", NL_GPUSCHEDCTL);
	self->fd = gs_open_attached(NL_GPU_CTL);
	ASSERT_LE(0, self->fd);
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", 2000));
	/* Long grace: a late yield under emulation must not be an overrun. */
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "grace_us", 1000000));
	self->b = mmap(NULL, sizeof(*self->b), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->b);
	for (i = 0; i < NR_BUSY; i++) {
		self->pid[i] = gs_fork();
		ASSERT_LE(0, self->pid[i]);
		if (self->pid[i] == 0)
			_exit(busy_run(self->b, weights[i]));
	}
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(&self->b->ready, __ATOMIC_SEQ_CST) ==
				  NR_BUSY, 10000));
	/* Let the shares settle before anyone measures them. */
	gs_sleep_us(500000);
}

FIXTURE_TEARDOWN(ctl)
{
	int i;

	if (self->b) {
		__atomic_store_n(&self->b->stop, 1, __ATOMIC_RELEASE);
		for (i = 0; i < NR_BUSY; i++)
			if (self->pid[i] > 0)
				EXPECT_EQ(0, gs_wait(self->pid[i]));
	}
	if (self->fd > 0)
		close(self->fd);
}

/* The busy child with @pid, or -1. */
static int which(FIXTURE_DATA(ctl) *self, long pid)
{
	int i;

	for (i = 0; i < NR_BUSY; i++)
		if (self->pid[i] == pid)
			return i;
	return -1;
}

static void check_share(struct __test_metadata *_metadata, const char *how,
			int i, double share)
{
	double want = 100.0 * weights[i] / (weights[0] + weights[1] + weights[2]);

	ksft_print_msg("%s: weight %u: share %.1f%% (want %.1f%%)\n", how,
		       weights[i], share, want);
	EXPECT_GE(TOLERANCE_PCT, share > want ? share - want : want - share);
}

TEST_F(ctl, table_shares_match_weights)
{
	static char out[1 << 16];
	char gpu[16];
	char *argv[] = { NL_GPUSCHEDCTL, "clients", "--interval", INTERVAL,
			 "--gpu", gpu, NULL };
	char *line, *save;
	int seen = 0;

	snprintf(gpu, sizeof(gpu), "%d", self->gpu);
	ASSERT_EQ(0, run(out, sizeof(out), argv));
	ksft_print_msg("gpuschedctl clients:\n%s", out);
	ASSERT_EQ(0, strncmp(out, "GPU  PID", 8));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int g, weight;
		long pid;
		double share, busy;
		char comm[32], class[16], state[16], cap[8], user[32];
		unsigned long long id;
		int i;

		if (sscanf(line, "%u %ld %llu %31s %31s %15s %u %7s %15s %lf%% %lf%%",
			   &g, &pid, &id, user, comm, class, &weight, cap, state,
			   &share, &busy) != 11)
			continue;
		i = which(self, pid);
		if (i < 0)
			continue;
		EXPECT_EQ(weights[i], weight);
		check_share(_metadata, "table", i, share);
		seen++;
	}
	EXPECT_EQ(NR_BUSY, seen);
}

TEST_F(ctl, json_parses_and_shares_match_weights)
{
	static char out[1 << 16];
	char gpu[16], res[4096], *line, *save;
	char *argv[] = { NL_GPUSCHEDCTL, "--json", "clients", "--interval", INTERVAL,
			 "--gpu", gpu, NULL };
	int seen = 0;

	snprintf(gpu, sizeof(gpu), "%d", self->gpu);
	ASSERT_EQ(0, run(out, sizeof(out), argv));
	ASSERT_EQ(0, python_json(out,
		"assert abs(d['interval_s'] - " INTERVAL ") < 1, d['interval_s']\n"
		"for c in d['clients']:\n"
		"    print(c['pid'], c['weight'], c['share_pct'], c['busy_pct'], c['gpu_ns'], c['class'], c['state'])",
		res, sizeof(res))) TH_LOG("python could not read: %s", out);
	for (line = strtok_r(res, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long pid;
		unsigned int weight;
		unsigned long long gpu_ns;
		double share, busy;
		int i;

		/* gpu_ns: the module's, a number (null: not reported). */
		if (sscanf(line, "%ld %u %lf %lf %llu", &pid, &weight, &share,
			   &busy, &gpu_ns) != 5)
			continue;
		i = which(self, pid);
		if (i < 0)
			continue;
		EXPECT_EQ(weights[i], weight);
		/* They yield without reporting GPU time. */
		EXPECT_EQ(0, gpu_ns);
		check_share(_metadata, "json", i, share);
		seen++;
	}
	EXPECT_EQ(NR_BUSY, seen);
}

TEST_F(ctl, every_read_command_gives_json)
{
	static char out[1 << 16];
	char res[1024], gpu[16], code[256];
	char *status[] = { NL_GPUSCHEDCTL, "--json", "status", NULL };
	char *top[] = { NL_GPUSCHEDCTL, "top", "--json", "-n", "2", "-i", "0.5",
			"-g", gpu, NULL };
	char *clients0[] = { NL_GPUSCHEDCTL, "clients", "-j", "-i", "0", NULL };

	snprintf(gpu, sizeof(gpu), "%d", self->gpu);
	ASSERT_EQ(0, run(out, sizeof(out), status));
	snprintf(code, sizeof(code),
		 "g = [g for g in d['gpus'] if g['index'] == %d][0]\n"
		 "print(g['timeslice_us'], g['grace_us'], g['clients'])",
		 self->gpu);
	ASSERT_EQ(0, python_json(out, code, res, sizeof(res))) TH_LOG("%s", out);
	EXPECT_STREQ("2000 1000000 4\n", res);
	/* top: one JSON document per refresh. */
	ASSERT_EQ(0, run(out, sizeof(out), top));
	ASSERT_EQ(0, python_json(out, "print(len(docs), len(docs[1]['clients']))",
				 res, sizeof(res))) TH_LOG("%s", out);
	EXPECT_STREQ("2 4\n", res);
	/* Without an interval there are no shares: null, not 0. */
	ASSERT_EQ(0, run(out, sizeof(out), clients0));
	ASSERT_EQ(0, python_json(out, "print(set(c['share_pct'] for c in d['clients']))",
				 res, sizeof(res))) TH_LOG("%s", out);
	EXPECT_STREQ("{None}\n", res);
}

TEST_F(ctl, watch_prints_events_as_json_lines)
{
	static char out[1 << 16];
	char res[256];
	int pipefd[2], fd;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		close(pipefd[0]);
		execl(NL_GPUSCHEDCTL, "gpuschedctl", "watch", "--json", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	/* It joins the group at some point: attach until it reports one. */
	while (len < 2) {
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

		fd = gs_open_attached(NL_GPU_CTL);
		ASSERT_LE(0, fd);
		close(fd);
		if (poll(&p, 1, 200) > 0) {
			n = read(pipefd[0], out + len, sizeof(out) - 1 - len);
			ASSERT_LT(0, n);
			len += n;
		}
	}
	gs_sleep_us(300000);
	kill(pid, SIGTERM);
	while ((n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(pipefd[0]);
	EXPECT_EQ(0, gs_wait(pid));
	ASSERT_EQ(0, python_json(out,
		"print(sorted(set(x['event'] for x in docs)), all(x['pid'] == "
		"docs[0]['pid'] for x in docs))", res, sizeof(res))) TH_LOG("%s", out);
	EXPECT_STREQ("['attach', 'detach'] True\n", res);
}

TEST_F(ctl, set_changes_what_clients_shows)
{
	static char out[1 << 16];
	char res[256], pid[16], gpu[16], code[256];
	char *set[] = { NL_GPUSCHEDCTL, "set", "client", pid, "weight=42",
			"class=batch", "cap=20", NULL };
	char *setgpu[] = { NL_GPUSCHEDCTL, "set", "gpu", gpu, "grace_us=900000", NULL };
	char *clients[] = { NL_GPUSCHEDCTL, "--json", "clients", "-i", "0", "-g", gpu, NULL };
	char *nosuch[] = { NL_GPUSCHEDCTL, "set", "client", "4000000", "weight=5", NULL };

	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(gpu, sizeof(gpu), "%d", self->gpu);
	ASSERT_EQ(0, run(out, sizeof(out), set));
	ASSERT_EQ(0, run(out, sizeof(out), setgpu));
	EXPECT_EQ(900000, gs_gpu_read(self->gpu, "grace_us"));
	ASSERT_EQ(0, run(out, sizeof(out), clients));
	snprintf(code, sizeof(code),
		 "c = [c for c in d['clients'] if c['pid'] == %d][0]\n"
		 "print(c['weight'], c['class'], c['cap_pct'])", getpid());
	ASSERT_EQ(0, python_json(out, code, res, sizeof(res))) TH_LOG("%s", out);
	EXPECT_STREQ("42 batch 20\n", res);
	EXPECT_EQ(1, run(out, sizeof(out), nosuch));
}

TEST_HARNESS_MAIN
