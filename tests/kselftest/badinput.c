// SPDX-License-Identifier: GPL-2.0
/*
 * Strict input checking at every edge: ioctl numbers, sizes, directions,
 * reserved fields, flag bits and pointers; the status page's mapping
 * rules; sysfs values; SET_PARAMS ranges; and what an unprivileged caller
 * may change (only lower its own share, like nice(2)).
 */
#include "gs_test.h"

#define PAGE		4096

FIXTURE(badinput) {
	int fd;
	int gpu;
};

FIXTURE_SETUP(badinput)
{
	self->fd = gs_open_attached(GS_GPU_BADINPUT);
	ASSERT_LE(0, self->fd) TH_LOG("attach: %s", strerror(-self->fd));
	self->gpu = gs_gpu_index(self->fd);
	ASSERT_LE(0, self->gpu);
}

FIXTURE_TEARDOWN(badinput)
{
	close(self->fd);
}

static const unsigned long gs_cmds[] = {
	GPUSCHED_IOC_ATTACH, GPUSCHED_IOC_ACQUIRE, GPUSCHED_IOC_RELEASE,
	GPUSCHED_IOC_YIELD, GPUSCHED_IOC_SET_PARAMS, GPUSCHED_IOC_GET_INFO,
};

TEST_F(badinput, unknown_ioctl_gives_enotty)
{
	char buf[256] = { 0 };

	EXPECT_EQ(-ENOTTY, gs_ioctl(self->fd, _IO(GPUSCHED_IOC_MAGIC, 0x7f), buf));
	EXPECT_EQ(-ENOTTY, gs_ioctl(self->fd,
		  _IOW(GPUSCHED_IOC_MAGIC, 0x06, struct gpusched_acquire), buf));
	EXPECT_EQ(-ENOTTY, gs_ioctl(self->fd, _IOWR('x', 0x01, int), buf));
	EXPECT_EQ(-ENOTTY, gs_ioctl(self->fd, 0, buf));
}

/* Size and direction are part of the number: any other is unknown. */
TEST_F(badinput, wrong_size_or_direction_gives_enotty)
{
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	char buf[512] = { 0 };
	unsigned int i, d, nr, size, dir;

	for (i = 0; i < ARRAY_SIZE(gs_cmds); i++) {
		nr = _IOC_NR(gs_cmds[i]);
		size = _IOC_SIZE(gs_cmds[i]);
		dir = _IOC_DIR(gs_cmds[i]);
		EXPECT_EQ(-ENOTTY, gs_ioctl(self->fd,
			  _IOC(dir, GPUSCHED_IOC_MAGIC, nr, size + 8), buf))
			TH_LOG("nr %#x size %u", nr, size + 8);
		EXPECT_EQ(-ENOTTY, gs_ioctl(self->fd,
			  _IOC(dir, GPUSCHED_IOC_MAGIC, nr, size - 4), buf))
			TH_LOG("nr %#x size %u", nr, size - 4);
		for (d = 0; d < ARRAY_SIZE(dirs); d++) {
			if (dirs[d] == dir)
				continue;
			EXPECT_EQ(-ENOTTY, gs_ioctl(self->fd,
				  _IOC(dirs[d], GPUSCHED_IOC_MAGIC, nr, size), buf))
				TH_LOG("nr %#x dir %u", nr, dirs[d]);
		}
	}
}

TEST_F(badinput, nonzero_reserved_gives_einval)
{
	struct gpusched_attach at = { .reserved0 = 1 };
	struct gpusched_acquire aq = { .due_us = 1 };	/* without the flag */
	struct gpusched_release rl = { .reserved0 = 1 };
	struct gpusched_params pa = { .mask = GPUSCHED_PARAM_WEIGHT, .weight = 50 };
	struct gpusched_client_info ci;
	int fd = gs_open();

	ASSERT_LE(0, fd);
	gs_uuid(at.uuid, GS_GPU_BADINPUT);
	EXPECT_EQ(-EINVAL, gs_ioctl(fd, GPUSCHED_IOC_ATTACH, &at));
	at.reserved0 = 0;
	at.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, gs_ioctl(fd, GPUSCHED_IOC_ATTACH, &at));
	/* ... and the client was not attached. */
	EXPECT_EQ(-ENOTCONN, gs_acquire(fd, 0, 0));
	close(fd);

	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_YIELD, &aq));
	aq.due_us = 0;
	aq.age_ns = 1000;	/* a nudge's, without GPUSCHED_ACQUIRE_NUDGE */
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	aq.age_ns = 0;
	aq.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	ASSERT_EQ(0, gs_acquire(self->fd, 0, 0));
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_RELEASE, &rl));
	rl.reserved0 = 0;
	rl.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_RELEASE, &rl));
	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(GPUSCHED_STATE_HOLDING, ci.state);
	EXPECT_EQ(0, gs_release(self->fd));

	pa.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_SET_PARAMS, &pa));
	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(GPUSCHED_WEIGHT_DEFAULT, ci.weight);
}

TEST_F(badinput, unknown_flags_give_eopnotsupp)
{
	struct gpusched_attach at = { .flags = 1 };
	struct gpusched_acquire aq = { 0 };
	struct gpusched_release rl = { .flags = 1 };
	struct gpusched_params pa = { .mask = 1U << 4, .weight = 50 };
	struct gpusched_client_info ci;
	int fd = gs_open();

	ASSERT_LE(0, fd);
	gs_uuid(at.uuid, GS_GPU_BADINPUT);
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(fd, GPUSCHED_IOC_ATTACH, &at));
	at.flags = 1U << 31;
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(fd, GPUSCHED_IOC_ATTACH, &at));
	EXPECT_EQ(-ENOTCONN, gs_acquire(fd, 0, 0));
	close(fd);

	aq.flags = GPUSCHED_ACQUIRE_NUDGE_DONE << 1;	/* the next bit, not defined */
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(self->fd, GPUSCHED_IOC_YIELD, &aq));
	aq.flags = 1U << 31;
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(GPUSCHED_STATE_IDLE, ci.state);
	EXPECT_EQ(0, ci.grants);

	ASSERT_EQ(0, gs_acquire(self->fd, 0, 0));
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(self->fd, GPUSCHED_IOC_RELEASE, &rl));
	EXPECT_EQ(0, gs_release(self->fd));

	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(self->fd, GPUSCHED_IOC_SET_PARAMS, &pa));
	pa.mask = GPUSCHED_PARAM_WEIGHT | (1U << 31);
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(self->fd, GPUSCHED_IOC_SET_PARAMS, &pa));
	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(GPUSCHED_WEIGHT_DEFAULT, ci.weight);
}

TEST_F(badinput, bad_pointers_give_efault)
{
	char *pages, *ro;
	unsigned int i;
	int fd = gs_open();

	/* The tail of a struct on an inaccessible page. */
	pages = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	memset(pages, 0, PAGE);
	ASSERT_EQ(0, mprotect(pages + PAGE, PAGE, PROT_NONE));
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, gs_ioctl(fd, GPUSCHED_IOC_ATTACH, NULL));
	EXPECT_EQ(-EFAULT, gs_ioctl(fd, GPUSCHED_IOC_ATTACH, (void *)1));
	EXPECT_EQ(-EFAULT, gs_ioctl(fd, GPUSCHED_IOC_ATTACH, pages + PAGE - 4));
	close(fd);

	for (i = 0; i < ARRAY_SIZE(gs_cmds); i++) {
		if (gs_cmds[i] == GPUSCHED_IOC_ATTACH)
			continue;
		EXPECT_EQ(-EFAULT, gs_ioctl(self->fd, gs_cmds[i], NULL))
			TH_LOG("nr %#x", (unsigned int)_IOC_NR(gs_cmds[i]));
		EXPECT_EQ(-EFAULT, gs_ioctl(self->fd, gs_cmds[i],
					    pages + PAGE - 4))
			TH_LOG("nr %#x", (unsigned int)_IOC_NR(gs_cmds[i]));
	}
	/* GET_INFO writes: a read-only buffer is as bad as none. */
	EXPECT_EQ(-EFAULT, gs_ioctl(self->fd, GPUSCHED_IOC_GET_INFO, ro));
	EXPECT_EQ(-EFAULT, gs_ioctl(self->fd, GPUSCHED_IOC_GET_INFO,
				    (void *)-4096L));
	munmap(pages, 2 * PAGE);
	munmap(ro, PAGE);
	/* None of it took the token. */
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "holder_pid"));
}

TEST_F(badinput, status_mapping_rules)
{
	const struct gpusched_status *st;
	void *p;

	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, PAGE, PROT_WRITE, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->fd, PAGE);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);

	st = gs_map_status(self->fd);
	ASSERT_NE(NULL, st);
	/* Read-only for good: no upgrade, no growth. */
	EXPECT_EQ(-1, mprotect((void *)st, PAGE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	/* Data, never code. */
	EXPECT_EQ(-1, mprotect((void *)st, PAGE, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	p = mremap((void *)st, PAGE, 2 * PAGE, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(GPUSCHED_STATUS_VERSION, st->version);
	gs_unmap_status(st);
}

struct knob {
	const char *name;
	unsigned long long min, max;
};

static const struct knob knobs[] = {
	{ "timeslice_us", 100, 10000000 },
	{ "grace_us", 1000, 10000000 },
	{ "min_grant_us", 10, 1000000 },
	{ "starve_us", 1000, 60000000 },
	{ "window_us", 1000, 10000000 },
	{ "latency_pct", 0, 90 },
};

TEST_F(badinput, sysfs_rejects_bad_values)
{
	static const char *const garbage[] = {
		"abc\n", "-5\n", "\n", " 7\n", "12abc\n", "1 2\n", "0x\n",
		"99999999999999999999999\n", "-0x1\n",
	};
	char buf[32];
	unsigned int i, j;
	long long orig;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		const struct knob *k = &knobs[i];

		orig = gs_gpu_read(self->gpu, k->name);
		ASSERT_LE(0, orig) TH_LOG("%s", k->name);
		for (j = 0; j < ARRAY_SIZE(garbage); j++) {
			const char *val = garbage[j];

			EXPECT_EQ(-EINVAL, gs_gpu_write(self->gpu, k->name, val))
				TH_LOG("%s <- '%s'", k->name, val);
		}
		if (k->min > 0)
			EXPECT_EQ(-EINVAL, gs_gpu_write_u64(self->gpu, k->name,
							    k->min - 1))
				TH_LOG("%s <- %llu", k->name, k->min - 1);
		EXPECT_EQ(-EINVAL, gs_gpu_write_u64(self->gpu, k->name,
						    k->max + 1))
			TH_LOG("%s <- %llu", k->name, k->max + 1);
		EXPECT_EQ(orig, gs_gpu_read(self->gpu, k->name))
			TH_LOG("%s changed", k->name);

		/* The bounds themselves are fine. */
		EXPECT_EQ(0, gs_gpu_write_u64(self->gpu, k->name, k->min));
		EXPECT_EQ(k->min, gs_gpu_read(self->gpu, k->name));
		EXPECT_EQ(0, gs_gpu_write_u64(self->gpu, k->name, k->max));
		EXPECT_EQ(k->max, gs_gpu_read(self->gpu, k->name));
		snprintf(buf, sizeof(buf), "%lld", orig);	/* no newline */
		EXPECT_EQ(0, gs_gpu_write(self->gpu, k->name, buf));
		EXPECT_EQ(orig, gs_gpu_read(self->gpu, k->name));
	}
}

TEST_F(badinput, sysfs_read_only_files)
{
	static const char *const ro[] = {
		"uuid", "nr_clients", "nr_waiting", "holder_pid", "grants",
		"overruns", "held_ns",
	};
	static const char *const params[] = {
		"max_gpus", "timeslice_us", "grace_us", "min_grant_us",
		"starve_us", "window_us", "latency_pct", "dev_mode",
	};
	char path[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ro); i++) {
		const char *name = ro[i];

		EXPECT_EQ(-EACCES, gs_gpu_write(self->gpu, name, "0\n"))
			TH_LOG("%s", name);
	}
	for (i = 0; i < ARRAY_SIZE(params); i++) {
		snprintf(path, sizeof(path), GS_PARAM_DIR "/%s", params[i]);
		EXPECT_LE(0, gs_read_number(path)) TH_LOG("%s", params[i]);
		EXPECT_EQ(-EACCES, gs_sysfs_write_path(path, "1\n"))
			TH_LOG("%s", params[i]);
	}
}

/*
 * Issue 21, bug 5: a timeout without its flag, and NONBLOCK with TIMEOUT,
 * were accepted; the call then did something the caller did not ask for.
 */
TEST_F(badinput, acquire_fields_checked)
{
	struct gpusched_acquire aq = { .timeout_ns = 1000000 };
	struct gpusched_client_info ci;

	/* A timeout without GPUSCHED_ACQUIRE_TIMEOUT: EINVAL, no grant. */
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_YIELD, &aq));
	aq.flags = GPUSCHED_ACQUIRE_NONBLOCK;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	/* NONBLOCK and TIMEOUT exclude each other. */
	aq.flags = GPUSCHED_ACQUIRE_NONBLOCK | GPUSCHED_ACQUIRE_TIMEOUT;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	aq.timeout_ns = 0;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	ASSERT_EQ(0, gs_info(self->fd, &ci));
	EXPECT_EQ(GPUSCHED_STATE_IDLE, ci.state);
	EXPECT_EQ(0, ci.grants);
	/* Each alone is fine. */
	aq.flags = GPUSCHED_ACQUIRE_TIMEOUT;
	aq.timeout_ns = 1000000;
	EXPECT_EQ(0, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	EXPECT_EQ(0, gs_release(self->fd));
	aq.flags = GPUSCHED_ACQUIRE_NONBLOCK;
	aq.timeout_ns = 0;
	EXPECT_EQ(0, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	EXPECT_EQ(0, gs_release(self->fd));
}

/*
 * NUDGE_DONE goes alone: with another flag, YIELD or a nudge's age it is
 * refused before the caller's class is looked at.
 */
TEST_F(badinput, nudge_done_with_more_gives_einval)
{
	struct gpusched_acquire aq = {
		.flags = GPUSCHED_ACQUIRE_NUDGE_DONE | GPUSCHED_ACQUIRE_NONBLOCK,
	};

	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	aq.flags = GPUSCHED_ACQUIRE_NUDGE_DONE | GPUSCHED_ACQUIRE_NUDGE;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	aq.flags = GPUSCHED_ACQUIRE_NUDGE_DONE;
	aq.age_ns = 1000;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
	aq.age_ns = 0;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->fd, GPUSCHED_IOC_YIELD, &aq));
	/* Alone it is taken, and refused for the class: a normal client's. */
	EXPECT_EQ(-EPERM, gs_ioctl(self->fd, GPUSCHED_IOC_ACQUIRE, &aq));
}

static int set_params(int fd, __u32 mask, __u32 weight, __u32 sched_class,
		      __u32 cap_pct)
{
	struct gpusched_params p = {
		.mask = mask, .weight = weight, .sched_class = sched_class,
		.cap_pct = cap_pct,
	};

	return gs_ioctl(fd, GPUSCHED_IOC_SET_PARAMS, &p);
}

#define EXPECT_PARAMS(fd, w, c, cap) do {				\
	struct gpusched_client_info __ci;				\
									\
	ASSERT_EQ(0, gs_info(fd, &__ci));				\
	EXPECT_EQ(w, __ci.weight);					\
	EXPECT_EQ(c, __ci.sched_class);					\
	EXPECT_EQ(cap, __ci.cap_pct);					\
} while (0)

TEST_F(badinput, set_params_ranges)
{
	const __u32 W = GPUSCHED_PARAM_WEIGHT, C = GPUSCHED_PARAM_CLASS,
		    P = GPUSCHED_PARAM_CAP;
	const __u32 NORMAL = GPUSCHED_CLASS_NORMAL;
	int fd = self->fd;

	EXPECT_EQ(-EINVAL, set_params(fd, W, 0, 0, 0));
	EXPECT_EQ(-EINVAL, set_params(fd, W, GPUSCHED_WEIGHT_MAX + 1, 0, 0));
	EXPECT_EQ(-EINVAL, set_params(fd, C, 0, GPUSCHED_CLASS_MAX + 1, 0));
	EXPECT_EQ(-EINVAL, set_params(fd, P, 0, 0, 101));
	/* One bad field rejects the whole call. */
	EXPECT_EQ(-EINVAL, set_params(fd, W | P, 200, 0, 101));
	EXPECT_PARAMS(fd, GPUSCHED_WEIGHT_DEFAULT, NORMAL, GPUSCHED_CAP_NONE);

	/* Fields outside the mask are ignored, even out of range. */
	EXPECT_EQ(0, set_params(fd, W, 200, 99, 999));
	EXPECT_PARAMS(fd, 200, NORMAL, GPUSCHED_CAP_NONE);

	/* Root (CAP_SYS_NICE) may raise as well as lower. */
	EXPECT_EQ(0, set_params(fd, W, GPUSCHED_WEIGHT_MIN, 0, 0));
	EXPECT_EQ(0, set_params(fd, W, GPUSCHED_WEIGHT_MAX, 0, 0));
	EXPECT_EQ(0, set_params(fd, C | P, 0, GPUSCHED_CLASS_BATCH, 1));
	EXPECT_PARAMS(fd, GPUSCHED_WEIGHT_MAX, GPUSCHED_CLASS_BATCH, 1);
	EXPECT_EQ(0, set_params(fd, C | P, 0, GPUSCHED_CLASS_LATENCY, 100));
	EXPECT_PARAMS(fd, GPUSCHED_WEIGHT_MAX, GPUSCHED_CLASS_LATENCY, 100);
	EXPECT_EQ(0, set_params(fd, W | C | P, GPUSCHED_WEIGHT_DEFAULT, NORMAL,
				GPUSCHED_CAP_NONE));
	EXPECT_PARAMS(fd, GPUSCHED_WEIGHT_DEFAULT, NORMAL, GPUSCHED_CAP_NONE);
}

/* As nobody: only lowering one's own share is allowed. */
TEST_F(badinput, unprivileged_may_only_lower)
{
	const __u32 W = GPUSCHED_PARAM_WEIGHT, C = GPUSCHED_PARAM_CLASS,
		    P = GPUSCHED_PARAM_CAP;
	const __u32 NORMAL = GPUSCHED_CLASS_NORMAL, BATCH = GPUSCHED_CLASS_BATCH;
	int fd;

	/* In a child: it reports through its exit status. */
	if (!gs_nobody_child(_metadata, false))
		return;
	/* dev_mode 0666 lets anyone open the device. */
	fd = gs_open_attached(GS_GPU_BADINPUT);
	ASSERT_LE(0, fd) TH_LOG("open as nobody: %s", strerror(-fd));
	EXPECT_PARAMS(fd, GPUSCHED_WEIGHT_DEFAULT, NORMAL, GPUSCHED_CAP_NONE);

	EXPECT_EQ(-EPERM, set_params(fd, W, 200, 0, 0));
	EXPECT_EQ(0, set_params(fd, W, 50, 0, 0));
	EXPECT_EQ(-EPERM, set_params(fd, W, 51, 0, 0));
	EXPECT_EQ(0, set_params(fd, W, 50, 0, 0));

	EXPECT_EQ(-EPERM, set_params(fd, C, 0, GPUSCHED_CLASS_LATENCY, 0));
	EXPECT_EQ(0, set_params(fd, C, 0, BATCH, 0));
	EXPECT_EQ(-EPERM, set_params(fd, C, 0, NORMAL, 0));

	EXPECT_EQ(0, set_params(fd, P, 0, 0, 50));
	EXPECT_EQ(-EPERM, set_params(fd, P, 0, 0, 80));
	EXPECT_EQ(-EPERM, set_params(fd, P, 0, 0, GPUSCHED_CAP_NONE));
	EXPECT_EQ(0, set_params(fd, P, 0, 0, 30));

	/* A call that lowers one field and raises another changes nothing. */
	EXPECT_EQ(-EPERM, set_params(fd, W | P, 10, 0, 90));
	EXPECT_PARAMS(fd, 50, BATCH, 30);

	/* The GPU's knobs are root's. */
	EXPECT_EQ(-EACCES, gs_gpu_write(self->gpu, "timeslice_us", "1000\n"));
	EXPECT_LE(0, gs_gpu_read(self->gpu, "timeslice_us"));
	close(fd);
	_exit(_metadata->passed ? 0 : 1);
}

TEST_HARNESS_MAIN
