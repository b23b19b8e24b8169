// SPDX-License-Identifier: GPL-2.0
/*
 * An interposer of clock_gettime() that counts, per thread, the calls made
 * from libgpusched's code (gs_lib_clock_reads()). The CUDA test double asks
 * (cuda_double.h: launches after the program's own waits that found the
 * library had read the clock since: 52-launch-clock.t).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static __thread unsigned long lib_reads;
static _Atomic uintptr_t lib_lo, lib_hi;

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libgpusched"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + p->p_vaddr;

		if (p->p_type != PT_LOAD)
			continue;
		if (a < lo)
			lo = a;
		if (a + p->p_memsz > hi)
			hi = a + p->p_memsz;
	}
	atomic_store(&lib_hi, hi);
	atomic_store(&lib_lo, lo);
	return 1;
}

/* Does @addr lie in libgpusched's code? */
static int lib_caller(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;

	if (!atomic_load(&lib_lo))
		dl_iterate_phdr(find_lib, NULL);
	return a >= atomic_load(&lib_lo) && a < atomic_load(&lib_hi);
}

__attribute__((visibility("default"))) unsigned long gs_lib_clock_reads(void)
{
	return lib_reads;
}

__attribute__((visibility("default"))) int clock_gettime(clockid_t id,
							 struct timespec *ts)
{
	static int (*next)(clockid_t, struct timespec *);

	if (!next)
		next = (int (*)(clockid_t, struct timespec *))
			dlsym(RTLD_NEXT, "clock_gettime");
	if (lib_caller(__builtin_return_address(0)))
		lib_reads++;
	return next(id, ts);
}
