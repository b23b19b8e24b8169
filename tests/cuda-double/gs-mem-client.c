// SPDX-License-Identifier: GPL-2.0
/*
 * A device-memory test client for the CUDA test double: runs the
 * operations named on its command line, in order, on device 0's primary
 * context, and prints one line of key=value pairs per operation. It
 * reaches the allocation entry points by symbol, through cuGetProcAddress
 * or through dlsym on libcuda (--route), so that every way a program can
 * find them is tested.
 *
 * Operations (SIZE in bytes, or with a K, M or G suffix):
 *   alloc SIZE | managed SIZE | async SIZE | pool SIZE | create SIZE
 *   pitch WIDTH HEIGHT      allocate (elements of 4 bytes for pitch)
 *   free | freeall          the newest allocation, or all, each its way
 *   fill SIZE               allocate SIZE until an allocation fails
 *   race THREADS SIZE       threads that fill at once, with SIZE each time
 *   churn THREADS SIZE N    threads that each allocate and free SIZE N times
 *   info                    cuMemGetInfo
 *   nvml                    nvmlDeviceGetMemoryInfo and _v2 of GPU 0, found
 *                           with dlopen and dlsym, as pynvml finds them
 *   trim                    cuMemPoolTrimTo(0) on the pools used
 *   launch US               a thread launches a kernel of US microseconds
 *                           and prints "op=launch" once the launch returns
 *                           (libgpusched's gate may hold it for the token);
 *                           the program waits for it before it exits
 *   touch FILE | wait FILE  create a file; wait (up to 60 s) until it exists
 *   sleep SECONDS
 *   kernels N US            launch N kernels of US microseconds on this
 *                           thread, not waited for
 *   kernels2 N US           the same on a second stream of this thread's
 *                           (made once): the context's work on two streams
 *   kernelsT N US           the same on this thread's own default stream
 *                           (CU_STREAM_PER_THREAD), which only it can use
 *   sync                    cuCtxSynchronize
 *   mark | query            record an event after the work queued so far;
 *                           whether it completed (r=0) or not (r=600)
 *   retain | release        one more reference to the primary context, or
 *                           one less (the runtime and libraries hold theirs)
 *   relcycle N              N times: retain, launch 100 us, sync, release
 *   reset                   cuDevicePrimaryCtxReset (cudaDeviceReset); the
 *                           allocations held are gone with it; then retain
 *                           and use the primary context again
 *   ctxcycle N SIZE         N times: create a context, allocate SIZE in it
 *                           (by symbol), destroy it without freeing
 *   devpool DEV SIZE        allocate SIZE from a pool on device DEV (made
 *                           once), the current context staying device 0's
 *   hostpool SIZE           allocate SIZE from a pool in host memory
 *   otherstream DEV SIZE    cuMemAllocAsync of SIZE on a stream of a new
 *                           context on device DEV, the current context
 *                           staying device 0's
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"

CUresult cuInit(unsigned int);
CUresult cuDevicePrimaryCtxRetain(CUcontext *, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
CUresult cuCtxDestroy_v2(CUcontext);
CUresult cuStreamCreate(CUstream *, unsigned int);
CUresult cuCtxSynchronize(void);
CUresult cuEventCreate(CUevent *, unsigned int);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuEventQuery(CUevent);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *, CUdevice);
CUresult cuMemPoolCreate(CUmemoryPool *, const CUmemPoolProps *);
CUresult cuMemPoolTrimTo(CUmemoryPool, size_t);
CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
			     CUdriverProcAddressQueryResult *);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemAllocPitch_v2(CUdeviceptr *, size_t *, size_t, size_t,
			    unsigned int);
CUresult cuMemAllocManaged(CUdeviceptr *, size_t, unsigned int);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemGetInfo_v2(size_t *, size_t *);
CUresult cuMemAllocAsync(CUdeviceptr *, size_t, CUstream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *, size_t, CUmemoryPool,
				 CUstream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool,
				      CUstream);
CUresult cuMemFreeAsync(CUdeviceptr, CUstream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
CUresult cuMemCreate(CUmemGenericAllocationHandle *, size_t,
		     const CUmemAllocationProp *, unsigned long long);
CUresult cuMemRelease(CUmemGenericAllocationHandle);
CUresult cuLaunchKernel(CUfunction, unsigned int, unsigned int, unsigned int,
			unsigned int, unsigned int, unsigned int, unsigned int,
			CUstream, void **, void **);

static struct {
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned int);
	CUresult (*free)(CUdeviceptr);
	CUresult (*info)(size_t *, size_t *);
	CUresult (*async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*from_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*free_async)(CUdeviceptr, CUstream);
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t,
			   const CUmemAllocationProp *, unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
} fn;

enum kind { K_MEM, K_ASYNC, K_HANDLE };

struct held {
	uint64_t key;
	size_t size;
	enum kind kind;
};

static struct held *held;
static size_t nr_held, max_held;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static CUmemoryPool own_pool, def_pool;
static CUcontext ctx;

static void die(const char *what, CUresult r)
{
	fprintf(stderr, "gs-mem-client: %s failed: %d\n", what, r);
	exit(2);
}

static size_t parse_size(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	else if (*end == 'G')
		v <<= 30;
	if (*end && *end != 'K' && *end != 'M' && *end != 'G')
		errno = EINVAL;
	if (errno || end == s || (*end && end[1])) {
		fprintf(stderr, "gs-mem-client: bad size \"%s\"\n", s);
		exit(2);
	}
	return (size_t)v;
}

static void resolve(const char *route, bool ptsz)
{
	if (!strcmp(route, "symbol")) {
		fn.alloc = cuMemAlloc_v2;
		fn.pitch = cuMemAllocPitch_v2;
		fn.managed = cuMemAllocManaged;
		fn.free = cuMemFree_v2;
		fn.info = cuMemGetInfo_v2;
		fn.async = ptsz ? cuMemAllocAsync_ptsz : cuMemAllocAsync;
		fn.from_pool = ptsz ? cuMemAllocFromPoolAsync_ptsz :
				      cuMemAllocFromPoolAsync;
		fn.free_async = ptsz ? cuMemFreeAsync_ptsz : cuMemFreeAsync;
		fn.create = cuMemCreate;
		fn.release = cuMemRelease;
	} else if (!strcmp(route, "procaddr")) {
		cuuint64_t fl = ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
#define P(f, name) do {							\
		CUresult r_ = cuGetProcAddress_v2(name, (void **)&fn.f, 12000,	\
						  fl, NULL);			\
		if (r_ || !fn.f)						\
			die("cuGetProcAddress(" name ")", r_ ? r_ : -1);	\
	} while (0)
		P(alloc, "cuMemAlloc");
		P(pitch, "cuMemAllocPitch");
		P(managed, "cuMemAllocManaged");
		P(free, "cuMemFree");
		P(info, "cuMemGetInfo");
		P(async, "cuMemAllocAsync");
		P(from_pool, "cuMemAllocFromPoolAsync");
		P(free_async, "cuMemFreeAsync");
		P(create, "cuMemCreate");
		P(release, "cuMemRelease");
#undef P
	} else if (!strcmp(route, "dlsym")) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (!h)
			die("dlopen(libcuda.so.1)", -1);
#define D(f, name) do {							\
		*(void **)&fn.f = dlsym(h, name);				\
		if (!fn.f)							\
			die(name, -1);				\
	} while (0)
		D(alloc, "cuMemAlloc_v2");
		D(pitch, "cuMemAllocPitch_v2");
		D(managed, "cuMemAllocManaged");
		D(free, "cuMemFree_v2");
		D(info, "cuMemGetInfo_v2");
		D(async, ptsz ? "cuMemAllocAsync_ptsz" : "cuMemAllocAsync");
		D(from_pool, ptsz ? "cuMemAllocFromPoolAsync_ptsz" :
				    "cuMemAllocFromPoolAsync");
		D(free_async, ptsz ? "cuMemFreeAsync_ptsz" : "cuMemFreeAsync");
		D(create, "cuMemCreate");
		D(release, "cuMemRelease");
#undef D
	} else {
		fprintf(stderr, "gs-mem-client: --route symbol|procaddr|dlsym\n");
		exit(2);
	}
}

static void keep(uint64_t key, size_t size, enum kind kind)
{
	pthread_mutex_lock(&held_lock);
	if (nr_held == max_held) {
		max_held = max_held ? 2 * max_held : 64;
		held = realloc(held, max_held * sizeof(*held));
		if (!held)
			die("realloc", -1);
	}
	held[nr_held++] = (struct held){ key, size, kind };
	pthread_mutex_unlock(&held_lock);
}

static CUresult one_alloc(const char *op, size_t n, size_t *pitch)
{
	CUmemAllocationProp prop = { 0 };
	CUmemGenericAllocationHandle h;
	CUdeviceptr p = 0;
	CUresult r;

	if (!strcmp(op, "alloc")) {
		r = fn.alloc(&p, n);
	} else if (!strcmp(op, "managed")) {
		r = fn.managed(&p, n, CU_MEM_ATTACH_GLOBAL);
	} else if (!strcmp(op, "async")) {
		r = fn.async(&p, n, NULL);
	} else if (!strcmp(op, "pool")) {
		r = fn.from_pool(&p, n, own_pool, NULL);
	} else if (!strcmp(op, "create")) {
		prop.type = 1;	/* CU_MEM_ALLOCATION_TYPE_PINNED */
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop.location.id = 0;
		r = fn.create(&h, n, &prop, 0);
		if (!r)
			keep(h, n, K_HANDLE);
		return r;
	} else {
		/* pitch: @n is the width; *pitch the height, then the pitch */
		size_t height = *pitch;

		r = fn.pitch(&p, pitch, n, height, 4);
		if (!r)
			n = *pitch * height;
	}
	if (!r)
		keep(p, n, !strcmp(op, "async") || !strcmp(op, "pool") ?
		     K_ASYNC : K_MEM);
	return r;
}

static CUresult free_one(void)
{
	struct held h;

	pthread_mutex_lock(&held_lock);
	if (!nr_held) {
		pthread_mutex_unlock(&held_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	h = held[--nr_held];
	pthread_mutex_unlock(&held_lock);
	switch (h.kind) {
	case K_ASYNC:
		return fn.free_async(h.key, NULL);
	case K_HANDLE:
		return fn.release(h.key);
	default:
		return fn.free(h.key);
	}
}

static size_t bytes_held(void)
{
	size_t sum = 0;

	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < nr_held; i++)
		sum += held[i].size;
	pthread_mutex_unlock(&held_lock);
	return sum;
}

struct filler {
	pthread_t t;
	pthread_barrier_t *go;
	size_t size, n, bytes;
	size_t iters, failed;	/* churn */
	CUresult last;
};

/* Allocate and free, @iters times; count what failed. */
static void *churn(void *arg)
{
	struct filler *f = arg;
	CUdeviceptr p;

	cuCtxSetCurrent(ctx);
	pthread_barrier_wait(f->go);
	for (size_t i = 0; i < f->iters; i++) {
		if (fn.alloc(&p, f->size)) {
			f->failed++;
			continue;
		}
		if (fn.free(p))
			f->failed++;
	}
	return NULL;
}

/* Allocate until refused; what ended it is the result. */
static void *fill(void *arg)
{
	struct filler *f = arg;
	CUresult r;

	cuCtxSetCurrent(ctx);	/* each thread's own current context */
	if (f->go)
		pthread_barrier_wait(f->go);
	for (;;) {
		r = one_alloc("alloc", f->size, NULL);
		if (r)
			break;
		f->n++;
		f->bytes += f->size;
	}
	f->last = r;
	return NULL;
}

struct nvml_mem {
	unsigned long long total, free, used;
};

struct nvml_mem_v2 {
	unsigned int version;
	unsigned long long total, reserved, free, used;
};

static void nvml(void)
{
	static int (*get)(void *, struct nvml_mem *);
	static int (*get_v2)(void *, struct nvml_mem_v2 *);
	static void *dev;
	struct nvml_mem m = { 0 };
	struct nvml_mem_v2 m2 = { .version = sizeof(m2) | 2u << 24 };
	int r, r2;

	if (!dev) {
		void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
		int (*init)(void), (*by_index)(unsigned int, void **);

		if (!h)
			die("dlopen(libnvidia-ml.so.1)", -1);
		*(void **)&init = dlsym(h, "nvmlInit_v2");
		*(void **)&by_index = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
		*(void **)&get = dlsym(h, "nvmlDeviceGetMemoryInfo");
		*(void **)&get_v2 = dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
		if (!init || !by_index || !get || !get_v2 || init() || by_index(0, &dev))
			die("NVML", -1);
	}
	r = get(dev, &m);
	r2 = get_v2(dev, &m2);
	printf("op=nvml r=%d total=%llu free=%llu used=%llu r2=%d total2=%llu free2=%llu used2=%llu reserved2=%llu\n",
	       r, m.total, m.free, m.used, r2, m2.total, m2.free, m2.used,
	       m2.reserved);
}

/* The double's kernel: its handle is its duration in microseconds. */
static void *launcher(void *arg)
{
	CUresult r;

	cuCtxSetCurrent(ctx);
	r = cuLaunchKernel((CUfunction)arg, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	printf("op=launch r=%d\n", r);
	fflush(stdout);
	return NULL;
}

static void wait_file(const char *path)
{
	for (int i = 0; i < 6000 && access(path, F_OK); i++)
		usleep(10000);
}

int main(int argc, char **argv)
{
	const char *route = "symbol";
	bool ptsz = false;
	CUmemPoolProps props = { 0 };
	pthread_t launchers[16];
	CUevent mark = NULL;
	CUstream second = NULL;
	int nr_launchers = 0;
	CUresult r;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--route") && i + 1 < argc) {
			route = argv[++i];
		} else if (!strcmp(argv[i], "--ptsz")) {
			ptsz = true;
		} else {
			fprintf(stderr, "Usage: gs-mem-client [--route symbol|procaddr|dlsym] [--ptsz] OP...\n");
			return 2;
		}
	}
	r = cuInit(0);
	if (r)
		die("cuInit", r);
	r = cuDevicePrimaryCtxRetain(&ctx, 0);
	if (r)
		die("cuDevicePrimaryCtxRetain", r);
	cuCtxSetCurrent(ctx);
	resolve(route, ptsz);
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	if (cuMemPoolCreate(&own_pool, &props) || cuDeviceGetDefaultMemPool(&def_pool, 0))
		die("pools", -1);

	for (; i < argc; i++) {
		const char *op = argv[i];
		bool arg = i + 1 < argc;

		if (!strcmp(op, "alloc") || !strcmp(op, "managed") ||
		    !strcmp(op, "async") || !strcmp(op, "pool") ||
		    !strcmp(op, "create")) {
			size_t n;

			if (!arg)
				break;
			n = parse_size(argv[++i]);
			r = one_alloc(op, n, NULL);
			printf("op=%s size=%zu r=%d\n", op, n, r);
		} else if (!strcmp(op, "pitch") && i + 2 < argc) {
			size_t w = parse_size(argv[i + 1]), p = parse_size(argv[i + 2]);

			i += 2;
			r = one_alloc(op, w, &p);
			printf("op=pitch r=%d pitch=%zu\n", r, r ? 0 : p);
		} else if (!strcmp(op, "free")) {
			printf("op=free r=%d\n", free_one());
		} else if (!strcmp(op, "freeall")) {
			CUresult worst = 0;

			while (nr_held) {
				r = free_one();
				if (r)
					worst = r;
			}
			printf("op=freeall r=%d\n", worst);
		} else if (!strcmp(op, "fill") && arg) {
			struct filler f = { .size = parse_size(argv[++i]) };

			fill(&f);
			printf("op=fill n=%zu bytes=%zu r=%d held=%zu\n", f.n,
			       f.bytes, f.last, bytes_held());
		} else if (!strcmp(op, "race") && i + 2 < argc) {
			int nt = atoi(argv[i + 1]), oom = 0, other = 0;
			size_t size = parse_size(argv[i + 2]), n = 0;
			pthread_barrier_t go;
			struct filler *f;

			i += 2;
			if (nt < 1 || nt > 64)
				die("race: threads", -1);
			f = calloc((size_t)nt, sizeof(*f));
			pthread_barrier_init(&go, NULL, (unsigned int)nt);
			for (int k = 0; k < nt; k++) {
				f[k].size = size;
				f[k].go = &go;
				pthread_create(&f[k].t, NULL, fill, &f[k]);
			}
			for (int k = 0; k < nt; k++) {
				pthread_join(f[k].t, NULL);
				n += f[k].n;
				if (f[k].last == CUDA_ERROR_OUT_OF_MEMORY)
					oom++;
				else
					other++;
			}
			printf("op=race n=%zu held=%zu oom=%d other=%d\n", n,
			       bytes_held(), oom, other);
			free(f);
		} else if (!strcmp(op, "churn") && i + 3 < argc) {
			int nt = atoi(argv[i + 1]);
			size_t size = parse_size(argv[i + 2]), failed = 0;
			long iters = atol(argv[i + 3]);
			pthread_barrier_t go;
			struct filler *f;

			i += 3;
			if (nt < 1 || nt > 64 || iters < 1)
				die("churn: threads or iterations", -1);
			f = calloc((size_t)nt, sizeof(*f));
			pthread_barrier_init(&go, NULL, (unsigned int)nt);
			for (int k = 0; k < nt; k++) {
				f[k].size = size;
				f[k].iters = (size_t)iters;
				f[k].go = &go;
				pthread_create(&f[k].t, NULL, churn, &f[k]);
			}
			for (int k = 0; k < nt; k++) {
				pthread_join(f[k].t, NULL);
				failed += f[k].failed;
			}
			printf("op=churn n=%zu failed=%zu\n", (size_t)nt * (size_t)iters,
			       failed);
			free(f);
		} else if (!strcmp(op, "info")) {
			size_t fr = 0, tot = 0;

			r = fn.info(&fr, &tot);
			printf("op=info r=%d free=%zu total=%zu held=%zu\n", r, fr,
			       tot, bytes_held());
		} else if (!strcmp(op, "nvml")) {
			nvml();
		} else if (!strcmp(op, "launch") && arg && nr_launchers < 16) {
			uintptr_t us = parse_size(argv[++i]);

			if (pthread_create(&launchers[nr_launchers], NULL, launcher,
					   (void *)us))
				die("pthread_create", -1);
			nr_launchers++;
			continue;	/* it says when it is done */
		} else if ((!strcmp(op, "kernels") || !strcmp(op, "kernels2") ||
			    !strcmp(op, "kernelsT")) && i + 2 < argc) {
			long n = atol(argv[i + 1]);
			uintptr_t us = parse_size(argv[i + 2]);
			bool two = op[7] == '2';
			CUstream s;

			i += 2;
			r = two && !second ? cuStreamCreate(&second, 0) : 0;
			s = two ? second : op[7] == 'T' ? CU_STREAM_PER_THREAD : NULL;
			while (n-- > 0 && !r)
				r = cuLaunchKernel((CUfunction)us, 1, 1, 1, 1, 1, 1,
						   0, s, NULL, NULL);
			printf("op=%s r=%d\n", op, r);
		} else if (!strcmp(op, "mark")) {
			r = mark ? 0 : cuEventCreate(&mark, 0);
			if (!r)
				r = cuEventRecord(mark, NULL);
			printf("op=mark r=%d\n", r);
		} else if (!strcmp(op, "query")) {
			printf("op=query r=%d\n", mark ? cuEventQuery(mark) : -1);
		} else if (!strcmp(op, "sync")) {
			printf("op=sync r=%d\n", cuCtxSynchronize());
		} else if (!strcmp(op, "retain")) {
			CUcontext c;

			r = cuDevicePrimaryCtxRetain(&c, 0);
			printf("op=retain r=%d same=%d\n", r, !r && c == ctx);
		} else if (!strcmp(op, "release")) {
			printf("op=release r=%d\n", cuDevicePrimaryCtxRelease_v2(0));
		} else if (!strcmp(op, "relcycle") && arg) {
			long n = atol(argv[++i]), failed = 0;
			CUcontext c;

			for (long k = 0; k < n; k++) {
				r = cuDevicePrimaryCtxRetain(&c, 0);
				if (!r)
					r = cuLaunchKernel((CUfunction)(uintptr_t)100,
							   1, 1, 1, 1, 1, 1, 0, NULL,
							   NULL, NULL);
				if (!r)
					r = cuCtxSynchronize();
				if (!r)
					r = cuDevicePrimaryCtxRelease_v2(0);
				failed += r != 0;
			}
			printf("op=relcycle n=%ld failed=%ld\n", n, failed);
		} else if (!strcmp(op, "reset")) {
			r = cuDevicePrimaryCtxReset_v2(0);
			nr_held = 0;	/* gone with the context */
			if (!r)
				r = cuDevicePrimaryCtxRetain(&ctx, 0);
			if (!r)
				r = cuCtxSetCurrent(ctx);
			printf("op=reset r=%d\n", r);
		} else if (!strcmp(op, "devpool") && i + 2 < argc) {
			static CUmemoryPool on[8];
			int dev = atoi(argv[i + 1]);
			size_t n = parse_size(argv[i + 2]);
			CUmemPoolProps pp = { 0 };
			CUdeviceptr p;

			i += 2;
			pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
			pp.location.id = dev;
			r = dev >= 0 && dev < 8 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
			if (!r && !on[dev])
				r = cuMemPoolCreate(&on[dev], &pp);
			if (!r)
				r = fn.from_pool(&p, n, on[dev], NULL);
			if (!r)
				keep(p, n, K_ASYNC);
			printf("op=devpool dev=%d size=%zu r=%d\n", dev, n, r);
		} else if (!strcmp(op, "otherstream") && i + 2 < argc) {
			int dev = atoi(argv[i + 1]);
			size_t n = parse_size(argv[i + 2]);
			CUcontext other;
			CUdeviceptr p;
			CUstream st;

			i += 2;
			r = cuCtxCreate_v2(&other, 0, dev);
			if (!r)
				r = cuStreamCreate(&st, 0);
			cuCtxSetCurrent(ctx);
			if (!r)
				r = fn.async(&p, n, st);
			if (!r)
				keep(p, n, K_ASYNC);
			printf("op=otherstream dev=%d size=%zu r=%d\n", dev, n, r);
		} else if (!strcmp(op, "hostpool") && arg) {
			static CUmemoryPool host;
			size_t n = parse_size(argv[++i]);
			CUmemPoolProps pp = { 0 };
			CUdeviceptr p;

			pp.location.type = CU_MEM_LOCATION_TYPE_HOST;
			r = host ? CUDA_SUCCESS : cuMemPoolCreate(&host, &pp);
			if (!r)
				r = fn.from_pool(&p, n, host, NULL);
			if (!r)
				keep(p, n, K_ASYNC);
			printf("op=hostpool size=%zu r=%d\n", n, r);
		} else if (!strcmp(op, "ctxcycle") && i + 2 < argc) {
			long n = atol(argv[i + 1]), failed = 0;
			size_t size = parse_size(argv[i + 2]);
			CUdeviceptr p;
			CUcontext c;

			i += 2;
			for (long k = 0; k < n; k++) {
				r = cuCtxCreate_v2(&c, 0, 0);
				if (r) {
					failed++;
					continue;
				}
				r = cuMemAlloc_v2(&p, size);
				failed += r != 0;
				if (cuCtxDestroy_v2(c))
					failed++;
			}
			cuCtxSetCurrent(ctx);
			printf("op=ctxcycle n=%ld failed=%ld\n", n, failed);
		} else if (!strcmp(op, "trim")) {
			r = cuMemPoolTrimTo(own_pool, 0);
			if (!r)
				r = cuMemPoolTrimTo(def_pool, 0);
			printf("op=trim r=%d\n", r);
		} else if (!strcmp(op, "touch") && arg) {
			int fd = open(argv[++i], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

			if (fd >= 0)
				close(fd);
			printf("op=touch r=%d\n", fd < 0);
		} else if (!strcmp(op, "wait") && arg) {
			wait_file(argv[++i]);
			printf("op=wait r=%d\n", access(argv[i], F_OK) != 0);
		} else if (!strcmp(op, "sleep") && arg) {
			double s = atof(argv[++i]);
			struct timespec ts = { (time_t)s,
					       (long)((s - (double)(time_t)s) * 1e9) };

			nanosleep(&ts, NULL);
			printf("op=sleep r=0\n");
		} else {
			break;
		}
		fflush(stdout);
	}
	if (i < argc) {
		fprintf(stderr, "gs-mem-client: bad operation \"%s\"\n", argv[i]);
		return 2;
	}
	while (nr_launchers)
		pthread_join(launchers[--nr_launchers], NULL);
	return 0;
}
