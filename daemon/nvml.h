/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device memory a client's process uses beyond what it reserved
 * through gpusched (its CUDA context, and whatever reached the driver
 * around libgpusched), from NVML where NVML is there: libnvidia-ml.so.1 is
 * loaded with dlopen at run time, never linked, so gpuschedd and
 * gpuschedctl run the same without it and show nothing of this.
 */
#ifndef GSD_NVML_H
#define GSD_NVML_H

#include <stdbool.h>
#include <stddef.h>

#include "genl.h"

/*
 * Load and initialise NVML if not done yet: true if it is there, else false
 * with @why set to why not (a static string). Tried again at each call
 * until it succeeds: the daemon may start before the driver.
 */
bool gs_nvml_open(const char **why);

/**
 * gs_nvml_ctx_mem() - fill in the clients' context memory from NVML
 * @gpus: the GPUs, for their UUIDs
 * @ng: how many
 * @cl: the clients, of those GPUs
 * @nc: how many
 * @why: set, when NVML is not there, to why not (a static string)
 *
 * For each client whose service reports memory (has_mem) and whose
 * process NVML lists on the client's GPU with a value: mem_ctx = what NVML
 * says the process uses there less what the process's clients of that GPU
 * reserved (at least 0), and has_mem_ctx. Every client of one process and
 * GPU gets the same. NVML's pids are those of its namespace (the host's):
 * a daemon in another pid namespace matches none. Loading NVML is tried
 * at each call until it succeeds. Calls NVML, which takes milliseconds:
 * for gpuschedctl.
 *
 * Return: 0, or -ENOENT when NVML is not there (nothing filled in).
 */
int gs_nvml_ctx_mem(const struct gs_gpu_rec *gpus, size_t ng,
		    struct gs_client_rec *cl, size_t nc, const char **why);

/**
 * gs_nvml_ctx_mem_sampled() - gs_nvml_ctx_mem() from the last sample
 * @gpus: as gs_nvml_ctx_mem()'s
 * @ng: how many
 * @cl: the clients, filled in
 * @nc: how many
 * @why: set with -ENOENT
 *
 * For gpuschedd's event loop, which must not wait for NVML: the first call
 * starts a thread that samples NVML every few seconds; this and later
 * calls use the last sample, never NVML itself. No other call of this file
 * may be made in the same process.
 *
 * Return: 0; -EAGAIN before the first sample; -ENOENT when the last try
 * found no NVML (@why says why).
 */
int gs_nvml_ctx_mem_sampled(const struct gs_gpu_rec *gpus, size_t ng,
			    struct gs_client_rec *cl, size_t nc,
			    const char **why);

#endif /* GSD_NVML_H */
