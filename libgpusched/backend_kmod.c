// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Token service backend: the gpusched.ko character device. Every open
 * file is one client; the status page is the module's read-only page.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static int kmod_call(struct gpusched *g, unsigned int cmd, void *arg)
{
	return ioctl(g->fd, cmd, arg) ? -errno : 0;
}

static int kmod_open(struct gpusched *g, const unsigned char uuid[16])
{
	struct gpusched_attach at = { 0 };
	void *p;
	int err;

	g->fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (g->fd < 0)
		return -errno;
	memcpy(at.uuid, uuid, sizeof(at.uuid));
	at.mem_total = g->mem_total;
	err = kmod_call(g, GPUSCHED_IOC_ATTACH, &at);
	if (err)
		goto out_close;
	/* The module marks the mapping VM_DONTCOPY: a forked child has no
	 * page here and must attach its own client.
	 */
	p = mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ, MAP_SHARED, g->fd,
		 GPUSCHED_STATUS_OFFSET);
	if (p == MAP_FAILED) {
		err = -errno;
		goto out_close;
	}
	g->st = p;
	return 0;

out_close:
	close(g->fd);
	g->fd = -1;
	return err;
}

static bool kmod_alive(struct gpusched *g)
{
	(void)g;
	return true;	/* the module cannot go away while a file is open */
}

void gs_backend_close(struct gpusched *g, bool forked)
{
	if (!forked && g->st)
		munmap((void *)g->st, GPUSCHED_STATUS_SIZE);
	g->st = NULL;
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
}

const struct gs_backend gs_backend_kmod = {
	.name = "kmod",
	.open = kmod_open,
	.call = kmod_call,
	.alive = kmod_alive,
	.close = gs_backend_close,
};
