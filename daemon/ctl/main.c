// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedctl: show and change gpusched's GPUs and clients: those of
 * gpusched.ko over the generic netlink family "gpusched", or, where the
 * module is not loaded, those of the user-space arbiter (gpuschedd
 * --arbiter) over its control protocol (gpusched_ctl.h). Same commands,
 * same output. Reads need no privilege; changes and the event stream need
 * CAP_NET_ADMIN (the module) or uid 0 (the arbiter). See gpuschedctl(8).
 *
 * Exit status: 0 success, 1 the request failed, 2 usage error, 3 gpusched
 * is not there (neither the module nor an arbiter).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpusched/arbiter_wire.h>
#include "gpuschedctl.h"

bool json;
volatile sig_atomic_t stop;
enum backend backend = BE_AUTO;
const char *arb_path = GPUSCHED_ARBITER_SOCKET;

static void usage(FILE *f)
{
	fprintf(f,
"Usage: gpuschedctl [--json] COMMAND [ARG]...\n"
"Show and change the GPUs and clients of gpusched.ko or gpuschedd --arbiter.\n"
"\n"
"  status                    GPUs: their knobs, state and totals\n"
"  clients [-i SEC] [-g GPU] clients, with each one's share of its GPU over\n"
"                            an interval of SEC seconds (default 1; 0: none)\n"
"  top [-i SEC] [-n COUNT] [-g GPU]\n"
"                            live view of the clients, refreshed every SEC\n"
"                            seconds (default 2); q quits\n"
"  set gpu UUID|INDEX KEY=VALUE...\n"
"                            change knobs: timeslice_us grace_us min_grant_us\n"
"                            starve_us window_us latency_pct latency_queue_us\n"
"                            handover_us mem_default_pct mem_reserve_mb\n"
"  set client PID [gpu=INDEX] KEY=VALUE...\n"
"                            change every client of a process (or only the\n"
"                            one on GPU INDEX): weight=1..10000,\n"
"                            class=latency|normal|batch, cap=1..100|none,\n"
"                            mem_limit=BYTES[K|M|G|T]|N%%|none\n"
"  watch                     print attach, detach and overrun events\n"
"\n"
"  -j, --json                machine-readable output (JSON; JSON Lines for\n"
"                            top and watch), for every command that reads\n"
"  -s, --socket PATH         talk to the user-space arbiter listening on PATH\n"
"                            (default: gpusched.ko if loaded, else the\n"
"                            arbiter at $GPUSCHED_ARBITER or %s)\n"
"  -h, --help                show this help\n"
"\n"
"Reading needs no privilege; set and watch need CAP_NET_ADMIN (the module)\n"
"or root (the arbiter). Exit status: 0 success, 1 the request failed, 2 usage\n"
"error, 3 neither gpusched.ko nor an arbiter is there. See gpuschedctl(8).\n",
		GPUSCHED_ARBITER_SOCKET);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "status", cmd_status }, { "clients", cmd_clients },
		{ "top", cmd_top }, { "set", cmd_set }, { "watch", cmd_watch },
	};
	const char *env;
	size_t i;
	int c;

	/* As libgpusched chooses its token service. */
	env = getenv("GPUSCHED_ARBITER");
	if (env && *env)
		arb_path = env;
	env = getenv("GPUSCHED_BACKEND");
	if (env && !strcmp(env, "kmod"))
		backend = BE_KMOD;
	else if (env && !strcmp(env, "arbiter"))
		backend = BE_ARBITER;
	while ((c = getopt_long(argc, argv, "+js:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			arb_path = optarg;
			backend = BE_ARBITER;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fputs("Try 'gpuschedctl --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return usage_error("a command is needed: status, clients, top, set or watch");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[optind], cmds[i].name))
			continue;
		if (json && !strcmp(cmds[i].name, "set"))
			return usage_error("set prints nothing to parse: drop --json");
		argc -= optind;
		argv += optind;
		optind = 0;	/* restart getopt for the command's options */
		return cmds[i].fn(argc, argv);
	}
	if (!strcmp(argv[optind], "help"))
		return usage(stdout), 0;
	return usage_error("unknown command \"%s\"", argv[optind]);
}
