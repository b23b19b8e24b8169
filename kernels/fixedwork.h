/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What host code needs to know about the fixed-work kernel (fixedwork.cuh),
 * in plain C: its symbol name (extern "C", unmangled, for cuModuleGetFunction)
 * and its block size.
 */
#ifndef GS_FIXEDWORK_H
#define GS_FIXEDWORK_H

#define GS_FIXEDWORK_NAME	"gs_fixedwork"
#define GS_FIXEDWORK_THREADS	256

#endif /* GS_FIXEDWORK_H */
