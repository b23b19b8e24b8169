// SPDX-License-Identifier: GPL-2.0
/*
 * Host side shared by gs-driver-client, gs-runtime-client and gs-probe:
 * see gs-common.h. No CUDA here; the backend does every CUDA call.
 *
 * Accounting: a kernel of K microseconds of solo work has K x iters_per_us
 * iterations, where iters_per_us is the slope of kernel time against
 * iterations measured alone (gs_calibrate). A process's GPU share is
 * kernels completed x K / wall time, wall time running from the common start
 * instant to the completion of its last kernel. Per-kernel launch overhead,
 * gaps between kernels and time lost to context switches all count as lost
 * share, so one process alone scores a little under 1.
 *
 * A busy client's shape is chosen on the command line, so one program
 * stands in for the kinds of program a GPU server runs: how many kernels
 * it keeps in flight (--depth), how it waits for room (--wait: its own
 * event, polling it, or a context synchronize after every launch), CUDA
 * graph replay (--graph), several host threads with a stream each
 * (--threads) and kernels of mixed lengths (--mix). With --mix the
 * kernels cycle through GS_MIX (mean 1) times --kernel-us, and the work
 * counted is the sum of their solo microseconds.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gs-common.h"

static const char *prog = "gs-client";

/* --mix: the kernel lengths, in units of --kernel-us, cycled; mean 1. */
static const double GS_MIX[] = { 0.25, 0.5, 1.25, 2.0 };
#define GS_NMIX ((int)(sizeof(GS_MIX) / sizeof(GS_MIX[0])))

static void gs_vwarn(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void gs_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gs_vwarn(fmt, ap);
	va_end(ap);
	exit(1);
}

static void gs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void gs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	gs_vwarn(fmt, ap);
	va_end(ap);
}

double gs_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double realtime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- options ---------------------------------------------------------- */

void gs_set_prog(const char *name)
{
	prog = name;
}

double gs_parse_num(const char *what, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
		fprintf(stderr, "%s: bad %s '%s' (want %g..%g)\n", prog, what, s,
			lo, hi);
		exit(2);
	}
	return v;
}

static void usage(const struct gs_opts *o, const char *extra_opt,
		  const char *extra_help, FILE *f)
{
	fprintf(f,
"usage: %s [options]\n"
"  --kernel-us US      solo work per kernel, microseconds (default %g)\n"
"  --seconds S         run time after the start barrier (default %g)\n"
"  --period-us US      periodic: one kernel every US, latency recorded;\n"
"                      0 = busy, back to back (default %g)\n"
"  --start-at T        start at CLOCK_REALTIME T (seconds since the epoch,\n"
"                      decimals allowed), after CUDA init and warm-up;\n"
"                      default: env GPUSCHED_START_AT, else at once;\n"
"                      env GPUSCHED_START_FILE: see gpusched-bench\n"
"  --iters-per-us N    calibration to use; default: env\n"
"                      GPUSCHED_ITERS_PER_US, else calibrate alone first\n"
"  --calibrate         calibrate alone, print the result as JSON, exit\n"
"  --warmup-ms MS      warm-up before the barrier (default %g)\n"
"  --depth N           busy: most kernels (graphs with --graph) in flight\n"
"                      per stream (default: ~8 ms of work, 2..256)\n"
"  --wait HOW          busy: how to wait for room in the window: event\n"
"                      (cuEventSynchronize on its own oldest event,\n"
"                      default), query (poll cuEventQuery on it) or device\n"
"                      (cuCtxSynchronize after every launch; depth 1)\n"
"  --graph N           busy: launch CUDA graphs of N kernels (replays)\n"
"  --threads N         busy: N host threads, a non-blocking stream each\n"
"                      (default 1)\n"
"  --mix               busy: kernel lengths cycle 0.25, 0.5, 1.25, 2 x\n"
"                      --kernel-us (mean 1)\n"
"  --device N          CUDA device ordinal (default 0)\n"
"  --label S           copied into the JSON\n"
"  --trace FILE        write each kernel's GPU start and end after the\n"
"                      barrier (%%globaltimer ns, two u64 per kernel);\n"
"                      periodic: also FILE.lat, per request in order: its\n"
"                      latency, how long the launch call took and how late\n"
"                      the process woke for it (us)\n",
		o->prog, o->kernel_us, o->seconds, o->period_us, o->warmup_ms);
	if (extra_opt)
		fprintf(f, "  --%-17s %s\n", extra_opt, extra_help);
	fprintf(f,
"Prints one line of JSON at the end: pid, kernels, solo_us, wall_s,\n"
"share = work (solo us of the kernels completed) / wall time, and latency\n"
"percentiles if periodic.\n");
}

void gs_parse(struct gs_opts *o, int argc, char **argv, const char *extra_opt,
	      const char *extra_help)
{
	enum { O_KUS = 256, O_SEC, O_PER, O_START, O_IPU, O_CAL, O_WARM,
	       O_DEPTH, O_DEV, O_LABEL, O_TRACE, O_EXTRA, O_HELP, O_WAIT,
	       O_GRAPH, O_THREADS, O_MIX };
	struct option lo[] = {
		{ "kernel-us", required_argument, NULL, O_KUS },
		{ "seconds", required_argument, NULL, O_SEC },
		{ "period-us", required_argument, NULL, O_PER },
		{ "start-at", required_argument, NULL, O_START },
		{ "iters-per-us", required_argument, NULL, O_IPU },
		{ "calibrate", no_argument, NULL, O_CAL },
		{ "warmup-ms", required_argument, NULL, O_WARM },
		{ "depth", required_argument, NULL, O_DEPTH },
		{ "device", required_argument, NULL, O_DEV },
		{ "label", required_argument, NULL, O_LABEL },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "help", no_argument, NULL, O_HELP },
		{ "wait", required_argument, NULL, O_WAIT },
		{ "graph", required_argument, NULL, O_GRAPH },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "mix", no_argument, NULL, O_MIX },
		{ extra_opt ? extra_opt : "", required_argument, NULL, O_EXTRA },
		{ NULL, 0, NULL, 0 },
	};
	const int n_lo = (int)(sizeof(lo) / sizeof(lo[0]));
	const char *s;
	int c;

	prog = o->prog;
	if (!extra_opt)
		lo[n_lo - 2].name = NULL;	/* drop the empty extra option */
	if (!o->lanes)
		o->lanes = 1;

	s = getenv("GPUSCHED_START_AT");
	if (s && *s)
		o->start_at = gs_parse_num("GPUSCHED_START_AT", s, 0, 1e11);
	s = getenv("GPUSCHED_ITERS_PER_US");
	if (s && *s)
		o->iters_per_us = gs_parse_num("GPUSCHED_ITERS_PER_US", s, 1e-6, 1e9);

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case O_KUS:
			o->kernel_us = gs_parse_num("--kernel-us", optarg, 0.01, 1e8);
			break;
		case O_SEC:
			o->seconds = gs_parse_num("--seconds", optarg, 0.001, 1e6);
			break;
		case O_PER:
			o->period_us = gs_parse_num("--period-us", optarg, 0, 1e9);
			break;
		case O_START:
			o->start_at = gs_parse_num("--start-at", optarg, 0, 1e11);
			break;
		case O_IPU:
			o->iters_per_us = gs_parse_num("--iters-per-us", optarg,
						       1e-6, 1e9);
			break;
		case O_CAL:
			o->calibrate = 1;
			break;
		case O_WARM:
			o->warmup_ms = gs_parse_num("--warmup-ms", optarg, 0, 1e6);
			break;
		case O_DEPTH:
			o->depth = (int)gs_parse_num("--depth", optarg, 1,
						     GS_MAX_DEPTH);
			break;
		case O_DEV:
			o->device = (int)gs_parse_num("--device", optarg, 0, 1024);
			break;
		case O_LABEL:
			o->label = optarg;
			break;
		case O_TRACE:
			o->trace = optarg;
			break;
		case O_EXTRA:
			o->extra = optarg;
			break;
		case O_WAIT:
			if (!strcmp(optarg, "event"))
				o->wait = GS_WAIT_EVENT;
			else if (!strcmp(optarg, "query"))
				o->wait = GS_WAIT_QUERY;
			else if (!strcmp(optarg, "device"))
				o->wait = GS_WAIT_DEVICE;
			else {
				fprintf(stderr, "%s: --wait is event, query or "
					"device, not '%s'\n", prog, optarg);
				exit(2);
			}
			break;
		case O_GRAPH:
			o->graph = (int)gs_parse_num("--graph", optarg, 1,
						     GS_MAX_GRAPH);
			break;
		case O_THREADS:
			o->lanes = (int)gs_parse_num("--threads", optarg, 1,
						     GS_MAX_LANES);
			break;
		case O_MIX:
			o->mix = 1;
			break;
		case 'h':
		case O_HELP:
			usage(o, extra_opt, extra_help, stdout);
			exit(0);
		default:
			usage(o, extra_opt, extra_help, stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
			argv[optind]);
		exit(2);
	}
	if (o->period_us > 0 && (o->graph || o->lanes > 1 || o->mix ||
				 o->wait != GS_WAIT_EVENT)) {
		fprintf(stderr, "%s: --graph, --threads, --mix and --wait are "
			"for busy loops, not --period-us\n", prog);
		exit(2);
	}
	if (o->graph && (o->mix || o->lanes > 1)) {
		fprintf(stderr, "%s: --graph goes with neither --mix nor "
			"--threads\n", prog);
		exit(2);
	}
}

/* ---- statistics --------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static double pct(const double *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)ceil(q * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

double gs_sort_pct(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return pct(v, n, q);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_head(FILE *f, const struct gs_backend *b,
		      const struct gs_opts *o)
{
	fprintf(f, "{\"tool\":");
	json_str(f, o->prog);
	fprintf(f, ",\"api\":\"%s\",\"label\":", b->api);
	json_str(f, o->label ? o->label : "");
	fprintf(f, ",\"pid\":%d,\"device\":", (int)getpid());
	json_str(f, b->device_name);
	fprintf(f, ",\"uuid\":");
	json_str(f, b->device_uuid);
	fprintf(f, ",\"sms\":%d,\"blocks\":%d,\"threads\":%d", b->sms,
		b->blocks, b->threads);
}

/* ---- calibration --------------------------------------------------------- */

struct gs_cal {
	double iters_per_us;
	double overhead_us;	/* intercept: launch + ramp + tail per kernel */
	int npts;
	double pt_iters[8], pt_us[8];
	int nchk;
	double chk_us[4], chk_meas[4];
};

static double time_median(struct gs_backend *b, uint32_t iters, int reps)
{
	double t[16];
	int i;

	for (i = 0; i < reps && i < 16; i++)
		t[i] = b->time_one(b, iters);
	return gs_sort_pct(t, (size_t)i, 0.5);
}

static uint32_t iters_for(double us, double ipu)
{
	double n = round(us * ipu);

	if (n < 1)
		n = 1;
	if (n > 4294967295.0)
		gs_die("%.0f us is %.0f iterations, more than a kernel takes",
		       us, n);
	return (uint32_t)n;
}

/*
 * Back-to-back kernels of iters each (us microseconds of solo work) on
 * lane 0, ms milliseconds of work in all and at least two, then sync.
 * Bounded by work, not by host time: a host can queue seconds of long
 * kernels in a few milliseconds.
 */
static void warm_up(struct gs_backend *b, uint32_t iters, double us, double ms)
{
	long n = us > 0 ? (long)ceil(ms * 1e3 / us) : 2, i;

	if (n < 2)
		n = 2;
	for (i = 0; i < n; i++)
		b->launch(b, 0, iters, 0);
	b->sync(b);
}

/*
 * Kernel time is overhead + iters / iters_per_us. Find a size of about 1 ms,
 * warm the clocks up, time six sizes from 0.25 ms to 8 ms (median of five
 * each) and fit a line; iters_per_us is the inverse of its slope.
 */
static void gs_calibrate(struct gs_backend *b, const struct gs_opts *o,
			 struct gs_cal *c)
{
	static const double targets[] = { 250, 500, 1000, 2000, 4000, 8000 };
	static const double checks[] = { 20, 50, 100, 1000 };
	double sx = 0, sy = 0, sxx = 0, sxy = 0, t, ipu0, n;
	uint32_t it = 1024;
	int i;

	memset(c, 0, sizeof(*c));
	b->time_one(b, it);	/* module load, first-launch costs */
	for (;;) {
		t = b->time_one(b, it);
		if (t >= 1000 || it >= 0x40000000u)
			break;
		it = t > 1 ? (uint32_t)fmin(it * fmin(4.0, 1200.0 / t),
					    0x40000000u) : it * 4;
	}
	ipu0 = it / t;
	warm_up(b, it, t, o->warmup_ms > 500 ? o->warmup_ms : 500);

	c->npts = (int)(sizeof(targets) / sizeof(targets[0]));
	for (i = 0; i < c->npts; i++) {
		c->pt_iters[i] = iters_for(targets[i], ipu0);
		c->pt_us[i] = time_median(b, (uint32_t)c->pt_iters[i], 5);
		sx += c->pt_iters[i];
		sy += c->pt_us[i];
		sxx += c->pt_iters[i] * c->pt_iters[i];
		sxy += c->pt_iters[i] * c->pt_us[i];
	}
	n = c->npts;
	t = (n * sxy - sx * sy) / (n * sxx - sx * sx);	/* slope: us/iter */
	if (!(t > 0))
		gs_die("calibration failed: kernel time does not grow with work");
	c->iters_per_us = 1 / t;
	c->overhead_us = (sy - t * sx) / n;

	c->nchk = (int)(sizeof(checks) / sizeof(checks[0]));
	for (i = 0; i < c->nchk; i++) {
		c->chk_us[i] = checks[i];
		c->chk_meas[i] = time_median(b, iters_for(checks[i],
						c->iters_per_us), 9);
	}
}

static void print_cal(const struct gs_backend *b, const struct gs_opts *o,
		      const struct gs_cal *c)
{
	int i;

	json_head(stdout, b, o);
	printf(",\"mode\":\"calibrate\",\"iters_per_us\":%.4f,"
	       "\"overhead_us\":%.3f,\"points\":[", c->iters_per_us,
	       c->overhead_us);
	for (i = 0; i < c->npts; i++)
		printf("%s{\"iters\":%.0f,\"us\":%.3f}", i ? "," : "",
		       c->pt_iters[i], c->pt_us[i]);
	printf("],\"check\":[");
	for (i = 0; i < c->nchk; i++)
		printf("%s{\"solo_us\":%g,\"measured_us\":%.3f}", i ? "," : "",
		       c->chk_us[i], c->chk_meas[i]);
	printf("]}\n");
	fflush(stdout);
}

/* ---- the trace ------------------------------------------------------------ */

/*
 * The kernels' GPU start and end times, in launch order, as pairs of
 * native-endian u64 (%globaltimer ns). A kernel that did not finish
 * stamping (never, after the final sync) is written as 0, 0.
 */
static void write_trace(struct gs_backend *b, const char *path)
{
	unsigned int n = b->ntraced < b->trace_cap ? b->ntraced : b->trace_cap, i;
	struct gs_trace_rec *r;
	FILE *f;

	r = calloc(n ? n : 1, sizeof(*r));
	if (!r)
		gs_die("out of memory for %u trace records", n);
	if (n)
		b->trace_fetch(b, r, n);
	f = fopen(path, "wb");
	if (!f)
		gs_die("%s: %s", path, strerror(errno));
	for (i = 0; i < n; i++) {
		unsigned long long t[2] = { r[i].start, r[i].end };

		if (r[i].out != (unsigned int)b->blocks)
			t[0] = t[1] = 0;
		if (fwrite(t, sizeof(t), 1, f) != 1)
			gs_die("%s: write failed", path);
	}
	if (fclose(f))
		gs_die("%s: %s", path, strerror(errno));
	if (n >= b->trace_cap)
		gs_warn("trace full: only the first %u kernels recorded", n);
	free(r);
}

/* ---- the run ------------------------------------------------------------- */

/*
 * GPUSCHED_START_FILE=PATH: a start decided once every process is ready.
 * Append our pid to PATH.ready, then wait for PATH to appear; it holds
 * the CLOCK_REALTIME start instant (gpusched-bench writes it when PATH.ready
 * has a line per process). Without it a process whose warm-up is starved
 * by the others' busy loops starts late and then runs alone.
 */
static void ready_file(struct gs_opts *o)
{
	const char *path = getenv("GPUSCHED_START_FILE");
	char ready[4096], buf[64];
	struct timespec ms = { 0, 1000000 };
	FILE *f;
	int n;

	if (!path || !*path)
		return;
	if (snprintf(ready, sizeof(ready), "%s.ready", path) >= (int)sizeof(ready))
		gs_die("GPUSCHED_START_FILE is too long");
	f = fopen(ready, "a");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
		gs_die("%s: %s", ready, strerror(errno));
	for (;;) {
		f = fopen(path, "r");
		if (f) {
			n = fgets(buf, sizeof(buf), f) != NULL;
			fclose(f);
			buf[strcspn(buf, "\n")] = '\0';
			if (n && *buf) {
				o->start_at = gs_parse_num("GPUSCHED_START_FILE", buf,
							   0, 1e11);
				return;
			}
		}
		nanosleep(&ms, NULL);
	}
}

/* Wait for the common start instant; returns how late we woke, in us. */
static double barrier(struct gs_opts *o)
{
	struct timespec ts;
	double late, wake;

	ready_file(o);
	if (o->start_at <= 0)
		return 0;
	if (realtime_s() > o->start_at) {
		late = (realtime_s() - o->start_at) * 1e6;
		gs_warn("start instant passed %.0f us before init and warm-up "
			"were done; starting now", late);
		return late;
	}
	/* Sleep to 2 ms before the instant, then spin: wake-ups can be late. */
	wake = o->start_at - 0.002;
	ts.tv_sec = (time_t)wake;
	ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec > 999999999)
		ts.tv_nsec = 999999999;
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	while ((late = realtime_s() - o->start_at) < 0)
		;
	return late * 1e6;
}

/*
 * Periodic: beside the trace, in launch order, each request's latency, the
 * time its launch call took (a wait for the GPU's token shows there) and
 * how late the process woke for its tick (the host's part of a slow one).
 */
static void write_latencies(const char *trace, const double *lat,
			    const double *call, const double *woke, size_t n)
{
	size_t len = strlen(trace) + sizeof(".lat");
	char *path = malloc(len);
	FILE *f;

	if (!path)
		gs_die("out of memory");
	snprintf(path, len, "%s.lat", trace);
	f = fopen(path, "w");
	if (!f)
		gs_die("%s: %s", path, strerror(errno));
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.1f %.1f %.1f\n", lat[i], call[i], woke[i]);
	if (fclose(f))
		gs_die("%s: %s", path, strerror(errno));
	free(path);
}

/* CPU time of the whole process (every thread, the library's too), in s. */
static double cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One lane of a busy loop: its host thread, its stream, its events. */
struct gs_lane {
	struct gs_backend *b;
	const struct gs_opts *o;
	int lane, depth;
	double tend;			/* gs_now_us() at which to stop */
	uint32_t iters[GS_NMIX];	/* per kernel length (one unless --mix) */
	double us[GS_NMIX];		/* their solo microseconds */
	int nlen;
	long kernels;			/* kernels launched (all complete at the end) */
	double work_us;			/* their solo microseconds */
	pthread_t thread;
};

/* Wait until slot of lane has completed, the way --wait says. */
static void wait_slot(struct gs_backend *b, const struct gs_opts *o, int lane,
		      int slot)
{
	if (o->wait == GS_WAIT_QUERY) {
		while (!b->query(b, lane, slot))
			;	/* a poll loop, as programs that spin on events do */
	} else {
		b->wait(b, lane, slot);
	}
}

/*
 * Busy: keep up to depth kernels (graphs) in flight on the lane's stream,
 * back to back, until tend; each launch records the slot's event, and a
 * launch into a full window first waits for the oldest one. --wait device
 * synchronizes the context after every launch instead.
 */
static void *busy_lane(void *arg)
{
	struct gs_lane *l = arg;
	struct gs_backend *b = l->b;
	const struct gs_opts *o = l->o;
	long n = 0;

	if (l->lane && b->thread_enter)
		b->thread_enter(b);
	while (gs_now_us() < l->tend) {
		int slot = (int)(n % l->depth);
		int k = (int)(l->kernels % l->nlen);

		if (o->wait != GS_WAIT_DEVICE && n >= l->depth)
			wait_slot(b, o, l->lane, slot);
		if (o->graph) {
			b->launch_graph(b, l->lane, l->iters[0], o->graph, slot);
			l->kernels += o->graph;
			l->work_us += o->graph * l->us[0];
		} else {
			b->launch(b, l->lane, l->iters[k], slot);
			l->kernels++;
			l->work_us += l->us[k];
		}
		if (o->wait == GS_WAIT_DEVICE)
			b->sync_device(b);
		n++;
	}
	b->sync_lane(b, l->lane);
	return NULL;
}

static const char *wait_name(int w)
{
	return w == GS_WAIT_QUERY ? "query" : w == GS_WAIT_DEVICE ? "device" :
	       "event";
}

int gs_main(struct gs_backend *b, struct gs_opts *o)
{
	struct gs_lane lanes[GS_MAX_LANES];
	double work_us = 0;
	int nl, i;
	const char *cal_src = "option";
	double t0, t1, tend, late, *lat = NULL, *call = NULL, *woke = NULL;
	double next, now, sub, ret, c0, c1;
	double t_start = gs_now_us(), t_init, t_ready;
	size_t nlat = 0, cap = 0;
	long kernels = 0, missed = 0;
	uint32_t iters;
	int depth = o->depth;
	struct gs_cal cal;

	prog = o->prog;
	nl = o->lanes > 0 ? o->lanes : 1;
	if (o->period_us > 0 || o->wait == GS_WAIT_DEVICE) {
		depth = 1;
	} else if (!depth) {
		depth = (int)ceil(8000 / (o->kernel_us * (o->graph ? o->graph : 1)));
		depth = depth < 2 ? 2 : depth > 256 ? 256 : depth;
	}
	if (o->graph && !b->launch_graph)
		gs_die("--graph: the %s backend has no graphs", b->api);

	b->init(b, o->device, nl, depth);
	t_init = gs_now_us();

	if (o->calibrate) {
		gs_calibrate(b, o, &cal);
		print_cal(b, o, &cal);
		b->fini(b);
		return 0;
	}
	if (getenv("GPUSCHED_ITERS_PER_US") && o->iters_per_us > 0)
		cal_src = "env";
	if (o->iters_per_us <= 0) {
		gs_warn("no --iters-per-us or GPUSCHED_ITERS_PER_US: "
			"calibrating now, which is only right when alone");
		gs_calibrate(b, o, &cal);
		o->iters_per_us = cal.iters_per_us;
		cal_src = "self";
	}
	iters = iters_for(o->kernel_us, o->iters_per_us);

	if (o->trace) {
		if (!b->trace_init)
			gs_die("--trace: not supported by the %s backend", b->api);
		b->trace_init(b, GS_TRACE_MAX);
	}
	warm_up(b, iters, o->kernel_us, o->warmup_ms);
	memset(lanes, 0, sizeof(lanes));
	for (i = 0; i < nl; i++) {
		struct gs_lane *l = &lanes[i];
		int k;

		l->b = b;
		l->o = o;
		l->lane = i;
		l->depth = depth;
		l->nlen = o->mix ? GS_NMIX : 1;
		for (k = 0; k < l->nlen; k++) {
			l->us[k] = o->kernel_us * (o->mix ? GS_MIX[k] : 1);
			l->iters[k] = iters_for(l->us[k], o->iters_per_us);
		}
	}
	/* The shapes' first use (a graph's instantiation) before the start. */
	if (o->graph) {
		b->launch_graph(b, 0, iters, o->graph, 0);
		b->sync(b);
	}
	if (o->mix) {
		for (i = 0; i < GS_NMIX; i++)
			b->launch(b, 0, lanes[0].iters[i], 0);
		b->sync(b);
	}
	if (o->period_us > 0) {
		cap = (size_t)(o->seconds * 1e6 / o->period_us) + 16;
		lat = malloc(cap * sizeof(*lat));
		call = malloc(cap * sizeof(*call));
		woke = malloc(cap * sizeof(*woke));
		if (!lat || !call || !woke)
			gs_die("out of memory for %zu latencies", cap);
	}

	t_ready = gs_now_us();
	late = barrier(o);
	b->trace_on = 1;
	t0 = gs_now_us();
	c0 = cpu_s();
	tend = t0 + o->seconds * 1e6;

	if (o->period_us <= 0) {
		/* Busy: a lane per host thread; lane 0 is this thread. */
		for (i = 0; i < nl; i++)
			lanes[i].tend = tend;
		for (i = 1; i < nl; i++)
			if (pthread_create(&lanes[i].thread, NULL, busy_lane,
					   &lanes[i]))
				gs_die("pthread_create failed");
		busy_lane(&lanes[0]);
		for (i = 1; i < nl; i++)
			pthread_join(lanes[i].thread, NULL);
		for (i = 0; i < nl; i++) {
			kernels += lanes[i].kernels;
			work_us += lanes[i].work_us;
		}
	} else {
		/*
		 * Periodic: one kernel per tick of an absolute schedule;
		 * latency from submission to completion as the host sees it
		 * after a stream synchronize. A kernel that completes after
		 * the next tick pushes the schedule: those ticks are counted
		 * as missed, not queued.
		 */
		next = t0;
		while (next < tend) {
			now = gs_now_us();
			if (now < next) {
				struct timespec ts;
				double d = next - now;

				ts.tv_sec = (time_t)(d / 1e6);
				ts.tv_nsec = (long)((d - ts.tv_sec * 1e6) * 1e3);
				while (nanosleep(&ts, &ts) == -1 &&
				       errno == EINTR)
					;
			}
			sub = gs_now_us();
			b->launch(b, 0, iters, 0);
			ret = gs_now_us();
			b->sync(b);
			now = gs_now_us();
			if (nlat < cap) {
				call[nlat] = ret - sub;
				woke[nlat] = sub > next ? sub - next : 0;
				lat[nlat++] = now - sub;
			}
			kernels++;
			work_us += o->kernel_us;
			next += o->period_us;
			while (next < now) {
				next += o->period_us;
				missed++;
			}
		}
	}
	t1 = gs_now_us();
	c1 = cpu_s();
	b->trace_on = 0;
	if (o->trace) {
		write_trace(b, o->trace);
		if (o->period_us > 0)
			write_latencies(o->trace, lat, call, woke, nlat);
	}

	json_head(stdout, b, o);
	printf(",\"pattern\":\"%s\",\"kernel_us\":%g,\"iters\":%u,"
	       "\"iters_per_us\":%.4f,\"calibration\":\"%s\",\"depth\":%d,"
	       "\"period_us\":%g,\"seconds\":%g,\"init_ms\":%.1f,"
	       "\"ready_ms\":%.1f,\"start_late_us\":%.1f,"
	       "\"kernels\":%ld,\"solo_us\":%g,\"wall_s\":%.6f,"
	       "\"share\":%.4f,\"traced\":%u,\"cpu_s\":%.4f,"
	       "\"work_us\":%.1f,\"wait\":\"%s\",\"graph\":%d,"
	       "\"threads\":%d,\"mix\":",
	       o->period_us > 0 ? "periodic" : "busy", o->kernel_us, iters,
	       o->iters_per_us, cal_src, depth, o->period_us, o->seconds,
	       (t_init - t_start) / 1e3, (t_ready - t_start) / 1e3, late,
	       kernels, o->kernel_us, (t1 - t0) / 1e6, work_us / (t1 - t0),
	       b->ntraced < b->trace_cap ? b->ntraced : b->trace_cap, c1 - c0,
	       work_us, wait_name(o->wait), o->graph, nl);
	if (o->mix) {
		for (i = 0; i < GS_NMIX; i++)
			printf("%s%g", i ? "," : "[", GS_MIX[i]);
		printf("]");
	} else {
		printf("null");
	}
	if (o->period_us > 0) {
		double sum = 0;
		size_t i;

		qsort(lat, nlat, sizeof(*lat), cmp_double);
		for (i = 0; i < nlat; i++)
			sum += lat[i];
		printf(",\"missed_periods\":%ld,\"latency_us\":{\"n\":%zu,"
		       "\"min\":%.1f,\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,"
		       "\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f}",
		       missed, nlat, pct(lat, nlat, 0), pct(lat, nlat, 0.5),
		       pct(lat, nlat, 0.9), pct(lat, nlat, 0.99),
		       pct(lat, nlat, 0.999), nlat ? lat[nlat - 1] : 0,
		       nlat ? sum / nlat : 0);
		fprintf(stderr, "%s: pid %d: %zu launches, latency p50 %.1f us, "
			"p99 %.1f us, max %.1f us; share %.4f\n", prog,
			(int)getpid(), nlat, pct(lat, nlat, 0.5),
			pct(lat, nlat, 0.99), nlat ? lat[nlat - 1] : 0,
			work_us / (t1 - t0));
	}
	printf("}\n");
	fflush(stdout);
	free(lat);
	free(call);
	free(woke);
	b->fini(b);
	return 0;
}
