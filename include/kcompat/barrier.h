/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-ins for the kernel's WRITE_ONCE(), smp_wmb() and
 * smp_store_release(), for code shared with gpusched.ko (kmod/status.c),
 * with the C11 memory model's meaning of the kernel's: a store that is
 * not torn, a store-store fence and a release store.
 */
#ifndef KCOMPAT_BARRIER_H
#define KCOMPAT_BARRIER_H

#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_store_release(p, val) \
	__atomic_store_n((p), (val), __ATOMIC_RELEASE)

#endif /* KCOMPAT_BARRIER_H */
