/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-ins for the kernel's basic types, for code shared with
 * gpusched.ko (kmod/policy.c). The kernel build uses <linux/types.h>.
 */
#ifndef KCOMPAT_TYPES_H
#define KCOMPAT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint8_t u8;

/* The kernel's container_of(), under a name user code has not taken. */
#define kcompat_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

#endif /* KCOMPAT_TYPES_H */
