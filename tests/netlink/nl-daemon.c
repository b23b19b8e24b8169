// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd, started with a policy file, gives each new client the weight,
 * class and cap of the first rule that matches it within 100 ms of its
 * attach (by label, user, executable name), applies the GPU knobs of the
 * file, applies the rules to clients that were there before it started, re-applies on SIGHUP
 * with a changed file (and restores the defaults of what the file no
 * longer sets), keeps the policy in force when the new file is broken,
 * serves its metrics, and exits cleanly on SIGTERM. Killed and started
 * again with a file that lost rules, it takes back what they gave (the
 * module's marks) and keeps what the clients lowered themselves.
 *
 * The clients are this very program, run again with GS_NL_CHILD in the
 * environment (see child_main()), so that each has the identity a rule
 * looks for: a label in its environment, another user, another name.
 */
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <dirent.h>
#include "nl_test.h"

#define CONF		"/tmp/gpuschedd-test.conf"
#define LOG		"/tmp/gpuschedd-test.log"
#define SPECIAL		"/tmp/gs-special"
#define METRICS_PORT	9464
#define APPLY_MS	100
/* Opens of /proc/PID/environ wait while STALL exists (tests/host/'s preload). */
#define STALL_SHIM	"/usr/lib/gpusched/libgs-stall-environ.so"
#define STALL		"/tmp/gs-stall-environ"
/* Where tests/vm/init keeps the module it loaded. */
#define MODULE_FILE	"/gpusched.ko"

/*
 * GS_NL_CHILD="GPU WEIGHT CLASS CAP UID [OWN]": drop to UID (if not 0),
 * attach to GPU, and wait for the daemon to set WEIGHT, CLASS and CAP;
 * then set its own weight to OWN if given (-2 if that fails); print the
 * microseconds it took from the return of ATTACH, or -1, and hold the
 * client until stdin closes. Runs before the harness sees the program.
 */
static void __attribute__((constructor(101))) child_main(void)
{
	const char *spec = getenv("GS_NL_CHILD");
	struct gpusched_client_info ci;
	unsigned int gpu, weight, class, cap, uid, own = 0;
	uint64_t t0, t1 = 0, end;
	char c;
	int fd;

	if (!spec)
		return;
	if (sscanf(spec, "%u %u %u %u %u %u", &gpu, &weight, &class, &cap, &uid,
		   &own) < 5)
		_exit(2);
	if (uid && nlt_drop_privileges(uid, uid))
		_exit(3);
	fd = gs_open_attached(gpu);
	if (fd < 0)
		_exit(4);
	t0 = gs_now_ns();
	end = t0 + 3000000000ull;
	while (gs_now_ns() < end) {
		if (!gs_info(fd, &ci) && ci.weight == weight && ci.sched_class == class &&
		    ci.cap_pct == cap) {
			t1 = gs_now_ns();
			break;
		}
		gs_sleep_us(200);
	}
	if (t1 && own && gs_set_weight(fd, own))
		printf("-2\n");
	else
		printf("%lld\n", t1 ? (long long)(t1 - t0) / 1000 : -1LL);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	_exit(0);
}

struct child {
	pid_t pid;
	int in, out;	/* its stdin (close to end it), its stdout */
};

/*
 * Start this program as a client with @label (or none) and @exe's name;
 * it sets its own weight to @own (if not 0) once it has the rule's values.
 */
static int child_start_own(struct child *ch, const char *exe, const char *label,
			   unsigned int weight, unsigned int class,
			   unsigned int cap, unsigned int uid, unsigned int own)
{
	int in[2], out[2];
	char spec[128], lbl[128];

	/* Close-on-exec: only the child's stdin and stdout may keep them open. */
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	snprintf(spec, sizeof(spec), "GS_NL_CHILD=%u %u %u %u %u %u", NL_GPU_DAEMON,
		 weight, class, cap, uid, own);
	snprintf(lbl, sizeof(lbl), "GPUSCHED_LABEL=%s", label ? label : "");
	ch->pid = gs_fork();
	if (ch->pid < 0)
		return -errno;
	if (ch->pid == 0) {
		char *argv[] = { (char *)exe, NULL };
		char *envp[] = { spec, label ? lbl : NULL, NULL };

		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execve(exe, argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	ch->in = in[1];
	ch->out = out[0];
	return 0;
}

static int child_start(struct child *ch, const char *exe, const char *label,
		       unsigned int weight, unsigned int class, unsigned int cap,
		       unsigned int uid)
{
	return child_start_own(ch, exe, label, weight, class, cap, uid, 0);
}

/* Microseconds from attach to the rule's effect, or -1. */
static long long child_latency(struct child *ch)
{
	char buf[32] = "";
	ssize_t n = read(ch->out, buf, sizeof(buf) - 1);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atoll(buf);
}

static void child_stop(struct child *ch)
{
	close(ch->in);
	close(ch->out);
	gs_wait(ch->pid);
}

static bool log_has(const char *needle)
{
	return nlt_file_has(LOG, needle);
}

static void loopback_up(void)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (!ioctl(s, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

FIXTURE(daemon) {
	struct nlt t;
	int fd;			/* a client from before the daemon started */
	int gpu;
	char uuid[48];
	pid_t daemon;
	long long default_slice;
};

static void policy_v1(FIXTURE_DATA(daemon) *self)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "# gpuschedd test policy, version 1\n"
		 "[gpu %s]\n"
		 "timeslice_us = 3000\n"
		 "\n"
		 "[rule labelled]\n"
		 "label = infer*\n"
		 "class = latency\n"
		 "weight = 400\n"
		 "\n"
		 "[rule user1234]\n"
		 "user = 1234\n"
		 "weight = 50\n"
		 "class = batch\n"
		 "\n"
		 "[rule special-exe]\n"
		 "exe = gs-special\n"
		 "cap = 30\n"
		 "\n"
		 "[rule root-default]\n"
		 "user = 0\n"
		 "weight = 111\n", self->uuid);
	nlt_write_file(CONF, text);
}

/* gpuschedd with CONF and metrics, its output appended to LOG. */
static pid_t daemon_start(void)
{
	return nlt_daemon_start(CONF, LOG, "127.0.0.1:9464");
}

FIXTURE_SETUP(daemon)
{
	struct gpusched_client_info ci;
	struct stat st;

	if (access(NL_GPUSCHEDD, X_OK))
		SKIP(return, "%s is not in the VM", NL_GPUSCHEDD);
	loopback_up();
	ASSERT_EQ(0, nlt_open(&self->t));
	self->fd = gs_open_attached(NL_GPU_DAEMON);
	ASSERT_LE(0, self->fd);
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_set_weight(self->fd, 100));
	self->default_slice = gs_param_read("timeslice_us");
	ASSERT_LT(0, self->default_slice);
	ASSERT_EQ(0, gs_gpu_write_u64(self->gpu, "timeslice_us", self->default_slice));
	nlt_uuid_str(self->uuid, sizeof(self->uuid), NL_GPU_DAEMON);
	policy_v1(self);
	/* The exe rule's client: this program under another name. */
	if (stat(SPECIAL, &st)) {
		int in = open("/proc/self/exe", O_RDONLY), out;
		char buf[65536];
		ssize_t n;

		ASSERT_LE(0, in);
		out = open(SPECIAL, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		ASSERT_LE(0, out);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			ASSERT_EQ(n, write(out, buf, n));
		close(in);
		close(out);
	}

	unlink(LOG);
	self->daemon = daemon_start();
	ASSERT_LE(0, self->daemon);
	/* Ready when it has given the client from before its rule. */
	ASSERT_TRUE(gs_wait_until(!gs_info(self->fd, &ci) && ci.weight == 111, 10000))
		TH_LOG("the daemon did not apply its rules to a client already there; see %s",
		       LOG);
}

FIXTURE_TEARDOWN(daemon)
{
	nlt_daemon_end(_metadata, &self->daemon, LOG);
	if (self->fd >= 0)
		close(self->fd);
	nlt_close(&self->t);
}

TEST_F(daemon, applies_rules_to_existing_clients_and_gpu_knobs)
{
	EXPECT_EQ(3000, gs_gpu_read(self->gpu, "timeslice_us"));
	/* It logs what it did right after doing it. */
	EXPECT_TRUE(gs_wait_until(log_has("rule \"root-default\": weight 111"), 2000));
	EXPECT_TRUE(gs_wait_until(log_has("timeslice_us=3000"), 2000));
}

TEST_F(daemon, new_clients_get_their_rule_within_100ms)
{
	static const struct {
		const char *what, *exe, *label;
		unsigned int weight, class, cap, uid;
	} cases[] = {
		{ "label inference", "/proc/self/exe", "inference", 400,
		  GPUSCHED_CLASS_LATENCY, 0, 0 },
		{ "user 1234", "/proc/self/exe", NULL, 50, GPUSCHED_CLASS_BATCH, 0, 1234 },
		{ "exe gs-special", SPECIAL, NULL, 100, GPUSCHED_CLASS_NORMAL, 30, 0 },
		{ "root", "/proc/self/exe", "other", 111, GPUSCHED_CLASS_NORMAL, 0, 0 },
	};
	long long worst = 0;
	size_t i;
	int round;

	/* A few rounds: the worst of them must hold, not the average. */
	for (round = 0; round < 5; round++) {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct child ch;
			long long us;

			ASSERT_EQ(0, child_start(&ch, cases[i].exe, cases[i].label,
						 cases[i].weight, cases[i].class,
						 cases[i].cap, cases[i].uid));
			us = child_latency(&ch);
			child_stop(&ch);
			EXPECT_LE(0, us) TH_LOG("%s: rule not applied within 3 s", cases[i].what);
			EXPECT_GE(APPLY_MS * 1000, us) TH_LOG("%s: %lld us", cases[i].what, us);
			if (us > worst)
				worst = us;
			if (round == 0)
				ksft_print_msg("%s: weight %u class %u cap %u after %lld us\n",
					       cases[i].what, cases[i].weight,
					       cases[i].class, cases[i].cap, us);
		}
	}
	ksft_print_msg("worst of 20 attaches: %lld us from attach to the rule's parameters\n",
		       worst);
}

/* The values and marks of @pid's client on @gpu, by dump. */
static bool client_rec(struct nlt *t, unsigned int gpu, pid_t pid,
		       struct nlt_client *out)
{
	struct nlt_clients cs = { 0 };
	bool found = false;
	size_t i;

	if (nlt_get_clients(t, gpu, &cs))
		return false;
	for (i = 0; i < cs.n; i++) {
		if (cs.c[i].pid == (__u32)pid) {
			*out = cs.c[i];
			found = true;
		}
	}
	free(cs.c);
	return found;
}

/* The weight and class the module reports for @pid's client on @gpu. */
static bool client_params(struct nlt *t, unsigned int gpu, pid_t pid,
			  __u32 *weight, __u32 *class)
{
	struct nlt_client c;

	if (!client_rec(t, gpu, pid, &c))
		return false;
	*weight = c.weight;
	*class = c.class;
	return true;
}

/*
 * A label whose read does not end, as when the process mapped a FUSE file
 * over its environment (here a preload holds the daemon's opens of
 * /proc/PID/environ while STALL exists). The daemon used to read it in its
 * loop, and no client got its rule until the read ended; now a thread of
 * its own reads it. Meanwhile another client gets its rule within 100 ms,
 * and the labelled one gets its own once the read ends.
 */
TEST_F(daemon, a_stalled_label_read_holds_up_nobody)
{
	struct child labelled, other;
	long long us;
	int fd;

	if (access(STALL_SHIM, R_OK))
		SKIP(return, "%s is not in the VM", STALL_SHIM);
	ASSERT_EQ(0, kill(self->daemon, SIGTERM));
	gs_wait(self->daemon);
	fd = creat(STALL, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	unlink(STALL ".seen");
	unlink(LOG);
	ASSERT_EQ(0, setenv("LD_PRELOAD", STALL_SHIM, 1));
	ASSERT_EQ(0, setenv("GS_STALL_ENVIRON", STALL, 1));
	self->daemon = daemon_start();
	unsetenv("LD_PRELOAD");
	unsetenv("GS_STALL_ENVIRON");
	ASSERT_LE(0, self->daemon);
	ASSERT_TRUE(gs_wait_until(log_has("connected to gpusched.ko"), 10000));

	ASSERT_EQ(0, child_start(&labelled, "/proc/self/exe", "inference", 400,
				 GPUSCHED_CLASS_LATENCY, 0, 0));
	/* Its label's read has begun, and waits. */
	EXPECT_TRUE(gs_wait_until(!access(STALL ".seen", F_OK), 3000));
	ASSERT_EQ(0, child_start(&other, "/proc/self/exe", NULL, 50,
				 GPUSCHED_CLASS_BATCH, 0, 1234));
	us = child_latency(&other);
	EXPECT_LE(0, us) TH_LOG("user 1234: rule not applied within 3 s");
	EXPECT_GE(APPLY_MS * 1000, us) TH_LOG("user 1234: %lld us", us);
	unlink(STALL);
	us = child_latency(&labelled);
	EXPECT_LE(0, us) TH_LOG("label inference: rule not applied once the read ended");
	child_stop(&other);
	child_stop(&labelled);
	unlink(STALL ".seen");
}

TEST_F(daemon, sighup_reapplies_a_changed_file)
{
	struct gpusched_client_info ci;
	struct child ch;
	uint64_t t0;
	char text[512];

	/* A labelled client, there before the reload. */
	ASSERT_EQ(0, child_start(&ch, "/proc/self/exe", "inference-2", 400,
				 GPUSCHED_CLASS_LATENCY, 0, 0));
	ASSERT_LE(0, child_latency(&ch));
	/*
	 * Version 2: the label rule changes, the root rule and the GPU
	 * section go: their settings return to the defaults.
	 */
	snprintf(text, sizeof(text),
		 "[rule labelled]\nlabel = infer*\nweight = 700\n"
		 "[rule user1234]\nuser = 1234\nweight = 50\n");
	nlt_write_file(CONF, text);
	t0 = gs_now_ns();
	ASSERT_EQ(0, kill(self->daemon, SIGHUP));
	EXPECT_TRUE(gs_wait_until(!gs_info(self->fd, &ci) && ci.weight == 100, 5000))
		TH_LOG("root's client kept weight %u", ci.weight);
	EXPECT_TRUE(gs_wait_until(gs_gpu_read(self->gpu, "timeslice_us") == self->default_slice,
				  5000));
	/*
	 * The labelled client: weight 700, and its class back to normal. The
	 * daemon re-applies client by client: wait for this one too.
	 */
	{
		__u32 weight = 0, class = 0;

		EXPECT_TRUE(gs_wait_until(client_params(&self->t, self->gpu, ch.pid,
							&weight, &class) &&
					  weight == 700 &&
					  class == GPUSCHED_CLASS_NORMAL, 5000))
			TH_LOG("labelled client: weight %u, class %u", weight, class);
	}
	ksft_print_msg("reloaded and re-applied in %llu ms\n",
		       (unsigned long long)(gs_now_ns() - t0) / 1000000);
	child_stop(&ch);
	EXPECT_TRUE(gs_wait_until(log_has("reloaded " CONF ": 2 rules"), 2000));
}

TEST_F(daemon, a_broken_file_is_refused_and_the_old_policy_stays)
{
	struct child ch;
	char want[256];
	int status;
	pid_t pid;

	nlt_write_file(CONF, "[rule labelled]\nlabel = infer*\nweight = 700\n"
			 "class = realtime\n");
	ASSERT_EQ(0, kill(self->daemon, SIGHUP));
	snprintf(want, sizeof(want),
		 "<3>%s:4: class \"realtime\": expected latency, normal or batch; keeping the policy in force",
		 CONF);
	EXPECT_TRUE(gs_wait_until(log_has(want), 5000)) TH_LOG("no \"%s\" in %s", want, LOG);
	/* The daemon lives on, with version 1: a new client gets v1's values. */
	EXPECT_EQ(0, kill(self->daemon, 0));
	ASSERT_EQ(0, child_start(&ch, "/proc/self/exe", "inference", 400,
				 GPUSCHED_CLASS_LATENCY, 0, 0));
	EXPECT_LE(0, child_latency(&ch));
	child_stop(&ch);
	EXPECT_EQ(3000, gs_gpu_read(self->gpu, "timeslice_us"));
	/* --check says the same, and fails. */
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
		execl(NL_GPUSCHEDD, "gpuschedd", "--check", "--config", CONF, (char *)NULL);
		_exit(127);
	}
	status = gs_wait(pid);
	EXPECT_EQ(1, status);
}

/* GET /metrics from the daemon: the page, or "" */
static void scrape(char *buf, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(METRICS_PORT) };
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n";
	size_t len = 0;
	ssize_t n;
	int s;

	buf[0] = '\0';
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(s, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		close(s);
		return;
	}
	while (len < size - 1 && (n = read(s, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(s);
}

TEST_F(daemon, serves_prometheus_metrics)
{
	static char page[1 << 18];
	char want[256];

	scrape(page, sizeof(page));
	ASSERT_EQ(0, strncmp(page, "HTTP/1.1 200 OK\r\n", 17)) TH_LOG("got: %.200s", page);
	EXPECT_NE(NULL, strstr(page, "Content-Type: text/plain; version=0.0.4"));
	snprintf(want, sizeof(want), "gpusched_gpu_info{gpu=\"%d\",uuid=\"%s\"} 1\n",
		 self->gpu, self->uuid);
	EXPECT_NE(NULL, strstr(page, want)) TH_LOG("no %s", want);
	snprintf(want, sizeof(want), "gpusched_gpu_timeslice_seconds{gpu=\"%d\"} 0.003000\n",
		 self->gpu);
	EXPECT_NE(NULL, strstr(page, want)) TH_LOG("no %s", want);
	snprintf(want, sizeof(want), ",pid=\"%d\",comm=\"nl-daemon\",uid=\"0\"} 111\n",
		 getpid());
	EXPECT_NE(NULL, strstr(page, want)) TH_LOG("no client weight line ending %s", want);
	EXPECT_NE(NULL, strstr(page, "# TYPE gpusched_client_held_seconds_total counter\n"));
	EXPECT_NE(NULL, strstr(page, "gpuschedd_rule_matches_total{rule=\"root-default\"} 1\n"));
	EXPECT_NE(NULL, strstr(page, "gpuschedd_module_present 1\n"));
}

TEST_F(daemon, sigterm_stops_it_cleanly)
{
	uint64_t t0 = gs_now_ns();
	int status;

	ASSERT_EQ(0, kill(self->daemon, SIGTERM));
	status = gs_wait(self->daemon);
	self->daemon = 0;
	EXPECT_EQ(0, status);
	EXPECT_GT(2000, (gs_now_ns() - t0) / 1000000);
	EXPECT_TRUE(log_has("<5>Terminated: exiting"));
	/* journald-friendly: every line has a priority prefix. */
	EXPECT_FALSE(log_has("\ngpuschedd:"));
}

static bool has_values(struct nlt *t, unsigned int gpu, pid_t pid,
		       __u32 weight, __u32 class, struct nlt_client *c)
{
	return client_rec(t, gpu, pid, c) && c->weight == weight &&
	       c->class == class;
}

/*
 * Killed, the file loses rules, started again: what the lost rules gave
 * returns to the defaults, what the clients lowered themselves stays as
 * far as it is below the default, and what the file still says stays.
 */
TEST_F(daemon, a_restart_takes_back_what_lost_rules_gave)
{
	enum { RAISED, RAISED_LOWERED, LOWERED_MORE, NO_RULE, NR };
	static const struct {
		const char *what, *label;
		unsigned int weight, class, uid, own;	/* rule's values, own weight */
		unsigned int after_weight, after_class;
	} cases[NR] = {
		[RAISED] = { "labelled (400, latency)", "inference", 400,
			     GPUSCHED_CLASS_LATENCY, 1234, 0,
			     100, GPUSCHED_CLASS_NORMAL },
		/* Lowered itself from 400 to 200: more than its own 100. */
		[RAISED_LOWERED] = { "labelled, then weight 200 by itself",
				     "inference", 400, GPUSCHED_CLASS_LATENCY,
				     1234, 200, 100, GPUSCHED_CLASS_NORMAL },
		/* Lowered itself from 50 to 30: its own choice, kept. */
		[LOWERED_MORE] = { "user1234 (50, batch), then weight 30 by itself",
				   NULL, 50, GPUSCHED_CLASS_BATCH, 1234, 30,
				   30, GPUSCHED_CLASS_NORMAL },
		[NO_RULE] = { "no rule, weight 60 by itself", NULL, 100,
			      GPUSCHED_CLASS_NORMAL, 4321, 60,
			      60, GPUSCHED_CLASS_NORMAL },
	};
	struct gpusched_client_info ci;
	struct child ch[NR];
	struct nlt_client c;
	uint64_t t0;
	long long ms;
	int i;

	for (i = 0; i < NR; i++) {
		ASSERT_EQ(0, child_start_own(&ch[i], "/proc/self/exe", cases[i].label,
					     cases[i].weight, cases[i].class, 0,
					     cases[i].uid, cases[i].own));
		ASSERT_LE(0, child_latency(&ch[i])) TH_LOG("%s", cases[i].what);
	}
	ASSERT_TRUE(client_rec(&self->t, self->gpu, ch[RAISED_LOWERED].pid, &c));
	EXPECT_EQ(GPUSCHED_PARAM_WEIGHT, c.policy_lowered);
	EXPECT_EQ(GPUSCHED_PARAM_CLASS, c.policy_set);

	ASSERT_EQ(0, kill(self->daemon, SIGKILL));
	gs_wait(self->daemon);
	nlt_write_file(CONF, "[rule root-default]\nuser = 0\nweight = 111\n");
	t0 = gs_now_ns();
	self->daemon = daemon_start();
	ASSERT_LE(0, self->daemon);
	for (i = 0; i < NR; i++) {
		EXPECT_TRUE(gs_wait_until(has_values(&self->t, self->gpu, ch[i].pid,
						     cases[i].after_weight,
						     cases[i].after_class, &c), 10000))
			TH_LOG("%s: weight %u class %u, want %u %u", cases[i].what,
			       c.weight, c.class, cases[i].after_weight,
			       cases[i].after_class);
		/* The value kept is still one lowered from a policy's. */
		EXPECT_EQ(0, c.policy_set) TH_LOG("%s", cases[i].what);
		EXPECT_EQ(i == LOWERED_MORE ? GPUSCHED_PARAM_WEIGHT : 0,
			  c.policy_lowered) TH_LOG("%s", cases[i].what);
	}
	ms = (long long)(gs_now_ns() - t0) / 1000000;
	ksft_print_msg("defaults back on the clients of the lost rules %lld ms after the restart\n",
		       ms);
	/* The rule still in the file: still in force, still the policy's. */
	EXPECT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(111, ci.weight);
	ASSERT_TRUE(client_rec(&self->t, self->gpu, getpid(), &c));
	EXPECT_EQ(GPUSCHED_PARAM_WEIGHT, c.policy_set);
	for (i = 0; i < NR; i++)
		child_stop(&ch[i]);
}

/* How many times the log has @needle. */
/* The module's parameters as they are, "name=value ...", to load it again. */
static void module_params(char *buf, size_t size)
{
	DIR *dir = opendir(GS_PARAM_DIR);
	struct dirent *d;
	size_t n = 0;

	buf[0] = '\0';
	while (dir && (d = readdir(dir))) {
		char path[300], val[64];

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), GS_PARAM_DIR "/%s", d->d_name);
		if (gs_sysfs_read_path(path, val, sizeof(val)))
			continue;
		val[strcspn(val, "\n")] = '\0';
		n += snprintf(buf + n, size - n, "%s%s=%s", n ? " " : "", d->d_name, val);
		if (n >= size)
			break;
	}
	if (dir)
		closedir(dir);
}

/* The GPU of the client of process @pid, or -1. */
static int client_gpu(struct nlt *t, pid_t pid)
{
	struct nlt_clients cs = { 0 };
	int gpu = -1;
	size_t i;

	if (nlt_get_clients(t, -1, &cs))
		return -1;
	for (i = 0; i < cs.n; i++)
		if (cs.c[i].pid == (__u32)pid)
			gpu = cs.c[i].gpu;
	free(cs.c);
	return gpu;
}

/*
 * Last, since it unloads the module: the daemon follows the family away
 * and back (an upgrade of the module), and applies its rules again.
 */
TEST_F(daemon, follows_the_module_unloaded_and_loaded_again)
{
	struct child ch;
	long long us;
	int fd, err = -1, i, gpu;
	char params[512];

	fd = open(MODULE_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		SKIP(return, "no %s to load again", MODULE_FILE);
	/* Load it again as the runner did, for the tests that follow. */
	module_params(params, sizeof(params));
	ksft_print_msg("reloading with: %s\n", params);
	close(self->fd);
	self->fd = -1;
	for (i = 0; i < 50 && err; i++) {
		err = syscall(SYS_delete_module, "gpusched", O_NONBLOCK) ? errno : 0;
		if (err)
			gs_sleep_us(100000);
	}
	ASSERT_EQ(0, err) TH_LOG("rmmod gpusched: %s", strerror(err));
	EXPECT_TRUE(gs_wait_until(log_has("<4>gpusched.ko went away"), 5000));
	ASSERT_EQ(0, syscall(SYS_finit_module, fd, params, 0)) TH_LOG("insmod: %s", strerror(errno));
	close(fd);
	EXPECT_TRUE(gs_wait_until(nlt_file_count(LOG, "<5>connected to gpusched.ko") == 2, 5000));
	ASSERT_TRUE(gs_wait_until(access(GPUSCHED_DEVICE_PATH, R_OK | W_OK) == 0, 5000));
	/* A new GPU (the old ones went with the module): its knobs and rule. */
	ASSERT_EQ(0, child_start(&ch, "/proc/self/exe", "inference", 400,
				 GPUSCHED_CLASS_LATENCY, 0, 0));
	us = child_latency(&ch);
	EXPECT_LE(0, us);
	EXPECT_GE(APPLY_MS * 1000, us);
	/* The family has a new id: a new socket finds the child's GPU. */
	nlt_close(&self->t);
	ASSERT_EQ(0, nlt_open(&self->t));
	gpu = client_gpu(&self->t, ch.pid);
	ASSERT_LE(0, gpu);
	EXPECT_TRUE(gs_wait_until(gs_gpu_read(gpu, "timeslice_us") == 3000, 1000));
	child_stop(&ch);
	EXPECT_EQ(0, kill(self->daemon, 0));
}

TEST_HARNESS_MAIN
