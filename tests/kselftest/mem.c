// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory accounting: MEM_RESERVE and MEM_RETURN with their errors,
 * the effective limit (a client's own, the GPU's mem_default_pct and
 * mem_reserve_mb), the lowering rule of SET_PARAMS, a limit changed while
 * memory is reserved, the status page's and GET_INFO's fields, what close
 * and death give back, and the netlink dump and SET_CLIENT.
 *
 * Clients attach to one GPU reporting TOTAL bytes of device memory; the
 * fixture sets the GPU's memory knobs to 0 and puts them back after.
 */
#include "gs_test.h"
#include "../fuzz/fuzz-nl.h"

#define GIB		(1ull << 30)
#define TOTAL		(8 * GIB)

FIXTURE(mem) {
	int a;
	int gpu;
	const struct gpusched_status *st;
};

static int open_mem(__u64 total)
{
	struct gpusched_attach at = { .mem_total = total };
	int fd = gs_open(), err;

	if (fd < 0)
		return fd;
	gs_uuid(at.uuid, GS_GPU_MEM);
	err = gs_ioctl(fd, GPUSCHED_IOC_ATTACH, &at);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int mem_call(int fd, unsigned long cmd, __u64 bytes)
{
	struct gpusched_mem m = { .bytes = bytes };

	return gs_ioctl(fd, cmd, &m);
}

static int reserve(int fd, __u64 bytes)
{
	return mem_call(fd, GPUSCHED_IOC_MEM_RESERVE, bytes);
}

static int give_back(int fd, __u64 bytes)
{
	return mem_call(fd, GPUSCHED_IOC_MEM_RETURN, bytes);
}

static int set_limit(int fd, __u64 limit)
{
	struct gpusched_params p = {
		.mask = GPUSCHED_PARAM_MEM_LIMIT, .mem_limit = limit,
	};

	return gs_ioctl(fd, GPUSCHED_IOC_SET_PARAMS, &p);
}

/* The page's two fields, read as one (the sequence count). */
static void page_mem(const struct gpusched_status *st, __u64 *reserved,
		     __u64 *limit)
{
	__u32 seq;

	do {
		seq = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		*reserved = __atomic_load_n(&st->mem_reserved, __ATOMIC_RELAXED);
		*limit = __atomic_load_n(&st->mem_limit, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != __atomic_load_n(&st->seq, __ATOMIC_RELAXED));
}

#define EXPECT_MEM(fd, st, res, lim, refused) do {			\
	struct gpusched_client_info __ci;				\
	__u64 __r, __l;							\
									\
	ASSERT_EQ(0, gs_info(fd, &__ci));				\
	EXPECT_EQ(res, __ci.mem_reserved);				\
	EXPECT_EQ(lim, __ci.mem_limit);					\
	EXPECT_EQ(refused, __ci.mem_refused);				\
	if (st) {							\
		page_mem(st, &__r, &__l);				\
		EXPECT_EQ(res, __r);					\
		EXPECT_EQ(lim, __l);					\
	}								\
} while (0)

FIXTURE_SETUP(mem)
{
	self->a = open_mem(TOTAL);
	ASSERT_LE(0, self->a) TH_LOG("client: %s", strerror(-self->a));
	self->gpu = gs_gpu_index(self->a);
	ASSERT_LE(0, self->gpu);
	ASSERT_EQ(0, gs_gpu_write(self->gpu, "mem_default_pct", "0\n"));
	ASSERT_EQ(0, gs_gpu_write(self->gpu, "mem_reserve_mb", "0\n"));
	self->st = gs_map_status(self->a);
	ASSERT_NE(NULL, self->st) TH_LOG("mmap: %s", strerror(errno));
}

FIXTURE_TEARDOWN(mem)
{
	gs_unmap_status(self->st);
	if (self->a >= 0)
		close(self->a);
	gs_gpu_write(self->gpu, "mem_default_pct", "0\n");
	gs_gpu_write(self->gpu, "mem_reserve_mb", "0\n");
}

TEST_F(mem, announced)
{
	struct gpusched_client_info ci;

	ASSERT_EQ(0, gs_info(self->a, &ci));
	EXPECT_TRUE(ci.features & GPUSCHED_FEAT_MEM);
	EXPECT_TRUE(self->st->features & GPUSCHED_FEAT_MEM);
	EXPECT_MEM(self->a, self->st, 0, 0, 0);
}

TEST_F(mem, reserve_to_the_limit_and_return)
{
	ASSERT_EQ(0, set_limit(self->a, 4 * GIB));
	EXPECT_MEM(self->a, self->st, 0, 4 * GIB, 0);
	EXPECT_EQ(0, reserve(self->a, 3 * GIB));
	EXPECT_MEM(self->a, self->st, 3 * GIB, 4 * GIB, 0);
	EXPECT_EQ(-EDQUOT, reserve(self->a, GIB + 1));
	EXPECT_MEM(self->a, self->st, 3 * GIB, 4 * GIB, 1);
	EXPECT_EQ(0, reserve(self->a, GIB));
	EXPECT_EQ(-EDQUOT, reserve(self->a, 1));
	EXPECT_MEM(self->a, self->st, 4 * GIB, 4 * GIB, 2);
	EXPECT_EQ(-EINVAL, give_back(self->a, 4 * GIB + 1));
	EXPECT_EQ(0, give_back(self->a, GIB));
	EXPECT_MEM(self->a, self->st, 3 * GIB, 4 * GIB, 2);
	EXPECT_EQ(0, give_back(self->a, 3 * GIB));
	EXPECT_MEM(self->a, self->st, 0, 4 * GIB, 2);
	/* The GPU's sum follows. */
	EXPECT_EQ(0, reserve(self->a, GIB));
	EXPECT_EQ((long long)GIB, gs_gpu_read(self->gpu, "mem_reserved"));
}

TEST_F(mem, bad_requests)
{
	struct gpusched_mem m = { .bytes = 1, .flags = 1 };
	int fd = gs_open();

	ASSERT_LE(0, fd);
	/* The arguments first, then the attachment. */
	EXPECT_EQ(-ENOTCONN, reserve(fd, 1));
	EXPECT_EQ(-ENOTCONN, give_back(fd, 1));
	EXPECT_EQ(-EINVAL, reserve(fd, 0));
	EXPECT_EQ(-EOPNOTSUPP, gs_ioctl(fd, GPUSCHED_IOC_MEM_RESERVE, &m));
	m.flags = 0;
	m.reserved0 = 1;
	EXPECT_EQ(-EINVAL, gs_ioctl(fd, GPUSCHED_IOC_MEM_RETURN, &m));
	m.reserved0 = 0;
	m.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, gs_ioctl(self->a, GPUSCHED_IOC_MEM_RESERVE, &m));
	EXPECT_EQ(-EFAULT, gs_ioctl(self->a, GPUSCHED_IOC_MEM_RESERVE, NULL));
	close(fd);

	EXPECT_EQ(-EINVAL, give_back(self->a, 0));
	EXPECT_EQ(-EINVAL, give_back(self->a, 1));
	EXPECT_EQ(0, reserve(self->a, ~0ull - 1));
	EXPECT_EQ(-EINVAL, reserve(self->a, 2));	/* overflow */
	EXPECT_MEM(self->a, self->st, ~0ull - 1, 0, 0);
	EXPECT_EQ(0, give_back(self->a, ~0ull - 1));
}

TEST_F(mem, close_and_death_give_back)
{
	int b = open_mem(TOTAL);
	pid_t pid;
	int pipefd[2];
	char c;

	ASSERT_LE(0, b);
	ASSERT_EQ(0, reserve(self->a, GIB));
	ASSERT_EQ(0, reserve(b, 2 * GIB));
	EXPECT_EQ((long long)(3 * GIB), gs_gpu_read(self->gpu, "mem_reserved"));
	close(b);
	EXPECT_EQ((long long)GIB, gs_gpu_read(self->gpu, "mem_reserved"));

	/* A process killed with memory reserved. */
	ASSERT_EQ(0, pipe(pipefd));
	pid = gs_fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open_mem(TOTAL);

		if (fd < 0 || reserve(fd, 5 * GIB))
			_exit(1);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	EXPECT_EQ((long long)(6 * GIB), gs_gpu_read(self->gpu, "mem_reserved"));
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, gs_wait(pid));
	/* The file is closed before the parent can reap the process. */
	EXPECT_EQ((long long)GIB, gs_gpu_read(self->gpu, "mem_reserved"));
}

TEST_F(mem, knobs_default_and_reserve)
{
	int unknown = open_mem(0);
	const struct gpusched_status *su;

	ASSERT_LE(0, unknown);
	su = gs_map_status(unknown);
	ASSERT_NE(NULL, su);
	EXPECT_EQ(-EINVAL, gs_gpu_write(self->gpu, "mem_default_pct", "101\n"));
	EXPECT_EQ(-EINVAL, gs_gpu_write(self->gpu, "mem_reserve_mb", "16777217\n"));
	EXPECT_EQ(0, gs_gpu_read(self->gpu, "mem_default_pct"));

	/* The default: a share of what the client reported; pages follow. */
	ASSERT_EQ(0, gs_gpu_write(self->gpu, "mem_default_pct", "25\n"));
	EXPECT_EQ(25, gs_gpu_read(self->gpu, "mem_default_pct"));
	EXPECT_MEM(self->a, self->st, 0, 2 * GIB, 0);
	EXPECT_MEM(unknown, su, 0, 0, 0);	/* reported no total */
	EXPECT_EQ(-EDQUOT, reserve(self->a, 2 * GIB + 1));
	EXPECT_EQ(0, reserve(unknown, 100 * GIB));

	/* The reserve bounds every limit where the total is known. */
	ASSERT_EQ(0, gs_gpu_write(self->gpu, "mem_default_pct", "0\n"));
	ASSERT_EQ(0, gs_gpu_write(self->gpu, "mem_reserve_mb", "1024\n"));
	EXPECT_MEM(self->a, self->st, 0, 7 * GIB, 1);
	ASSERT_EQ(0, set_limit(self->a, 7 * GIB));
	EXPECT_EQ(0, gs_ioctl(self->a, GPUSCHED_IOC_SET_PARAMS,
			      &(struct gpusched_params){
				      .mask = GPUSCHED_PARAM_MEM_LIMIT,
				      .mem_limit = 100 * GIB }));	/* root */
	EXPECT_MEM(self->a, self->st, 0, 7 * GIB, 1);
	EXPECT_EQ(-EDQUOT, reserve(self->a, 7 * GIB + 1));
	gs_unmap_status(su);
	close(unknown);
}

TEST_F(mem, limit_lowered_while_reserved)
{
	ASSERT_EQ(0, reserve(self->a, 3 * GIB));
	ASSERT_EQ(0, set_limit(self->a, GIB));
	/* Nothing is taken back; nothing more is given. */
	EXPECT_MEM(self->a, self->st, 3 * GIB, GIB, 0);
	EXPECT_EQ(-EDQUOT, reserve(self->a, 1));
	EXPECT_EQ(0, give_back(self->a, 2 * GIB));
	EXPECT_EQ(-EDQUOT, reserve(self->a, 1));
	EXPECT_EQ(0, give_back(self->a, 1));
	EXPECT_EQ(0, reserve(self->a, 1));
	EXPECT_MEM(self->a, self->st, GIB, GIB, 2);
}

/* As nobody: a limit may be set or lowered, never raised or removed. */
TEST_F(mem, unprivileged_may_only_lower)
{
	pid_t pid = gs_fork_nobody(false);
	int fd;

	ASSERT_LE(0, pid);
	if (pid) {
		EXPECT_EQ(0, gs_wait(pid));
		/* Root (CAP_SYS_NICE) may raise and remove. */
		EXPECT_EQ(0, set_limit(self->a, GIB));
		EXPECT_EQ(0, set_limit(self->a, 2 * GIB));
		EXPECT_EQ(0, set_limit(self->a, GPUSCHED_MEM_LIMIT_NONE));
		EXPECT_MEM(self->a, self->st, 0, 0, 0);
		return;
	}
	fd = open_mem(TOTAL);
	ASSERT_LE(0, fd) TH_LOG("open as nobody: %s", strerror(-fd));
	EXPECT_EQ(0, set_limit(fd, GPUSCHED_MEM_LIMIT_NONE));	/* none: none */
	EXPECT_EQ(0, set_limit(fd, 4 * GIB));
	EXPECT_EQ(-EPERM, set_limit(fd, 4 * GIB + 1));
	EXPECT_EQ(-EPERM, set_limit(fd, GPUSCHED_MEM_LIMIT_NONE));
	EXPECT_EQ(0, set_limit(fd, GIB));
	EXPECT_EQ(-EPERM, set_limit(fd, 2 * GIB));
	EXPECT_MEM(fd, NULL, 0, GIB, 0);
	/* The knobs are root's. */
	EXPECT_EQ(-EACCES, gs_gpu_write(self->gpu, "mem_default_pct", "100\n"));
	close(fd);
	_exit(_metadata->passed ? 0 : 1);
}

/* What dump_mem() looks for, and what it found. */
struct mem_find {
	__u64 *id;
	__u64 *out;
	int found;
};

static int mem_client(const struct nlattr *const *tb, unsigned int datagram,
		      void *arg)
{
	static const int attrs[4] = {
		GPUSCHED_A_CLIENT_MEM_TOTAL, GPUSCHED_A_CLIENT_MEM_RESERVED,
		GPUSCHED_A_CLIENT_MEM_LIMIT, GPUSCHED_A_CLIENT_MEM_REFUSED,
	};
	struct mem_find *f = arg;
	__u64 v[4], id;
	int i;

	if (!tb[GPUSCHED_A_CLIENT_ID])
		return -EBADMSG;
	for (i = 0; i < 4; i++) {
		if (!tb[attrs[i]])
			return -EBADMSG;
		v[i] = gs_nla_u64(tb[attrs[i]]);
	}
	id = gs_nla_u64(tb[GPUSCHED_A_CLIENT_ID]);
	if (!f->found || (*f->id ? id != *f->id :
			  v[0] != f->out[0] || v[1] != f->out[1]))
		return 0;
	f->found = 0;
	*f->id = id;
	memcpy(f->out, v, sizeof(v));
	return 0;
}

/*
 * The dump's memory attributes (total, reserved, limit, refused) of the
 * client of GPU @gpu that has id @*id, or when @*id is 0, of the first
 * whose total and reservation are those of @out, and then its id in @*id.
 * 0, -ENOENT or another -errno.
 */
static int dump_mem(int nl, int family, unsigned int gpu, __u64 *id,
		    __u64 out[4])
{
	struct mem_find f = { .id = id, .out = out, .found = -ENOENT };
	int n = gs_nl_client_dump(nl, family, gpu, 5000, mem_client, &f);

	return n < 0 ? n : f.found;
}

/* @m: a SET_CLIENT of the client with id @id, its attributes to follow. */
static void set_client_msg(struct gs_msg *m, int family, __u64 id)
{
	gs_msg_init(m, family, NLM_F_REQUEST, GPUSCHED_CMD_SET_CLIENT,
		    GPUSCHED_GENL_VERSION);
	gs_msg_u64(m, GPUSCHED_A_CLIENT_ID, id);
}

TEST_F(mem, netlink_dump_and_set_client)
{
	struct gs_msg *m = calloc(1, sizeof(*m));
	int nl = gs_nl_open(), family, b = open_mem(0);
	__u64 v[4] = { 0 }, id_a = 0, id_b = 0;
	__u32 grp;

	ASSERT_NE(NULL, m);
	ASSERT_LE(0, nl);
	ASSERT_LE(0, b);
	family = gs_nl_family(nl, &grp);
	ASSERT_LT(0, family);
	ASSERT_EQ(0, reserve(self->a, GIB));
	ASSERT_EQ(0, set_limit(b, 1));
	ASSERT_EQ(-EDQUOT, reserve(b, 2));

	/* The GPU has these two clients only: each found by what it did. */
	v[0] = TOTAL;
	v[1] = GIB;
	ASSERT_EQ(0, dump_mem(nl, family, self->gpu, &id_a, v));
	EXPECT_EQ(0, v[2]);
	EXPECT_EQ(0, v[3]);
	v[0] = 0;
	v[1] = 0;
	ASSERT_EQ(0, dump_mem(nl, family, self->gpu, &id_b, v));
	EXPECT_EQ(1, v[2]);
	EXPECT_EQ(1, v[3]);
	EXPECT_NE(id_a, id_b);

	/* SET_CLIENT in bytes, then in percent of what the client reported. */
	set_client_msg(m, family, id_a);
	gs_msg_u64(m, GPUSCHED_A_CLIENT_MEM_LIMIT, 3 * GIB);
	gs_msg_u32(m, GPUSCHED_A_CLIENT_POLICY_SET, GPUSCHED_PARAM_MEM_LIMIT);
	EXPECT_EQ(0, gs_nl_ack(nl, m, 5000));
	EXPECT_MEM(self->a, self->st, GIB, 3 * GIB, 0);
	set_client_msg(m, family, id_a);
	gs_msg_u32(m, GPUSCHED_A_CLIENT_MEM_LIMIT_PCT, 50);
	EXPECT_EQ(0, gs_nl_ack(nl, m, 5000));
	EXPECT_MEM(self->a, self->st, GIB, TOTAL / 2, 0);
	ASSERT_EQ(0, dump_mem(nl, family, self->gpu, &id_a, v));
	EXPECT_EQ(TOTAL / 2, v[2]);

	/* Percent of nothing; both forms at once; out of range. */
	set_client_msg(m, family, id_b);
	gs_msg_u32(m, GPUSCHED_A_CLIENT_MEM_LIMIT_PCT, 50);
	EXPECT_EQ(-EINVAL, gs_nl_ack(nl, m, 5000));
	set_client_msg(m, family, id_a);
	gs_msg_u64(m, GPUSCHED_A_CLIENT_MEM_LIMIT, GIB);
	gs_msg_u32(m, GPUSCHED_A_CLIENT_MEM_LIMIT_PCT, 50);
	EXPECT_EQ(-EINVAL, gs_nl_ack(nl, m, 5000));
	set_client_msg(m, family, id_a);
	gs_msg_u32(m, GPUSCHED_A_CLIENT_MEM_LIMIT_PCT, 101);
	EXPECT_EQ(-ERANGE, gs_nl_ack(nl, m, 5000));
	EXPECT_MEM(self->a, self->st, GIB, TOTAL / 2, 0);

	/* SET_GPU sets the knobs as sysfs does. */
	gs_msg_init(m, family, NLM_F_REQUEST, GPUSCHED_CMD_SET_GPU,
		    GPUSCHED_GENL_VERSION);
	gs_msg_u32(m, GPUSCHED_A_GPU_INDEX, self->gpu);
	gs_msg_u32(m, GPUSCHED_A_GPU_MEM_RESERVE_MB, 6 * 1024);
	EXPECT_EQ(0, gs_nl_ack(nl, m, 5000));
	EXPECT_EQ(6 * 1024, gs_gpu_read(self->gpu, "mem_reserve_mb"));
	EXPECT_MEM(self->a, self->st, GIB, 2 * GIB, 0);
	free(m);
	close(b);
	close(nl);
}

TEST_HARNESS_MAIN
