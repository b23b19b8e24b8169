// SPDX-License-Identifier: GPL-2.0
/*
 * NVML, loaded at run time (nvml.h): each GPU's compute processes and the
 * device memory each uses, against the clients' reservations. The NVML
 * types are declared here as its ABI has them; no NVML header is needed to
 * build.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The entry points used; one thread calls them (the sampler's, in gpuschedd). */
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

/* One process on one GPU, as NVML listed it. */
struct nvml_use {
	uint8_t uuid[GPUSCHED_UUID_LEN];
	uint32_t pid;
	uint64_t used;
};

/*
 * Every GPU's compute processes with a known use, into @*out (malloc()ed,
 * @*n long). 0, or -ENOMEM.
 */
static int nvml_sample(struct nvml_use **out, size_t *n)
{
	struct nvml_proc *list = NULL;
	struct nvml_use *u = NULL, *p;
	unsigned int count, cap = 0;
	size_t nu = 0;
	int err = 0;

	if (nv.count(&count) != NVML_SUCCESS)
		count = 0;
	for (unsigned int i = 0; i < count && !err; i++) {
		uint8_t uuid[GPUSCHED_UUID_LEN];
		struct nvml_device *d;
		char text[96];
		int k, np;

		/* A MIG instance's UUID, or another form, is not a token's. */
		if (nv.by_index(i, &d) != NVML_SUCCESS ||
		    nv.uuid(d, text, sizeof(text)) != NVML_SUCCESS ||
		    gs_uuid_parse(text, uuid))
			continue;
		np = dev_procs(d, &list, &cap);
		if (np <= 0)
			continue;
		p = realloc(u, (nu + (size_t)np) * sizeof(*u));
		if (!p) {
			err = -ENOMEM;
			break;
		}
		u = p;
		for (k = 0; k < np; k++) {
			if (list[k].used == NVML_VALUE_NOT_AVAILABLE)
				continue;
			memcpy(u[nu].uuid, uuid, sizeof(uuid));
			u[nu].pid = list[k].pid;
			u[nu].used = list[k].used;
			nu++;
		}
	}
	free(list);
	if (err) {
		free(u);
		return err;
	}
	*out = u;
	*n = nu;
	return 0;
}

/* What @u, @nu long, says the process of client @c uses on its GPU. */
static const struct nvml_use *use_of(const struct nvml_use *u, size_t nu,
				     const struct gs_gpu_rec *gpus, size_t ng,
				     const struct gs_client_rec *c)
{
	for (size_t g = 0; g < ng; g++) {
		if (gpus[g].index != c->gpu)
			continue;
		for (size_t k = 0; k < nu; k++)
			if (u[k].pid == c->pid &&
			    !memcmp(u[k].uuid, gpus[g].uuid, GPUSCHED_UUID_LEN))
				return &u[k];
	}
	return NULL;
}

/* The clients' context memory from the sample @u, @nu long. */
static void fill(const struct nvml_use *u, size_t nu,
		 const struct gs_gpu_rec *gpus, size_t ng,
		 struct gs_client_rec *cl, size_t nc)
{
	for (size_t i = 0; i < nc; i++) {
		const struct nvml_use *p;
		uint64_t reserved = 0;

		if (!cl[i].has_mem || cl[i].has_mem_ctx)
			continue;
		p = use_of(u, nu, gpus, ng, &cl[i]);
		if (!p)
			continue;
		for (size_t j = 0; j < nc; j++)
			if (cl[j].gpu == cl[i].gpu && cl[j].pid == cl[i].pid &&
			    cl[j].has_mem)
				reserved += cl[j].mem_reserved;
		for (size_t j = i; j < nc; j++) {
			if (cl[j].gpu != cl[i].gpu || cl[j].pid != cl[i].pid ||
			    !cl[j].has_mem)
				continue;
			cl[j].mem_ctx = p->used > reserved ? p->used - reserved : 0;
			cl[j].has_mem_ctx = true;
		}
	}
}

static void clear(struct gs_client_rec *cl, size_t nc)
{
	for (size_t i = 0; i < nc; i++) {
		cl[i].has_mem_ctx = false;
		cl[i].mem_ctx = 0;
	}
}

int gs_nvml_ctx_mem(const struct gs_gpu_rec *gpus, size_t ng,
		    struct gs_client_rec *cl, size_t nc, const char **why)
{
	struct nvml_use *u;
	size_t nu;

	clear(cl, nc);
	if (!gs_nvml_open(why))
		return -ENOENT;
	if (nc && !nvml_sample(&u, &nu)) {
		fill(u, nu, gpus, ng, cl, nc);
		free(u);
	}
	return 0;
}

/*
 * The sampler of gpuschedd: a thread that asks NVML every
 * GS_NVML_PERIOD_S, so that the event loop never waits for NVML (whose
 * calls take milliseconds, a hand-over's worth many times). Its lock
 * guards the last sample and what it found; the thread alone calls NVML.
 */
#define GS_NVML_PERIOD_S	5

static struct {
	pthread_mutex_t lock;
	bool started;
	bool have;		/* a sample is there */
	const char *why;	/* NVML is not there: why; NULL: it is */
	struct nvml_use *u;
	size_t nu;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *sampler(void *arg)
{
	(void)arg;
	for (;;) {
		struct nvml_use *u = NULL;
		const char *why = NULL;
		size_t nu = 0;
		bool ok;

		ok = gs_nvml_open(&why) && !nvml_sample(&u, &nu);
		pthread_mutex_lock(&S.lock);
		free(S.u);
		S.u = u;
		S.nu = nu;
		S.have = ok;
		S.why = why;
		pthread_mutex_unlock(&S.lock);
		sleep(GS_NVML_PERIOD_S);
	}
	return NULL;
}

int gs_nvml_ctx_mem_sampled(const struct gs_gpu_rec *gpus, size_t ng,
			    struct gs_client_rec *cl, size_t nc,
			    const char **why)
{
	int err = -EAGAIN;

	clear(cl, nc);
	pthread_mutex_lock(&S.lock);
	if (!S.started) {
		pthread_attr_t attr;
		pthread_t t;

		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		S.started = !pthread_create(&t, &attr, sampler, NULL);
		pthread_attr_destroy(&attr);
	}
	if (S.have) {
		fill(S.u, S.nu, gpus, ng, cl, nc);
		err = 0;
	} else if (S.why) {
		*why = S.why;
		err = -ENOENT;
	}
	pthread_mutex_unlock(&S.lock);
	return err;
}
