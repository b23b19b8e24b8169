/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The few pieces of the CUDA driver ABI that libgpusched relies on.
 *
 * CUDA headers are not available where this is built (CI has no CUDA), so
 * the types are declared here, with the values and layouts of cuda.h. Only
 * what the library and its test double use is declared: handles are opaque
 * pointers, and CUlaunchConfig is spelled out because the library reads
 * its stream.
 */
#ifndef GS_CUDA_ABI_H
#define GS_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUlaunchAttribute_st CUlaunchAttribute;	/* only pointed to */
typedef uint64_t CUdeviceptr;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;

typedef struct CUuuid_st {
	char bytes[16];
} CUuuid;

typedef struct CUlaunchConfig_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

/*
 * Where cuMemCreate and cuMemPoolCreate place memory: the two structs
 * begin with the same fields, of which only @location is read.
 */
typedef enum {
	CU_MEM_LOCATION_TYPE_INVALID = 0,
	CU_MEM_LOCATION_TYPE_DEVICE = 1,
	CU_MEM_LOCATION_TYPE_HOST = 2,	/* and HOST_NUMA..., host memory */
} CUmemLocationType;

typedef struct CUmemLocation_st {
	CUmemLocationType type;
	int id;			/* the device ordinal, for a device */
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
	int type;			/* CUmemAllocationType */
	int requestedHandleTypes;	/* CUmemAllocationHandleType */
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

typedef struct CUmemPoolProps_st {
	int allocType;			/* CUmemAllocationType */
	int handleTypes;		/* CUmemAllocationHandleType */
	CUmemLocation location;
	void *win32SecurityAttributes;
	size_t maxSize;
	unsigned short usage;
	unsigned char reserved[54];
} CUmemPoolProps;

#define CU_MEM_ATTACH_GLOBAL	0x1
#define CU_MEM_ATTACH_HOST	0x2

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_NOT_PERMITTED = 800,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	CUDA_ERROR_UNKNOWN = 999,
};

/* Special stream handles. */
#define CU_STREAM_LEGACY	((CUstream)0x1)
#define CU_STREAM_PER_THREAD	((CUstream)0x2)

/* cuStreamCreate() flags. */
#define CU_STREAM_NON_BLOCKING	0x1

/* cuGetProcAddress flags and, for _v2 (CUDA 12+), its symbolStatus. */
#define CU_GET_PROC_ADDRESS_DEFAULT			0
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM		(1 << 0)
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM	(1 << 1)
typedef enum {
	CU_GET_PROC_ADDRESS_SUCCESS = 0,
	CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} CUdriverProcAddressQueryResult;

#define CU_EVENT_DEFAULT	0x0
#define CU_EVENT_BLOCKING_SYNC	0x1
#define CU_EVENT_DISABLE_TIMING	0x2

typedef enum {
	CU_STREAM_CAPTURE_STATUS_NONE = 0,
	CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
	CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
} CUstreamCaptureStatus;

typedef enum {
	CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
	CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
	CU_STREAM_CAPTURE_MODE_RELAXED = 2,
} CUstreamCaptureMode;

#endif /* GS_CUDA_ABI_H */
