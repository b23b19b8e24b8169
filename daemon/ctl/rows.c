// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedctl: the client table of clients and top, with each client's
 * share of its GPU over an interval.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "gpuschedctl.h"
#include "knobs.h"
#include "nvml.h"
#include "rules.h"

static int cmp_id(const void *a, const void *b)
{
	const struct gs_client_rec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int cmp_row_gpu_id(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->c.gpu != y->c.gpu)
		return x->c.gpu < y->c.gpu ? -1 : 1;
	return x->c.id < y->c.id ? -1 : x->c.id > y->c.id;
}

int cmp_row_share(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy > y->busy ? -1 : 1;
	return cmp_row_gpu_id(a, b);
}

/* @cur less *@old, from zero where @old is NULL or larger. */
static uint64_t since(uint64_t cur, const uint64_t *old)
{
	return cur - (old && *old <= cur ? *old : 0);
}

/* @part of @dt ns, in percent, at most 100. */
static double pct_of(uint64_t part, uint64_t dt)
{
	double v = dt ? 100.0 * part / dt : 0;

	return v > 100 ? 100 : v;
}

/*
 * Rows for @cur, with what each held and reported since @prev (sorted by
 * id), @dt ns before. A client that attached in between counts from zero.
 */
struct row *make_rows(const struct gs_client_rec *prev, size_t nprev,
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
		rows[i].dheld = since(cur[i].held_ns, p ? &p->held_ns : NULL);
		rows[i].dgpu = since(cur[i].gpu_ns, p ? &p->gpu_ns : NULL);
	}
	for (i = 0; prev && i < n; i++) {
		uint64_t total = 0;

		for (j = 0; j < n; j++)
			if (rows[j].c.gpu == rows[i].c.gpu)
				total += rows[j].dheld;
		rows[i].share = total ? 100.0 * rows[i].dheld / total : 0;
		rows[i].busy = pct_of(rows[i].dheld, dt);
		rows[i].gpu = pct_of(rows[i].dgpu, dt);
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

void print_rows_json(const struct row *rows, size_t n, double interval)
{
	char label[sizeof(((struct gs_proc *)0)->label)];
	size_t i;

	printf("{\"interval_s\":%.3f,\"clients\":[", interval);
	for (i = 0; i < n; i++) {
		const struct gs_client_rec *c = &rows[i].c;

		/* 0 and empty: unknown (exited, or another user's). */
		printf("%s{\"gpu\":%u,\"id\":%llu,\"pid\":", i ? "," : "",
		       c->gpu, (unsigned long long)c->id);
		if (c->pid)
			printf("%u", c->pid);
		else
			printf("null");
		printf(",\"comm\":");
		if (c->comm[0])
			json_str(c->comm);
		else
			printf("null");
		printf(",\"uid\":%u,\"gid\":%u,\"cgroup_id\":%llu,\"weight\":%u,\"class\":\"%s\",\"cap_pct\":%u,\"state\":\"%s\",\"held_ns\":%llu,\"grants\":%llu,\"wait_ns_total\":%llu,\"wait_ns_max\":%llu,\"overruns\":%llu,\"yields\":%llu",
		       c->uid, c->gid, (unsigned long long)c->cgroup_id, c->weight,
		       gs_class_name(c->class), c->cap_pct, gs_state_name(c->state),
		       (unsigned long long)c->held_ns, (unsigned long long)c->grants,
		       (unsigned long long)c->wait_ns_total,
		       (unsigned long long)c->wait_ns_max,
		       (unsigned long long)c->overruns, (unsigned long long)c->yields);
		print_gpu_json(c);
		print_mem_json(c);
		printf(",\"label\":");
		if (client_label(c, label, sizeof(label)))
			json_str(label);
		else
			printf("null");
		if (rows[i].sampled)
			printf(",\"interval_held_ns\":%llu,\"share_pct\":%.2f,\"busy_pct\":%.2f",
			       (unsigned long long)rows[i].dheld, rows[i].share,
			       rows[i].busy);
		else
			printf(",\"interval_held_ns\":null,\"share_pct\":null,\"busy_pct\":null");
		if (rows[i].sampled && c->has_gpu_ns)
			printf(",\"interval_gpu_ns\":%llu,\"gpu_pct\":%.2f}",
			       (unsigned long long)rows[i].dgpu, rows[i].gpu);
		else
			printf(",\"interval_gpu_ns\":null,\"gpu_pct\":null}");
	}
	printf("]}\n");
}

void print_rows(const struct row *rows, size_t n, size_t max_rows)
{
	char user[32], pid[16], b1[16], cap[16], used[GS_MEM_TEXT_LEN],
	     lim[GS_MEM_TEXT_LEN];
	bool ctx = false;
	size_t i;

	/* The context memory column only where NVML told (nvml.h). */
	for (i = 0; i < n && i < max_rows; i++)
		ctx |= rows[i].c.has_mem_ctx;
	printf("%-4s %-8s %-6s %-10s %-16s %-8s %6s %4s %-8s %6s %6s %6s %8s %8s %17s%s\n",
	       "GPU", "PID", "ID", "USER", "COMM", "CLASS", "WEIGHT", "CAP",
	       "STATE", "SHARE", "BUSY", "ONGPU", "WAITMAX", "OVERRUNS", "MEM USED/LIMIT",
	       ctx ? "  MEM CTX" : "");
	for (i = 0; i < n && i < max_rows; i++) {
		const struct gs_client_rec *c = &rows[i].c;

		if (c->cap_pct)
			snprintf(cap, sizeof(cap), "%u%%", c->cap_pct);
		else
			snprintf(cap, sizeof(cap), "-");
		if (c->pid)
			snprintf(pid, sizeof(pid), "%u", c->pid);
		else
			snprintf(pid, sizeof(pid), "-");
		printf("%-4u %-8s %-6llu %-10.10s %-16s %-8s %6u %4s %-8s ",
		       c->gpu, pid, (unsigned long long)c->id,
		       user_name(c->uid, user, sizeof(user)),
		       c->comm[0] ? c->comm : "-",
		       gs_class_name(c->class), c->weight, cap,
		       gs_state_name(c->state));
		if (rows[i].sampled)
			printf("%5.1f%% %5.1f%% ", rows[i].share, rows[i].busy);
		else
			printf("%6s %6s ", "-", "-");
		if (rows[i].sampled && c->has_gpu_ns)
			printf("%5.1f%% ", rows[i].gpu);
		else
			printf("%6s ", "-");
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
		printf("%8s %8llu %8s/%-8s", dur(c->wait_ns_max, b1, sizeof(b1)),
		       (unsigned long long)c->overruns, used, lim);
		if (ctx && c->has_mem_ctx)
			printf(" %8s", mem_text(c->mem_ctx, used));
		else if (ctx)
			printf(" %8s", "-");
		putchar('\n');
	}
	if (i < n)
		printf("... %zu more\n", n - i);
}

/*
 * Each client's context memory, where NVML is there: what its process uses
 * on the GPU less what it reserved (nvml.h). Without NVML, or without the
 * GPUs' UUIDs, the column is left out.
 */
static void sample_ctx_mem(struct conn *nl, struct gs_client_rec *cl, size_t n)
{
	struct gs_gpu_rec *gpus = NULL;
	const char *why;
	size_t i, ng;

	for (i = 0; i < n && !cl[i].has_mem; i++)
		;
	if (i == n || !gs_nvml_open(&why) || get_gpus(nl, &gpus, &ng))
		return;
	gs_nvml_ctx_mem(gpus, ng, cl, n, &why);
	free(gpus);
}

int sample(struct conn *nl, int64_t gpu, struct gs_client_rec **cl,
		  size_t *n, uint64_t *t)
{
	int err = get_clients(nl, gpu, cl, n);

	*t = now_ns();
	if (err)
		return request_failed(nl, err, "listing clients", "");
	sample_ctx_mem(nl, *cl, *n);
	qsort(*cl, *n, sizeof(**cl), cmp_id);
	return 0;
}

int parse_view_opts(int argc, char **argv, bool top, struct view_opts *v)
{
	/* clients takes these but the first. */
	static const struct option opts[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 'i' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 }
	};
	const char *cmd = top ? "top" : "clients";
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, top ? "+i:n:g:j" : "+i:g:j",
				top ? opts : opts + 1, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_seconds("--interval", optarg, &v->interval))
				return EXIT_USAGE;
			if (top && v->interval < 0.1)
				return usage_error("--interval: at least 0.1 s");
			break;
		case 'n':
			v->count = strtol(optarg, &end, 10);
			if (*end || end == optarg || v->count < 1)
				return usage_error("--iterations \"%s\": expected a count of at least 1",
						   optarg);
			break;
		case 'g':
			if (parse_gpu_opt(optarg, &v->gpu))
				return EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		default:
			return usage_error("%s: unknown option", cmd);
		}
	}
	if (optind < argc)
		return usage_error("%s: unexpected argument \"%s\"", cmd, argv[optind]);
	return 0;
}
