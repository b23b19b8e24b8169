// SPDX-License-Identifier: GPL-2.0
/*
 * The NVML test double (tests only, never installed): a libnvidia-ml.so.1
 * stand-in that reports the CUDA double's device memory, so that
 * libgpusched's clamping of nvmlDeviceGetMemoryInfo can be tested. GPUs
 * are the double's physical ones ($GS_DOUBLE_GPUS; NVML ignores
 * CUDA_VISIBLE_DEVICES), their memory $GS_DOUBLE_MEM, what is in use the
 * live processes' use in $GS_DOUBLE_SHM (none if the file is not there).
 * The v2 query reports no memory reserved by the driver. The compute
 * processes of a GPU are the live processes that hold a slot of its
 * memory, each with what it holds (its contexts' memory included).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_double.h"

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
};

struct nvml_dev {
	int index;
};
typedef struct nvml_dev *nvmlDevice_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

/* nvmlProcessInfo_v2_t, which the _v2 and _v3 queries fill. */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

static struct nvml_dev devs[GSD_MAX_GPUS];
static int nr_devs;

static int gpus(void)
{
	const char *s = getenv("GS_DOUBLE_GPUS");
	int n = s ? atoi(s) : 1;

	return n < 1 || n > GSD_MAX_GPUS ? 1 : n;
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	nr_devs = gpus();
	for (int i = 0; i < nr_devs; i++)
		devs[i].index = i;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!nr_devs)
		return NVML_ERROR_UNINITIALIZED;
	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	*n = (unsigned int)nr_devs;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (!nr_devs)
		return NVML_ERROR_UNINITIALIZED;
	if (!d || i >= (unsigned int)nr_devs)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &devs[i];
	return NVML_SUCCESS;
}

/* "GPU-" and the uuid's 16 bytes as 8-4-4-4-12 hex digits, like NVML. */
EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *out, unsigned int len)
{
	unsigned char u[16];

	if (!d || !out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (len < 41)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	gsd_uuid(d->index, u);
	snprintf(out, len,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
	return NVML_SUCCESS;
}

/* The shared file of the double's GPUs, mapped read-only; NULL: none. */
static struct gsd_shm *shm_map(void)
{
	const char *path = getenv("GS_DOUBLE_SHM");
	struct gsd_shm *shm;
	int fd;

	fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return NULL;
	shm = mmap(NULL, sizeof(*shm), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (shm == MAP_FAILED)
		return NULL;
	if (__atomic_load_n(&shm->magic, __ATOMIC_ACQUIRE) != GSD_MAGIC) {
		munmap(shm, sizeof(*shm));
		return NULL;
	}
	return shm;
}

static nvmlReturn_t mem(nvmlDevice_t d, unsigned long long *total,
			unsigned long long *used)
{
	struct gsd_shm *shm;

	if (!nr_devs)
		return NVML_ERROR_UNINITIALIZED;
	if (!d)
		return NVML_ERROR_INVALID_ARGUMENT;
	*total = gsd_mem_size(getenv("GS_DOUBLE_MEM"), GSD_MEM_DEFAULT);
	*used = 0;
	shm = shm_map();
	if (!shm)
		return NVML_SUCCESS;
	*used = gsd_mem_used(&shm->gpu[d->index]);
	munmap(shm, sizeof(*shm));
	if (*used > *total)
		*used = *total;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	unsigned long long total, used;
	nvmlReturn_t r;

	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = mem(d, &total, &used);
	if (r == NVML_SUCCESS)
		*m = (nvmlMemory_t){ .total = total, .free = total - used, .used = used };
	return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	unsigned long long total, used;
	nvmlReturn_t r;

	if (!m || !m->version)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = mem(d, &total, &used);
	if (r == NVML_SUCCESS) {
		m->total = total;
		m->reserved = 0;
		m->free = total - used;
		m->used = used;
	}
	return r;
}

/* The live processes with memory on @d, as NVML lists compute processes. */
static nvmlReturn_t procs(nvmlDevice_t d, unsigned int *count,
			  nvmlProcessInfo_t *out)
{
	nvmlProcessInfo_t found[GSD_MEM_SLOTS];
	unsigned int n = 0, i;
	struct gsd_shm *shm;

	if (!nr_devs)
		return NVML_ERROR_UNINITIALIZED;
	if (!d || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	shm = shm_map();
	for (i = 0; shm && i < GSD_MEM_SLOTS; i++) {
		const struct gsd_mem_slot *sl = &shm->gpu[d->index].mem[i];
		int32_t pid = __atomic_load_n(&sl->pid, __ATOMIC_RELAXED);

		if (!pid || !gsd_pid_alive(pid))
			continue;
		found[n++] = (nvmlProcessInfo_t){
			.pid = (unsigned int)pid,
			.usedGpuMemory = __atomic_load_n(&sl->bytes, __ATOMIC_RELAXED),
			.gpuInstanceId = 0xffffffff, .computeInstanceId = 0xffffffff,
		};
	}
	if (shm)
		munmap(shm, sizeof(*shm));
	if (*count < n || (n && !out)) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = n;
	for (i = 0; i < n; i++)
		out[i] = found[i];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d,
							    unsigned int *count,
							    nvmlProcessInfo_t *out)
{
	return procs(d, count, out);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d,
							    unsigned int *count,
							    nvmlProcessInfo_t *out)
{
	return procs(d, count, out);
}
