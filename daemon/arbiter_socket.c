// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd --arbiter: the listening socket's file. The path is claimed
 * from an arbiter that died, never from one that answers, and the file is
 * removed at exit only if it is still ours.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "arbiter_int.h"

#if !defined(SO_PASSRIGHTS) && !defined(__alpha__) && !defined(__hppa__) && \
	!defined(__mips__) && !defined(__sparc__)
#define SO_PASSRIGHTS	83	/* asm-generic/socket.h's, Linux 6.16 */
#endif

/*
 * A socket file with no listener is left over from an arbiter that died:
 * replace it. One that answers belongs to a live arbiter: refuse.
 */
static int claim_path(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat sb;
	int fd, err;

	if (lstat(path, &sb)) {
		if (errno == ENOENT)
			return 0;
		gs_log(LOG_ERR, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		gs_log(LOG_ERR, "%s exists and is not a socket; not touching it", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		gs_log(LOG_ERR, "socket: %s", strerror(errno));
		return -1;
	}
	err = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	close(fd);
	if (!err) {
		gs_log(LOG_ERR, "another arbiter is listening on %s; exiting", path);
		return -1;
	}
	if (err != ECONNREFUSED) {
		gs_log(LOG_ERR, "%s: %s; not replacing it", path, strerror(err));
		return -1;
	}
	if (unlink(path) && errno != ENOENT) {
		gs_log(LOG_ERR, "cannot remove the stale socket %s: %s", path, strerror(errno));
		return -1;
	}
	gs_log(LOG_NOTICE, "removed the stale socket %s", path);
	return 0;
}

static int make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	/* Like /dev: anyone may reach the socket, only root may replace it. */
	if (mkdir(dir, 0755) && errno != EEXIST) {
		gs_log(LOG_ERR, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Nobody is meant to send us descriptors: with SO_PASSRIGHTS off, a
 * message that carries some is refused at sendmsg() (EPERM) on the
 * connections that accept() gives. Older kernels do not know the option
 * (ENOPROTOOPT); arbiter_closer.c says what keeps us safe there.
 */
static void refuse_rights(int fd)
{
#ifdef SO_PASSRIGHTS
	int off = 0;

	if (!setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off)))
		A.rights_refused = true;
	else if (errno != ENOPROTOOPT)
		gs_log(LOG_WARNING, "SO_PASSRIGHTS: %s", strerror(errno));
#else
	(void)fd;
#endif
}

int listen_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat sb;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		gs_log(LOG_ERR, "socket path %s is too long (at most %zu bytes)", path,
		       sizeof(sa.sun_path) - 1);
		return -1;
	}
	if (make_dir(path) || claim_path(path))
		return -1;
	strcpy(sa.sun_path, path);
	A.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (A.lfd < 0) {
		gs_log(LOG_ERR, "socket: %s", strerror(errno));
		return -1;
	}
	refuse_rights(A.lfd);
	/*
	 * Any local user may connect, as anyone may open /dev/gpusched: the
	 * socket is made 0666 by bind() itself. A chmod() after it would
	 * follow a link another user put in its place, in a directory others
	 * can write.
	 */
	old = umask(0111);
	if (bind(A.lfd, (struct sockaddr *)&sa, sizeof(sa))) {
		umask(old);
		gs_log(LOG_ERR, "bind %s: %s", path, strerror(errno));
		return -1;
	}
	umask(old);
	if (lstat(path, &sb) || listen(A.lfd, 128)) {
		gs_log(LOG_ERR, "%s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	A.sock_dev = sb.st_dev;
	A.sock_ino = sb.st_ino;
	return 0;
}

/* Remove the socket file if it is still the one we made. */
void unlink_ours(const char *path)
{
	struct stat sb;

	if (!lstat(path, &sb) && sb.st_dev == A.sock_dev && sb.st_ino == A.sock_ino)
		unlink(path);
}
