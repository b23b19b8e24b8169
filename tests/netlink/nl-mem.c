// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd in netlink mode and device memory: the policy file's memory
 * knobs reach the module, a rule's mem_limit in percent is resolved by the
 * module against what each client reported (SET_CLIENT's MEM_LIMIT_PCT),
 * one in bytes is given as is, a client that reported no memory gets the
 * rest of a percent rule, gpuschedctl shows and sets limits, and
 * mem_admission refuses, or makes batch, a client whose limit would pass
 * the GPU's memory less the reserve, for good.
 *
 * The clients are children that drop to the uid a rule matches, attach
 * reporting TOTAL bytes (or none) and wait for what the rule gives.
 */
#include "nl_test.h"

#define CONF	"/tmp/gpuschedd-mem.conf"
#define LOG	"/tmp/gpuschedd-mem.log"
#define GIB	(1ull << 30)
#define TOTAL	(8 * GIB)

FIXTURE(mem) {
	int fd;			/* creates the GPU before the daemon starts */
	int gpu;
	pid_t daemon;
	char uuid[48];
};

/*
 * The policy, with mem_admission = @admit in the GPU's section if set:
 * 0 or -errno.
 */
static int write_conf(const char *uuid, const char *admit)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "[gpu %s]\n"
		 "mem_reserve_mb = 1024\n"
		 "%s%s%s"
		 "[rule quarter]\n"
		 "user = 4321\n"
		 "mem_limit = 25%%\n"
		 "[rule fixed]\n"
		 "user = 4322\n"
		 "weight = 50\n"
		 "mem_limit = 1G\n"
		 "[rule half]\n"
		 "user = 4323\n"
		 "weight = 40\n"
		 "mem_limit = 50%%\n", uuid, admit ? "mem_admission = " : "",
		 admit ? admit : "", admit ? "\n" : "");
	return nlt_write_file(CONF, text);
}

/* What a client is to get; weight or class -1: whatever it is. */
struct want {
	uid_t uid;
	__u64 limit;
	long long weight, class;
};

static bool has(const struct gpusched_client_info *ci, const struct want *w)
{
	return ci->mem_limit == w->limit &&
	       (w->weight < 0 || ci->weight == w->weight) &&
	       (w->class < 0 || ci->sched_class == w->class);
}

/*
 * A child as @w->uid, attached reporting @total bytes: waits up to 5 s for
 * what @w says, then holds the client until its parent closes @hold (the
 * read end's other side), and with @kept finds it still so. Exit 0 if it
 * saw it.
 */
static pid_t client_want(const struct want *w, __u64 total, bool kept,
			 int hold[2])
{
	pid_t pid;

	if (pipe(hold))
		return -1;
	pid = gs_fork();
	if (pid == 0) {
		struct gpusched_attach at = { .mem_total = total };
		struct gpusched_client_info ci;
		bool seen;
		char c;
		int fd;

		close(hold[1]);
		if (nlt_drop_privileges(w->uid, w->uid))
			_exit(2);
		fd = gs_open();
		gs_uuid(at.uuid, NL_GPU_MEM);
		if (fd < 0 || gs_ioctl(fd, GPUSCHED_IOC_ATTACH, &at))
			_exit(3);
		seen = gs_wait_until(!gs_info(fd, &ci) && has(&ci, w), 5000);
		while (read(hold[0], &c, 1) > 0)
			;
		if (seen && kept)
			seen = !gs_info(fd, &ci) && has(&ci, w);
		if (!seen)
			fprintf(stderr, "uid %u: weight %u class %u limit %llu, want %lld %lld %llu\n",
				w->uid, ci.weight, ci.sched_class,
				(unsigned long long)ci.mem_limit, w->weight,
				w->class, (unsigned long long)w->limit);
		_exit(seen ? 0 : 1);
	}
	close(hold[0]);
	return pid;
}

/* A child as @uid that sees weight @weight and limit @limit. */
static pid_t client_as(uid_t uid, __u64 total, __u32 weight, __u64 limit,
		       int hold[2])
{
	const struct want w = { uid, limit, weight, -1 };

	return client_want(&w, total, false, hold);
}

FIXTURE_SETUP(mem)
{
	if (access(NL_GPUSCHEDD, X_OK))
		SKIP(return, "%s is not in the VM", NL_GPUSCHEDD);
	self->fd = gs_open_attached(NL_GPU_MEM);
	ASSERT_LE(0, self->fd);
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write(self->gpu, "mem_reserve_mb", "0\n"));
	nlt_uuid_str(self->uuid, sizeof(self->uuid), NL_GPU_MEM);
	ASSERT_EQ(0, write_conf(self->uuid, NULL));
	unlink(LOG);
	self->daemon = nlt_daemon_start(CONF, LOG, NULL);
	ASSERT_LE(0, self->daemon);
	ASSERT_TRUE(gs_wait_until(gs_gpu_read(self->gpu, "mem_reserve_mb") == 1024,
				  10000))
		TH_LOG("the daemon did not set the GPU's mem_reserve_mb; see %s", LOG);
}

FIXTURE_TEARDOWN(mem)
{
	nlt_daemon_end(_metadata, &self->daemon, LOG);
	if (self->fd >= 0)
		close(self->fd);
	gs_gpu_write(self->gpu, "mem_reserve_mb", "0\n");
}

TEST_F(mem, rules_give_limits_in_bytes_and_percent)
{
	int quarter[2], fixed[2], half[2], none[2];
	pid_t pq, pf, ph, pn;

	/* 25% of 8 GiB, within the 7 GiB the reserve leaves. */
	pq = client_as(4321, TOTAL, GPUSCHED_WEIGHT_DEFAULT, 2 * GIB, quarter);
	pf = client_as(4322, TOTAL, 50, GIB, fixed);
	/* 50% of nothing: the weight of the rule, no limit from it. */
	ph = client_as(4323, 0, 40, 0, half);
	/* No rule: the reserve alone bounds it. */
	pn = client_as(4324, TOTAL, GPUSCHED_WEIGHT_DEFAULT, 7 * GIB, none);
	ASSERT_LT(0, pq);
	ASSERT_LT(0, pf);
	ASSERT_LT(0, ph);
	ASSERT_LT(0, pn);
	close(quarter[1]);
	close(fixed[1]);
	close(half[1]);
	close(none[1]);
	EXPECT_EQ(0, gs_wait(pq));
	EXPECT_EQ(0, gs_wait(pf));
	EXPECT_EQ(0, gs_wait(ph));
	EXPECT_EQ(0, gs_wait(pn));
}

/* Run gpuschedctl with @args (a shell word list); its exit status. */
static int ctl(const char *args, const char *out)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s %s >%s 2>&1", NL_GPUSCHEDCTL, args, out);
	return WEXITSTATUS(system(cmd));
}

static bool file_has(const char *path, const char *needle)
{
	return nlt_file_has(path, needle);
}

TEST_F(mem, gpuschedctl_sets_and_shows_limits)
{
	struct gpusched_client_info ci;
	char args[128], want[128];
	int hold[2];
	pid_t pid;

	if (access(NL_GPUSCHEDCTL, X_OK))
		SKIP(return, "%s is not in the VM", NL_GPUSCHEDCTL);
	/* A client of the fixed rule: 1 GiB, then 512 MiB by hand. */
	pid = client_as(4322, TOTAL, 50, GIB, hold);
	ASSERT_LT(0, pid);
	snprintf(args, sizeof(args), "--json clients -i 0 -g %d", self->gpu);
	ASSERT_TRUE(gs_wait_until(!ctl(args, "/tmp/gs-mem-ctl.json") &&
				  file_has("/tmp/gs-mem-ctl.json", "\"mem_limit\":1073741824"),
				  5000));
	snprintf(want, sizeof(want), "\"pid\":%d", pid);
	EXPECT_TRUE(file_has("/tmp/gs-mem-ctl.json", want));
	EXPECT_TRUE(file_has("/tmp/gs-mem-ctl.json", "\"mem_total\":8589934592"));
	snprintf(args, sizeof(args), "set client %d mem_limit=512M", pid);
	EXPECT_EQ(0, ctl(args, "/tmp/gs-mem-ctl.out"));
	snprintf(args, sizeof(args), "--json clients -i 0 -g %d", self->gpu);
	EXPECT_EQ(0, ctl(args, "/tmp/gs-mem-ctl.json"));
	EXPECT_TRUE(file_has("/tmp/gs-mem-ctl.json", "\"mem_limit\":536870912"));
	/* In percent of what it reported, resolved by the module. */
	snprintf(args, sizeof(args), "set client %d mem_limit=50%%", pid);
	EXPECT_EQ(0, ctl(args, "/tmp/gs-mem-ctl.out"));
	EXPECT_EQ(0, ctl("--json clients -i 0", "/tmp/gs-mem-ctl.json"));
	EXPECT_TRUE(file_has("/tmp/gs-mem-ctl.json", "\"mem_limit\":4294967296"));
	/* Our own client reported nothing: a percentage is refused. */
	snprintf(args, sizeof(args), "set client %d mem_limit=50%%", getpid());
	EXPECT_EQ(1, ctl(args, "/tmp/gs-mem-ctl.out"));
	EXPECT_TRUE(file_has("/tmp/gs-mem-ctl.out", "no device memory"))
		nlt_show_file("/tmp/gs-mem-ctl.out");
	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(0, ci.mem_limit);	/* reported none: the reserve does not apply */
	close(hold[1]);
	EXPECT_EQ(0, gs_wait(pid));
}

/* Wait until GPU @gpu has @n clients. */
static bool clients_are(int gpu, size_t n)
{
	struct nlt_clients cs = { 0 };
	struct nlt t;
	bool ok;

	if (nlt_open(&t))
		return false;
	ok = gs_wait_until(!nlt_get_clients(&t, gpu, &cs) && cs.n == n, 5000);
	free(cs.c);
	nlt_close(&t);
	return ok;
}

/* Reload the daemon with mem_admission = @admit; true once it says so. */
static bool reload_admit(struct _test_data_mem *self, const char *admit)
{
	int fd = open(LOG, O_WRONLY | O_TRUNC);

	if (fd >= 0)
		close(fd);
	if (write_conf(self->uuid, admit))
		return false;
	kill(self->daemon, SIGHUP);
	return gs_wait_until(file_has(LOG, "reloaded"), 10000);
}

/*
 * mem_admission: the clients' limits on the GPU add up to at most its
 * 8 GiB less the 1 GiB reserve; one past it is refused (a limit of 1
 * byte), or, after a reload with batch, made batch class. Each is judged
 * once, when the daemon first sees it: the refused client stays refused
 * after the reload. Attached one after another, so that the order of
 * attach, which the daemon judges in, is known.
 */
TEST_F(mem, admission_refuses_then_makes_batch)
{
	static const struct want want[] = {
		{ 4321, 2 * GIB, -1, GPUSCHED_CLASS_NORMAL },	/* 25%: 2 GiB */
		{ 4322, GIB, -1, GPUSCHED_CLASS_NORMAL },	/* 3 GiB */
		{ 4321, 2 * GIB, -1, GPUSCHED_CLASS_NORMAL },	/* 5 GiB */
		{ 4321, 2 * GIB, -1, GPUSCHED_CLASS_NORMAL },	/* 7 GiB: full */
		{ 4321, 1, -1, GPUSCHED_CLASS_NORMAL },		/* refused */
		{ 4322, GIB, -1, GPUSCHED_CLASS_BATCH },	/* with batch */
	};
	int hold[6][2];
	pid_t pid[6];
	size_t i;

	ASSERT_TRUE(reload_admit(self, "refuse"))
		TH_LOG("the daemon did not reload; see %s", LOG);
	for (i = 0; i < 6; i++) {
		if (i == 5)
			ASSERT_TRUE(reload_admit(self, "batch"));
		pid[i] = client_want(&want[i], TOTAL, true, hold[i]);
		ASSERT_LT(0, pid[i]);
		/* Ours, and those before. */
		ASSERT_TRUE(clients_are(self->gpu, i + 2));
		if (i == 4)
			EXPECT_TRUE(gs_wait_until(file_has(LOG, "refused"), 5000));
	}
	EXPECT_TRUE(gs_wait_until(file_has(LOG, "made batch class"), 5000));
	/* All at once: each later child holds the earlier ones' pipes too. */
	for (i = 0; i < 6; i++)
		close(hold[i][1]);
	for (i = 0; i < 6; i++)
		EXPECT_EQ(0, gs_wait(pid[i]))
			TH_LOG("client %zu", i);
}

TEST_HARNESS_MAIN
