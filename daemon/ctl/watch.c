// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl watch: attach, detach and overrun events as they happen. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpuschedctl.h"
#include "knobs.h"

static bool watch_gone;

static void print_event(void *arg, enum gs_nl_event_kind kind,
			const struct gs_client_rec *c)
{
	static const char *const names[] = {
		[GS_NL_EV_ATTACH] = "attach", [GS_NL_EV_DETACH] = "detach",
		[GS_NL_EV_OVERRUN] = "overrun",
	};
	char stamp[64], user[32], held[16], gpu[16];
	struct timespec ts;
	struct tm tm;
	size_t n;

	(void)arg;
	if (kind == GS_NL_EV_FAMILY_DEL) {
		watch_gone = true;
		return;
	}
	if (kind == GS_NL_EV_LOST) {
		if (json)
			printf("{\"event\":\"lost\"}\n");
		else
			printf("(events were lost: the reader fell behind)\n");
		fflush(stdout);
		return;
	}
	if (kind != GS_NL_EV_ATTACH && kind != GS_NL_EV_DETACH &&
	    kind != GS_NL_EV_OVERRUN)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + n, sizeof(stamp) - n, ".%03ld", ts.tv_nsec / 1000000);
	if (json) {
		printf("{\"time\":\"%s\",\"event\":\"%s\",\"gpu\":%u,\"id\":%llu,\"pid\":%u,\"comm\":",
		       stamp, names[kind], c->gpu, (unsigned long long)c->id, c->pid);
		json_str(c->comm);
		printf(",\"uid\":%u,\"gid\":%u,\"cgroup_id\":%llu,\"weight\":%u,\"class\":\"%s\",\"cap_pct\":%u,\"held_ns\":%llu,\"overruns\":%llu",
		       c->uid, c->gid, (unsigned long long)c->cgroup_id, c->weight,
		       gs_class_name(c->class), c->cap_pct,
		       (unsigned long long)c->held_ns,
		       (unsigned long long)c->overruns);
		print_gpu_json(c);
		/* At a detach: what the client still had reserved when it went. */
		print_mem_json(c);
		printf("}\n");
	} else {
		printf("%s %-7s gpu%u client %llu pid %u (%s) user %s",
		       stamp, names[kind], c->gpu, (unsigned long long)c->id,
		       c->pid, c->comm, user_name(c->uid, user, sizeof(user)));
		if (kind == GS_NL_EV_OVERRUN)
			printf(" overruns %llu", (unsigned long long)c->overruns);
		/* At a detach: what it was charged, and its time on the GPU. */
		if (kind == GS_NL_EV_DETACH) {
			printf(" charged %s", dur(c->held_ns, held, sizeof(held)));
			if (c->has_gpu_ns)
				printf(", on the GPU %s",
				       dur(c->gpu_ns, gpu, sizeof(gpu)));
		}
		printf("\n");
	}
	fflush(stdout);
}

/* Events of the arbiter, on a control connection. */
static int watch_arbiter(struct conn *x)
{
	int err = gs_arb_subscribe(x->arb);

	if (err)
		return request_failed(x, err, "watching events", "");
	while (!stop) {
		struct pollfd pfd = { .fd = gs_arb_fd(x->arb), .events = POLLIN };

		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return EXIT_REQUEST;
		}
		err = gs_arb_events_read(x->arb, print_event, NULL);
		if (err == -ECONNRESET) {
			fprintf(stderr, "gpuschedctl: the arbiter went away\n");
			return EXIT_ABSENT;
		}
		if (err) {
			fprintf(stderr, "gpuschedctl: reading events: %s\n",
				strerror(-err));
			return EXIT_REQUEST;
		}
	}
	return 0;
}

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ 0 }
	};
	struct gs_nl_events *ev;
	struct conn nl;
	int c, rc = 0, err;

	while ((c = getopt_long(argc, argv, "+j", opts, NULL)) != -1) {
		if (c != 'j')
			return usage_error("watch: unknown option");
		json = true;
	}
	if (optind < argc)
		return usage_error("watch: unexpected argument \"%s\"", argv[optind]);
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (nl.arb) {
		rc = watch_arbiter(&nl);
		conn_close(&nl);
		return rc;
	}
	/* The module: its events come on a socket of their own. */
	conn_close(&nl);
	err = gs_nl_events_open(&ev);
	if (!err)
		err = gs_nl_events_join(ev);
	if (err) {
		if (err == -EPERM)
			fprintf(stderr, "gpuschedctl: permission denied: watching events needs CAP_NET_ADMIN (run as root)\n");
		else
			fprintf(stderr, "gpuschedctl: cannot watch events: %s\n",
				strerror(-err));
		gs_nl_events_close(ev);
		return err == -ENOENT ? EXIT_ABSENT : EXIT_REQUEST;
	}
	while (!stop && !watch_gone) {
		struct pollfd pfd = { .fd = gs_nl_events_fd(ev), .events = POLLIN };

		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = EXIT_REQUEST;
			break;
		}
		err = gs_nl_events_read(ev, print_event, NULL);
		if (err) {
			fprintf(stderr, "gpuschedctl: reading events: %s\n",
				strerror(-err));
			rc = EXIT_REQUEST;
			break;
		}
	}
	if (watch_gone) {
		fprintf(stderr, "gpuschedctl: gpusched.ko was unloaded\n");
		rc = EXIT_ABSENT;
	}
	gs_nl_events_close(ev);
	return rc;
}
