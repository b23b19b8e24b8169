/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CU_CHECK(call): a CUDA driver API call that must succeed; otherwise the
 * program ends with the file, line, call and the driver's error string and
 * name (gs_die()). For the driver-API programs of kernels/.
 */
#ifndef GS_CU_CHECK_H
#define GS_CU_CHECK_H

#include <cuda.h>

#include "gs-common.h"

#define CU_CHECK(call)							\
	do {								\
		CUresult e_ = (call);					\
		if (e_ != CUDA_SUCCESS) {				\
			const char *n_ = NULL, *s_ = NULL;		\
			cuGetErrorName(e_, &n_);			\
			cuGetErrorString(e_, &s_);			\
			gs_die("%s:%d: %s: %s (%s)", __FILE__, __LINE__, \
			       #call, s_ ? s_ : "?", n_ ? n_ : "?");	\
		}							\
	} while (0)

#endif
