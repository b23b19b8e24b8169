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
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <gpusched/arbiter_wire.h>
#include "arbctl.h"
#include "genl.h"
#include "knobs.h"
#include "rules.h"

enum { EXIT_REQUEST = 1, EXIT_USAGE = 2, EXIT_ABSENT = 3 };

static bool json;
static volatile sig_atomic_t stop;

/* The token service: gpusched.ko, or the arbiter at arb_path. */
enum backend { BE_AUTO, BE_KMOD, BE_ARBITER };
static enum backend backend = BE_AUTO;
static const char *arb_path = GPUSCHED_ARBITER_SOCKET;

struct conn {
	struct gs_nl *nl;
	struct gs_arb *arb;
};

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

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gpuschedctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'gpuschedctl --help'.\n", stderr);
	return EXIT_USAGE;
}

static int connect_arbiter(struct conn *x, bool quiet)
{
	int err = gs_arb_open(arb_path, &x->arb);

	if (!err)
		return 0;
	if (quiet && (err == -ENOENT || err == -ECONNREFUSED))
		return EXIT_ABSENT;
	if (err == -ENOENT || err == -ECONNREFUSED)
		fprintf(stderr, "gpuschedctl: no arbiter listens on %s (%s): start gpuschedd --arbiter, or name its socket with --socket\n",
			arb_path, strerror(-err));
	else
		fprintf(stderr, "gpuschedctl: cannot connect to the arbiter at %s: %s\n",
			arb_path, strerror(-err));
	return err == -ENOENT || err == -ECONNREFUSED ? EXIT_ABSENT : EXIT_REQUEST;
}

/* The module if its family is there (unless told otherwise), else the arbiter. */
static int connect_ctl(struct conn *x)
{
	int err;

	memset(x, 0, sizeof(*x));
	if (backend == BE_ARBITER)
		return connect_arbiter(x, false);
	err = gs_nl_open(&x->nl);
	if (!err)
		return 0;
	x->nl = NULL;
	if (err != -ENOENT && err != -EPROTONOSUPPORT && backend == BE_KMOD) {
		fprintf(stderr, "gpuschedctl: cannot open generic netlink: %s\n",
			strerror(-err));
		return EXIT_REQUEST;
	}
	if (backend == BE_AUTO) {
		int rc = connect_arbiter(x, true);

		if (rc != EXIT_ABSENT)
			return rc;
	}
	fprintf(stderr, "gpuschedctl: gpusched.ko is not loaded (no generic netlink family \"%s\"): load it with 'modprobe gpusched'",
		GPUSCHED_GENL_NAME);
	if (backend == BE_AUTO)
		fprintf(stderr, ", or start the user-space arbiter, gpuschedd --arbiter (none listens on %s)",
			arb_path);
	fputc('\n', stderr);
	return EXIT_ABSENT;
}

static void conn_close(struct conn *x)
{
	gs_nl_close(x->nl);
	gs_arb_close(x->arb);
	x->nl = NULL;
	x->arb = NULL;
}

static const char *service_name(const struct conn *x)
{
	return x->arb ? "the arbiter" : "the module";
}

static int get_gpus(struct conn *x, struct gs_gpu_rec **gpus, size_t *n)
{
	return x->arb ? gs_arb_get_gpus(x->arb, gpus, n) :
			gs_nl_get_gpus(x->nl, gpus, n);
}

static int get_clients(struct conn *x, int64_t gpu, struct gs_client_rec **cl,
		       size_t *n)
{
	return x->arb ? gs_arb_get_clients(x->arb, gpu, cl, n) :
			gs_nl_get_clients(x->nl, gpu, cl, n);
}

/* A refused request, said so that a person knows what to do next. */
static int request_failed(struct conn *x, int err, const char *what,
			  const char *target)
{
	const char *km = x->nl ? gs_nl_errmsg(x->nl) : "";

	switch (-err) {
	case EPERM:
	case EACCES:
		if (x->arb)
			fprintf(stderr, "gpuschedctl: permission denied: %s needs root (the arbiter takes changes from uid 0 only)\n",
				what);
		else
			fprintf(stderr, "gpuschedctl: permission denied: %s needs CAP_NET_ADMIN (run as root)\n",
				what);
		break;
	case ESRCH:
		fprintf(stderr, "gpuschedctl: no client %s (gpuschedctl clients lists them)\n",
			target);
		break;
	case ENODEV:
		fprintf(stderr, "gpuschedctl: no GPU %s (gpuschedctl status lists them)\n",
			target);
		break;
	case EINVAL:
	case ERANGE:
	case EOPNOTSUPP:
		fprintf(stderr, "gpuschedctl: %s: %s refused the request: %s\n",
			what, service_name(x), *km ? km : strerror(-err));
		break;
	case EPROTONOSUPPORT:
		fprintf(stderr, "gpuschedctl: %s: the arbiter at %s has no control interface (an older gpuschedd?)\n",
			what, arb_path);
		break;
	default:
		fprintf(stderr, "gpuschedctl: %s: %s%s%s\n", what, strerror(-err),
			*km ? ": " : "", km);
	}
	return EXIT_REQUEST;
}

/* --- output helpers --- */

/*
 * A JSON string. Bytes outside printable ASCII are escaped as \u00XX so
 * that the output is valid JSON whatever a process named itself.
 */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static const char *user_name(uint32_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%u", uid);
	return buf;
}

/* "12.3ms": a duration in ns, short. */
static const char *dur(uint64_t ns, char *buf, size_t size)
{
	if (ns >= 10000000000ull)
		snprintf(buf, size, "%.0fs", ns / 1e9);
	else if (ns >= 1000000000ull)
		snprintf(buf, size, "%.2fs", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else
		snprintf(buf, size, "%.0fus", ns / 1e3);
	return buf;
}

/* "1.5G": bytes, short (powers of 1024); "0" for none. */
static const char *mem_text(uint64_t v, char buf[GS_MEM_TEXT_LEN])
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int i = -1;

	while (d >= 1024 && i < 5) {
		d /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, GS_MEM_TEXT_LEN, "%llu", (unsigned long long)v);
	else
		snprintf(buf, GS_MEM_TEXT_LEN, d < 10 ? "%.1f%c" : "%.0f%c", d, units[i]);
	return buf;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || *end || end == s || !(*out >= 0) || *out > 86400)
		return usage_error("%s \"%s\": expected seconds, e.g. 0.5", opt, s);
	return 0;
}

static int parse_gpu_opt(const char *s, int64_t *gpu)
{
	const char *why;
	uint32_t v;

	if (gs_parse_u32(s, 0, UINT32_MAX, &v, &why))
		return usage_error("GPU index \"%s\": %s", s, why);
	*gpu = v;
	return 0;
}

/* --- status --- */

static void print_knobs_json(const struct gs_knob_set *ks)
{
	int k;

	for (k = 0; k < GS_NR_KNOBS; k++)
		if (ks->mask & (1U << k))
			printf(",\"%s\":%u", gs_knobs[k].name, ks->val[k]);
}

static int cmd_status(int argc, char **argv)
{
	char uuid[GS_UUID_TEXT_LEN], b1[32], b2[GS_MEM_TEXT_LEN];
	struct gs_gpu_rec *gpus = NULL;
	struct conn nl;
	size_t n = 0, i;
	int rc, err, k;

	if (argc > 1)
		return usage_error("status: unexpected argument \"%s\"", argv[1]);
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	err = get_gpus(&nl, &gpus, &n);
	if (err) {
		rc = request_failed(&nl, err, "listing GPUs", "");
		goto out;
	}
	if (json) {
		printf("{\"gpus\":[");
		for (i = 0; i < n; i++) {
			const struct gs_gpu_rec *g = &gpus[i];

			gs_uuid_format(g->uuid, uuid);
			printf("%s{\"index\":%u,\"uuid\":\"%s\",\"clients\":%u,\"waiting\":%u,\"holder_pid\":%u,\"grants\":%llu,\"overruns\":%llu,\"held_ns\":%llu,\"mem_reserved\":%llu",
			       i ? "," : "", g->index, uuid, g->nr_clients,
			       g->nr_waiting, g->holder_pid,
			       (unsigned long long)g->grants,
			       (unsigned long long)g->overruns,
			       (unsigned long long)g->held_ns,
			       (unsigned long long)g->mem_reserved);
			print_knobs_json(&g->knobs);
			putchar('}');
		}
		printf("]}\n");
		goto out;
	}
	if (!n)
		printf("no GPUs yet: a GPU appears when its first client attaches\n");
	for (i = 0; i < n; i++) {
		const struct gs_gpu_rec *g = &gpus[i];

		gs_uuid_format(g->uuid, uuid);
		printf("%sgpu%u  %s\n", i ? "\n" : "", g->index, uuid);
		printf("  clients %u, waiting %u, ", g->nr_clients, g->nr_waiting);
		if (g->holder_pid)
			printf("held by pid %u\n", g->holder_pid);
		else
			printf("free\n");
		printf("  grants %llu, overruns %llu, held %s in all, memory reserved %s\n",
		       (unsigned long long)g->grants,
		       (unsigned long long)g->overruns,
		       dur(g->held_ns, b1, sizeof(b1)),
		       mem_text(g->mem_reserved, b2));
		printf(" ");
		for (k = 0; k < GS_NR_KNOBS; k++)
			if (g->knobs.mask & (1U << k))
				printf(" %s=%u", gs_knobs[k].name, g->knobs.val[k]);
		printf("\n");
	}
out:
	free(gpus);
	conn_close(&nl);
	return rc;
}

/* --- clients and top --- */

struct row {
	struct gs_client_rec c;
	bool sampled;		/* seen at the start of the interval too */
	uint64_t dheld;		/* held time in the interval */
	double share;		/* of the GPU's held time in the interval, % */
	double busy;		/* of wall time, % */
};

static int cmp_id(const void *a, const void *b)
{
	const struct gs_client_rec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_row_gpu_id(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->c.gpu != y->c.gpu)
		return x->c.gpu < y->c.gpu ? -1 : 1;
	return x->c.id < y->c.id ? -1 : x->c.id > y->c.id;
}

static int cmp_row_share(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy > y->busy ? -1 : 1;
	return cmp_row_gpu_id(a, b);
}

/*
 * Rows for @cur, with what each held since @prev (sorted by id), @dt ns
 * before. A client that attached in between counts from zero.
 */
static struct row *make_rows(const struct gs_client_rec *prev, size_t nprev,
			     const struct gs_client_rec *cur, size_t n,
			     uint64_t dt)
{
	struct row *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t i, j;

	if (!rows)
		return NULL;
	for (i = 0; i < n; i++) {
		const struct gs_client_rec *p = prev ?
			bsearch(&cur[i], prev, nprev, sizeof(*prev), cmp_id) : NULL;

		rows[i].c = cur[i];
		rows[i].sampled = prev != NULL;
		rows[i].dheld = cur[i].held_ns - (p && p->held_ns <= cur[i].held_ns ?
						  p->held_ns : 0);
	}
	for (i = 0; prev && i < n; i++) {
		uint64_t total = 0;

		for (j = 0; j < n; j++)
			if (rows[j].c.gpu == rows[i].c.gpu)
				total += rows[j].dheld;
		rows[i].share = total ? 100.0 * rows[i].dheld / total : 0;
		rows[i].busy = dt ? 100.0 * rows[i].dheld / dt : 0;
		if (rows[i].busy > 100)
			rows[i].busy = 100;
	}
	return rows;
}

/*
 * @c's GPUSCHED_LABEL, from its process's environment, as the policy
 * daemon's rules see it; NULL where it has none or it cannot be read
 * (another user's process, without privilege).
 */
static const char *client_label(const struct gs_client_rec *c, char *buf,
				size_t len)
{
	struct gs_proc p;
	bool found;

	if (!c->pid)
		return NULL;
	gs_proc_init(&p, (pid_t)c->pid, c->uid, c->gid, NULL);
	p.load(&p, GS_MATCH_LABEL);
	found = p.known & (1U << GS_MATCH_LABEL);
	if (found)
		snprintf(buf, len, "%s", p.label);
	gs_proc_release(&p);
	return found ? buf : NULL;
}

static void print_rows_json(const struct row *rows, size_t n, double interval)
{
	char label[sizeof(((struct gs_proc *)0)->label)];
	size_t i;

	printf("{\"interval_s\":%.3f,\"clients\":[", interval);
	for (i = 0; i < n; i++) {
		const struct gs_client_rec *c = &rows[i].c;

		printf("%s{\"gpu\":%u,\"id\":%llu,\"pid\":%u,\"comm\":", i ? "," : "",
		       c->gpu, (unsigned long long)c->id, c->pid);
		json_str(c->comm);
		printf(",\"uid\":%u,\"gid\":%u,\"cgroup_id\":%llu,\"weight\":%u,\"class\":\"%s\",\"cap_pct\":%u,\"state\":\"%s\",\"held_ns\":%llu,\"grants\":%llu,\"wait_ns_total\":%llu,\"wait_ns_max\":%llu,\"overruns\":%llu,\"yields\":%llu",
		       c->uid, c->gid, (unsigned long long)c->cgroup_id, c->weight,
		       gs_class_name(c->class), c->cap_pct, gs_state_name(c->state),
		       (unsigned long long)c->held_ns, (unsigned long long)c->grants,
		       (unsigned long long)c->wait_ns_total,
		       (unsigned long long)c->wait_ns_max,
		       (unsigned long long)c->overruns, (unsigned long long)c->yields);
		if (c->has_mem)
			printf(",\"mem_total\":%llu,\"mem_reserved\":%llu,\"mem_limit\":%llu,\"mem_refused\":%llu",
			       (unsigned long long)c->mem_total,
			       (unsigned long long)c->mem_reserved,
			       (unsigned long long)c->mem_limit,
			       (unsigned long long)c->mem_refused);
		else
			printf(",\"mem_total\":null,\"mem_reserved\":null,\"mem_limit\":null,\"mem_refused\":null");
		printf(",\"label\":");
		if (client_label(c, label, sizeof(label)))
			json_str(label);
		else
			printf("null");
		if (rows[i].sampled)
			printf(",\"interval_held_ns\":%llu,\"share_pct\":%.2f,\"busy_pct\":%.2f}",
			       (unsigned long long)rows[i].dheld, rows[i].share,
			       rows[i].busy);
		else
			printf(",\"interval_held_ns\":null,\"share_pct\":null,\"busy_pct\":null}");
	}
	printf("]}\n");
}

static void print_rows(const struct row *rows, size_t n, size_t max_rows)
{
	char user[32], b1[16], cap[16], used[GS_MEM_TEXT_LEN], lim[GS_MEM_TEXT_LEN];
	size_t i;

	printf("%-4s %-8s %-6s %-10s %-16s %-8s %6s %4s %-8s %6s %6s %8s %8s %17s\n",
	       "GPU", "PID", "ID", "USER", "COMM", "CLASS", "WEIGHT", "CAP",
	       "STATE", "SHARE", "BUSY", "WAITMAX", "OVERRUNS", "MEM USED/LIMIT");
	for (i = 0; i < n && i < max_rows; i++) {
		const struct gs_client_rec *c = &rows[i].c;

		if (c->cap_pct)
			snprintf(cap, sizeof(cap), "%u%%", c->cap_pct);
		else
			snprintf(cap, sizeof(cap), "-");
		printf("%-4u %-8u %-6llu %-10.10s %-16s %-8s %6u %4s %-8s ",
		       c->gpu, c->pid, (unsigned long long)c->id,
		       user_name(c->uid, user, sizeof(user)), c->comm,
		       gs_class_name(c->class), c->weight, cap,
		       gs_state_name(c->state));
		if (rows[i].sampled)
			printf("%5.1f%% %5.1f%% ", rows[i].share, rows[i].busy);
		else
			printf("%6s %6s ", "-", "-");
		if (c->has_mem) {
			mem_text(c->mem_reserved, used);
			if (c->mem_limit)
				mem_text(c->mem_limit, lim);
			else
				snprintf(lim, sizeof(lim), "none");
		} else {
			snprintf(used, sizeof(used), "-");
			snprintf(lim, sizeof(lim), "-");
		}
		printf("%8s %8llu %8s/%-8s\n", dur(c->wait_ns_max, b1, sizeof(b1)),
		       (unsigned long long)c->overruns, used, lim);
	}
	if (i < n)
		printf("... %zu more\n", n - i);
}

static int sample(struct conn *nl, int64_t gpu, struct gs_client_rec **cl,
		  size_t *n, uint64_t *t)
{
	int err = get_clients(nl, gpu, cl, n);

	*t = now_ns();
	if (err)
		return request_failed(nl, err, "listing clients", "");
	qsort(*cl, *n, sizeof(**cl), cmp_id);
	return 0;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
		;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int cmd_clients(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 }
	};
	struct gs_client_rec *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	double interval = 1;
	int64_t gpu = -1;
	uint64_t ta = 0, tb;
	struct conn nl;
	struct row *rows;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+i:g:j", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_seconds("--interval", optarg, &interval))
				return EXIT_USAGE;
			break;
		case 'g':
			if (parse_gpu_opt(optarg, &gpu))
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		default:
			return usage_error("clients: unknown option");
		}
	}
	if (optind < argc)
		return usage_error("clients: unexpected argument \"%s\"", argv[optind]);
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	if (interval > 0) {
		rc = sample(&nl, gpu, &a, &na, &ta);
		if (rc)
			goto out;
		sleep_s(interval);
	}
	rc = sample(&nl, gpu, &b, &nb, &tb);
	if (rc)
		goto out;
	rows = make_rows(interval > 0 ? a : NULL, na, b, nb, tb - ta);
	if (!rows) {
		fprintf(stderr, "gpuschedctl: out of memory\n");
		rc = EXIT_REQUEST;
		goto out;
	}
	qsort(rows, nb, sizeof(*rows), cmp_row_gpu_id);
	if (json)
		print_rows_json(rows, nb, interval > 0 ? (tb - ta) / 1e9 : 0);
	else if (!nb)
		printf("no clients\n");
	else
		print_rows(rows, nb, SIZE_MAX);
	free(rows);
out:
	free(a);
	free(b);
	conn_close(&nl);
	return rc;
}

static struct termios saved_tio;
static bool tio_saved;

static void restore_tty(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	if (tio_saved)
		fputs("\033[?25h", stdout);	/* cursor back */
	tio_saved = false;
}

static int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 }
	};
	struct gs_client_rec *prev = NULL, *cur = NULL;
	size_t nprev = 0, ncur = 0;
	long count = -1;
	double interval = 2;
	int64_t gpu = -1;
	uint64_t tprev = 0, tcur;
	struct conn nl;
	bool live;
	int c, rc;
	char *end;

	while ((c = getopt_long(argc, argv, "+i:n:g:j", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_seconds("--interval", optarg, &interval))
				return EXIT_USAGE;
			if (interval < 0.1)
				return usage_error("--interval: at least 0.1 s");
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || end == optarg || count < 1)
				return usage_error("--iterations \"%s\": expected a count of at least 1",
						   optarg);
			break;
		case 'g':
			if (parse_gpu_opt(optarg, &gpu))
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		default:
			return usage_error("top: unknown option");
		}
	}
	if (optind < argc)
		return usage_error("top: unexpected argument \"%s\"", argv[optind]);
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* The live view needs a terminal both ways; otherwise print batches. */
	live = !json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (live && !tcgetattr(STDIN_FILENO, &saved_tio)) {
		struct termios tio = saved_tio;

		tio.c_lflag &= ~(ICANON | ECHO);
		tio.c_cc[VMIN] = 0;
		tio.c_cc[VTIME] = 0;
		tio_saved = !tcsetattr(STDIN_FILENO, TCSANOW, &tio);
		atexit(restore_tty);
		fputs("\033[?25l", stdout);	/* hide the cursor */
	}
	rc = sample(&nl, gpu, &prev, &nprev, &tprev);
	while (!rc && !stop && count != 0) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		struct winsize ws = { 0 };
		struct row *rows;
		char clock[16];
		time_t t;

		/* Sleep the interval, or until a key arrives in the live view. */
		if (live) {
			uint64_t end_ns = now_ns() + (uint64_t)(interval * 1e9);
			bool quit = false;

			while (!stop && !quit && now_ns() < end_ns) {
				char ch;
				int ms = (int)((end_ns - now_ns()) / 1000000) + 1;

				if (poll(&pfd, 1, ms) > 0 && read(STDIN_FILENO, &ch, 1) == 1)
					quit = ch == 'q' || ch == 'Q';
			}
			if (quit)
				break;
		} else {
			sleep_s(interval);
		}
		if (stop)
			break;
		rc = sample(&nl, gpu, &cur, &ncur, &tcur);
		if (rc)
			break;
		rows = make_rows(prev, nprev, cur, ncur, tcur - tprev);
		if (!rows) {
			rc = EXIT_REQUEST;
			break;
		}
		qsort(rows, ncur, sizeof(*rows), cmp_row_share);
		t = time(NULL);
		strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&t));
		if (json) {
			print_rows_json(rows, ncur, (tcur - tprev) / 1e9);
		} else {
			size_t rows_max = SIZE_MAX;

			if (live) {
				fputs("\033[H\033[2J", stdout);
				if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) &&
				    ws.ws_row > 4)
					rows_max = ws.ws_row - 4;
			}
			printf("gpuschedctl top - %s, %zu clients, every %.1f s%s\n\n",
			       clock, ncur, interval, live ? " (q quits)" : "");
			print_rows(rows, ncur, rows_max);
			if (!live)
				printf("\n");
		}
		fflush(stdout);
		free(rows);
		free(prev);
		prev = cur;
		nprev = ncur;
		tprev = tcur;
		cur = NULL;
		if (count > 0)
			count--;
	}
	restore_tty();
	free(prev);
	free(cur);
	conn_close(&nl);
	return rc;
}

/* --- set --- */

static int split_kv(char *arg, char **key, char **value)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return usage_error("\"%s\": expected KEY=VALUE", arg);
	*eq = '\0';
	*key = arg;
	*value = eq + 1;
	return 0;
}

/* The index of the GPU named by its index or UUID. */
static int resolve_gpu(struct conn *nl, const char *s, uint32_t *index)
{
	uint8_t uuid[GPUSCHED_UUID_LEN];
	struct gs_gpu_rec *gpus = NULL;
	const char *why;
	size_t n, i;
	int err;

	if (!gs_parse_u32(s, 0, UINT32_MAX, index, &why))
		return 0;
	if (gs_uuid_parse(s, uuid))
		return EXIT_USAGE;	/* set_gpu() checked it */
	err = get_gpus(nl, &gpus, &n);
	if (err)
		return request_failed(nl, err, "listing GPUs", "");
	for (i = 0; i < n; i++) {
		if (!memcmp(gpus[i].uuid, uuid, sizeof(uuid))) {
			*index = gpus[i].index;
			free(gpus);
			return 0;
		}
	}
	free(gpus);
	fprintf(stderr, "gpuschedctl: no GPU %s (gpuschedctl status lists them; a GPU appears when its first client attaches)\n",
		s);
	return EXIT_REQUEST;
}

static int set_gpu(int argc, char **argv)
{
	uint8_t uuid[GPUSCHED_UUID_LEN];
	struct gs_knob_set ks = { 0 };
	char msg[256], target[32];
	char *key = NULL, *value = NULL;
	struct conn nl;
	const char *why;
	uint32_t index;
	int i, rc, err;

	if (argc < 2)
		return usage_error("set gpu UUID|INDEX KEY=VALUE...");
	if (gs_parse_u32(argv[0], 0, UINT32_MAX, &index, &why) &&
	    gs_uuid_parse(argv[0], uuid))
		return usage_error("\"%s\" is neither a GPU index nor a UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
				   argv[0]);
	for (i = 1; i < argc; i++) {
		if (split_kv(argv[i], &key, &value))
			return EXIT_USAGE;
		if (gs_knob_parse(key, value, &ks, msg, sizeof(msg)))
			return usage_error("%s", msg);
	}
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	rc = resolve_gpu(&nl, argv[0], &index);
	if (!rc) {
		err = nl.arb ? gs_arb_set_gpu(nl.arb, index, &ks) :
			       gs_nl_set_gpu(nl.nl, index, &ks);
		snprintf(target, sizeof(target), "gpu%u", index);
		if (err)
			rc = request_failed(&nl, err, "changing a GPU's knobs", target);
	}
	conn_close(&nl);
	return rc;
}

static int set_client(int argc, char **argv)
{
	struct gpusched_params p = { 0 };
	char msg[256], target[48];
	char *key = NULL, *value = NULL;
	const char *why;
	int64_t gpu = -1;
	struct conn nl;
	uint32_t pid, v;
	int i, err, rc;

	if (argc < 2)
		return usage_error("set client PID [gpu=INDEX] KEY=VALUE...");
	if (gs_parse_u32(argv[0], 1, INT32_MAX, &pid, &why))
		return usage_error("\"%s\" is not a process id", argv[0]);
	for (i = 1; i < argc; i++) {
		if (split_kv(argv[i], &key, &value))
			return EXIT_USAGE;
		if (!strcmp(key, "gpu")) {
			if (gs_parse_u32(value, 0, UINT32_MAX, &v, &why))
				return usage_error("gpu=%s: %s", value, why);
			gpu = v;
		} else if (gs_client_param_parse(key, value, &p, msg, sizeof(msg))) {
			return usage_error("%s", msg);
		}
	}
	if (!p.mask)
		return usage_error("set client: nothing to set (weight, class, cap or mem_limit)");
	rc = connect_ctl(&nl);
	if (rc)
		return rc;
	err = nl.arb ? gs_arb_set_client(nl.arb, 0, pid, gpu, &p) :
		       gs_nl_set_client(nl.nl, 0, pid, gpu, &p, -1);
	if (gpu >= 0)
		snprintf(target, sizeof(target), "of pid %u on gpu%lld", pid,
			 (long long)gpu);
	else
		snprintf(target, sizeof(target), "with pid %u", pid);
	if (err)
		rc = request_failed(&nl, err, "changing a client", target);
	conn_close(&nl);
	return rc;
}

static int cmd_set(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("set gpu|client ...");
	if (strcmp(argv[1], "gpu") && strcmp(argv[1], "client"))
		return usage_error("set %s: expected set gpu or set client", argv[1]);
	if (!strcmp(argv[1], "gpu"))
		return set_gpu(argc - 2, argv + 2);
	return set_client(argc - 2, argv + 2);
}

/* --- watch --- */

static bool watch_gone;

static void print_event(void *arg, enum gs_nl_event_kind kind,
			const struct gs_client_rec *c)
{
	static const char *const names[] = {
		[GS_NL_EV_ATTACH] = "attach", [GS_NL_EV_DETACH] = "detach",
		[GS_NL_EV_OVERRUN] = "overrun",
	};
	char stamp[64], user[32];
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
		/* At a detach: what the client still had reserved when it went. */
		if (c->has_mem)
			printf(",\"mem_total\":%llu,\"mem_reserved\":%llu,\"mem_limit\":%llu,\"mem_refused\":%llu}\n",
			       (unsigned long long)c->mem_total,
			       (unsigned long long)c->mem_reserved,
			       (unsigned long long)c->mem_limit,
			       (unsigned long long)c->mem_refused);
		else
			printf(",\"mem_total\":null,\"mem_reserved\":null,\"mem_limit\":null,\"mem_refused\":null}\n");
	} else {
		printf("%s %-7s gpu%u client %llu pid %u (%s) user %s",
		       stamp, names[kind], c->gpu, (unsigned long long)c->id,
		       c->pid, c->comm, user_name(c->uid, user, sizeof(user)));
		if (kind == GS_NL_EV_OVERRUN)
			printf(" overruns %llu", (unsigned long long)c->overruns);
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

static int cmd_watch(int argc, char **argv)
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
