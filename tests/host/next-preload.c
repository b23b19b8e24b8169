// SPDX-License-Identifier: GPL-2.0
/*
 * A second interposer, preloaded after libgpusched, that finds the real
 * getuid() with dlsym(RTLD_NEXT): if libgpusched's dlsym made itself the
 * caller, RTLD_NEXT would find this very function and it would recurse.
 */
#include <dlfcn.h>
#include <unistd.h>

__attribute__((visibility("default"))) uid_t getuid(void)
{
	static uid_t (*next)(void);

	if (!next)
		next = (uid_t (*)(void))dlsym(RTLD_NEXT, "getuid");
	if (!next || next == getuid)
		_exit(86);	/* the bug this catches */
	return next();
}
