// SPDX-License-Identifier: GPL-2.0
/*
 * gpuschedd, netlink mode: apply the policy file to gpusched.ko.
 *
 * One thread and one poll loop over a signalfd, the event socket and the
 * metrics server. The event socket joins the family's "events" group
 * *before* the daemon dumps the existing clients, so that no client can
 * attach unseen between the two; the table of handled clients makes the
 * overlap harmless. The same resync follows a reload, an event overflow
 * and the module's (re)appearance, so every path converges on "every
 * client carries what the policy in force says".
 *
 * Rules are applied by client id, which never names another client, so a
 * process that exits before the daemon gets to it costs an ESRCH, never a
 * wrong client.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dlog.h"
#include "gs_abi.h"
#include "genl.h"
#include "labels.h"
#include "metrics.h"
#include "nlmode.h"
#include "policy.h"
#include "policyfile.h"
#include "policyload.h"
#include "rules.h"

/* Where a client's GPUSCHED_LABEL is (labels.c reads it). */
enum label_state {
	LABEL_UNREAD,		/* no rule looked at labels yet */
	LABEL_READING,
	LABEL_READ,		/* in label; NULL: it has none */
};

struct client_ent {
	uint64_t id;
	uint32_t gpu;
	uint32_t applied;	/* GPUSCHED_PARAM_* the daemon set */
	uint64_t gen;		/* policy generation it was handled in */
	enum gs_mem_admit admit;	/* mem_admission's; UNSET: not judged */
	enum label_state label_state;
	uint64_t label_req;	/* its read's number (D.label_seq) */
	char *label;
};

struct gpu_ent {
	uint32_t index;
	unsigned int applied;	/* knobs the daemon set (1 << enum gs_knob) */
	uint64_t gen;
};

static struct {
	const char *config;
	bool config_given;
	const char *metrics_addr;
	struct gs_policy *pol;
	uint64_t *rule_hits;
	uint64_t gen;			/* bumped by every policy load */
	struct gs_nl *nl;		/* NULL while the family is absent */
	struct gs_nl_events *ev;
	struct gs_metrics *metrics;
	struct gs_daemon_stats st;
	struct client_ent *clients;	/* sorted by id */
	size_t nr_clients, cap_clients;
	struct gpu_ent *gpus;
	size_t nr_gpus;
	bool family_new, resync;
	int labels_fd;			/* labels.c's, for poll() */
	/*
	 * Label reads are numbered by us, not by client id: a module loaded
	 * again numbers its clients afresh, while a read for one of the old
	 * incarnation's may still end.
	 */
	uint64_t label_seq;
} D;

/* --- the table of handled clients, sorted by id (ids only grow) --- */

static size_t client_pos(uint64_t id)
{
	size_t lo = 0, hi = D.nr_clients;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (D.clients[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct client_ent *client_find(uint64_t id)
{
	size_t i = client_pos(id);

	return i < D.nr_clients && D.clients[i].id == id ? &D.clients[i] : NULL;
}

static struct client_ent *client_add(uint64_t id)
{
	size_t i = client_pos(id);

	if (i < D.nr_clients && D.clients[i].id == id)
		return &D.clients[i];
	if (D.nr_clients == D.cap_clients) {
		size_t cap = D.cap_clients ? 2 * D.cap_clients : 64;
		struct client_ent *c = realloc(D.clients, cap * sizeof(*c));

		if (!c)
			return NULL;
		D.clients = c;
		D.cap_clients = cap;
	}
	memmove(&D.clients[i + 1], &D.clients[i],
		(D.nr_clients - i) * sizeof(*D.clients));
	D.nr_clients++;
	memset(&D.clients[i], 0, sizeof(D.clients[i]));
	D.clients[i].id = id;
	return &D.clients[i];
}

/* What @e holds besides itself: its label, and its read if in line. */
static void client_ent_free(struct client_ent *e)
{
	if (e->label_state == LABEL_READING)
		gs_labels_forget(e->label_req);
	free(e->label);
	e->label = NULL;
}

static void client_del(uint64_t id)
{
	size_t i = client_pos(id);

	if (i >= D.nr_clients || D.clients[i].id != id)
		return;
	client_ent_free(&D.clients[i]);
	memmove(&D.clients[i], &D.clients[i + 1],
		(D.nr_clients - i - 1) * sizeof(*D.clients));
	D.nr_clients--;
}

static struct gpu_ent *gpu_ent(uint32_t index)
{
	struct gpu_ent *g;
	size_t i;

	for (i = 0; i < D.nr_gpus; i++)
		if (D.gpus[i].index == index)
			return &D.gpus[i];
	g = realloc(D.gpus, (D.nr_gpus + 1) * sizeof(*g));
	if (!g)
		return NULL;
	D.gpus = g;
	g = &D.gpus[D.nr_gpus++];
	memset(g, 0, sizeof(*g));
	g->index = index;
	return g;
}

/* --- applying the policy --- */

static const char *errtext(int err)
{
	const char *m = D.nl ? gs_nl_errmsg(D.nl) : "";

	return *m ? m : strerror(-err);
}

/* The module's default for a knob, to restore one the file no longer sets. */
static int module_default(int knob, uint32_t *val)
{
	char path[128], buf[32];
	const char *why;
	FILE *f;
	int err = -1;

	snprintf(path, sizeof(path), "/sys/module/gpusched/parameters/%s",
		 gs_pol_knobs[knob].name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		err = gs_parse_u32(buf, gs_pol_knobs[knob].min, gs_pol_knobs[knob].max,
				   val, &why);
	}
	fclose(f);
	return err;
}

static void knobs_text(char *buf, size_t size, const struct gs_knob_set *ks)
{
	size_t n = 0;
	int k;

	buf[0] = '\0';
	for (k = 0; k < GS_POL_NR_KNOBS && n < size; k++)
		if (ks->mask & (1U << k))
			n += snprintf(buf + n, size - n, "%s%s=%u", n ? " " : "",
				      gs_pol_knobs[k].name, ks->val[k]);
}

/* Give GPU @index the knobs of the policy in force, once per generation. */
static void gpu_apply(uint32_t index)
{
	struct gpu_ent *g = gpu_ent(index);
	char uuid[GS_UUID_TEXT_LEN], text[256];
	struct gs_knob_set ks;
	struct gs_gpu_rec rec;
	unsigned int want;
	int k, err;

	if (!g || g->gen == D.gen || !D.nl)
		return;
	err = gs_nl_get_gpu(D.nl, index, &rec);
	if (err) {
		gs_log(LOG_WARNING, "gpu%u: cannot read it: %s", index, errtext(err));
		return;
	}
	gs_uuid_format(rec.uuid, uuid);
	gs_policy_gpu_knobs(D.pol, rec.uuid, &ks);
	want = ks.mask;
	/* What an earlier policy set and this one does not: the default. */
	for (k = 0; k < GS_POL_NR_KNOBS; k++) {
		unsigned int bit = 1U << k;

		if ((g->applied & bit) && !(want & bit) &&
		    !module_default(k, &ks.val[k]))
			ks.mask |= bit;
	}
	g->gen = D.gen;
	if (!ks.mask)
		return;
	knobs_text(text, sizeof(text), &ks);
	err = gs_nl_set_gpu(D.nl, index, &ks);
	if (err) {
		D.st.apply_errors++;
		gs_log(LOG_ERR, "gpu%u (%s): cannot set %s: %s", index, uuid,
		       text, errtext(err));
		return;
	}
	g->applied = want;
	gs_log(LOG_INFO, "gpu%u (%s): %s", index, uuid, text);
}

static void params_text(char *buf, size_t size, const struct gpusched_params *p)
{
	size_t n = 0;

	buf[0] = '\0';
	if (p->mask & GPUSCHED_PARAM_WEIGHT)
		n += snprintf(buf + n, size - n, "weight %u", p->weight);
	if ((p->mask & GPUSCHED_PARAM_CLASS) && n < size)
		n += snprintf(buf + n, size - n, "%sclass %s", n ? ", " : "",
			      gs_class_name(p->sched_class));
	if ((p->mask & GPUSCHED_PARAM_CAP) && n < size) {
		if (p->cap_pct)
			snprintf(buf + n, size - n, "%scap %u%%", n ? ", " : "",
				 p->cap_pct);
		else
			n += snprintf(buf + n, size - n, "%sno cap", n ? ", " : "");
	}
	if ((p->mask & GPUSCHED_PARAM_MEM_LIMIT) && n < size) {
		char mem[GS_MEM_TEXT_LEN];

		gs_mem_format(p->mem_limit, mem);
		snprintf(buf + n, size - n, "%smem_limit %s", n ? ", " : "", mem);
	}
}

/*
 * Whether value @v of field @bit gives no more share than @than, as
 * SET_PARAMS without privilege judges a change (gs_pol_lowers(),
 * gs_mem_lowers()): a smaller weight, a later class, a smaller cap (none
 * counts as 100), a memory limit no larger (none is the largest; one in
 * percent is taken of @total, the client's memory).
 */
static bool lower_or_equal(uint32_t bit, uint64_t v, uint64_t than,
			   uint64_t total)
{
	switch (bit) {
	case GPUSCHED_PARAM_WEIGHT:
		return v <= than;
	case GPUSCHED_PARAM_CLASS:
		return v >= than;
	case GPUSCHED_PARAM_MEM_LIMIT:
		if (than & GS_MEM_PCT_FLAG)
			than = total / 100 * (than & ~GS_MEM_PCT_FLAG);
		return !than || (v && v <= than);
	default:
		return (v ? v : 100) <= (than ? than : 100);
	}
}

static uint64_t param_get(const struct gpusched_params *p, uint32_t bit)
{
	return bit == GPUSCHED_PARAM_WEIGHT ? p->weight :
	       bit == GPUSCHED_PARAM_CLASS ? p->sched_class :
	       bit == GPUSCHED_PARAM_MEM_LIMIT ? p->mem_limit : p->cap_pct;
}

static void param_set(struct gpusched_params *p, uint32_t bit, uint64_t v)
{
	p->mask |= bit;
	if (bit == GPUSCHED_PARAM_WEIGHT)
		p->weight = (uint32_t)v;
	else if (bit == GPUSCHED_PARAM_CLASS)
		p->sched_class = (uint32_t)v;
	else if (bit == GPUSCHED_PARAM_MEM_LIMIT)
		p->mem_limit = v;
	else
		p->cap_pct = (uint32_t)v;
}

/*
 * What to set on client @c so that it carries the policy @want (a rule's
 * fields, or none), in *@p. @held: the fields whose values are the
 * policy's; @lowered: the policy's values that the client lowered itself
 * since. A field the policy no longer sets returns to the default; one
 * the client lowered keeps the client's value as long as that is no more
 * than the policy now gives (a rule's value, or the default): the client
 * may lower its share, not keep what a rule that is gone gave it.
 */
static void client_target(const struct gs_client_rec *c,
			  const struct gpusched_params *want, uint32_t held,
			  uint32_t lowered, struct gpusched_params *p)
{
	const struct gpusched_params def = {
		.weight = GPUSCHED_WEIGHT_DEFAULT,
		.sched_class = GPUSCHED_CLASS_NORMAL,
		.cap_pct = GPUSCHED_CAP_NONE,
		.mem_limit = GPUSCHED_MEM_LIMIT_NONE,
	};
	struct gpusched_params cur = {
		.weight = c->weight, .sched_class = c->class, .cap_pct = c->cap_pct,
		.mem_limit = c->mem_limit,
	};
	uint32_t bit;

	memset(p, 0, sizeof(*p));
	for (bit = 1; bit & GS_PARAM_MASK; bit <<= 1) {
		uint64_t target = param_get(want->mask & bit ? want : &def, bit);

		if (!((want->mask | held | lowered) & bit))
			continue;
		if ((lowered & bit) &&
		    lower_or_equal(bit, param_get(&cur, bit), target, c->mem_total))
			continue;
		param_set(p, bit, target);
	}
}

/*
 * mem_admission (gpusched.conf(5)) for client @c, seen for the first time,
 * which is to get @want: would its limit then push the sum of the limits
 * of the clients that attached to its GPU before it past the GPU's memory
 * less the reserve? The memory is what @c reported; clients that reported
 * none take no part. Its limit is worked out as the module will
 * (kmod/mem.c), the others' are the module's. GS_ADMIT_OFF: admitted.
 */
static enum gs_mem_admit client_admit(const struct gs_client_rec *c,
				      const struct gpusched_params *want)
{
	struct gs_pol_client pc = { .mem = { .total = c->mem_total } };
	struct gs_client_rec *cl = NULL;
	struct gs_pol_dev pd = { 0 };
	uint64_t others = 0, limit;
	enum gs_mem_admit mode;
	struct gs_gpu_rec g;
	char text[160];
	size_t n, i;
	int err, k;

	if (!D.nl || !D.pol || !gs_policy_admits(D.pol) || !c->has_mem ||
	    !c->mem_total)
		return GS_ADMIT_OFF;
	err = gs_nl_get_gpu(D.nl, c->gpu, &g);
	if (!err) {
		mode = gs_policy_gpu_admit(D.pol, g.uuid);
		if (mode == GS_ADMIT_OFF)
			return mode;
		err = gs_nl_get_clients(D.nl, c->gpu, &cl, &n);
	}
	if (err) {
		gs_log(LOG_ERR, "gpu%u: client %llu: mem_admission not judged: %s",
		       c->gpu, (unsigned long long)c->id, errtext(err));
		return GS_ADMIT_OFF;
	}
	/* The knobs that gs_mem_limit() reads among them. */
	for (k = 0; k < GS_POL_NR_KNOBS; k++)
		if (g.knobs.mask & (1U << k))
			gs_pol_knob_set(&pd.p, &gs_pol_knobs[k], g.knobs.val[k]);
	/* Its own limit: the rule's, else what it has (none if the default). */
	if (want->mask & GPUSCHED_PARAM_MEM_LIMIT)
		pc.mem.limit = want->mem_limit;
	else if (c->mem_limit != gs_mem_limit(&pd, &pc))
		pc.mem.limit = c->mem_limit;
	if (pc.mem.limit & GS_MEM_PCT_FLAG)
		gs_mem_limit_pct(&pc, (uint32_t)(pc.mem.limit & ~GS_MEM_PCT_FLAG),
				 &pc.mem.limit);
	limit = gs_mem_limit(&pd, &pc);
	for (i = 0; i < n; i++)
		if (cl[i].id < c->id && cl[i].has_mem && cl[i].mem_total)
			others = gs_mem_admit_add(others, c->mem_total,
						  pd.p.mem_reserve, cl[i].mem_limit);
	free(cl);
	if (!gs_mem_admit_over(c->mem_total, pd.p.mem_reserve, others, limit))
		return GS_ADMIT_OFF;
	D.st.admit_refused += mode == GS_ADMIT_REFUSE;
	D.st.admit_batch += mode == GS_ADMIT_BATCH;
	gs_mem_admit_text(text, sizeof(text), mode, c->mem_total,
			  pd.p.mem_reserve, others, limit);
	gs_log(LOG_WARNING, "gpu%u: client %llu pid %u (%s): %s", c->gpu,
	       (unsigned long long)c->id, c->pid, c->comm, text);
	return mode;
}

/*
 * @e's label into @p, for the rules: never read here (labels.c says why).
 * The first time a rule looks at labels, its read starts, and the rules
 * apply without it meanwhile; label_got() has them applied again.
 */
static void client_label(struct client_ent *e, const struct gs_client_rec *c,
			 struct gs_proc *p)
{
	p->loaded |= 1U << GS_MATCH_LABEL;
	if (e->label_state == LABEL_UNREAD && gs_policy_matches_labels(D.pol) &&
	    gs_labels_want(D.label_seq + 1, (pid_t)c->pid, c->uid, 0)) {
		e->label_req = ++D.label_seq;
		e->label_state = LABEL_READING;
	}
	if (e->label) {
		snprintf(p->label, sizeof(p->label), "%s", e->label);
		p->known |= 1U << GS_MATCH_LABEL;
	}
}

/* labels.c's answer to read @req: its client's rules apply again, at the resync. */
static void label_got(uint64_t req, const char *label)
{
	struct client_ent *e = NULL;

	for (size_t i = 0; i < D.nr_clients && !e; i++)
		if (D.clients[i].label_state == LABEL_READING &&
		    D.clients[i].label_req == req)
			e = &D.clients[i];
	if (!e)
		return;
	e->label_state = LABEL_READ;
	if (!label)
		return;
	e->label = strdup(label);
	if (!e->label)
		return;
	e->gen = 0;
	D.resync = true;
}

/* Apply the policy in force to client @c, once per generation. */
static void client_apply(const struct gs_client_rec *c)
{
	struct client_ent *e = client_find(c->id);
	struct gpusched_params p, want = { 0 };
	const struct gs_rule *r;
	struct gs_proc proc;
	char text[128];
	int err;

	if (e && e->gen == D.gen)
		return;
	if (!e)
		e = client_add(c->id);
	if (!e) {
		gs_log(LOG_ERR, "out of memory: client %llu left as it is",
		       (unsigned long long)c->id);
		return;
	}
	e->gpu = c->gpu;
	e->gen = D.gen;
	gpu_apply(c->gpu);

	gs_proc_init(&proc, (pid_t)c->pid, c->uid, c->gid, c->comm);
	client_label(e, c, &proc);
	r = gs_rules_match(D.pol, &proc);
	gs_proc_release(&proc);
	if (r) {
		want = r->set;
		want.mask &= GS_PARAM_MASK;
		D.rule_hits[r - D.pol->rules]++;
		/*
		 * A limit in percent of nothing: the client's library did not
		 * say how much memory its GPU has. The rest of the rule holds.
		 */
		if ((want.mask & GPUSCHED_PARAM_MEM_LIMIT) &&
		    (want.mem_limit & GS_MEM_PCT_FLAG) && !c->mem_total) {
			want.mask &= ~GPUSCHED_PARAM_MEM_LIMIT;
			gs_log(LOG_DEBUG, "gpu%u: client %llu pid %u (%s): reported no device memory, rule %s's mem_limit not applied",
			       c->gpu, (unsigned long long)c->id, c->pid, c->comm,
			       r->name);
		}
	}
	/*
	 * mem_admission's decision, made when the client is first seen,
	 * goes with the rule's fields, now and at every reload.
	 */
	if (e->admit == GS_ADMIT_UNSET)
		e->admit = client_admit(c, &want);
	gs_mem_admit_params(e->admit, &want);
	/*
	 * The module's marks say what a policy set, ours or a predecessor's;
	 * an older module has none, and then only what we set ourselves is
	 * known.
	 */
	if (c->has_marks)
		client_target(c, &want, c->policy_set, c->policy_lowered, &p);
	else
		client_target(c, &want, e->applied, 0, &p);
	if (!p.mask) {
		gs_log(LOG_DEBUG, "gpu%u: client %llu pid %u (%s) uid %u: no rule matches",
		       c->gpu, (unsigned long long)c->id, c->pid, c->comm, c->uid);
		return;
	}
	params_text(text, sizeof(text), &p);
	err = D.nl ? gs_nl_set_client(D.nl, c->id, 0, c->gpu, &p,
				      c->has_marks ? (int64_t)(p.mask & want.mask) : -1) :
		     -ENOENT;
	if (err == -ESRCH) {
		/* It detached before we got to it. */
		gs_log(LOG_DEBUG, "gpu%u: client %llu pid %u (%s) left before its rule applied",
		       c->gpu, (unsigned long long)c->id, c->pid, c->comm);
		client_del(c->id);
		return;
	}
	if (err) {
		D.st.apply_errors++;
		gs_log(LOG_ERR, "gpu%u: client %llu pid %u (%s) uid %u: cannot set %s: %s",
		       c->gpu, (unsigned long long)c->id, c->pid, c->comm, c->uid,
		       text, errtext(err));
		return;
	}
	e->applied = want.mask;
	D.st.applied++;
	gs_log(LOG_INFO, "gpu%u: client %llu pid %u (%s) uid %u: %s%s%s: %s",
	       c->gpu, (unsigned long long)c->id, c->pid, c->comm, c->uid,
	       r ? "rule \"" : "no rule any more", r ? r->name : "",
	       r ? "\"" : "", text);
}

static int cmp_id(const void *a, const void *b)
{
	const struct gs_client_rec *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Bring every GPU and client in line with the policy in force. */
static void resync(void)
{
	struct gs_client_rec *cl = NULL;
	struct gs_gpu_rec *gpus = NULL;
	size_t n = 0, i, j, w;
	int err;

	D.resync = false;
	if (!D.nl)
		return;
	err = gs_nl_get_gpus(D.nl, &gpus, &n);
	if (err) {
		gs_log(LOG_ERR, "cannot list GPUs: %s", errtext(err));
		D.resync = true;
		return;
	}
	for (i = 0; i < n; i++)
		gpu_apply(gpus[i].index);
	free(gpus);

	err = gs_nl_get_clients(D.nl, -1, &cl, &n);
	if (err) {
		gs_log(LOG_ERR, "cannot list clients: %s", errtext(err));
		D.resync = true;
		return;
	}
	/* In id order: the table's, and that of attaching. No clients: no array. */
	if (n)
		qsort(cl, n, sizeof(*cl), cmp_id);
	for (i = 0; i < n; i++)
		client_apply(&cl[i]);
	/* Forget clients that left while we were not listening. */
	for (i = j = w = 0; i < D.nr_clients; i++) {
		while (j < n && cl[j].id < D.clients[i].id)
			j++;
		if (j < n && cl[j].id == D.clients[i].id)
			D.clients[w++] = D.clients[i];
		else
			client_ent_free(&D.clients[i]);
	}
	D.nr_clients = w;
	free(cl);
}

/* The family appeared (or we start): connect, listen, resync. */
static int family_connect(void)
{
	int err;

	gs_nl_close(D.nl);
	D.nl = NULL;
	D.st.family = false;
	err = gs_nl_open(&D.nl);
	if (err == -ENOENT)
		return 0;	/* not there: a FAMILY_NEW event will come */
	if (err) {
		gs_log(LOG_ERR, "generic netlink: %s", strerror(-err));
		return err;
	}
	err = gs_nl_events_join(D.ev);
	if (err == -EPERM) {
		gs_log(LOG_ERR, "joining the gpusched events group needs CAP_NET_ADMIN: run gpuschedd as root");
		return err;
	}
	if (err == -ENOENT) {
		/* Gone again already; its FAMILY_DEL is on the way. */
		gs_nl_close(D.nl);
		D.nl = NULL;
		return 0;
	}
	if (err) {
		gs_log(LOG_ERR, "joining the gpusched events group: %s",
		       strerror(-err));
		return err;
	}
	D.st.family = true;
	/* Whatever we knew was about another incarnation of the module. */
	for (size_t i = 0; i < D.nr_clients; i++)
		client_ent_free(&D.clients[i]);
	D.nr_clients = 0;
	D.nr_gpus = 0;
	gs_log(LOG_NOTICE, "connected to gpusched.ko");
	resync();
	return 0;
}

static void on_event(void *arg, enum gs_nl_event_kind kind,
		     const struct gs_client_rec *c)
{
	(void)arg;
	switch (kind) {
	case GS_NL_EV_FAMILY_NEW:
		D.family_new = true;
		break;
	case GS_NL_EV_FAMILY_DEL:
		gs_log(LOG_WARNING, "gpusched.ko went away (unloaded?); waiting for it to come back");
		gs_nl_close(D.nl);
		D.nl = NULL;
		D.st.family = false;
		break;
	case GS_NL_EV_ATTACH:
		D.st.events[0]++;
		gs_log(LOG_DEBUG, "gpu%u: client %llu pid %u (%s) uid %u attached",
		       c->gpu, (unsigned long long)c->id, c->pid, c->comm, c->uid);
		client_apply(c);
		break;
	case GS_NL_EV_DETACH:
		D.st.events[1]++;
		gs_log(LOG_DEBUG, "gpu%u: client %llu pid %u (%s) detached",
		       c->gpu, (unsigned long long)c->id, c->pid, c->comm);
		client_del(c->id);
		break;
	case GS_NL_EV_OVERRUN:
		D.st.events[2]++;
		gs_log_limited(LOG_WARNING, "gpu%u: pid %u (%s) uid %u did not yield within the grace time: token revoked (%llu overruns for this client)",
			       c->gpu, c->pid, c->comm, c->uid,
			       (unsigned long long)c->overruns);
		break;
	case GS_NL_EV_LOST:
		D.st.lost++;
		gs_log(LOG_WARNING, "event socket overflowed: resyncing every client");
		D.resync = true;
		break;
	}
}

/* The metrics page's records: the module's, while it is there. */
static int metrics_records(void *arg, struct gs_gpu_rec **gpus, size_t *ng,
			   struct gs_client_rec **cl, size_t *nc)
{
	int err;

	(void)arg;
	if (!D.nl)
		return 0;
	err = gs_nl_get_gpus(D.nl, gpus, ng);
	if (!err)
		err = gs_nl_get_clients(D.nl, -1, cl, nc);
	if (err)
		gs_log(LOG_WARNING, "metrics: %s", errtext(err));
	return err;
}

static struct gs_metrics_page metrics_page = {
	.records = metrics_records,
	.st = &D.st,
};

/* Load the policy file; the old policy stays unless this one is good. */
static int policy_load(bool reload)
{
	const struct gs_policy_source src = {
		.path = D.config, .given = D.config_given,
		.absent = "no rules, GPU knobs left as they are",
	};

	if (gs_policy_reload(&src, reload, &D.pol, &D.rule_hits, &D.st))
		return -1;
	D.gen++;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: gpuschedd [OPTION]...\n"
"       gpuschedd --arbiter [OPTION]...   (see gpuschedd --arbiter --help)\n"
"Apply a policy file to the clients of gpusched.ko: the knobs of each GPU,\n"
"and the weight, class and cap of each client as it attaches. Runs in the\n"
"foreground, logs to standard error, re-reads the file on SIGHUP (a file\n"
"with an error leaves the policy in force), exits on SIGTERM.\n"
"\n"
"  -c, --config FILE    policy file (default %s)\n"
"  -m, --metrics ADDR   serve Prometheus metrics on ADDR: 127.0.0.1:PORT,\n"
"                       [::1]:PORT or localhost:PORT\n"
"  -t, --check          check the policy file, print what is wrong, exit\n"
"  -v, --verbose        also log every attach, detach and unmatched client\n"
"  -h, --help           show this help\n"
"\n"
"Needs CAP_NET_ADMIN. See gpuschedd(8) and gpusched.conf(5).\n",
		GS_POLICY_DEFAULT_PATH);
}

bool gs_nlmode_wanted(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--arbiter"))
			return false;
	return true;
}

static int run(void)
{
	struct pollfd fds[3 + GS_METRICS_MAX_FDS];
	struct signalfd_siginfo si;
	char err[512];
	sigset_t mask;
	int sfd, rc = 1, n, nm, timeout;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		gs_log(LOG_ERR, "signalfd: %s", strerror(errno));
		return 1;
	}
	/* After sigprocmask(): the readers' signals are blocked too. */
	D.labels_fd = gs_labels_init();
	if (D.labels_fd < 0)
		goto out;
	if (D.metrics_addr) {
		D.metrics = gs_metrics_open(D.metrics_addr, gs_metrics_page_render,
					    &metrics_page, err, sizeof(err));
		if (!D.metrics) {
			gs_log(LOG_ERR, "%s", err);
			goto out;
		}
		gs_log(LOG_INFO, "metrics on http://%s/metrics", D.metrics_addr);
	}
	n = gs_nl_events_open(&D.ev);
	if (n) {
		gs_log(LOG_ERR, "generic netlink: %s", strerror(-n));
		goto out;
	}
	if (family_connect())
		goto out;
	if (!D.nl)
		gs_log(LOG_NOTICE, "waiting for gpusched.ko (no generic netlink family \"gpusched\" yet: modprobe gpusched)");

	for (;;) {
		fds[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = gs_nl_events_fd(D.ev), .events = POLLIN };
		fds[2] = (struct pollfd){ .fd = D.labels_fd, .events = POLLIN };
		nm = D.metrics ? gs_metrics_pollfds(D.metrics, fds + 3) : 0;
		timeout = D.metrics ? gs_metrics_timeout_ms(D.metrics) : -1;
		/* A failed resync (say, ENOMEM) is retried after a pause. */
		if (D.resync && (timeout < 0 || timeout > 1000))
			timeout = 1000;
		if (poll(fds, 3 + nm, timeout) < 0) {
			if (errno == EINTR)
				continue;
			gs_log(LOG_ERR, "poll: %s", strerror(errno));
			goto out;
		}
		if (fds[1].revents) {
			n = gs_nl_events_read(D.ev, on_event, NULL);
			if (n)
				gs_log(LOG_WARNING, "reading events: %s", strerror(-n));
		}
		if (fds[2].revents)
			gs_labels_reap(label_got);
		if (D.family_new) {
			D.family_new = false;
			if (family_connect())
				goto out;
		}
		if (D.resync)
			resync();
		if (nm)
			gs_metrics_process(D.metrics, fds + 3, nm);
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				gs_log(LOG_NOTICE, "SIGHUP: reloading %s", D.config);
				if (!policy_load(true))
					resync();
				continue;
			}
			gs_log(LOG_NOTICE, "%s: exiting", strsignal((int)si.ssi_signo));
			rc = 0;
			goto out;
		}
	}
out:
	gs_metrics_close(D.metrics);
	gs_nl_events_close(D.ev);
	gs_nl_close(D.nl);
	close(sfd);
	return rc;
}

int gs_nlmode_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "check", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool check = false, verbose = false;
	int c, rc;

	D.config = GS_POLICY_DEFAULT_PATH;
	while ((c = getopt_long(argc, argv, "c:m:tvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			D.config = optarg;
			D.config_given = true;
			break;
		case 'm':
			D.metrics_addr = optarg;
			break;
		case 't':
			check = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'gpuschedd --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpuschedd: unexpected argument \"%s\"\nTry 'gpuschedd --help'.\n",
			argv[optind]);
		return 2;
	}
	gs_log_init("gpuschedd", verbose ? LOG_DEBUG : LOG_INFO);
	if (check) {
		char err[1024];
		struct gs_policy *pol;
		struct stat st;

		if (!D.config_given && stat(D.config, &st) && errno == ENOENT) {
			printf("%s: no such file: gpuschedd runs without rules\n",
			       D.config);
			return 0;
		}
		pol = gs_policy_load(D.config, err, sizeof(err));

		if (!pol) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		printf("%s: OK: %zu rules, %zu GPU sections%s\n", D.config,
		       pol->nr_rules, pol->nr_gpus,
		       pol->gpu_all.mask ? " and [gpu]" : "");
		gs_policy_free(pol);
		return 0;
	}
	if (policy_load(false))
		return 1;
	rc = run();
	gs_policy_free(D.pol);
	free(D.rule_hits);
	free(D.clients);
	free(D.gpus);
	return rc;
}
