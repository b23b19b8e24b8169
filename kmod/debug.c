// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs gpusched/hold_stats: how long each token's lock is held, for
 * measurements (tests/bench/gs-scale.c, Documentation/scale.md). Not ABI.
 *
 * Writing 1 turns the timing on and clears the figures, 0 turns it off.
 * Reading gives one line per token: holds timed, their total, the median
 * and the 99th percentile (from a histogram: at most 25% low), the
 * longest, and where the longest ended. Off, the lock wrappers
 * (gs_gpu_lock()) cost one patched-out branch.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include "gs.h"

DEFINE_STATIC_KEY_FALSE(gs_hold_stats_on);
/* Serialises turning the timing on and off. */
static DEFINE_MUTEX(gs_hold_switch);
static struct dentry *gs_debug_dir;

/*
 * The histogram's bucket of @ns: itself below 8, else four buckets per
 * power of two, so a quantile read from it is at most 25% low.
 */
static unsigned int gs_hold_bucket(u64 ns)
{
	unsigned int msb;

	if (ns < 8)
		return ns;
	msb = fls64(ns) - 1;
	return 8 + (msb - 3) * 4 + ((ns >> (msb - 2)) & 3);
}

/* The least ns of bucket @i. */
static u64 gs_hold_bucket_ns(unsigned int i)
{
	if (i < 8)
		return i;
	return (4ULL + (i - 8) % 4) << ((i - 8) / 4 + 1);
}

/* The hold time that @pct percent of the holds did not exceed. */
static u64 gs_hold_quantile(const struct gs_hold_stats *h, unsigned int pct)
{
	u64 want = div_u64(h->holds * pct + 99, 100), seen = 0;
	unsigned int i;

	for (i = 0; i < GS_HOLD_BUCKETS; i++) {
		seen += h->hist[i];
		if (seen && seen >= want)
			return gs_hold_bucket_ns(i);
	}
	return 0;
}

/**
 * gs_hold_note() - account the hold of @gpu->lock that ends now
 * @gpu: the token, whose lock the caller holds and is about to drop
 * @ip: where it is dropped
 */
void gs_hold_note(struct gs_gpu *gpu, unsigned long ip)
{
	struct gs_hold_stats *h = &gpu->hold;
	u64 ns;

	lockdep_assert_held(&gpu->lock);
	if (!gpu->hold_start)	/* taken before the timing was on */
		return;
	ns = ktime_get_ns() - gpu->hold_start;
	gpu->hold_start = 0;
	h->holds++;
	h->total_ns += ns;
	h->hist[gs_hold_bucket(ns)]++;
	if (ns > h->max_ns) {
		h->max_ns = ns;
		h->max_ip = ip;
	}
}

static int gs_hold_show(struct seq_file *m, void *v)
{
	struct gs_gpu *gpu;
	unsigned int index = 0;

	while ((gpu = gs_gpu_next(index))) {
		u64 holds, total, max, p50, p99;
		unsigned long ip;

		spin_lock_bh(&gpu->lock);
		holds = gpu->hold.holds;
		total = gpu->hold.total_ns;
		max = gpu->hold.max_ns;
		ip = gpu->hold.max_ip;
		p50 = gs_hold_quantile(&gpu->hold, 50);
		p99 = gs_hold_quantile(&gpu->hold, 99);
		spin_unlock_bh(&gpu->lock);
		seq_printf(m, "gpu%u holds %llu total_ns %llu p50_ns %llu p99_ns %llu max_ns %llu at %pS\n",
			   gpu->index, holds, total, p50, p99, max, (void *)ip);
		index = gpu->index + 1;
		gs_gpu_put(gpu);
	}
	return 0;
}

static int gs_hold_open(struct inode *inode, struct file *file)
{
	return single_open(file, gs_hold_show, NULL);
}

static ssize_t gs_hold_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct gs_gpu *gpu;
	unsigned int index = 0;
	bool on;
	int err;

	err = kstrtobool_from_user(ubuf, len, &on);
	if (err)
		return err;
	mutex_lock(&gs_hold_switch);
	if (!on) {
		static_branch_disable(&gs_hold_stats_on);
		mutex_unlock(&gs_hold_switch);
		return len;
	}
	static_branch_enable(&gs_hold_stats_on);
	/*
	 * Holds that began before the branch was patched in may end with a
	 * stale start: taking each lock waits for them, then the figures
	 * start afresh.
	 */
	while ((gpu = gs_gpu_next(index))) {
		spin_lock_bh(&gpu->lock);
		gpu->hold_start = 0;
		memset(&gpu->hold, 0, sizeof(gpu->hold));
		spin_unlock_bh(&gpu->lock);
		index = gpu->index + 1;
		gs_gpu_put(gpu);
	}
	mutex_unlock(&gs_hold_switch);
	return len;
}

static const struct file_operations gs_hold_fops = {
	.owner = THIS_MODULE,
	.open = gs_hold_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = gs_hold_write,
};

/**
 * gs_debug_init() - create debugfs gpusched/hold_stats
 *
 * debugfs is optional: a kernel without it gives the module no file.
 *
 * Return: 0.
 */
int gs_debug_init(void)
{
	gs_debug_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("hold_stats", 0600, gs_debug_dir, NULL,
			    &gs_hold_fops);
	return 0;
}

/**
 * gs_debug_exit() - remove the debugfs files
 */
void gs_debug_exit(void)
{
	debugfs_remove(gs_debug_dir);
}
