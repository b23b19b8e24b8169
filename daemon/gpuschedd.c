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
#include "nlmode.h"
#include "policyfile.h"

static void usage(FILE *f)
{
	struct gs_pol_params d;

	gs_pol_default_params(&d);
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
"                         [::1]:PORT or localhost:PORT\n"
"  --timeslice-us N       slice a holder keeps the token while others wait\n"
"  --grace-us N           time a holder has to release once asked\n"
"  --min-grant-us N       no cap or budget cuts a grant shorter\n"
"  --starve-us N          a batch client waiting this long is served next\n"
"  --window-us N          burst allowed by caps and the latency budget\n"
"  --latency-pct N        token time the latency class may take first (0-90)\n"
"  --latency-queue-us N   GPU time a holder keeps queued while a latency-class\n"
"                         client is attached\n"
"  --handover-us N        work a yielding holder may leave running\n"
"  --mem-default-pct N    device memory limit of clients without their own, in\n"
"                         percent of what each reported (0-100; default 0: none)\n"
"  --mem-reserve-mb N     device memory no client's limit may claim, MiB\n"
"  --max-gpus N           tokens to create at most (default 16)\n"
"  --rt-priority N        run at SCHED_FIFO priority N (1-99; default 0: do\n"
"                         not): hand-overs then wait for no other task's\n"
"                         time on the CPU (needs CAP_SYS_NICE)\n"
"  --poll-us N            after a request, poll for the next for N us (at\n"
"                         most 1 s) rather than sleep: no wake-up on the\n"
"                         hand-over's path, for a CPU kept busy meanwhile\n"
"  -v, --verbose          log every attach and detach\n"
"  -h, --help             show this help\n"
"\n"
"Defaults of the policy: slice %llu us, grace %llu us, min grant %llu us,\n"
"starve %llu us, window %llu us, latency %u%%, latency queue %llu us,\n"
"hand-over %llu us.\n",
		GS_POLICY_DEFAULT_PATH, GPUSCHED_ARBITER_SOCKET,
		(unsigned long long)d.slice_ns / 1000,
		(unsigned long long)d.grace_ns / 1000,
		(unsigned long long)d.min_grant_ns / 1000,
		(unsigned long long)d.starve_ns / 1000,
		(unsigned long long)d.window_ns / 1000, (unsigned int)d.latency_pct,
		(unsigned long long)d.latency_queue_ns / 1000,
		(unsigned long long)d.handover_ns / 1000);
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

/* "--timeslice-us" for a message: the long option with value @val. */
static const char *opt_name(const struct option *opts, int val)
{
	static char buf[64];

	for (; opts->name; opts++)
		if (opts->val == val)
			break;
	snprintf(buf, sizeof(buf), "--%s", opts->name ? opts->name : "?");
	return buf;
}

int main(int argc, char **argv)
{
	enum { O_SOCKET = 256, O_SLICE, O_GRACE, O_MINGRANT, O_STARVE,
	       O_WINDOW, O_LATENCY, O_LATQUEUE, O_HANDOVER, O_MAXGPUS, O_RTPRIO, O_POLL,
	       O_MEMPCT, O_MEMRESERVE };
	static const struct option opts[] = {
		{ "arbiter", no_argument, NULL, 'a' },
		{ "config", required_argument, NULL, 'c' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "timeslice-us", required_argument, NULL, O_SLICE },
		{ "grace-us", required_argument, NULL, O_GRACE },
		{ "min-grant-us", required_argument, NULL, O_MINGRANT },
		{ "starve-us", required_argument, NULL, O_STARVE },
		{ "window-us", required_argument, NULL, O_WINDOW },
		{ "latency-pct", required_argument, NULL, O_LATENCY },
		{ "latency-queue-us", required_argument, NULL, O_LATQUEUE },
		{ "handover-us", required_argument, NULL, O_HANDOVER },
		{ "mem-default-pct", required_argument, NULL, O_MEMPCT },
		{ "mem-reserve-mb", required_argument, NULL, O_MEMRESERVE },
		{ "max-gpus", required_argument, NULL, O_MAXGPUS },
		{ "rt-priority", required_argument, NULL, O_RTPRIO },
		{ "poll-us", required_argument, NULL, O_POLL },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct arb_options o = {
		.socket_path = GPUSCHED_ARBITER_SOCKET,
		.config = GS_POLICY_DEFAULT_PATH,
		.max_gpus = 16,
	};
	unsigned long long v;
	int c, err;

	/* Without --arbiter: the policy daemon of gpusched.ko (nlmode.c). */
	if (gs_nlmode_wanted(argc, argv))
		return gs_nlmode_main(argc, argv);
	gs_pol_default_params(&o.params);
	while ((c = getopt_long(argc, argv, "c:m:vh", opts, NULL)) != -1) {
		const unsigned long long us_max = ULLONG_MAX / 1000;

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
		case O_SLICE: case O_GRACE: case O_MINGRANT: case O_STARVE:
		case O_WINDOW: case O_LATQUEUE: case O_HANDOVER:
			if (parse_u64(opt_name(opts, c), optarg, us_max, &v))
				return 2;
			v *= 1000;
			if (c == O_SLICE)
				o.params.slice_ns = v;
			else if (c == O_GRACE)
				o.params.grace_ns = v;
			else if (c == O_MINGRANT)
				o.params.min_grant_ns = v;
			else if (c == O_STARVE)
				o.params.starve_ns = v;
			else if (c == O_LATQUEUE)
				o.params.latency_queue_ns = v;
			else if (c == O_HANDOVER)
				o.params.handover_ns = v;
			else
				o.params.window_ns = v;
			break;
		case O_LATENCY:
			if (parse_u64("--latency-pct", optarg, 100, &v))
				return 2;
			o.params.latency_pct = (unsigned int)v;
			break;
		case O_MEMPCT:
			if (parse_u64("--mem-default-pct", optarg, 100, &v))
				return 2;
			o.params.mem_default_pct = (unsigned int)v;
			break;
		case O_MEMRESERVE:
			if (parse_u64("--mem-reserve-mb", optarg, 1U << 24, &v))
				return 2;
			o.params.mem_reserve = v << 20;
			break;
		case O_MAXGPUS:
			if (parse_u64("--max-gpus", optarg, 1024, &v) || !v) {
				if (!v)
					fprintf(stderr, "gpuschedd: --max-gpus must be at least 1\n");
				return 2;
			}
			o.max_gpus = (unsigned int)v;
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
	err = gs_pol_check_params(&o.params);
	if (err) {
		fprintf(stderr,
			"gpuschedd: policy parameters out of range (slice 100 us..10 s, grace 1 ms..10 s, min grant 10 us..1 s, starve 1 ms..60 s, window 1 ms..10 s, latency 0..90%%)\n");
		return 2;
	}
	return arbiter_run(&o);
}
