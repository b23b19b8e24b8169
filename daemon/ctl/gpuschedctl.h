/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gpuschedctl's parts: main.c (options, the command table), conn.c (the
 * token service, gpusched.ko or the arbiter), util.c (output and argument
 * helpers), rows.c (the client table of clients and top), and one file
 * per command: status.c, clients.c, top.c, set.c and watch.c.
 */
#ifndef GSD_CTL_GPUSCHEDCTL_H
#define GSD_CTL_GPUSCHEDCTL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arbctl.h"
#include "genl.h"

enum { EXIT_REQUEST = 1, EXIT_USAGE = 2, EXIT_ABSENT = 3 };

/* main.c: the global options */
extern bool json;
extern volatile sig_atomic_t stop;	/* set by on_signal() */

/* The token service: gpusched.ko, or the arbiter at arb_path. */
enum backend { BE_AUTO, BE_KMOD, BE_ARBITER };
extern enum backend backend;
extern const char *arb_path;

/* conn.c: a connection to the token service the options name */
struct conn {
	struct gs_nl *nl;
	struct gs_arb *arb;
};

/* 0, or the exit status after saying why there is no connection. */
int connect_ctl(struct conn *x);
void conn_close(struct conn *x);
int get_gpus(struct conn *x, struct gs_gpu_rec **gpus, size_t *n);
int get_clients(struct conn *x, int64_t gpu, struct gs_client_rec **cl,
		size_t *n);
/* Say why @what failed on @target; EXIT_REQUEST. */
int request_failed(struct conn *x, int err, const char *what,
		   const char *target);

/* util.c */
/* Say what is wrong with the command line; EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void json_str(const char *s);
const char *user_name(uint32_t uid, char *buf, size_t size);
const char *dur(uint64_t ns, char *buf, size_t size);
/* "1.5G": bytes, short (powers of 1024); "0" for none. */
const char *mem_text(uint64_t v, char buf[GS_MEM_TEXT_LEN]);
/*
 * @c's memory account as JSON members, each after a comma; null where
 * the service does not report memory.
 */
void print_mem_json(const struct gs_client_rec *c);
/* ,"gpu_ns": the GPU time @c reported, or null where not reported. */
void print_gpu_json(const struct gs_client_rec *c);
uint64_t now_ns(void);
int parse_seconds(const char *opt, const char *s, double *out);
int parse_gpu_opt(const char *s, int64_t *gpu);
/* Sleep @s seconds, or until stop is set. */
void sleep_s(double s);
void on_signal(int sig);

/* rows.c: the client table of clients and top */
struct row {
	struct gs_client_rec c;
	bool sampled;		/* seen at the start of the interval too */
	uint64_t dheld;		/* held time in the interval */
	double share;		/* of the GPU's held time in the interval, % */
	double busy;		/* of wall time, % */
	uint64_t dgpu;		/* GPU time reported in the interval */
	double gpu;		/* of wall time, %; c.has_gpu_ns only */
};

int cmp_row_gpu_id(const void *a, const void *b);
int cmp_row_share(const void *a, const void *b);
struct row *make_rows(const struct gs_client_rec *prev, size_t nprev,
		      const struct gs_client_rec *cur, size_t n, uint64_t dt);
void print_rows_json(const struct row *rows, size_t n, double interval);
void print_rows(const struct row *rows, size_t n, size_t max_rows);
/* The options of the client views: clients, and top. */
struct view_opts {
	double interval;	/* seconds between the samples */
	long count;		/* top's refreshes; -1: until stopped */
	int64_t gpu;		/* -1: every GPU */
};

/*
 * Parse the options of clients (-i, -g, -j) or, with @top, of top (also
 * -n; an interval of at least 0.1 s) into @v, which holds the defaults.
 * 0, or EXIT_USAGE after saying why.
 */
int parse_view_opts(int argc, char **argv, bool top, struct view_opts *v);
/* The clients of @gpu (< 0: all) sorted by id, and when; 0 or an exit status. */
int sample(struct conn *nl, int64_t gpu, struct gs_client_rec **cl,
	   size_t *n, uint64_t *t);

/* The commands: argv[0] is the command's name; they return the exit status. */
int cmd_status(int argc, char **argv);
int cmd_clients(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_watch(int argc, char **argv);

#endif /* GSD_CTL_GPUSCHEDCTL_H */
