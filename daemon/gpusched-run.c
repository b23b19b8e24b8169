// SPDX-License-Identifier: GPL-2.0
/*
 * gpusched-run: run a program under libgpusched (LD_PRELOAD), with its
 * weight, class, cap, memory limit and label in the environment the
 * library reads.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memsize.h"

#ifndef GPUSCHED_LIBRARY
#define GPUSCHED_LIBRARY "/usr/local/lib/libgpusched.so.1"
#endif

static void usage(FILE *f)
{
	fprintf(f,
"Usage: gpusched-run [OPTION]... [--] COMMAND [ARG]...\n"
"Run COMMAND with libgpusched preloaded, so that its CUDA work takes turns\n"
"on each GPU with the other scheduled processes.\n"
"\n"
"  -w, --weight W        share relative to others, 1-10000 (default 100)\n"
"  -c, --class C         latency, normal (default) or batch\n"
"  -p, --cap PCT         at most PCT%% of the GPU, 1-100 (0: no cap)\n"
"  -m, --mem-limit SIZE  at most SIZE of device memory per GPU: bytes with an\n"
"                        optional K, M, G or T suffix (powers of 1024), or\n"
"                        N%% of the GPU's memory (GPUSCHED_MEM_LIMIT)\n"
"  -l, --label L         a label for the daemon's rules (GPUSCHED_LABEL)\n"
"  -h, --help            show this help\n"
"\n"
"Without privilege (CAP_SYS_NICE; root for the arbiter) a process may only\n"
"lower its share: a weight up to 100, class normal or batch, any cap, and\n"
"a memory limit below the one the policy set, if any.\n"
"The library is %s, or $GPUSCHED_LIBRARY. Other settings come from the\n"
"environment: see libgpusched(7).\n", GPUSCHED_LIBRARY);
}

static int check_number(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "gpusched-run: %s \"%s\": expected a number from %ld to %ld\n",
			opt, s, lo, hi);
		return -1;
	}
	return 0;
}

static int set(const char *name, const char *value)
{
	if (setenv(name, value, 1)) {
		perror("gpusched-run: setenv");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "weight", required_argument, NULL, 'w' },
		{ "class", required_argument, NULL, 'c' },
		{ "cap", required_argument, NULL, 'p' },
		{ "mem-limit", required_argument, NULL, 'm' },
		{ "label", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *lib = getenv("GPUSCHED_LIBRARY");
	const char *old;
	char *preload;
	int c;

	if (!lib || !*lib)
		lib = GPUSCHED_LIBRARY;
	/* '+': stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+w:c:p:m:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (check_number("--weight", optarg, 1, 10000) ||
			    set("GPUSCHED_WEIGHT", optarg))
				return 125;
			break;
		case 'c':
			if (strcmp(optarg, "latency") && strcmp(optarg, "normal") &&
			    strcmp(optarg, "batch")) {
				fprintf(stderr, "gpusched-run: --class \"%s\": expected latency, normal or batch\n",
					optarg);
				return 125;
			}
			if (set("GPUSCHED_CLASS", optarg))
				return 125;
			break;
		case 'p':
			if (check_number("--cap", optarg, 0, 100) ||
			    set("GPUSCHED_CAP", optarg))
				return 125;
			break;
		case 'm': {
			unsigned int pct;
			uint64_t bytes;

			if (gs_mem_size_parse(optarg, &bytes, &pct)) {
				fprintf(stderr, "gpusched-run: --mem-limit \"%s\": expected bytes with an optional K, M, G or T suffix (e.g. 20G), or a percentage from 1%% to 100%%\n",
					optarg);
				return 125;
			}
			if (set("GPUSCHED_MEM_LIMIT", optarg))
				return 125;
			break;
		}
		case 'l':
			if (!*optarg || strlen(optarg) > 63 || strpbrk(optarg, " \t\n")) {
				fprintf(stderr, "gpusched-run: --label: 1 to 63 characters without spaces\n");
				return 125;
			}
			if (set("GPUSCHED_LABEL", optarg))
				return 125;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 125;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "gpusched-run: no command given\n");
		usage(stderr);
		return 125;
	}
	if (access(lib, R_OK)) {
		fprintf(stderr, "gpusched-run: %s: %s (set GPUSCHED_LIBRARY?)\n",
			lib, strerror(errno));
		return 125;
	}

	/* Keep what is already preloaded, after us. */
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		if (asprintf(&preload, "%s:%s", lib, old) < 0) {
			perror("gpusched-run");
			return 125;
		}
	} else {
		preload = strdup(lib);
	}
	if (!preload || set("LD_PRELOAD", preload))
		return 125;
	free(preload);

	execvp(argv[optind], argv + optind);
	fprintf(stderr, "gpusched-run: %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
