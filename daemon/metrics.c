// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus metrics over a tiny HTTP server. Scrapers send one GET and
 * read one response; that is all this serves (HTTP/1.0 semantics, the
 * connection closes after the response). Every socket is non-blocking and
 * driven by the daemon's poll loop, so a slow or stuck scraper costs one
 * slot until its timeout, never the daemon's attention to new clients.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dlog.h"
#include "knobs.h"
#include "metrics.h"
#include "nvml.h"

#define MAX_CONNS	(GS_METRICS_MAX_FDS - 1)
#define REQ_MAX		8192
#define CONN_TIMEOUT_MS	10000

struct conn {
	int fd;			/* -1: free slot */
	bool writing;
	size_t inlen;
	char in[REQ_MAX];
	char *out;
	size_t outlen, outoff;
	int64_t deadline_ms;
};

struct gs_metrics {
	int lfd;
	int epfd;		/* gs_metrics_fd(); -1 until asked for */
	int reg[GS_METRICS_MAX_FDS];	/* descriptors in it */
	int nr_reg;
	gs_metrics_render_fn *render;
	void *arg;
	struct conn conns[MAX_CONNS];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_addr(const char *addr, struct sockaddr_storage *ss,
		      socklen_t *len, char *err, size_t size)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon, *port_s;
	unsigned long port;
	char *end;
	size_t hlen;

	memset(ss, 0, sizeof(*ss));
	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			goto bad;
		hlen = (size_t)(close - addr - 1);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, addr + 1, hlen);
		host[hlen] = '\0';
		port_s = close + 2;
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			goto bad;
		hlen = (size_t)(colon - addr);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, addr, hlen);
		host[hlen] = '\0';
		port_s = colon + 1;
	}
	errno = 0;
	port = strtoul(port_s, &end, 10);
	if (errno || *end || end == port_s || port == 0 || port > 65535)
		goto bad;
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		/* 127.0.0.0/8 */
		if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
			goto not_loopback;
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			goto not_loopback;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
bad:
	snprintf(err, size,
		 "metrics address \"%s\": expected 127.0.0.1:PORT, [::1]:PORT or localhost:PORT",
		 addr);
	return -1;
not_loopback:
	snprintf(err, size,
		 "metrics address \"%s\" is not a loopback address: the metrics name every client's process and user, so they are served on 127.0.0.1 or ::1 only (put a proxy with access control in front for remote scrapers)",
		 addr);
	return -1;
}

struct gs_metrics *gs_metrics_open(const char *addr, gs_metrics_render_fn *fn,
				   void *arg, char *err, size_t size)
{
	struct sockaddr_storage ss;
	struct gs_metrics *m;
	socklen_t len;
	int one = 1, i;

	if (parse_addr(addr, &ss, &len, err, size))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, size, "out of memory");
		return NULL;
	}
	m->render = fn;
	m->arg = arg;
	m->epfd = -1;
	for (i = 0; i < MAX_CONNS; i++)
		m->conns[i].fd = -1;
	m->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->lfd < 0) {
		snprintf(err, size, "metrics socket: %s", strerror(errno));
		goto fail;
	}
	/* A restarted daemon must get its port back at once. */
	setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(m->lfd, (struct sockaddr *)&ss, len)) {
		snprintf(err, size, "metrics address %s: %s%s", addr,
			 strerror(errno),
			 errno == EADDRINUSE ? " (is another gpuschedd running?)" :
			 errno == EADDRNOTAVAIL ? " (is the loopback interface up?)" : "");
		goto fail;
	}
	if (listen(m->lfd, 16)) {
		snprintf(err, size, "metrics listen: %s", strerror(errno));
		goto fail;
	}
	return m;
fail:
	gs_metrics_close(m);
	return NULL;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->writing = false;
	c->inlen = c->outlen = c->outoff = 0;
}

void gs_metrics_close(struct gs_metrics *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < MAX_CONNS; i++)
		conn_close(&m->conns[i]);
	if (m->lfd >= 0)
		close(m->lfd);
	if (m->epfd >= 0)
		close(m->epfd);
	free(m);
}

static int nr_conns(const struct gs_metrics *m)
{
	int i, n = 0;

	for (i = 0; i < MAX_CONNS; i++)
		n += m->conns[i].fd >= 0;
	return n;
}

int gs_metrics_pollfds(const struct gs_metrics *m, struct pollfd *fds)
{
	int i, n = 0;

	/* When every slot is taken, new peers wait in the backlog. */
	if (nr_conns(m) < MAX_CONNS)
		fds[n++] = (struct pollfd){ .fd = m->lfd, .events = POLLIN };
	for (i = 0; i < MAX_CONNS; i++) {
		const struct conn *c = &m->conns[i];

		if (c->fd >= 0)
			fds[n++] = (struct pollfd){
				.fd = c->fd,
				.events = c->writing ? POLLOUT : POLLIN,
			};
	}
	return n;
}

int gs_metrics_timeout_ms(const struct gs_metrics *m)
{
	int64_t now = now_ms(), best = -1;
	int i;

	for (i = 0; i < MAX_CONNS; i++) {
		const struct conn *c = &m->conns[i];
		int64_t left;

		if (c->fd < 0)
			continue;
		left = c->deadline_ms > now ? c->deadline_ms - now : 0;
		if (best < 0 || left < best)
			best = left;
	}
	return (int)best;
}

static void respond(struct gs_metrics *m, struct conn *c, bool head,
		    int status, const char *reason, const char *body,
		    size_t blen)
{
	FILE *f = open_memstream(&c->out, &c->outlen);

	if (!f) {
		conn_close(c);
		return;
	}
	fprintf(f, "HTTP/1.1 %d %s\r\n"
		"Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		"Content-Length: %zu\r\n"
		"Connection: close\r\n\r\n", status, reason, blen);
	if (!head)
		fwrite(body, 1, blen, f);
	if (fclose(f)) {
		conn_close(c);
		return;
	}
	(void)m;
	c->writing = true;
	c->outoff = 0;
}

/* The request line of a complete header: serve it. */
static void serve(struct gs_metrics *m, struct conn *c)
{
	char method[16], path[256];
	bool head;

	c->in[c->inlen] = '\0';
	if (sscanf(c->in, "%15s %255s", method, path) != 2) {
		respond(m, c, false, 400, "Bad Request", "bad request\n", 12);
		return;
	}
	head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET")) {
		respond(m, c, false, 405, "Method Not Allowed",
			"only GET and HEAD\n", 18);
		return;
	}
	path[strcspn(path, "?")] = '\0';
	if (!strcmp(path, "/metrics")) {
		char *body = NULL;
		size_t blen = 0;
		FILE *f = open_memstream(&body, &blen);
		int err = f ? m->render(m->arg, f) : -ENOMEM;

		if (f && fclose(f) && !err)
			err = -ENOMEM;
		if (err) {
			static const char msg[] = "gpuschedd cannot read the gpusched state now\n";

			respond(m, c, head, 503, "Service Unavailable", msg,
				sizeof(msg) - 1);
		} else {
			respond(m, c, head, 200, "OK", body, blen);
		}
		free(body);
		return;
	}
	if (!strcmp(path, "/")) {
		static const char msg[] = "gpuschedd: metrics are at /metrics\n";

		respond(m, c, head, 200, "OK", msg, sizeof(msg) - 1);
		return;
	}
	respond(m, c, head, 404, "Not Found", "not found: try /metrics\n", 24);
}

static void conn_read(struct gs_metrics *m, struct conn *c)
{
	ssize_t n = read(c->fd, c->in + c->inlen, sizeof(c->in) - 1 - c->inlen);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->inlen += (size_t)n;
	c->in[c->inlen] = '\0';
	if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n")) {
		serve(m, c);
		return;
	}
	if (c->inlen >= sizeof(c->in) - 1)
		respond(m, c, false, 431, "Request Header Fields Too Large",
			"request too large\n", 18);
}

static void conn_write(struct conn *c)
{
	ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
			 MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		conn_close(c);
		return;
	}
	c->outoff += (size_t)n;
	if (c->outoff == c->outlen)
		conn_close(c);
}

static void do_accept(struct gs_metrics *m)
{
	int i, fd;

	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &m->conns[i];

		if (c->fd >= 0)
			continue;
		fd = accept4(m->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		c->fd = fd;
		c->inlen = 0;
		c->writing = false;
		c->deadline_ms = now_ms() + CONN_TIMEOUT_MS;
	}
}

void gs_metrics_process(struct gs_metrics *m, const struct pollfd *fds, int n)
{
	int64_t now;
	int i, j;

	for (i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		if (fds[i].fd == m->lfd) {
			do_accept(m);
			continue;
		}
		for (j = 0; j < MAX_CONNS; j++) {
			struct conn *c = &m->conns[j];

			if (c->fd != fds[i].fd)
				continue;
			if (fds[i].revents & (POLLERR | POLLNVAL))
				conn_close(c);
			else if (c->writing)
				conn_write(c);
			else
				conn_read(m, c);
			break;
		}
	}
	now = now_ms();
	for (j = 0; j < MAX_CONNS; j++)
		if (m->conns[j].fd >= 0 && m->conns[j].deadline_ms <= now)
			conn_close(&m->conns[j]);
}

/* --- the exposition format --- */

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void client_labels(FILE *f, const struct gs_client_rec *c)
{
	fprintf(f, "{gpu=\"%u\",id=\"%llu\",pid=\"%u\",comm=\"", c->gpu,
		(unsigned long long)c->id, c->pid);
	label(f, c->comm);
	fprintf(f, "\",uid=\"%u\"}", c->uid);
}

enum val_kind { V_U32, V_U64, V_NS, V_PCT };

struct col {
	const char *name, *type, *help;
	size_t off;
	enum val_kind kind;
};

static void put_val(FILE *f, const void *rec, const struct col *col)
{
	const char *p = (const char *)rec + col->off;
	uint64_t v64;
	uint32_t v32;

	switch (col->kind) {
	case V_U32:
		memcpy(&v32, p, sizeof(v32));
		fprintf(f, " %u\n", v32);
		break;
	case V_U64:
		memcpy(&v64, p, sizeof(v64));
		fprintf(f, " %llu\n", (unsigned long long)v64);
		break;
	case V_NS:
		memcpy(&v64, p, sizeof(v64));
		fprintf(f, " %.9f\n", v64 / 1e9);
		break;
	case V_PCT:
		memcpy(&v32, p, sizeof(v32));
		fprintf(f, " %.2f\n", v32 / 100.0);
		break;
	}
}

#define GCOL(n, t, h, field, k) { n, t, h, offsetof(struct gs_gpu_rec, field), k }
#define CCOL(n, t, h, field, k) { n, t, h, offsetof(struct gs_client_rec, field), k }

static const struct col gpu_cols[] = {
	GCOL("gpusched_gpu_clients", "gauge", "Clients attached to the GPU's token.",
	     nr_clients, V_U32),
	GCOL("gpusched_gpu_waiting", "gauge", "Clients waiting for the token.",
	     nr_waiting, V_U32),
	GCOL("gpusched_gpu_held_seconds_total", "counter",
	     "Time the token has been held, all clients.", held_ns, V_NS),
	GCOL("gpusched_gpu_grants_total", "counter", "Grants of the token.",
	     grants, V_U64),
	GCOL("gpusched_gpu_overruns_total", "counter",
	     "Grants revoked because the holder did not yield within the grace time.",
	     overruns, V_U64),
	GCOL("gpusched_gpu_mem_reserved_bytes", "gauge",
	     "Device memory reserved by the GPU's clients.", mem_reserved, V_U64),
};

/* Only for clients whose service reports memory (has_mem). */
static const struct col client_mem_cols[] = {
	CCOL("gpusched_client_mem_reserved_bytes", "gauge",
	     "Device memory the client has reserved through its library.",
	     mem_reserved, V_U64),
	CCOL("gpusched_client_mem_limit_bytes", "gauge",
	     "The client's effective device memory limit; 0: none.", mem_limit, V_U64),
	CCOL("gpusched_client_mem_total_bytes", "gauge",
	     "Device memory the client's driver reported; 0: unknown.", mem_total, V_U64),
	CCOL("gpusched_client_mem_refused_total", "counter",
	     "Reservations refused because they would pass the limit.",
	     mem_refused, V_U64),
};

/* Only for clients whose service reports their GPU time (has_gpu_ns). */
static const struct col client_gpu_cols[] = {
	CCOL("gpusched_client_gpu_seconds_total", "counter",
	     "GPU time the client's library reported for its grants.", gpu_ns, V_NS),
};

static const struct col client_cols[] = {
	CCOL("gpusched_client_weight", "gauge", "The client's weight (1..10000).",
	     weight, V_U32),
	CCOL("gpusched_client_cap_ratio", "gauge",
	     "The client's cap as a ratio of wall time; 0: no cap.", cap_pct, V_PCT),
	CCOL("gpusched_client_held_seconds_total", "counter",
	     "Token time charged to the client.", held_ns, V_NS),
	CCOL("gpusched_client_grants_total", "counter", "Grants to the client.",
	     grants, V_U64),
	CCOL("gpusched_client_wait_seconds_total", "counter",
	     "Time the client waited for the token.", wait_ns_total, V_NS),
	CCOL("gpusched_client_wait_max_seconds", "gauge",
	     "Longest single wait of the client.", wait_ns_max, V_NS),
	CCOL("gpusched_client_overruns_total", "counter",
	     "The client's grants revoked after the grace time.", overruns, V_U64),
	CCOL("gpusched_client_yields_total", "counter",
	     "Yield requests the client received.", yields, V_U64),
};

static void format_gpus(FILE *f, const struct gs_metrics_data *d)
{
	char uuid[GS_UUID_TEXT_LEN];
	size_t i, c;
	int k;

	head(f, "gpusched_gpu_info", "gauge", "A GPU token: its index and UUID.");
	for (i = 0; i < d->nr_gpus; i++) {
		gs_uuid_format(d->gpus[i].uuid, uuid);
		fprintf(f, "gpusched_gpu_info{gpu=\"%u\",uuid=\"%s\"} 1\n",
			d->gpus[i].index, uuid);
	}
	for (c = 0; c < sizeof(gpu_cols) / sizeof(gpu_cols[0]); c++) {
		head(f, gpu_cols[c].name, gpu_cols[c].type, gpu_cols[c].help);
		for (i = 0; i < d->nr_gpus; i++) {
			fprintf(f, "%s{gpu=\"%u\"}", gpu_cols[c].name,
				d->gpus[i].index);
			put_val(f, &d->gpus[i], &gpu_cols[c]);
		}
	}
	/* Knobs in base units: seconds, ratios and bytes, by their suffix. */
	for (k = 0; k < GS_POL_NR_KNOBS; k++) {
		const char *name = gs_pol_knobs[k].name;
		const char *sfx = strrchr(name, '_') + 1;
		bool pct = !strcmp(sfx, "pct"), mb = !strcmp(sfx, "mb");
		char metric[64];

		/* "timeslice_us" -> gpusched_gpu_timeslice_seconds */
		snprintf(metric, sizeof(metric), "gpusched_gpu_%.*s_%s",
			 (int)(sfx - 1 - name), name,
			 pct ? "ratio" : mb ? "bytes" : "seconds");
		head(f, metric, "gauge", gs_pol_knobs[k].doc);
		for (i = 0; i < d->nr_gpus; i++) {
			uint32_t v = d->gpus[i].knobs.val[k];

			if (!(d->gpus[i].knobs.mask & (1U << k)))
				continue;
			if (mb)
				fprintf(f, "%s{gpu=\"%u\"} %llu\n", metric,
					d->gpus[i].index, (unsigned long long)v << 20);
			else
				fprintf(f, "%s{gpu=\"%u\"} %.6f\n", metric,
					d->gpus[i].index, pct ? v / 100.0 : v / 1e6);
		}
	}
}

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static bool gpu_reported(const struct gs_client_rec *r)
{
	return r->has_gpu_ns;
}

static bool mem_reported(const struct gs_client_rec *r)
{
	return r->has_mem;
}

/*
 * The @n metrics of @cols, one line per client for which @has (NULL: every
 * client) says the service reports them.
 */
static void put_client_cols(FILE *f, const struct gs_metrics_data *d,
			    const struct col *cols, size_t n,
			    bool (*has)(const struct gs_client_rec *r))
{
	for (size_t c = 0; c < n; c++) {
		head(f, cols[c].name, cols[c].type, cols[c].help);
		for (size_t i = 0; i < d->nr_clients; i++) {
			const struct gs_client_rec *r = &d->clients[i];

			if (has && !has(r))
				continue;
			fputs(cols[c].name, f);
			client_labels(f, r);
			put_val(f, r, &cols[c]);
		}
	}
}

static void format_clients(FILE *f, const struct gs_metrics_data *d)
{
	size_t i;

	head(f, "gpusched_client_info", "gauge",
	     "A client of a GPU token, with its class and state.");
	for (i = 0; i < d->nr_clients; i++) {
		const struct gs_client_rec *r = &d->clients[i];

		fprintf(f, "gpusched_client_info{gpu=\"%u\",id=\"%llu\",pid=\"%u\",comm=\"",
			r->gpu, (unsigned long long)r->id, r->pid);
		label(f, r->comm);
		fprintf(f, "\",uid=\"%u\",gid=\"%u\",class=\"%s\",state=\"%s\"} 1\n",
			r->uid, r->gid, gs_class_name(r->class),
			gs_state_name(r->state));
	}
	put_client_cols(f, d, client_cols, ARRAY_LEN(client_cols), NULL);
	put_client_cols(f, d, client_gpu_cols, ARRAY_LEN(client_gpu_cols),
			gpu_reported);
	put_client_cols(f, d, client_mem_cols, ARRAY_LEN(client_mem_cols),
			mem_reported);
	/* Only where NVML told (nvml.h): no NVML, no metric. */
	for (i = 0; i < d->nr_clients && !d->clients[i].has_mem_ctx; i++)
		;
	if (i == d->nr_clients)
		return;
	head(f, "gpusched_client_mem_context_bytes", "gauge",
	     "Device memory the client's process uses on the GPU beyond what it reserved through gpusched (NVML): its CUDA context, and what reached the driver around the library.");
	for (i = 0; i < d->nr_clients; i++) {
		if (!d->clients[i].has_mem_ctx)
			continue;
		fputs("gpusched_client_mem_context_bytes", f);
		client_labels(f, &d->clients[i]);
		fprintf(f, " %llu\n", (unsigned long long)d->clients[i].mem_ctx);
	}
}

/* A counter of two series, @key="@a" and @key="@b". */
static void counter2(FILE *f, const char *name, const char *help,
		     const char *key, const char *a, uint64_t va,
		     const char *b, uint64_t vb)
{
	head(f, name, "counter", help);
	fprintf(f, "%s{%s=\"%s\"} %llu\n", name, key, a, (unsigned long long)va);
	fprintf(f, "%s{%s=\"%s\"} %llu\n", name, key, b, (unsigned long long)vb);
}

static void format_daemon(FILE *f, const struct gs_daemon_stats *st)
{
	static const char *const ev[] = { "attach", "detach", "overrun" };
	size_t i;

	head(f, "gpuschedd_module_present", "gauge",
	     "1 if the gpusched generic netlink family is registered.");
	fprintf(f, "gpuschedd_module_present %d\n", st->family);
	head(f, "gpuschedd_events_total", "counter", "Events received, by type.");
	for (i = 0; i < 3; i++)
		fprintf(f, "gpuschedd_events_total{type=\"%s\"} %llu\n", ev[i],
			(unsigned long long)st->events[i]);
	head(f, "gpuschedd_events_lost_total", "counter",
	     "Times the event socket overflowed (each followed by a full resync).");
	fprintf(f, "gpuschedd_events_lost_total %llu\n",
		(unsigned long long)st->lost);
	counter2(f, "gpuschedd_mem_admission_total",
		 "Clients whose memory limit would have passed their GPU's memory less the reserve, by what mem_admission did.",
		 "action", "refuse", st->admit_refused, "batch", st->admit_batch);
	head(f, "gpuschedd_clients_applied_total", "counter",
	     "Clients given the parameters of a rule.");
	fprintf(f, "gpuschedd_clients_applied_total %llu\n",
		(unsigned long long)st->applied);
	head(f, "gpuschedd_apply_errors_total", "counter",
	     "Requests to set a client or GPU that the module refused.");
	fprintf(f, "gpuschedd_apply_errors_total %llu\n",
		(unsigned long long)st->apply_errors);
	head(f, "gpuschedd_rule_matches_total", "counter",
	     "Clients matched, by rule of the policy in force.");
	for (i = 0; st->pol && i < st->pol->nr_rules; i++) {
		fputs("gpuschedd_rule_matches_total{rule=\"", f);
		label(f, st->pol->rules[i].name);
		fprintf(f, "\"} %llu\n", (unsigned long long)st->rule_hits[i]);
	}
	counter2(f, "gpuschedd_config_reloads_total",
		 "Reloads of the policy file (SIGHUP), by result.",
		 "result", "success", st->reloads_ok, "failure", st->reloads_failed);
	head(f, "gpuschedd_config_last_reload_successful", "gauge",
	     "1 if the last load of the policy file succeeded.");
	fprintf(f, "gpuschedd_config_last_reload_successful %d\n",
		st->last_reload_ok);
	head(f, "gpuschedd_config_last_reload_success_timestamp_seconds", "gauge",
	     "When the policy in force was loaded.");
	fprintf(f, "gpuschedd_config_last_reload_success_timestamp_seconds %.3f\n",
		st->last_reload_ok_time);
}

void gs_metrics_format(FILE *f, const struct gs_metrics_data *d)
{
	format_gpus(f, d);
	format_clients(f, d);
	if (d->st)
		format_daemon(f, d->st);
}

static int cmp_client_id(const void *a, const void *b)
{
	const struct gs_client_rec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int gs_metrics_page_render(void *arg, FILE *f)
{
	static bool said;
	const struct gs_metrics_page *page = arg;
	struct gs_metrics_data d = { .st = page->st };
	struct gs_client_rec *cl = NULL;
	struct gs_gpu_rec *gpus = NULL;
	const char *why;
	int err;

	err = page->records(page->arg, &gpus, &d.nr_gpus, &cl, &d.nr_clients);
	if (!err && d.nr_clients &&
	    gs_nvml_ctx_mem_sampled(gpus, d.nr_gpus, cl, d.nr_clients, &why) == -ENOENT &&
	    !said) {
		gs_log(LOG_DEBUG, "no NVML (%s): the metrics show no context memory",
		       why);
		said = true;
	}
	if (!err) {
		if (d.nr_clients)
			qsort(cl, d.nr_clients, sizeof(*cl), cmp_client_id);
		d.gpus = gpus;
		d.clients = cl;
		gs_metrics_format(f, &d);
	}
	free(gpus);
	free(cl);
	return err;
}

/* --- driven by an epoll loop --- */

/*
 * Make the epoll set wait for what gs_metrics_pollfds() asks for. A closed
 * descriptor leaves the set by itself and its number may come back for a
 * new peer, so ADD is tried first and MOD is the fallback.
 */
static void epoll_sync(struct gs_metrics *m)
{
	struct pollfd fds[GS_METRICS_MAX_FDS];
	int n = gs_metrics_pollfds(m, fds), i, j;

	for (i = 0; i < m->nr_reg; i++) {
		for (j = 0; j < n && fds[j].fd != m->reg[i]; j++)
			;
		if (j == n)
			epoll_ctl(m->epfd, EPOLL_CTL_DEL, m->reg[i], NULL);
	}
	for (j = 0; j < n; j++) {
		struct epoll_event ev = {
			.events = fds[j].events & POLLOUT ? EPOLLOUT : EPOLLIN,
			.data.fd = fds[j].fd,
		};

		if (epoll_ctl(m->epfd, EPOLL_CTL_ADD, fds[j].fd, &ev) &&
		    errno == EEXIST)
			epoll_ctl(m->epfd, EPOLL_CTL_MOD, fds[j].fd, &ev);
		m->reg[j] = fds[j].fd;
	}
	m->nr_reg = n;
}

int gs_metrics_fd(struct gs_metrics *m)
{
	if (m->epfd < 0) {
		m->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (m->epfd < 0)
			return -1;
		epoll_sync(m);
	}
	return m->epfd;
}

void gs_metrics_dispatch(struct gs_metrics *m)
{
	struct pollfd fds[GS_METRICS_MAX_FDS];
	int n = gs_metrics_pollfds(m, fds);

	/* Which of a handful of sockets are ready: poll() says, at once. */
	if (poll(fds, (nfds_t)n, 0) < 0)
		return;
	gs_metrics_process(m, fds, n);
	if (m->epfd >= 0)
		epoll_sync(m);
}
