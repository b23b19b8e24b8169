/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The user-space arbiter's wire format (gpuschedd --arbiter), shared by the
 * daemon and libgpusched. Not kernel ABI, so not in the uapi header: the
 * arbiter serves the ioctls and structs of <linux/gpusched.h> over a
 * SOCK_SEQPACKET Unix socket, one message each way per call.
 *
 * Each request is one struct gpusched_wire_req carrying an ioctl number
 * and its struct (_IOC_SIZE(cmd) bytes of @arg); each reply one struct
 * gpusched_wire_rep with 0 or a negative errno and, for _IOR commands, the
 * output struct. The reply to ATTACH carries a memfd holding the status
 * page (SCM_RIGHTS), sealed against writable mappings. A closed connection
 * is a closed file. Requests on one connection are answered in order.
 */
#ifndef _GPUSCHED_ARBITER_WIRE_H
#define _GPUSCHED_ARBITER_WIRE_H

#include <linux/types.h>
#include <linux/gpusched.h>

#define GPUSCHED_ARBITER_SOCKET	"/run/gpusched/arbiter.sock"

#define GPUSCHED_WIRE_MAGIC	0x47505553U	/* "GPUS" */
#define GPUSCHED_WIRE_MAX	256	/* room for any ioctl struct */

struct gpusched_wire_req {
	__u32 magic;			/* GPUSCHED_WIRE_MAGIC */
	__u32 cmd;			/* a GPUSCHED_IOC_* number */
	__u8 arg[GPUSCHED_WIRE_MAX];	/* the ioctl's struct, _IOC_SIZE(cmd) bytes */
};

struct gpusched_wire_rep {
	__u32 magic;
	__s32 ret;			/* 0 or -errno */
	__u8 arg[GPUSCHED_WIRE_MAX];	/* output struct for _IOR commands */
};

#endif /* _GPUSCHED_ARBITER_WIRE_H */
