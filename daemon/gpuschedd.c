// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd: the gpusched policy daemon. Without --arbiter it applies a
 * policy file to gpusched.ko's clients over generic netlink (nlmode.c);
 * with --arbiter it serves the token itself from user space, where the
 * module cannot load, and applies the same policy file (arbiter.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/gpusched.h>

#include <gpusched/arbiter_wire.h>

#include "arbiter.h"
#include "knobs.h"
#include "nlmode.h"
#include "policyfile.h"

/*
 * Each knob of the policy's table is an option of its name with dashes:
 * timeslice_us is --timeslice-us.
 */
#define O_KNOB	512
static char knob_opts[GS_POL_NR_KNOBS][32];

static void knob_opts_init(void)
{
	for (int k = 0; k < GS_POL_NR_KNOBS; k++) {
		char *p = knob_opts[k];

		snprintf(p, sizeof(knob_opts[k]), "%s", gs_pol_knobs[k].name);
		for (; *p; p++)
			if (*p == '_')
				*p = '-';
	}
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: gpuschedd --arbiter [OPTION]...\n"
"Serve one fair-share token per GPU to libgpusched clients on a Unix socket,\n"
"for hosts that cannot load gpusched.ko, applying the rules and GPU knobs of\n"
"a policy file (gpusched.conf(5)) as the policy daemon does for the module.\n"
"Runs in the foreground, logs to standard error, re-reads the policy file on\n"
"SIGHUP (a file with an error leaves the policy in force), exits cleanly on\n"
"SIGTERM or SIGINT. Without --arbiter, see gpuschedd --help.\n"
"\n"
"  --arbiter              run the user-space arbiter\n"
"  -c, --config FILE      policy file (default %s; may be absent)\n"
"  --socket PATH          listen here (default %s)\n"
"  -m, --metrics ADDR     serve Prometheus metrics on ADDR: 127.0.0.1:PORT,\n"
"                         [::1]:PORT or localhost:PORT\n",
		GS_POLICY_DEFAULT_PATH, GPUSCHED_ARBITER_SOCKET);
	for (int k = 0; k < GS_POL_NR_KNOBS; k++) {
		const struct gs_pol_knob *kn = &gs_pol_knobs[k];
		char opt[40];

		snprintf(opt, sizeof(opt), "%.31s N", knob_opts[k]);
		fprintf(f, "  --%-20s %s\n%25s(%u..%u; default %u)\n", opt,
			kn->doc, "", kn->min, kn->max, kn->def);
	}
	fprintf(f,
"  --max-gpus N           tokens to create at most (default 16)\n"
"  --max-clients-per-uid N\n"
"                         clients one user may attach to one GPU (0: no\n"
"                         limit; root is exempt; default %u); a user's\n"
"                         connections: 2 x this x --max-gpus, at most half\n"
"                         the descriptors\n"
"  --rt-priority N        run at SCHED_FIFO priority N (1-99; default 0: do\n"
"                         not): hand-overs then wait for no other task's\n"
"                         time on the CPU (needs CAP_SYS_NICE)\n"
"  --poll-us N            after a request, poll for the next for N us (at\n"
"                         most 1 s) rather than sleep: no wake-up on the\n"
"                         hand-over's path, for a CPU kept busy meanwhile\n"
"  -v, --verbose          log every attach and detach\n"
"  -h, --help             show this help\n",
		GS_MAX_CLIENTS_PER_UID);
}

static int parse_u64(const char *opt, const char *s, unsigned long long max,
		     unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || *end || end == s || s[0] == '-' || *out > max) {
		fprintf(stderr, "gpuschedd: %s: \"%s\" is not a number from 0 to %llu\n",
			opt, s, max);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_SOCKET = 256, O_MAXGPUS, O_MAXUID, O_RTPRIO, O_POLL };
	static const struct option fixed[] = {
		{ "arbiter", no_argument, NULL, 'a' },
		{ "config", required_argument, NULL, 'c' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "max-gpus", required_argument, NULL, O_MAXGPUS },
		{ "max-clients-per-uid", required_argument, NULL, O_MAXUID },
		{ "rt-priority", required_argument, NULL, O_RTPRIO },
		{ "poll-us", required_argument, NULL, O_POLL },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option opts[sizeof(fixed) / sizeof(fixed[0]) + GS_POL_NR_KNOBS + 1];
	struct arb_options o = {
		.socket_path = GPUSCHED_ARBITER_SOCKET,
		.config = GS_POLICY_DEFAULT_PATH,
		.max_gpus = 16,
		.max_clients_per_uid = GS_MAX_CLIENTS_PER_UID,
	};
	size_t n = sizeof(fixed) / sizeof(fixed[0]);
	unsigned long long v;
	int c;

	/* Without --arbiter: the policy daemon of gpusched.ko (nlmode.c). */
	if (gs_nlmode_wanted(argc, argv))
		return gs_nlmode_main(argc, argv);
	gs_pol_default_params(&o.params);
	knob_opts_init();
	memcpy(opts, fixed, sizeof(fixed));
	for (int k = 0; k < GS_POL_NR_KNOBS; k++)
		opts[n++] = (struct option){ knob_opts[k], required_argument, NULL,
					     O_KNOB + k };
	opts[n] = (struct option){ 0 };
	while ((c = getopt_long(argc, argv, "c:m:vh", opts, NULL)) != -1) {
		if (c >= O_KNOB && c < O_KNOB + GS_POL_NR_KNOBS) {
			const struct gs_pol_knob *kn = &gs_pol_knobs[c - O_KNOB];
			const char *why;
			uint32_t val;

			if (gs_parse_u32(optarg, kn->min, kn->max, &val, &why)) {
				fprintf(stderr, "gpuschedd: --%s \"%s\": %s (%u..%u)\n",
					knob_opts[c - O_KNOB], optarg, why, kn->min,
					kn->max);
				return 2;
			}
			gs_pol_knob_set(&o.params, kn, val);
			continue;
		}
		switch (c) {
		case 'a':	/* how we got here: gs_nlmode_wanted() said no */
			break;
		case 'c':
			o.config = optarg;
			o.config_given = true;
			break;
		case 'm':
			o.metrics_addr = optarg;
			break;
		case O_SOCKET:
			o.socket_path = optarg;
			break;
		case O_MAXGPUS:
			if (parse_u64("--max-gpus", optarg, 1024, &v) || !v) {
				if (!v)
					fprintf(stderr, "gpuschedd: --max-gpus must be at least 1\n");
				return 2;
			}
			o.max_gpus = (unsigned int)v;
			break;
		case O_MAXUID:
			if (parse_u64("--max-clients-per-uid", optarg, UINT_MAX, &v))
				return 2;
			o.max_clients_per_uid = (unsigned int)v;
			break;
		case O_POLL:
			if (parse_u64("--poll-us", optarg, 1000000, &v))
				return 2;
			o.poll_ns = v * 1000;
			break;
		case O_RTPRIO:
			if (parse_u64("--rt-priority", optarg, 99, &v))
				return 2;
			o.rt_priority = (unsigned int)v;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpuschedd: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	return arbiter_run(&o);
}
