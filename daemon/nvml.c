// SPDX-License-Identifier: GPL-2.0
/*
 * NVML, loaded at run time (nvml.h): each GPU's compute processes and the
 * device memory each uses, against the clients' reservations. The NVML
 * types are declared here as its ABI has them; no NVML header is needed to
 * build.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "nvml.h"

/* NVML's nvmlReturn_t is an int; its nvmlDevice_t a struct pointer. */
struct nvml_device;

#define NVML_SUCCESS			0
#define NVML_ERROR_INSUFFICIENT_SIZE	7
/* usedGpuMemory when NVML cannot tell (e.g. without privilege). */
#define NVML_VALUE_NOT_AVAILABLE	(~0ull)

/*
 * nvmlProcessInfo_v2_t, what nvmlDeviceGetComputeRunningProcesses_v2 and
 * _v3 fill (as pynvml reads both).
 */
struct nvml_proc {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};

/* The entry points used; the daemon's one thread calls them. */
static struct {
	bool ready;		/* loaded and initialised */
	void *h;
	int (*init)(void);
	int (*count)(unsigned int *n);
	int (*by_index)(unsigned int i, struct nvml_device **d);
	int (*uuid)(struct nvml_device *d, char *buf, unsigned int len);
	int (*procs)(struct nvml_device *d, unsigned int *n,
		     struct nvml_proc *out);
} nv;

bool gs_nvml_open(const char **why)
{
	if (nv.ready)
		return true;
	if (!nv.h) {
		nv.h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!nv.h) {
			*why = "libnvidia-ml.so.1 not found";
			return false;
		}
		*(void **)&nv.init = dlsym(nv.h, "nvmlInit_v2");
		*(void **)&nv.count = dlsym(nv.h, "nvmlDeviceGetCount_v2");
		*(void **)&nv.by_index = dlsym(nv.h, "nvmlDeviceGetHandleByIndex_v2");
		*(void **)&nv.uuid = dlsym(nv.h, "nvmlDeviceGetUUID");
		*(void **)&nv.procs = dlsym(nv.h, "nvmlDeviceGetComputeRunningProcesses_v3");
		if (!nv.procs)
			*(void **)&nv.procs = dlsym(nv.h, "nvmlDeviceGetComputeRunningProcesses_v2");
	}
	if (!nv.init || !nv.count || !nv.by_index || !nv.uuid || !nv.procs) {
		*why = "libnvidia-ml.so.1 lacks the entry points used";
		return false;
	}
	/* No driver yet (the daemon may start first): tried again next time. */
	if (nv.init() != NVML_SUCCESS) {
		*why = "nvmlInit_v2 failed";
		return false;
	}
	nv.ready = true;
	return true;
}

/* @d's compute processes in @*list (grown as needed); their number, or -1. */
static int dev_procs(struct nvml_device *d, struct nvml_proc **list, unsigned int *cap)
{
	for (int tries = 0; tries < 4; tries++) {
		unsigned int n = *cap;
		struct nvml_proc *p;
		int r = nv.procs(d, &n, *list);

		if (r == NVML_SUCCESS)
			return (int)n;
		if (r != NVML_ERROR_INSUFFICIENT_SIZE || n <= *cap)
			return -1;
		/* Room for processes that start meanwhile too. */
		p = realloc(*list, (n + 16) * sizeof(*p));
		if (!p)
			return -1;
		*list = p;
		*cap = n + 16;
	}
	return -1;
}

static const struct gs_gpu_rec *gpu_by_uuid(const struct gs_gpu_rec *gpus,
					    size_t ng, const char *text)
{
	uint8_t uuid[GPUSCHED_UUID_LEN];

	if (gs_uuid_parse(text, uuid))
		return NULL;	/* a MIG instance's, or unknown */
	for (size_t i = 0; i < ng; i++)
		if (!memcmp(gpus[i].uuid, uuid, sizeof(uuid)))
			return &gpus[i];
	return NULL;
}

/* Fill in the clients of GPU @gpu from its process list @p, @n long. */
static void fill_gpu(uint32_t gpu, const struct nvml_proc *p, int n,
		     struct gs_client_rec *cl, size_t nc)
{
	for (size_t i = 0; i < nc; i++) {
		uint64_t reserved = 0;
		int k;

		if (cl[i].gpu != gpu || !cl[i].has_mem || cl[i].has_mem_ctx)
			continue;
		for (k = 0; k < n && p[k].pid != cl[i].pid; k++)
			;
		if (k == n || p[k].used == NVML_VALUE_NOT_AVAILABLE)
			continue;
		for (size_t j = 0; j < nc; j++)
			if (cl[j].gpu == gpu && cl[j].pid == cl[i].pid && cl[j].has_mem)
				reserved += cl[j].mem_reserved;
		for (size_t j = i; j < nc; j++) {
			if (cl[j].gpu != gpu || cl[j].pid != cl[i].pid || !cl[j].has_mem)
				continue;
			cl[j].mem_ctx = p[k].used > reserved ? p[k].used - reserved : 0;
			cl[j].has_mem_ctx = true;
		}
	}
}

int gs_nvml_ctx_mem(const struct gs_gpu_rec *gpus, size_t ng,
		    struct gs_client_rec *cl, size_t nc, const char **why)
{
	struct nvml_proc *list = NULL;
	unsigned int count, cap = 0;

	for (size_t i = 0; i < nc; i++) {
		cl[i].has_mem_ctx = false;
		cl[i].mem_ctx = 0;
	}
	if (!gs_nvml_open(why))
		return -ENOENT;
	if (!nc || nv.count(&count) != NVML_SUCCESS)
		return 0;
	for (unsigned int i = 0; i < count; i++) {
		const struct gs_gpu_rec *g;
		char text[96];
		struct nvml_device *d;
		int n;

		if (nv.by_index(i, &d) != NVML_SUCCESS ||
		    nv.uuid(d, text, sizeof(text)) != NVML_SUCCESS)
			continue;
		g = gpu_by_uuid(gpus, ng, text);
		if (!g)
			continue;
		n = dev_procs(d, &list, &cap);
		if (n > 0)
			fill_gpu(g->index, list, n, cl, nc);
	}
	free(list);
	return 0;
}
