// SPDX-License-Identifier: GPL-2.0
/* gpuschedctl: output and argument helpers. */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpuschedctl.h"
#include "knobs.h"

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gpuschedctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'gpuschedctl --help'.\n", stderr);
	return EXIT_USAGE;
}

/*
 * A JSON string. Bytes outside printable ASCII are escaped as \u00XX so
 * that the output is valid JSON whatever a process named itself.
 */
void json_str(const char *s)
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

const char *user_name(uint32_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%u", uid);
	return buf;
}

/* "12.3ms": a duration in ns, short. */
const char *dur(uint64_t ns, char *buf, size_t size)
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
const char *mem_text(uint64_t v, char buf[GS_MEM_TEXT_LEN])
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

void print_mem_json(const struct gs_client_rec *c)
{
	if (c->has_mem)
		printf(",\"mem_total\":%llu,\"mem_reserved\":%llu,\"mem_limit\":%llu,\"mem_refused\":%llu",
		       (unsigned long long)c->mem_total,
		       (unsigned long long)c->mem_reserved,
		       (unsigned long long)c->mem_limit,
		       (unsigned long long)c->mem_refused);
	else
		printf(",\"mem_total\":null,\"mem_reserved\":null,\"mem_limit\":null,\"mem_refused\":null");
	if (c->has_mem_ctx)
		printf(",\"mem_context\":%llu", (unsigned long long)c->mem_ctx);
	else
		printf(",\"mem_context\":null");
}

void print_gpu_json(const struct gs_client_rec *c)
{
	if (c->has_gpu_ns)
		printf(",\"gpu_ns\":%llu", (unsigned long long)c->gpu_ns);
	else
		printf(",\"gpu_ns\":null");
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || *end || end == s || !(*out >= 0) || *out > 86400)
		return usage_error("%s \"%s\": expected seconds, e.g. 0.5", opt, s);
	return 0;
}

int parse_gpu_opt(const char *s, int64_t *gpu)
{
	const char *why;
	uint32_t v;

	if (gs_parse_u32(s, 0, UINT32_MAX, &v, &why))
		return usage_error("GPU index \"%s\": %s", s, why);
	*gpu = v;
	return 0;
}

void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
		;
}

void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}
