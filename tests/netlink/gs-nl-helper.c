// SPDX-License-Identifier: GPL-2.0
/*
 * gs-nl-helper: what the shell tests of the netlink family cannot do in
 * shell.
 *
 *   gs-nl-helper hold GPU
 *	Attach a client to the test GPU GPU (a number, as in gs_uuid()),
 *	print "ready PID GPU_INDEX CLIENT_ID UUID" and hold it until
 *	standard input closes or a signal ends the process.
 *   gs-nl-helper blip GPU
 *	Attach a client to GPU and close it at once; print its pid.
 *   gs-nl-helper runas UID GID COMMAND [ARG]...
 *	Run COMMAND as UID:GID, without supplementary groups or
 *	capabilities.
 */
#include "nl_test.h"

static int hold(unsigned int gpu, bool wait)
{
	__u8 uuid[GPUSCHED_UUID_LEN];
	struct nlt t;
	int fd, index;
	__u64 id = 0;
	char c;

	fd = gs_open_attached(gpu);
	if (fd < 0) {
		fprintf(stderr, "gs-nl-helper: attach: %s\n", strerror(-fd));
		return 1;
	}
	if (!wait) {
		printf("%d\n", getpid());
		close(fd);
		return 0;
	}
	index = gs_gpu_index(fd);
	if (!nlt_open(&t)) {
		id = nlt_client_id(&t, fd);
		nlt_close(&t);
	}
	gs_uuid(uuid, gpu);
	printf("ready %d %d %llu %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
	       getpid(), index, (unsigned long long)id, uuid[0], uuid[1],
	       uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8],
	       uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14],
	       uuid[15]);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	/* Stdin at EOF from the start (/dev/null): wait for a signal. */
	pause();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return hold(atoi(argv[2]), true);
	if (argc == 3 && !strcmp(argv[1], "blip"))
		return hold(atoi(argv[2]), false);
	if (argc >= 5 && !strcmp(argv[1], "runas")) {
		if (nlt_drop_privileges(atoi(argv[2]), atoi(argv[3]))) {
			perror("gs-nl-helper: dropping privileges");
			return 126;
		}
		execvp(argv[4], argv + 4);
		perror(argv[4]);
		return 127;
	}
	fprintf(stderr, "usage: gs-nl-helper hold GPU | blip GPU | runas UID GID COMMAND...\n");
	return 2;
}
