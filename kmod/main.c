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

static unsigned int latency_queue_us = 300;
module_param(latency_queue_us, uint, 0444);
MODULE_PARM_DESC(latency_queue_us, "GPU time a holder keeps queued while a latency-class client is attached, us");

static unsigned int handover_us = 600;
module_param(handover_us, uint, 0444);
MODULE_PARM_DESC(handover_us, "Work a yielding holder may leave running, us");

static unsigned int mem_default_pct;
module_param(mem_default_pct, uint, 0444);
MODULE_PARM_DESC(mem_default_pct, "Device memory limit of clients without their own, percent (0: none)");

static unsigned int mem_reserve_mb;
module_param(mem_reserve_mb, uint, 0444);
MODULE_PARM_DESC(mem_reserve_mb, "Device memory no client's limit may claim, MiB");

static unsigned int dev_mode = 0666;
module_param(dev_mode, uint, 0444);
MODULE_PARM_DESC(dev_mode, "Permissions of /dev/gpusched (default 0666)");

/*
 * Read at each ATTACH; an administrator may change it at any time. Each
 * client is a page and a place in the policy's trees (gs_abi.h).
 */
unsigned int gs_max_clients_per_uid = GS_MAX_CLIENTS_PER_UID;
module_param_named(max_clients_per_uid, gs_max_clients_per_uid, uint, 0644);
MODULE_PARM_DESC(max_clients_per_uid,
		 "Clients one user may attach to one GPU (0: no limit; CAP_SYS_RESOURCE is exempt; default 256)");

struct gs_defaults gs_defaults;

static int __init gs_params_init(void)
{
	/* In the order of the policy's knob table (enum gs_pol_knob_id). */
	const unsigned int vals[GS_POL_NR_KNOBS] = {
		[GS_POL_KNOB_TIMESLICE] = timeslice_us,
		[GS_POL_KNOB_GRACE] = grace_us,
		[GS_POL_KNOB_MIN_GRANT] = min_grant_us,
		[GS_POL_KNOB_STARVE] = starve_us,
		[GS_POL_KNOB_WINDOW] = window_us,
		[GS_POL_KNOB_LATENCY_PCT] = latency_pct,
		[GS_POL_KNOB_LATENCY_QUEUE] = latency_queue_us,
		[GS_POL_KNOB_HANDOVER] = handover_us,
		[GS_POL_KNOB_MEM_DEFAULT_PCT] = mem_default_pct,
		[GS_POL_KNOB_MEM_RESERVE] = mem_reserve_mb,
	};
	struct gs_pol_params *p = &gs_defaults.params;
	int i;

	if (!max_gpus || max_gpus > 64 || dev_mode > 0777) {
		pr_err("max_gpus must be 1..64 and dev_mode at most 0777\n");
		return -EINVAL;
	}
	gs_defaults.max_gpus = max_gpus;
	for (i = 0; i < GS_POL_NR_KNOBS; i++) {
		const struct gs_pol_knob *k = &gs_pol_knobs[i];

		if (vals[i] < k->min || vals[i] > k->max) {
			pr_err("%s must be %u..%u\n", k->name, k->min, k->max);
			return -EINVAL;
		}
		gs_pol_knob_set(p, k, vals[i]);
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
	err = gs_debug_init();
	if (err)
		goto err_debug;
	err = gs_chardev_init(dev_mode);
	if (err)
		goto err_chardev;
	return 0;

err_chardev:
	gs_debug_exit();
err_debug:
	gs_netlink_exit();
err_netlink:
	gs_sysfs_exit();
err_sysfs:
	return err;
}

static void __exit gs_exit(void)
{
	gs_chardev_exit();
	gs_restart_exit();
	gs_debug_exit();
	gs_netlink_exit();
	gs_gpus_exit();
	gs_sysfs_exit();
}

module_init(gs_init);
module_exit(gs_exit);

MODULE_LICENSE("GPL");
MODULE_VERSION(GS_VERSION);
MODULE_DESCRIPTION("Fair-share GPU token shared by processes at kernel-launch boundaries");
MODULE_AUTHOR("The gpusched developers");
