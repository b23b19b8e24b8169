// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd killed and restarted under load. Clients contend for one
 * token (acquire, a short critical section, release) while others attach
 * and leave; gpuschedd (netlink mode, a policy file whose rule gives uid
 * 1234 weight 300 and sets the GPU's slice) is SIGKILLed at random
 * moments and started again, GS_NLKILL_KILLS times (default 10).
 *
 * After each kill the test puts the rule's weight and the slice back by
 * hand, so that only the new daemon can set them again. It shows:
 *  - the clients are unaffected: no error from any ioctl, at most one
 *    holder at every grant, the token keeps moving while the daemon is
 *    dead and after;
 *  - every restarted daemon re-applies the rule to the clients that were
 *    there before it started, and the GPU knob, and leaves the clients no
 *    rule matches alone;
 *  - the daemon was alive at every kill and logs no error.
 */
#include <sys/mman.h>
#include "nl_test.h"

#define CONF		"/tmp/gpuschedd-kill.conf"
#define LOG		"/tmp/gpuschedd-kill.log"
#define GPU		NL_GPU_DAEMON_KILL
#define RULE_UID	1234
#define RULE_WEIGHT	300
#define SLICE_US	2000
#define SLICE_RESET_US	5000
#define NR_CONTENDERS	4	/* even ones as RULE_UID, odd ones as root */
#define HOLD_US		500
#define KILLS		10
#define MOVE_GRANTS	50	/* grants that must happen with no daemon */
#define APPLY_MS	30000	/* generous: a debug kernel, emulated, on a busy host */

struct shared {
	int in_cs[NR_CONTENDERS];
	int violations;
	int errors;
	int first_err;
	int stop;
	int ready;
	uint64_t grants;
	uint64_t grants_of[NR_CONTENDERS];
	uint64_t churned;
};

static struct shared *S;

/*
 * gs_wait_until() polling every 20 ms, not every 1: each poll is a dump,
 * which would take the CPU from the daemon it waits for.
 */
#define wait_until(cond, timeout_ms) ({					\
	uint64_t __end = gs_now_ns() + (uint64_t)(timeout_ms) * 1000000; \
	bool __ok;							\
	while (!(__ok = (cond)) && gs_now_ns() < __end)		\
		gs_sleep_us(20000);					\
	__ok;								\
})

static void note_error(int err)
{
	int zero = 0;

	__atomic_add_fetch(&S->errors, 1, __ATOMIC_SEQ_CST);
	__atomic_compare_exchange_n(&S->first_err, &zero, err, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Inside the critical section: is any other client in it too? */
static void check_alone(int me)
{
	int j, n = 0;

	__atomic_store_n(&S->in_cs[me], 1, __ATOMIC_SEQ_CST);
	for (j = 0; j < NR_CONTENDERS; j++)
		n += __atomic_load_n(&S->in_cs[j], __ATOMIC_SEQ_CST);
	if (n > 1)
		__atomic_add_fetch(&S->violations, 1, __ATOMIC_SEQ_CST);
}

static int contender(int me)
{
	unsigned int seed = getpid();
	int fd, err;

	if (!(me & 1) && nlt_drop_privileges(RULE_UID, RULE_UID))
		return 3;
	fd = gs_open_attached(GPU);
	if (fd < 0) {
		note_error(fd);
		return 4;
	}
	__atomic_add_fetch(&S->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&S->stop, __ATOMIC_RELAXED)) {
		/* A lost token is an error here, not a hang. */
		err = gs_acquire(fd, GPUSCHED_ACQUIRE_TIMEOUT, 30000000000ull);
		if (err) {
			note_error(err);
			return 5;
		}
		check_alone(me);
		__atomic_add_fetch(&S->grants, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&S->grants_of[me], 1, __ATOMIC_RELAXED);
		gs_sleep_us(rand_r(&seed) % HOLD_US);
		__atomic_store_n(&S->in_cs[me], 0, __ATOMIC_SEQ_CST);
		err = gs_release(fd);
		if (err) {
			note_error(err);
			return 6;
		}
	}
	close(fd);
	return 0;
}

/* Clients of RULE_UID that attach and leave: events in flight at a kill. */
static int churner(void)
{
	int fd;

	if (nlt_drop_privileges(RULE_UID, RULE_UID))
		return 3;
	while (!__atomic_load_n(&S->stop, __ATOMIC_RELAXED)) {
		fd = gs_open_attached(GPU);
		if (fd < 0) {
			note_error(fd);
			return 4;
		}
		gs_sleep_us(5000);
		close(fd);
		__atomic_add_fetch(&S->churned, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

static pid_t daemon_start(void)
{
	return nlt_daemon_start(CONF, LOG, NULL);
}

/*
 * The contenders' weights as the module reports them: how many of the
 * RULE_UID ones have @want, and whether every root one still has 100.
 */
static int weights(struct nlt *t, int gpu, const pid_t *pids, __u64 *ids,
		   __u32 want, bool *others_default)
{
	struct nlt_clients cs = { 0 };
	size_t i;
	int k, n = 0;

	*others_default = false;
	if (nlt_get_clients(t, gpu, &cs))
		return -1;
	*others_default = true;
	for (k = 0; k < NR_CONTENDERS; k++) {
		for (i = 0; i < cs.n; i++)
			if (cs.c[i].pid == (__u32)pids[k])
				break;
		if (i == cs.n) {
			*others_default = false;
			continue;
		}
		ids[k] = cs.c[i].id;
		if (k & 1)
			*others_default &= cs.c[i].weight == GPUSCHED_WEIGHT_DEFAULT;
		else
			n += cs.c[i].weight == want;
	}
	free(cs.c);
	return n;
}

FIXTURE(storm) {
};

FIXTURE_SETUP(storm)
{
}

FIXTURE_TEARDOWN(storm)
{
}

/* The harness's 30 s are too short for a debug kernel under emulation. */
TEST_F_TIMEOUT(storm, daemon_killed_and_restarted_under_load, 900)
{
	const char *env = getenv("GS_NLKILL_KILLS");
	int kills = env ? atoi(env) : KILLS;
	unsigned int seed = (unsigned int)gs_now_ns();
	pid_t pids[NR_CONTENDERS], churn, daemon;
	__u64 ids[NR_CONTENDERS] = { 0 };
	int fd, gpu, k, i, status, bad_status = 0, reapplied = 0;
	int not_moving = 0, reset_failed = 0, others_touched = 0;
	uint64_t t0, worst_ms = 0, grants0;
	char uuid[48], text[512], times[512] = "";
	size_t tn = 0;
	bool others;
	struct nlt t;

	if (access(NL_GPUSCHEDD, X_OK))
		SKIP(return, "%s is not in the VM", NL_GPUSCHEDD);
	if (getenv("GS_NLKILL_SEED"))
		seed = strtoul(getenv("GS_NLKILL_SEED"), NULL, 0);
	ksft_print_msg("seed %#x (GS_NLKILL_SEED), %d kills (GS_NLKILL_KILLS)\n",
		       seed, kills);
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, S);
	ASSERT_EQ(0, nlt_open(&t));

	/* The token, its slice and a grace no hold comes near. */
	fd = gs_open_attached(GPU);
	ASSERT_LE(0, fd);
	gpu = gs_gpu_index(fd);
	ASSERT_LE(0, gpu);
	ASSERT_EQ(0, gs_gpu_write_u64(gpu, "grace_us", 10000000));
	ASSERT_EQ(0, gs_gpu_write_u64(gpu, "timeslice_us", SLICE_RESET_US));
	nlt_uuid_str(uuid, sizeof(uuid), GPU);
	snprintf(text, sizeof(text),
		 "[gpu %s]\ntimeslice_us = %d\ngrace_us = 10000000\n\n"
		 "[rule storm]\nuser = %d\nweight = %d\n",
		 uuid, SLICE_US, RULE_UID, RULE_WEIGHT);
	ASSERT_EQ(0, nlt_write_file(CONF, text));
	unlink(LOG);

	for (k = 0; k < NR_CONTENDERS; k++) {
		pids[k] = gs_fork();
		ASSERT_LE(0, pids[k]);
		if (pids[k] == 0)
			_exit(contender(k));
	}
	churn = gs_fork();
	ASSERT_LE(0, churn);
	if (churn == 0)
		_exit(churner());
	ASSERT_TRUE(gs_wait_until(__atomic_load_n(&S->ready, __ATOMIC_SEQ_CST) ==
				  NR_CONTENDERS, 10000));

	daemon = daemon_start();
	ASSERT_LE(0, daemon);
	ASSERT_TRUE(wait_until(weights(&t, gpu, pids, ids, RULE_WEIGHT, &others) ==
				  NR_CONTENDERS / 2, APPLY_MS)) {
		nlt_show_file(LOG);
	}

	for (k = 0; k < kills; k++) {
		/* A random moment of the contention, the churn and the daemon. */
		gs_sleep_us(rand_r(&seed) % 300000);
		ASSERT_EQ(0, kill(daemon, SIGKILL));
		status = gs_wait(daemon);
		if (status != 128 + SIGKILL) {
			bad_status++;
			ksft_print_msg("kill %d: the daemon had exited with %d\n", k, status);
		}

		/* Undo its work by hand: only the next daemon may redo it. */
		grants0 = __atomic_load_n(&S->grants, __ATOMIC_SEQ_CST);
		for (i = 0; i < NR_CONTENDERS; i += 2)
			if (nlt_set_client(&t, ids[i], GPUSCHED_WEIGHT_DEFAULT, -1, -1))
				reset_failed++;
		if (gs_gpu_write_u64(gpu, "timeslice_us", SLICE_RESET_US) ||
		    weights(&t, gpu, pids, ids, RULE_WEIGHT, &others) != 0)
			reset_failed++;
		if (!others)
			others_touched++;
		/* With no daemon at all, the token moves on. */
		if (!gs_wait_until(__atomic_load_n(&S->grants, __ATOMIC_SEQ_CST) >=
				   grants0 + MOVE_GRANTS, 30000)) {
			not_moving++;
			ksft_print_msg("kill %d: %llu grants in 30 s without the daemon\n", k,
				       (unsigned long long)(S->grants - grants0));
		}

		t0 = gs_now_ns();
		daemon = daemon_start();
		ASSERT_LE(0, daemon);
		if (wait_until(weights(&t, gpu, pids, ids, RULE_WEIGHT, &others) ==
				  NR_CONTENDERS / 2 &&
				  gs_gpu_read(gpu, "timeslice_us") == SLICE_US, APPLY_MS)) {
			uint64_t ms = (gs_now_ns() - t0) / 1000000;

			reapplied++;
			if (ms > worst_ms)
				worst_ms = ms;
			if (tn < sizeof(times))
				tn += snprintf(times + tn, sizeof(times) - tn, " %llu",
					       (unsigned long long)ms);
		} else {
			ksft_print_msg("restart %d: the rule or the slice not re-applied in %d ms\n",
				       k, APPLY_MS);
		}
		if (!others)
			others_touched++;
	}

	grants0 = __atomic_load_n(&S->grants, __ATOMIC_SEQ_CST);
	EXPECT_TRUE(gs_wait_until(__atomic_load_n(&S->grants, __ATOMIC_SEQ_CST) >=
				  grants0 + MOVE_GRANTS, 30000));
	__atomic_store_n(&S->stop, 1, __ATOMIC_SEQ_CST);
	for (k = 0; k < NR_CONTENDERS; k++) {
		status = gs_wait(pids[k]);
		EXPECT_EQ(0, status) TH_LOG("contender %d exited with %d", k, status);
		EXPECT_LT(0, S->grants_of[k]) TH_LOG("contender %d never got the token", k);
	}
	EXPECT_EQ(0, gs_wait(churn));
	close(fd);

	EXPECT_EQ(0, nlt_daemon_stop(daemon));

	ksft_print_msg("%d kills and restarts; %llu grants (%llu %llu %llu %llu), %llu clients churned; rule and slice re-applied after %d of %d restarts, the slowest in %llu ms\n",
		       kills, (unsigned long long)S->grants,
		       (unsigned long long)S->grants_of[0],
		       (unsigned long long)S->grants_of[1],
		       (unsigned long long)S->grants_of[2],
		       (unsigned long long)S->grants_of[3],
		       (unsigned long long)S->churned, reapplied, kills,
		       (unsigned long long)worst_ms);
	ksft_print_msg("restart to re-applied, ms:%s\n", times);
	ksft_print_msg("%d violations, %d errors (first %d), daemon starts logged %d\n",
		       S->violations, S->errors, S->first_err,
		       nlt_file_count(LOG, "<5>connected to gpusched.ko"));
	EXPECT_EQ(0, S->violations);
	EXPECT_EQ(0, S->errors) TH_LOG("first error %d", S->first_err);
	EXPECT_EQ(0, bad_status);
	EXPECT_EQ(0, reset_failed);
	EXPECT_EQ(0, not_moving);
	EXPECT_EQ(kills, reapplied);
	EXPECT_EQ(0, others_touched) TH_LOG("a client no rule matches lost weight 100");
	EXPECT_EQ(kills + 1, nlt_file_count(LOG, "<5>connected to gpusched.ko"));
	EXPECT_EQ(0, nlt_file_count(LOG, "<3>"));
	if (!_metadata->passed)
		nlt_show_file(LOG);
	nlt_close(&t);
}

TEST_HARNESS_MAIN
