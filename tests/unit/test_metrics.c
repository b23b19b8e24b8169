// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of gpuschedd's metrics (daemon/metrics.c): the Prometheus
 * text format of synthetic GPUs and clients, and the HTTP server on
 * loopback, driven by a poll loop as the daemon drives it.
 * tests/unit/metrics.t runs it plainly and under valgrind.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tap.h"
#include "metrics.h"

static const struct gs_gpu_rec gpus[] = {
	{
		.index = 0,
		.uuid = { 0x67, 0x73, 0x54, 0x45, 0x53, 0x54, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x41 },
		.knobs = { .mask = 1U << GS_POL_KNOB_TIMESLICE | 1U << GS_POL_KNOB_LATENCY_PCT |
				   1U << GS_POL_KNOB_MEM_DEFAULT_PCT | 1U << GS_POL_KNOB_MEM_RESERVE,
			   .val = { [GS_POL_KNOB_TIMESLICE] = 2500, [GS_POL_KNOB_LATENCY_PCT] = 50,
				    [GS_POL_KNOB_MEM_DEFAULT_PCT] = 25,
				    [GS_POL_KNOB_MEM_RESERVE] = 1024 } },
		.nr_clients = 2, .nr_waiting = 1, .holder_pid = 42,
		.grants = 7, .overruns = 1, .held_ns = 1500000000,
		.mem_reserved = 3ULL << 30,
	},
};

static const struct gs_client_rec clients[] = {
	{ .gpu = 0, .id = 5, .pid = 42, .comm = "py\"th\\on\n", .uid = 1000,
	  .weight = 300, .class = GPUSCHED_CLASS_LATENCY, .cap_pct = 25,
	  .state = GPUSCHED_STATE_HOLDING, .held_ns = 1000000000, .grants = 4,
	  .has_gpu_ns = true, .gpu_ns = 750000000,
	  .has_mem = true, .mem_total = 80ULL << 30, .mem_reserved = 3ULL << 30,
	  .mem_limit = 20ULL << 30, .mem_refused = 2 },
	{ .gpu = 0, .id = 6, .pid = 43, .comm = "train", .uid = 1001,
	  .weight = 100, .class = GPUSCHED_CLASS_NORMAL,
	  .state = GPUSCHED_STATE_WAITING, .held_ns = 500000000, .grants = 3,
	  .wait_ns_total = 2000000, .wait_ns_max = 1500000, .overruns = 1 },
};

static char *format_clients(const struct gs_client_rec *cl)
{
	static const uint64_t hits[2] = { 3, 0 };
	static struct gs_rule rules[2] = { { .name = "web" }, { .name = "all\"x" } };
	static struct gs_policy pol = { .rules = rules, .nr_rules = 2 };
	struct gs_daemon_stats st = {
		.applied = 3, .events = { 4, 2, 1 }, .reloads_ok = 1,
		.reloads_failed = 2, .last_reload_ok = false, .family = true,
		.pol = &pol, .rule_hits = hits, .admit_batch = 3,
	};
	struct gs_metrics_data d = { gpus, 1, cl, 2, &st };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	gs_metrics_format(f, &d);
	fclose(f);
	return buf;
}

static char *format(void)
{
	return format_clients(clients);
}

/* Context memory: only for clients NVML told of, and no metric without. */
static void test_context(void)
{
	struct gs_client_rec cl[2];
	char *page;

	memcpy(cl, clients, sizeof(cl));
	cl[0].has_mem_ctx = true;
	cl[0].mem_ctx = 512ULL << 20;
	page = format_clients(cl);
	if (!CHECK(page, "format"))
		return;
	CHECK(strstr(page, "# TYPE gpusched_client_mem_context_bytes gauge\n"),
	      "context memory: its type");
	CHECK(strstr(page, "gpusched_client_mem_context_bytes{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\"} 536870912\n"),
	      "context memory of the client NVML listed");
	CHECK(!strstr(page, "gpusched_client_mem_context_bytes{gpu=\"0\",id=\"6\""),
	      "no context memory for a client NVML did not list");
	free(page);
}

static void test_format(void)
{
	static const char *const want[] = {
		"# TYPE gpusched_gpu_info gauge\n",
		"gpusched_gpu_info{gpu=\"0\",uuid=\"GPU-67735445-5354-0000-0000-000000000041\"} 1\n",
		"gpusched_gpu_clients{gpu=\"0\"} 2\n",
		"gpusched_gpu_waiting{gpu=\"0\"} 1\n",
		"# TYPE gpusched_gpu_held_seconds_total counter\n",
		"gpusched_gpu_held_seconds_total{gpu=\"0\"} 1.500000000\n",
		"gpusched_gpu_overruns_total{gpu=\"0\"} 1\n",
		"gpusched_gpu_timeslice_seconds{gpu=\"0\"} 0.002500\n",
		"gpusched_gpu_latency_ratio{gpu=\"0\"} 0.500000\n",
		"gpusched_gpu_mem_default_ratio{gpu=\"0\"} 0.250000\n",
		"gpusched_gpu_mem_reserve_bytes{gpu=\"0\"} 1073741824\n",
		"gpusched_gpu_mem_reserved_bytes{gpu=\"0\"} 3221225472\n",
		"gpusched_client_mem_reserved_bytes{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\"} 3221225472\n",
		"gpusched_client_mem_limit_bytes{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\"} 21474836480\n",
		"gpusched_client_mem_total_bytes{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\"} 85899345920\n",
		"gpusched_client_mem_refused_total{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\"} 2\n",
		/* Label values escaped: quote, backslash, newline. */
		"gpusched_client_info{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\",gid=\"0\",class=\"latency\",state=\"holding\"} 1\n",
		"gpusched_client_weight{gpu=\"0\",id=\"6\",pid=\"43\",comm=\"train\",uid=\"1001\"} 100\n",
		"gpusched_client_cap_ratio{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\"} 0.25\n",
		"gpusched_client_wait_max_seconds{gpu=\"0\",id=\"6\",pid=\"43\",comm=\"train\",uid=\"1001\"} 0.001500000\n",
		"gpusched_client_overruns_total{gpu=\"0\",id=\"6\",pid=\"43\",comm=\"train\",uid=\"1001\"} 1\n",
		"# TYPE gpusched_client_gpu_seconds_total counter\n",
		"gpusched_client_gpu_seconds_total{gpu=\"0\",id=\"5\",pid=\"42\",comm=\"py\\\"th\\\\on\\n\",uid=\"1000\"} 0.750000000\n",
		"gpuschedd_events_total{type=\"overrun\"} 1\n",
		"gpuschedd_rule_matches_total{rule=\"web\"} 3\n",
		"gpuschedd_rule_matches_total{rule=\"all\\\"x\"} 0\n",
		"gpuschedd_config_reloads_total{result=\"failure\"} 2\n",
		"gpuschedd_mem_admission_total{action=\"refuse\"} 0\n",
		"gpuschedd_mem_admission_total{action=\"batch\"} 3\n",
		"gpuschedd_config_last_reload_successful 0\n",
		"gpuschedd_module_present 1\n",
	};
	char *page = format(), *line, *save;
	size_t i;
	int helps = 0, types = 0;

	if (!CHECK(page, "format"))
		return;
	CHECK(!strstr(page, "mem_context"), "no context memory without NVML");
	/* A client whose service reports no memory has no memory lines. */
	CHECK(!strstr(page, "gpusched_client_mem_limit_bytes{gpu=\"0\",id=\"6\""),
	      "memory of a client without it");
	/* Nor GPU time where the service reports none. */
	CHECK(!strstr(page, "gpusched_client_gpu_seconds_total{gpu=\"0\",id=\"6\""),
	      "GPU time of a client without it");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(strstr(page, want[i]), "missing: %s", want[i]);
	/* Every line is a comment or "name{labels} value", nothing else. */
	for (line = strtok_r(page, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7)) {
			helps++;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			types++;
			CHECK(strstr(line, " gauge") || strstr(line, " counter"), "%s", line);
			continue;
		}
		CHECK(!strncmp(line, "gpusched_", 9) || !strncmp(line, "gpuschedd_", 10),
		      "%s", line);
		CHECK(strrchr(line, ' ') && strrchr(line, ' ')[1], "no value: %s", line);
	}
	CHECK(helps == types && helps > 20, "%d HELP, %d TYPE", helps, types);
	free(page);
}

static int render(void *arg, FILE *f)
{
	int *fail = arg;
	char *page;

	if (*fail)
		return -EIO;
	page = format();
	if (!page)
		return -ENOMEM;
	fputs(page, f);
	free(page);
	return 0;
}

/* Send @req to the server at @port, serving it meanwhile; the reply. */
static char *ask(struct gs_metrics *m, int port, const char *req)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	static char reply[1 << 16];
	size_t len = 0, sent = 0;
	int s, rounds;

	reply[0] = '\0';
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (s < 0)
		return reply;
	connect(s, (struct sockaddr *)&sa, sizeof(sa));
	for (rounds = 0; rounds < 2000; rounds++) {
		struct pollfd fds[GS_METRICS_MAX_FDS + 1];
		int n = gs_metrics_pollfds(m, fds);
		ssize_t r;

		fds[n] = (struct pollfd){ .fd = s, .events = POLLIN | POLLOUT };
		poll(fds, n + 1, 10);
		gs_metrics_process(m, fds, n);
		if (sent < strlen(req)) {
			r = send(s, req + sent, strlen(req) - sent, MSG_NOSIGNAL);
			if (r > 0)
				sent += r;
		}
		r = recv(s, reply + len, sizeof(reply) - 1 - len, 0);
		if (r == 0)
			break;
		if (r > 0)
			len += r;
	}
	reply[len] = '\0';
	close(s);
	return reply;
}

static void test_server(void)
{
	char err[512], addr[32], *r;
	struct gs_metrics *m = NULL;
	int fail = 0, port = 0, i;

	/* A free port: try a few in the dynamic range. */
	for (i = 0; i < 50 && !m; i++) {
		port = 40000 + (getpid() * 7 + i * 131) % 20000;
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
		m = gs_metrics_open(addr, render, &fail, err, sizeof(err));
	}
	if (!CHECK(m, "open: %s", err))
		return;
	r = ask(m, port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	CHECK(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17), "got %.80s", r);
	CHECK(strstr(r, "Content-Type: text/plain; version=0.0.4"), "type");
	CHECK(strstr(r, "\r\n\r\n# HELP gpusched_gpu_info"), "body");
	r = ask(m, port, "HEAD /metrics HTTP/1.0\r\n\r\n");
	CHECK(!strncmp(r, "HTTP/1.1 200 OK\r\n", 17) && !strstr(r, "# HELP"), "HEAD: %.80s", r);
	r = ask(m, port, "GET /nope HTTP/1.1\r\n\r\n");
	CHECK(!strncmp(r, "HTTP/1.1 404 ", 13), "404: %.80s", r);
	r = ask(m, port, "POST /metrics HTTP/1.1\r\n\r\n");
	CHECK(!strncmp(r, "HTTP/1.1 405 ", 13), "405: %.80s", r);
	r = ask(m, port, "garbage\n\n");
	CHECK(!strncmp(r, "HTTP/1.1 400 ", 13), "400: %.80s", r);
	fail = 1;
	r = ask(m, port, "GET /metrics HTTP/1.1\r\n\r\n");
	CHECK(!strncmp(r, "HTTP/1.1 503 ", 13), "503: %.80s", r);
	gs_metrics_close(m);
}

static void test_addresses(void)
{
	static const struct { const char *addr, *why; } bad[] = {
		{ "0.0.0.0:9464", "not a loopback address" },
		{ "10.1.2.3:9464", "not a loopback address" },
		{ "[::]:9464", "not a loopback address" },
		{ "9464", "expected 127.0.0.1:PORT" },
		{ "127.0.0.1:0", "expected 127.0.0.1:PORT" },
		{ "127.0.0.1:65536", "expected 127.0.0.1:PORT" },
		{ "127.0.0.1:http", "expected 127.0.0.1:PORT" },
		{ "[::1:9464", "expected 127.0.0.1:PORT" },
		{ "example.com:9464", "expected 127.0.0.1:PORT" },
	};
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gs_metrics *m = gs_metrics_open(bad[i].addr, render, NULL,
						       err, sizeof(err));

		CHECK(!m && strstr(err, bad[i].why), "%s: %s", bad[i].addr,
		      m ? "accepted" : err);
		gs_metrics_close(m);
	}
}

static const struct tap_test tests[] = {
	{ "the Prometheus text format of GPUs, clients and the daemon", test_format },
	{ "context memory from NVML, only where NVML told", test_context },
	{ "HTTP: GET, HEAD, 404, 405, 400, 503", test_server },
	{ "only loopback addresses, with reasons", test_addresses },
};

int main(int argc, char **argv)
{
	return tap_run(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
