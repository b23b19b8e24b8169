// SPDX-License-Identifier: GPL-2.0
/*
 * What a task keeps of the module once it is unloaded: nothing. An ACQUIRE
 * that a stop interrupts is restarted, and the module marks the task's
 * restart block to tell the restart from a new call (token.c). The block
 * is the task's and outlives the module: restart_syscall(2), which any
 * program may call, jumps to the function it names. Before the fix, a
 * recognised restart left one of the module's functions there, and after
 * an unload the call was an instruction fetch from freed memory (an oops,
 * the caller killed).
 *
 * This reloads the module: it needs the runner's /gpusched.ko and no
 * client of another program left, and puts the module back as it was.
 */
#include "gs_test.h"

FIXTURE(unload) {
	char params[512];	/* as loaded by the runner */
};

FIXTURE_SETUP(unload)
{
	if (access(GS_MODULE_PATH, R_OK))
		SKIP(return, "%s: not in the test VM", GS_MODULE_PATH);
	ASSERT_EQ(0, gs_module_params(self->params, sizeof(self->params)));
}

FIXTURE_TEARDOWN(unload)
{
	/* Leave the module as the runner loaded it, failed test or not. */
	if (gs_param_read("max_gpus") >= 0)
		return;
	EXPECT_EQ(0, gs_module_load(self->params))
		TH_LOG("reloading with %s", self->params);
}

enum { CH_OK, CH_SETUP, CH_ACQUIRE, CH_PIPE, CH_RESTART };

/*
 * The child: wait in ACQUIRE (stopped and continued meanwhile: restarted),
 * granted, close the file; once the parent says the module is gone, call
 * restart_syscall(2), which must find nothing of the module to run.
 */
static int child(int go)
{
	struct gpusched_acquire a = {
		.flags = GPUSCHED_ACQUIRE_TIMEOUT, .timeout_ns = 10000000000ull,
	};
	int fd = gs_open_attached(GS_GPU_UNLOAD);
	char c;
	long r;

	if (fd < 0)
		return CH_SETUP;
	if (gs_ioctl(fd, GPUSCHED_IOC_ACQUIRE, &a))
		return CH_ACQUIRE;
	close(fd);
	if (read(go, &c, 1) != 1)
		return CH_PIPE;
	r = syscall(SYS_restart_syscall);
	return r == -1 && errno == EINTR ? CH_OK : CH_RESTART;
}

TEST_F(unload, restarted_acquire_leaves_no_pointer_into_module)
{
	int go[2], holder, gpu, err, i;
	pid_t pid;

	if (!self->params[0])
		return;	/* skipped */
	holder = gs_open_attached(GS_GPU_UNLOAD);
	ASSERT_LE(0, holder);
	gpu = gs_gpu_index(holder);
	ASSERT_LE(0, gpu);
	ASSERT_EQ(0, gs_acquire(holder, 0, 0));
	ASSERT_EQ(0, pipe(go));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(holder);
		close(go[1]);
		_exit(child(go[0]));
	}
	close(go[0]);
	ASSERT_TRUE(gs_gpu_wait_waiting(gpu, 1));
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	gs_sleep_us(100000);
	ASSERT_EQ(0, kill(pid, SIGCONT));
	/* Restarted: waiting again, not failed. */
	ASSERT_TRUE(gs_gpu_wait_waiting(gpu, 1));
	ASSERT_EQ(0, gs_release(holder));
	close(holder);
	/* Once the child is granted and closes its file, nothing holds the
	 * module.
	 */
	for (i = 0; i < 500 && (err = gs_module_unload()) == -EWOULDBLOCK; i++)
		gs_sleep_us(10000);
	ASSERT_EQ(0, err) TH_LOG("rmmod: %s (refcnt %lld)", strerror(-err),
				 gs_read_number("/sys/module/gpusched/refcnt"));
	ASSERT_EQ(1, write(go[1], "x", 1));
	close(go[1]);
	EXPECT_EQ(CH_OK, gs_wait(pid));
	EXPECT_EQ(0, gs_module_load(self->params));
}

TEST_HARNESS_MAIN
