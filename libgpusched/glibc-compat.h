/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The oldest glibc libgpusched.so.1 loads under: 2.28 (x86_64).
 *
 * The library is preloaded into programs of any container image, so it may
 * not need a symbol version newer than the oldest glibc it is meant for.
 * Built on Debian 12 (glibc 2.36) its references would bind to the
 * versions that glibc 2.34 gave the functions it moved from libpthread and
 * libdl into libc (pthread_create@GLIBC_2.34), and to functions new in
 * 2.32-2.33 (fstat, strerrordesc_np). This header, included first in every
 * object of the library (-include, libgpusched/dist.mk), binds the former
 * to the newest version at or below 2.28 that glibc still provides, and
 * replaces the latter (at the end). The library's link names
 * libpthread.so.0 and libdl.so.2, where those versions live before 2.34.
 *
 * tests/pkg/glibc-baseline.t fails when the library needs a newer version;
 * a function that has none at or below 2.28 needs a replacement here.
 * The list: every dl*, pthread_*, sem_*, shm_* and timer_* function of
 * glibc 2.36 with a version above 2.28 and one at or below it.
 */
#ifndef GS_GLIBC_COMPAT_H
#define GS_GLIBC_COMPAT_H

#if defined(__x86_64__) && !defined(__ASSEMBLER__)

#define GS_GLIBC_SYMVER(sym, ver) __asm__(".symver " #sym "," #sym "@" #ver);

GS_GLIBC_SYMVER(dladdr, GLIBC_2.2.5)
GS_GLIBC_SYMVER(dladdr1, GLIBC_2.3.3)
GS_GLIBC_SYMVER(dlclose, GLIBC_2.2.5)
GS_GLIBC_SYMVER(dlerror, GLIBC_2.2.5)
GS_GLIBC_SYMVER(dlinfo, GLIBC_2.3.3)
GS_GLIBC_SYMVER(dlmopen, GLIBC_2.3.4)
GS_GLIBC_SYMVER(dlopen, GLIBC_2.2.5)
GS_GLIBC_SYMVER(dlvsym, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_getaffinity_np, GLIBC_2.3.4)
GS_GLIBC_SYMVER(pthread_attr_getguardsize, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_getstack, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_getstackaddr, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_getstacksize, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_setaffinity_np, GLIBC_2.3.4)
GS_GLIBC_SYMVER(pthread_attr_setguardsize, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_setstack, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_setstackaddr, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_attr_setstacksize, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_barrier_destroy, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_barrier_init, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_barrier_wait, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_barrierattr_destroy, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_barrierattr_getpshared, GLIBC_2.3.3)
GS_GLIBC_SYMVER(pthread_barrierattr_init, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_barrierattr_setpshared, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_cancel, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_condattr_getclock, GLIBC_2.3.3)
GS_GLIBC_SYMVER(pthread_condattr_getpshared, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_condattr_setclock, GLIBC_2.3.3)
GS_GLIBC_SYMVER(pthread_condattr_setpshared, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_create, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_detach, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_getaffinity_np, GLIBC_2.3.4)
GS_GLIBC_SYMVER(pthread_getattr_default_np, GLIBC_2.18)
GS_GLIBC_SYMVER(pthread_getattr_np, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_getconcurrency, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_getcpuclockid, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_getname_np, GLIBC_2.12)
GS_GLIBC_SYMVER(pthread_getspecific, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_join, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_key_create, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_key_delete, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_kill, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutex_consistent, GLIBC_2.12)
GS_GLIBC_SYMVER(pthread_mutex_getprioceiling, GLIBC_2.4)
GS_GLIBC_SYMVER(pthread_mutex_setprioceiling, GLIBC_2.4)
GS_GLIBC_SYMVER(pthread_mutex_timedlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutex_trylock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutexattr_destroy, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutexattr_getprioceiling, GLIBC_2.4)
GS_GLIBC_SYMVER(pthread_mutexattr_getprotocol, GLIBC_2.4)
GS_GLIBC_SYMVER(pthread_mutexattr_getpshared, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutexattr_getrobust, GLIBC_2.12)
GS_GLIBC_SYMVER(pthread_mutexattr_gettype, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutexattr_init, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutexattr_setprioceiling, GLIBC_2.4)
GS_GLIBC_SYMVER(pthread_mutexattr_setprotocol, GLIBC_2.4)
GS_GLIBC_SYMVER(pthread_mutexattr_setpshared, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_mutexattr_setrobust, GLIBC_2.12)
GS_GLIBC_SYMVER(pthread_mutexattr_settype, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_once, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_destroy, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_init, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_rdlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_timedrdlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_timedwrlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_tryrdlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_trywrlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_unlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlock_wrlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlockattr_destroy, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlockattr_getkind_np, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlockattr_getpshared, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlockattr_init, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlockattr_setkind_np, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_rwlockattr_setpshared, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_setaffinity_np, GLIBC_2.3.4)
GS_GLIBC_SYMVER(pthread_setattr_default_np, GLIBC_2.18)
GS_GLIBC_SYMVER(pthread_setconcurrency, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_setname_np, GLIBC_2.12)
GS_GLIBC_SYMVER(pthread_setschedprio, GLIBC_2.3.4)
GS_GLIBC_SYMVER(pthread_setspecific, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_sigmask, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_sigqueue, GLIBC_2.11)
GS_GLIBC_SYMVER(pthread_spin_destroy, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_spin_init, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_spin_lock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_spin_trylock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_spin_unlock, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_testcancel, GLIBC_2.2.5)
GS_GLIBC_SYMVER(pthread_timedjoin_np, GLIBC_2.3.3)
GS_GLIBC_SYMVER(pthread_tryjoin_np, GLIBC_2.3.3)
GS_GLIBC_SYMVER(sem_close, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_destroy, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_getvalue, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_init, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_open, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_post, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_timedwait, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_trywait, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_unlink, GLIBC_2.2.5)
GS_GLIBC_SYMVER(sem_wait, GLIBC_2.2.5)
GS_GLIBC_SYMVER(shm_open, GLIBC_2.2.5)
GS_GLIBC_SYMVER(shm_unlink, GLIBC_2.2.5)
GS_GLIBC_SYMVER(timer_create, GLIBC_2.3.3)
GS_GLIBC_SYMVER(timer_delete, GLIBC_2.3.3)
GS_GLIBC_SYMVER(timer_getoverrun, GLIBC_2.3.3)
GS_GLIBC_SYMVER(timer_gettime, GLIBC_2.3.3)
GS_GLIBC_SYMVER(timer_settime, GLIBC_2.3.3)

/*
 * New in glibc 2.32-2.33, with no older version: replaced here. The headers
 * are included first, so that the macros below rename calls only.
 */
#include <string.h>
#include <sys/stat.h>

/* Before 2.33 the stat functions were inline wrappers around these. */
#define GS_STAT_VER 1	/* _STAT_VER_LINUX on x86_64 */
int __fxstat(int ver, int fd, struct stat *buf);
int __xstat(int ver, const char *path, struct stat *buf);
int __lxstat(int ver, const char *path, struct stat *buf);
GS_GLIBC_SYMVER(__fxstat, GLIBC_2.2.5)
GS_GLIBC_SYMVER(__xstat, GLIBC_2.2.5)
GS_GLIBC_SYMVER(__lxstat, GLIBC_2.2.5)

static inline int gs_compat_fstat(int fd, struct stat *buf)
{
	return __fxstat(GS_STAT_VER, fd, buf);
}

static inline int gs_compat_stat(const char *path, struct stat *buf)
{
	return __xstat(GS_STAT_VER, path, buf);
}

static inline int gs_compat_lstat(const char *path, struct stat *buf)
{
	return __lxstat(GS_STAT_VER, path, buf);
}

/*
 * strerrordesc_np's table, as every glibc since 2.12 still exports it for
 * old programs: the same untranslated messages, NULL past its end (codes
 * newer than 2.12's, which gpusched does not return).
 */
extern const char *const sys_errlist[];
extern const int sys_nerr;
GS_GLIBC_SYMVER(sys_errlist, GLIBC_2.12)
GS_GLIBC_SYMVER(sys_nerr, GLIBC_2.12)

static inline const char *gs_compat_strerrordesc_np(int err)
{
	return err >= 0 && err < sys_nerr ? sys_errlist[err] : NULL;
}

#define fstat(fd, buf) gs_compat_fstat(fd, buf)
#define stat(path, buf) gs_compat_stat(path, buf)
#define lstat(path, buf) gs_compat_lstat(path, buf)
#define strerrordesc_np(err) gs_compat_strerrordesc_np(err)

#endif /* __x86_64__ */
#endif /* GS_GLIBC_COMPAT_H */
