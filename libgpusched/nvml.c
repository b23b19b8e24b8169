// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NVML's memory report, within the process's device memory limit:
 * nvmlDeviceGetMemoryInfo and its _v2 report what cuMemGetInfo reports
 * (mem.c), total = min(limit, physical) and free = min(physical free,
 * limit - reserved), for a GPU on which this process has a token client
 * (it has used CUDA there). Programs reach NVML by linking it (the
 * exported entry points below) or, as pynvml and PyTorch do, with dlopen
 * and dlsym (hooks.c's dlsym hands out the static ones, gs_nvml_hooks).
 * NVML need not be loaded: nothing here loads it.
 */
#include <dlfcn.h>
#include <strings.h>

#include "interpose.h"

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_SUCCESS			0
#define NVML_ERROR_UNINITIALIZED	1

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

struct nvml_tab {
	nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*nvmlDeviceGetMemoryInfo_v2)(nvmlDevice_t, nvmlMemory_v2_t *);
	nvmlReturn_t (*nvmlDeviceGetUUID)(nvmlDevice_t, char *, unsigned int);
};

static struct nvml_tab nv;
static atomic_bool nv_resolved;
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * NVML's entry points, if it is loaded. Racing threads find the same
 * pointers; the first publishes them. No lock is held across dlopen or
 * dlsym (a constructor under the loader's lock may call dlsym, as for
 * libcuda in hooks.c).
 */
bool nvml_resolve(void)
{
	struct nvml_tab t;
	void *h;

	if (atomic_load_explicit(&nv_resolved, memory_order_acquire))
		return true;
	h = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h) {
		dlerror();
		return false;
	}
	*(void **)&t.nvmlDeviceGetMemoryInfo =
		gs_real_dlsym()(h, "nvmlDeviceGetMemoryInfo");
	*(void **)&t.nvmlDeviceGetMemoryInfo_v2 =
		gs_real_dlsym()(h, "nvmlDeviceGetMemoryInfo_v2");
	*(void **)&t.nvmlDeviceGetUUID = gs_real_dlsym()(h, "nvmlDeviceGetUUID");
	dlerror();
	pthread_mutex_lock(&nv_lock);
	if (!atomic_load_explicit(&nv_resolved, memory_order_relaxed)) {
		nv = t;
		atomic_store_explicit(&nv_resolved, true, memory_order_release);
	}
	pthread_mutex_unlock(&nv_lock);
	return true;
}

/* The process's GPU state for NVML's @dev; NULL if it has none. */
static struct gs_dev *nvml_dev(nvmlDevice_t dev)
{
	char uuid[96];

	if (!nv.nvmlDeviceGetUUID ||
	    nv.nvmlDeviceGetUUID(dev, uuid, sizeof(uuid)) != NVML_SUCCESS)
		return NULL;
	/* NVML's "GPU-8-4-4-4-12" is the form of d->name. */
	for (struct gs_dev *d = atomic_load(&G.devs); d; d = d->next)
		if (!strcasecmp(d->name, uuid))
			return d;
	return NULL;
}

/* Clamp @total and @free as mem.c does; @used follows. */
static void nvml_clamp(nvmlDevice_t dev, unsigned long long *total,
		       unsigned long long *free_b)
{
	struct gs_dev *d = nvml_dev(dev);
	uint64_t t = *total, f = *free_b;

	if (d && mem_clamp(d, false, &t, &f)) {
		*total = t;
		*free_b = f;
	}
}

static nvmlReturn_t mem_info(nvmlDevice_t dev, nvmlMemory_t *m)
{
	nvmlReturn_t r;

	if (!nvml_resolve() || !nv.nvmlDeviceGetMemoryInfo)
		return NVML_ERROR_UNINITIALIZED;
	r = nv.nvmlDeviceGetMemoryInfo(dev, m);
	if (r == NVML_SUCCESS && m) {
		nvml_clamp(dev, &m->total, &m->free);
		m->used = m->total - m->free;
	}
	return r;
}

static nvmlReturn_t mem_info_v2(nvmlDevice_t dev, nvmlMemory_v2_t *m)
{
	nvmlReturn_t r;

	if (!nvml_resolve() || !nv.nvmlDeviceGetMemoryInfo_v2)
		return NVML_ERROR_UNINITIALIZED;
	r = nv.nvmlDeviceGetMemoryInfo_v2(dev, m);
	if (r == NVML_SUCCESS && m) {
		nvml_clamp(dev, &m->total, &m->free);
		/* What the driver keeps for itself stays said, within total. */
		if (m->reserved > m->total - m->free)
			m->reserved = m->total - m->free;
		m->used = m->total - m->free - m->reserved;
	}
	return r;
}

GS_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m)
{
	return mem_info(dev, m);
}

GS_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev,
						  nvmlMemory_v2_t *m)
{
	return mem_info_v2(dev, m);
}

static nvmlReturn_t in_nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *m)
{
	return mem_info(dev, m);
}

static nvmlReturn_t in_nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev,
						  nvmlMemory_v2_t *m)
{
	return mem_info_v2(dev, m);
}

#define HN(n) { #n, (void **)&nv.n, (void *)in_##n, (void *)in_##n }

const struct gs_hook gs_nvml_hooks[] = {
	HN(nvmlDeviceGetMemoryInfo), HN(nvmlDeviceGetMemoryInfo_v2),
};

const size_t gs_nvml_nr_hooks = sizeof(gs_nvml_hooks) / sizeof(gs_nvml_hooks[0]);
