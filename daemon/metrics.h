/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prometheus metrics of gpuschedd: a minimal HTTP/1.x server on a loopback
 * TCP address, driven by the daemon's event loop (one thread, no blocking),
 * and the text exposition format (version 0.0.4) of GPUs, clients and the
 * daemon's own counters. A poll() loop (the netlink mode) polls the
 * server's sockets itself; an epoll loop (the arbiter) watches one
 * descriptor, gs_metrics_fd().
 */
#ifndef GSD_METRICS_H
#define GSD_METRICS_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "genl.h"
#include "policyfile.h"

/* The daemon's own counters, exported next to the module's. */
struct gs_daemon_stats {
	uint64_t applied;		/* clients given a rule's parameters */
	uint64_t apply_errors;
	uint64_t events[3];		/* attach, detach, overrun */
	uint64_t lost;			/* event overflows (each a resync) */
	uint64_t admit_refused, admit_batch;	/* by mem_admission */
	uint64_t reloads_ok, reloads_failed;
	bool last_reload_ok;
	double last_reload_ok_time;	/* Unix time */
	bool family;			/* the module's family is there */
	const struct gs_policy *pol;	/* in force (gs_policy_reload() sets it) */
	const uint64_t *rule_hits;	/* per rule of pol */
};

struct gs_metrics_data {
	const struct gs_gpu_rec *gpus;
	size_t nr_gpus;
	const struct gs_client_rec *clients;
	size_t nr_clients;
	const struct gs_daemon_stats *st;
};

void gs_metrics_format(FILE *f, const struct gs_metrics_data *d);

/* Writes the metrics page into @f; 0, or -errno (served as 503). */
typedef int gs_metrics_render_fn(void *arg, FILE *f);

/*
 * A mode's records of its GPUs and clients, in arrays it malloc()s; the
 * caller frees both, whatever is returned. 0, or -errno.
 */
typedef int gs_metrics_records_fn(void *arg, struct gs_gpu_rec **gpus,
				  size_t *nr_gpus, struct gs_client_rec **clients,
				  size_t *nr_clients);

/* What the metrics page of either mode shows: its records and counters. */
struct gs_metrics_page {
	gs_metrics_records_fn *records;
	void *arg;			/* for records() */
	const struct gs_daemon_stats *st;
};

/**
 * gs_metrics_page_render() - the metrics page of either mode of gpuschedd
 * @arg: a struct gs_metrics_page
 * @f: written to
 *
 * A gs_metrics_render_fn for gs_metrics_open(): the records that
 * page->records() gives, clients in id order, and the daemon's counters.
 *
 * Return: 0, or what records() returned.
 */
int gs_metrics_page_render(void *arg, FILE *f);

struct gs_metrics;

/*
 * Listen on @addr: "127.0.0.1:PORT", "[::1]:PORT" or "localhost:PORT".
 * Anything but loopback is refused: the page names every client's
 * process and user. NULL with a message in @err on failure.
 */
struct gs_metrics *gs_metrics_open(const char *addr, gs_metrics_render_fn *fn,
				   void *arg, char *err, size_t size);
void gs_metrics_close(struct gs_metrics *m);

/* Room needed in a pollfd array, at most. */
#define GS_METRICS_MAX_FDS	17

/* Fill @fds with what to poll; the number used. */
int gs_metrics_pollfds(const struct gs_metrics *m, struct pollfd *fds);
/* Serve what poll() reported in @fds (as filled); drop stale peers. */
void gs_metrics_process(struct gs_metrics *m, const struct pollfd *fds, int n);
/* Milliseconds until a connection times out, or -1. */
int gs_metrics_timeout_ms(const struct gs_metrics *m);

/*
 * For an epoll loop: one descriptor (an epoll set of the server's own
 * sockets, kept in step with what they wait for) that is readable when
 * any of them is ready; -1 if it cannot be made. When it is readable, or
 * gs_metrics_timeout_ms() has passed, call gs_metrics_dispatch().
 */
int gs_metrics_fd(struct gs_metrics *m);
void gs_metrics_dispatch(struct gs_metrics *m);

#endif /* GSD_METRICS_H */
