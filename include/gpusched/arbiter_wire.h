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
 *
 * The memory channel. A blocking ACQUIRE gets no reply until it is granted,
 * and requests on one connection are answered in order, so a second
 * connection carries a client's memory calls: the reply to ATTACH carries a
 * struct gpusched_wire_attached (the client's id and a random cookie), and
 * a new connection whose first request is GPUSCHED_WIRE_BIND with them
 * becomes that client's memory channel. It takes MEM_RESERVE, MEM_RETURN
 * and GET_INFO for the client (anything else: EOPNOTSUPP), which the
 * arbiter answers at once, whatever the client's own connection waits for.
 * BIND is refused with EACCES unless the id, the cookie and the connecting
 * process (its pid and uid, SO_PEERCRED) are the client's; with EBUSY if
 * the client has a channel; with EISCONN on a connection that is already
 * a client, a channel or gpuschedctl's. Closing the client closes its
 * channel; closing the channel leaves the client as it is.
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

/* The reply to ATTACH: what BIND needs. An all-zero cookie: no channel. */
struct gpusched_wire_attached {
	__u64 id;			/* the client's id, as gpuschedctl lists it */
	__u8 cookie[16];
};

struct gpusched_wire_bind {
	__u64 id;
	__u8 cookie[16];
	__u64 reserved;			/* must be 0 */
};

/* Wire only, never an ioctl of the module (0xE7's numbers stop at 0x07). */
#define GPUSCHED_WIRE_BIND	_IOW(GPUSCHED_IOC_MAGIC, 0x80, struct gpusched_wire_bind)

#endif /* _GPUSCHED_ARBITER_WIRE_H */
