// SPDX-License-Identifier: GPL-2.0
/*
 * token-demo [-s SECONDS] [-t TIMESLICE_US] WEIGHT...
 *
 * Starts one busy client per WEIGHT on a token of /dev/gpusched and prints
 * the token time each received next to the share its weight entitles it to.
 * A busy client behaves as libgpusched does for a program that always has
 * work: it holds the token until the status page asks it to yield, then
 * yields (release and queue again in one call). No GPU is needed: this
 * shows the module's scheduling alone, for example in the test VM.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/gpusched.h>

#define MAX_CLIENTS 16

static const unsigned char demo_uuid[GPUSCHED_UUID_LEN] = {
	0xde, 0x70, 0x6f, 0x6b, 0x65, 0x6e, 0x2d, 0x64,
	0x65, 0x6d, 0x6f, 0x2d, 0x67, 0x70, 0x75, 0x30,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "token-demo: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One busy client; writes its accounting to @out_fd when time is up. */
static void client(unsigned int weight, double seconds, int out_fd)
{
	struct gpusched_attach at = { 0 };
	struct gpusched_params p = {
		.mask = GPUSCHED_PARAM_WEIGHT, .weight = weight,
	};
	struct gpusched_acquire acq = { 0 };
	struct gpusched_release rel = { 0 };
	struct gpusched_client_info info;
	const struct gpusched_status *st;
	double end;
	int fd;

	fd = open(GPUSCHED_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open " GPUSCHED_DEVICE_PATH);
	memcpy(at.uuid, demo_uuid, sizeof(at.uuid));
	if (ioctl(fd, GPUSCHED_IOC_ATTACH, &at))
		die("attach");
	/* Raising a weight above the default needs CAP_SYS_NICE. */
	if (ioctl(fd, GPUSCHED_IOC_SET_PARAMS, &p))
		die("set weight");
	st = mmap(NULL, GPUSCHED_STATUS_SIZE, PROT_READ, MAP_SHARED, fd,
		  GPUSCHED_STATUS_OFFSET);
	if (st == MAP_FAILED)
		die("mmap status page");

	end = now_s() + seconds;
	if (ioctl(fd, GPUSCHED_IOC_ACQUIRE, &acq))
		die("acquire");
	while (now_s() < end) {
		/* "Launch" until asked to yield: a load, no system call. */
		if (!(__atomic_load_n(&st->flags, __ATOMIC_ACQUIRE) &
		      GPUSCHED_ST_YIELD))
			continue;
		if (ioctl(fd, GPUSCHED_IOC_YIELD, &acq) && errno != EAGAIN)
			die("yield");
	}
	if (ioctl(fd, GPUSCHED_IOC_RELEASE, &rel) && errno != EPERM)
		die("release");
	if (ioctl(fd, GPUSCHED_IOC_GET_INFO, &info))
		die("info");
	if (write(out_fd, &info, sizeof(info)) != sizeof(info))
		die("write result");
	exit(0);
}

static int set_timeslice(unsigned int index, unsigned int us)
{
	char path[96];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/kernel/gpusched/gpu%u/timeslice_us",
		 index);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = fprintf(f, "%u\n", us) > 0;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: token-demo [-s SECONDS] [-t TIMESLICE_US] WEIGHT...\n"
		"Busy clients with the given weights share one token of\n"
		GPUSCHED_DEVICE_PATH "; prints the token time each received.\n");
}

int main(int argc, char **argv)
{
	struct gpusched_client_info info[MAX_CLIENTS];
	unsigned int weight[MAX_CLIENTS], n, i, wsum = 0, timeslice = 0;
	double seconds = 3, held_sum = 0, max_err = 0;
	int pipes[MAX_CLIENTS][2], opt, failed = 0;
	pid_t pid[MAX_CLIENTS];

	while ((opt = getopt(argc, argv, "hs:t:")) != -1) {
		switch (opt) {
		case 's':
			seconds = atof(optarg);
			break;
		case 't':
			timeslice = strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	n = argc - optind;
	if (n < 1 || n > MAX_CLIENTS || seconds <= 0) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < n; i++) {
		weight[i] = strtoul(argv[optind + i], NULL, 10);
		if (weight[i] < GPUSCHED_WEIGHT_MIN ||
		    weight[i] > GPUSCHED_WEIGHT_MAX) {
			fprintf(stderr, "token-demo: weight must be %d..%d\n",
				GPUSCHED_WEIGHT_MIN, GPUSCHED_WEIGHT_MAX);
			return 2;
		}
		wsum += weight[i];
	}

	for (i = 0; i < n; i++) {
		if (pipe(pipes[i]))
			die("pipe");
		pid[i] = fork();
		if (pid[i] < 0)
			die("fork");
		if (pid[i] == 0)
			client(weight[i], seconds, pipes[i][1]);
		close(pipes[i][1]);
		/* The token exists once the first client attached. */
		if (i == 0 && timeslice) {
			usleep(100000);
			if (set_timeslice(0, timeslice))
				fprintf(stderr, "token-demo: cannot set timeslice_us\n");
		}
	}
	for (i = 0; i < n; i++) {
		int status;

		if (read(pipes[i][0], &info[i], sizeof(info[i])) != sizeof(info[i]))
			failed = 1;
		waitpid(pid[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	}
	if (failed) {
		fprintf(stderr, "token-demo: a client failed\n");
		return 1;
	}

	for (i = 0; i < n; i++)
		held_sum += info[i].held_ns;
	printf("%-7s %7s %9s %9s %7s %10s %9s\n", "client", "weight",
	       "entitled", "received", "grants", "mean grant", "overruns");
	for (i = 0; i < n; i++) {
		double want = 100.0 * weight[i] / wsum;
		double got = 100.0 * info[i].held_ns / held_sum;

		if (got - want > max_err || want - got > max_err)
			max_err = got > want ? got - want : want - got;
		printf("%-7u %7u %8.1f%% %8.1f%% %7llu %8.2fms %9llu\n", i + 1,
		       weight[i], want, got, (unsigned long long)info[i].grants,
		       info[i].grants ? info[i].held_ns / 1e6 / info[i].grants : 0,
		       (unsigned long long)info[i].overruns);
	}
	printf("largest difference from the weights: %.1f points over %.1f s\n",
	       max_err, seconds);
	return 0;
}
