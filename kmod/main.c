// SPDX-License-Identifier: GPL-2.0
/*
 * gpusched: one fair-share token per GPU, so that processes with their own
 * CUDA contexts take turns on the GPU at kernel-launch boundaries.
 */
#include <linux/build_bug.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/time64.h>
#include "gs.h"

static unsigned int max_gpus = 16;
module_param(max_gpus, uint, 0444);
MODULE_PARM_DESC(max_gpus, "Most GPU tokens created (1..64, default 16)");

static unsigned int timeslice_us = 20000;
module_param(timeslice_us, uint, 0444);
MODULE_PARM_DESC(timeslice_us, "Default time slice of new tokens, us");

static unsigned int grace_us = 100000;
module_param(grace_us, uint, 0444);
MODULE_PARM_DESC(grace_us, "Default time a holder has to yield, us");

static unsigned int min_grant_us = 500;
module_param(min_grant_us, uint, 0444);
MODULE_PARM_DESC(min_grant_us, "Shortest grant under a cap or budget, us");

static unsigned int starve_us = 1000000;
module_param(starve_us, uint, 0444);
MODULE_PARM_DESC(starve_us, "Wait after which a batch client is served, us");

static unsigned int window_us = 100000;
module_param(window_us, uint, 0444);
MODULE_PARM_DESC(window_us, "Burst window of caps and the latency budget, us");

static unsigned int latency_pct = 50;
module_param(latency_pct, uint, 0444);
MODULE_PARM_DESC(latency_pct, "Share the latency class may take at priority (0..90)");

static unsigned int dev_mode = 0666;
module_param(dev_mode, uint, 0444);
MODULE_PARM_DESC(dev_mode, "Permissions of /dev/gpusched (default 0666)");

struct gs_defaults gs_defaults;

static int __init gs_params_init(void)
{
	struct gs_pol_params *p = &gs_defaults.params;

	if (!max_gpus || max_gpus > 64 || dev_mode > 0777) {
		pr_err("max_gpus must be 1..64 and dev_mode at most 0777\n");
		return -EINVAL;
	}
	gs_defaults.max_gpus = max_gpus;
	p->slice_ns = (u64)timeslice_us * NSEC_PER_USEC;
	p->grace_ns = (u64)grace_us * NSEC_PER_USEC;
	p->min_grant_ns = (u64)min_grant_us * NSEC_PER_USEC;
	p->starve_ns = (u64)starve_us * NSEC_PER_USEC;
	p->window_ns = (u64)window_us * NSEC_PER_USEC;
	p->latency_pct = latency_pct;
	if (gs_pol_check_params(p)) {
		pr_err("a time or latency_pct parameter is out of range\n");
		return -EINVAL;
	}
	return 0;
}

static int __init gs_init(void)
{
	int err;

	BUILD_BUG_ON(sizeof(struct gpusched_status) > GPUSCHED_STATUS_SIZE);
	BUILD_BUG_ON(GPUSCHED_STATUS_SIZE > PAGE_SIZE);

	err = gs_params_init();
	if (err)
		return err;
	err = gs_sysfs_init();
	if (err)
		goto err_sysfs;
	/* Clients send events from their first attach: the family comes first. */
	err = gs_netlink_init();
	if (err)
		goto err_netlink;
	err = gs_chardev_init(dev_mode);
	if (err)
		goto err_chardev;
	return 0;

err_chardev:
	gs_netlink_exit();
err_netlink:
	gs_sysfs_exit();
err_sysfs:
	return err;
}

static void __exit gs_exit(void)
{
	gs_chardev_exit();
	gs_netlink_exit();
	gs_gpus_exit();
	gs_sysfs_exit();
}

module_init(gs_init);
module_exit(gs_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Fair-share GPU token shared by processes at kernel-launch boundaries");
MODULE_AUTHOR("The gpusched developers");
