// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the fair-share policy (kmod/policy.c) with a simulated
 * clock.
 *
 * Most tests drive a simulation: N clients share one token; the driver
 * advances the clock to the earlier of gs_pol_next_event() and the next
 * thing a client does, calls the policy, turns the effects it reports into
 * what the clients see (granted, asked to yield, revoked), and checks the
 * invariants after every call (sim_check()). A "saturating" client keeps
 * the token until asked to yield, releases after a drain delay, and waits
 * again at once; other behaviours: deaf (never yields), work (releases by
 * itself), think (pauses before waiting again), period (a latency probe).
 *
 * Usage: test_policy [TAP options, see tap.h] [--seed S] [--seeds N]
 *			[--ops N]
 * The randomized test runs seeds S..S+N-1 (default 1..200), 2000 ops each;
 * a failure prints its seed, and "--only random --seed S --seeds 1"
 * replays it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/gpusched.h>
#include "policy.h"
#include "tap.h"

#define US	UINT64_C(1000)
#define MS	(1000 * US)
#define SEC	(1000 * MS)
#define NEVER	GS_POL_NEVER

static uint64_t opt_seed = 1;
static uint64_t opt_seeds = 200;
static uint64_t opt_ops = 2000;
static bool opt_trace;

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* splitmix64: small, fast, and the same sequence everywhere */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd_below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static uint64_t rnd_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rnd_below(r, hi - lo + 1);
}

static bool chance(struct rng *r, unsigned int one_in)
{
	return rnd_below(r, one_in) == 0;
}

/* ------------------------------------------------------------------ */
/* The simulation                                                      */

/* Each policy client is allocated alone, so ASan sees any use after exit. */
struct pcbox {
	struct gs_pol_client pc;
	int idx;
};

struct scl {
	struct gs_pol_client *pc;	/* NULL while detached */
	/* behaviour */
	bool sat;			/* waits again as soon as it releases */
	bool deaf;			/* ignores yield requests */
	uint64_t drain_lo, drain_hi;	/* from a yield request to the release */
	uint64_t work;			/* releases by itself after this (0: no) */
	uint64_t think;			/* from a release to the next wait (sat) */
	uint64_t period;		/* a probe: waits every period */
	/* what the driver has seen */
	bool holding, waiting, yielded;
	uint64_t grant_at, yield_at, wait_since, last_wait;
	uint64_t release_at, wait_at;	/* its next actions, or NEVER */
	/* the current or last grant, as seen: its held and GPU time */
	uint64_t g_held, g_gpu;
	/* attached at, and GPU time taken from its reports since */
	uint64_t since, gpu_total;
	/* totals of this attachment, as seen */
	uint64_t held, grants, yields, unyields, revokes, eperms;
	uint64_t wait_max;
};

struct sim {
	struct gs_pol_dev d;
	struct scl *c;
	int n;
	uint64_t now;
	struct rng r;
	int holder;			/* as the effects said; -1: none */
	uint64_t held, grants, revokes;	/* as seen, over all attachments */
	uint64_t gone_held, gone_grants, gone_overruns; /* detached clients */
	uint64_t floor;			/* d.min_vtime when last checked */
	uint64_t steps, max_steps;
	uint64_t stop_grants;		/* sim_run() stops here (0: never) */
	uint64_t timer, timer_due;	/* armed for timer_due, fires at timer */
	uint64_t late_max;		/* timers fire up to this late */
	bool probe;			/* tick early now and then: must be a no-op */
	bool failed;
	const char *op;
	char ctx[48];
};

/* A failed check inside the simulation also stops it. */
#define SCHECK(s, cond, fmt, ...)					\
	((cond) ? true :						\
	 ((s)->failed = true,						\
	  tap_check(false, #cond, __FILE__, __LINE__,			\
		    "%s[t=%" PRIu64 " op=%s] " fmt, (s)->ctx, (s)->now,	\
		    (s)->op, ##__VA_ARGS__)))

static int idx_of(const struct sim *s, const struct gs_pol_client *pc)
{
	int i = ((const struct pcbox *)pc)->idx;

	if (i < 0 || i >= s->n || s->c[i].pc != pc)
		return -2;
	return i;
}

static void sim_init(struct sim *s, int n, const struct gs_pol_params *p,
		     uint64_t seed)
{
	struct gs_pol_params def;

	memset(s, 0, sizeof(*s));
	if (!p) {
		gs_pol_default_params(&def);
		p = &def;
	}
	s->c = calloc(n, sizeof(*s->c));
	if (!s->c)
		abort();
	s->n = n;
	s->now = 1 * SEC;	/* CLOCK_MONOTONIC is not 0 at boot either */
	s->r.s = seed;
	s->holder = -1;
	s->timer = s->timer_due = NEVER;
	s->max_steps = 5000000;		/* a broken policy fails fast */
	s->op = "init";
	snprintf(s->ctx, sizeof(s->ctx), "seed %" PRIu64 " ", seed);
	gs_pol_dev_init(&s->d, p, s->now);
}

static void sim_check(struct sim *s);

/*
 * What a grant is charged, as the driver works it out: max(held, GPU time
 * reported for it), for @c's grant with @h more held and @r more reported
 * at @now: a report of at most 2^40 ns, and all of the client's reports
 * within the time since it attached.
 */
static uint64_t charge_seen(struct scl *c, uint64_t h, uint64_t r,
			    uint64_t now)
{
	uint64_t before = max64(c->g_held, c->g_gpu);
	uint64_t room = now - c->since > c->gpu_total ?
			now - c->since - c->gpu_total : 0;

	r = min64(min64(r, UINT64_C(1) << 40), room);
	c->gpu_total += r;
	c->g_held += h;
	c->g_gpu = min64(c->g_gpu + r, UINT64_C(1) << 62);
	return max64(c->g_held, c->g_gpu) - before;
}

static void end_hold(struct sim *s, int i)
{
	struct scl *c = &s->c[i];
	uint64_t charged = charge_seen(c, s->now - c->grant_at, 0, s->now);

	c->held += charged;
	s->held += charged;
	c->holding = false;
	c->yielded = false;
	s->holder = -1;
}

static bool fx_empty(const struct gs_pol_effects *fx)
{
	return !fx->granted && !fx->yield && !fx->unyield && !fx->revoked &&
	       !fx->released;
}

/* What the clients learn from @fx; @actor made the call (-1: none). */
static void sim_fx(struct sim *s, const struct gs_pol_effects *fx, int actor)
{
	const struct gs_pol_params *p = &s->d.p;
	struct scl *c;
	int i;

	if (fx->revoked) {
		i = idx_of(s, fx->revoked);
		if (!SCHECK(s, i >= 0 && i == s->holder,
			    "revoked %d, holder %d", i, s->holder))
			return;
		c = &s->c[i];
		SCHECK(s, c->yielded && s->now - c->yield_at >= p->grace_ns,
		       "client %d revoked %" PRIu64 " ns after the yield request, grace %" PRIu64,
		       i, c->yielded ? s->now - c->yield_at : 0, p->grace_ns);
		SCHECK(s, c->release_at == NEVER ||
			  c->release_at >= c->yield_at + p->grace_ns,
		       "client %d revoked though it releases at %" PRIu64 ", within the grace time",
		       i, c->release_at);
		SCHECK(s, fx->revoked->revoked, "revoked flag not set");
		end_hold(s, i);
		c->revokes++;
		s->revokes++;
		/* It notices at its next launch and releases: EPERM. */
		if (c->release_at == NEVER)
			c->release_at = s->now + 1 + c->drain_hi;
	}
	if (fx->released) {
		i = idx_of(s, fx->released);
		if (!SCHECK(s, i >= 0 && i == actor && i == s->holder,
			    "released %d by %d, holder %d", i, actor, s->holder))
			return;
		end_hold(s, i);
	}
	if (fx->granted) {
		uint64_t waited;

		i = idx_of(s, fx->granted);
		if (!SCHECK(s, i >= 0 && s->holder == -1 && s->c[i].waiting,
			    "granted %d, holder %d", i, s->holder))
			return;
		c = &s->c[i];
		waited = s->now - c->wait_since;
		c->waiting = false;
		c->holding = true;
		c->yielded = false;
		c->grant_at = s->now;
		c->g_held = c->g_gpu = 0;
		c->grants++;
		c->wait_max = max64(c->wait_max, waited);
		s->grants++;
		s->holder = i;
		c->release_at = c->work ? s->now + c->work : NEVER;
	}
	if (fx->unyield) {
		i = idx_of(s, fx->unyield);
		if (!SCHECK(s, i >= 0 && i == s->holder && s->c[i].yielded &&
			       !fx->yield,
			    "yield withdrawn from %d, holder %d", i, s->holder))
			return;
		/* A client already draining releases anyway. */
		s->c[i].yielded = false;
		s->c[i].unyields++;
	}
	if (fx->yield) {
		i = idx_of(s, fx->yield);
		if (!SCHECK(s, i >= 0 && i == s->holder && !s->c[i].yielded,
			    "yield to %d, holder %d", i, s->holder))
			return;
		c = &s->c[i];
		c->yielded = true;
		c->yield_at = s->now;
		c->yields++;
		if (!c->deaf)
			c->release_at = min64(c->release_at, s->now +
					      rnd_range(&s->r, c->drain_lo,
							c->drain_hi));
	}
}

/* The invariants, after every call into the policy. */
static void sim_check(struct sim *s)
{
	const struct gs_pol_dev *d = &s->d;
	uint64_t held = s->gone_held, grants = s->gone_grants;
	uint64_t overruns = s->gone_overruns, ne;
	uint32_t nw = 0, nc = 0, nh = 0, nl = 0;
	const struct list_head *l;
	bool free_waiter = false;
	int i, q;

	for (i = 0; i < s->n; i++) {
		const struct scl *c = &s->c[i];
		const struct gs_pol_client *p = c->pc;

		if (!p)
			continue;
		nc++;
		held += p->held_ns;
		grants += p->grants;
		overruns += p->overruns;
		SCHECK(s, c->held == p->held_ns,
		       "client %d charged %" PRIu64 " ns, held %" PRIu64,
		       i, p->held_ns, c->held);
		SCHECK(s, c->grants == p->grants && c->revokes == p->overruns,
		       "client %d: grants %" PRIu64 "/%" PRIu64 ", overruns %" PRIu64 "/%" PRIu64,
		       i, p->grants, c->grants, p->overruns, c->revokes);
		switch (p->state) {
		case GS_POL_WAITING:
			nw++;
			SCHECK(s, c->waiting && !c->holding,
			       "client %d waiting unseen", i);
			SCHECK(s, p->vtime >= s->floor,
			       "waiter %d below the floor", i);
			if (!p->cap_pct || p->cap_pct >= 100)
				free_waiter = true;
			break;
		case GS_POL_HOLDING:
			nh++;
			SCHECK(s, d->holder == p && c->holding,
			       "client %d holding unseen", i);
			break;
		case GS_POL_IDLE:
			SCHECK(s, !c->waiting && !c->holding,
			       "client %d idle, seen %s", i,
			       c->waiting ? "waiting" : "holding");
			break;
		default:
			SCHECK(s, false, "client %d in state %d", i, p->state);
		}
	}
	list_for_each(l, &d->waiting) {
		const struct gs_pol_client *p =
			list_entry(l, struct gs_pol_client, wnode);

		if (nl > nw)
			break;

		i = idx_of(s, p);
		SCHECK(s, i >= 0 && p->state == GS_POL_WAITING,
		       "list holds %d, not a waiter", i);
		nl++;
	}
	SCHECK(s, nh <= 1, "%u holders", nh);
	SCHECK(s, (d->holder != NULL) == (nh == 1), "holder %p, %u holding",
	       (void *)d->holder, nh);
	SCHECK(s, s->holder == -1 ? !d->holder : d->holder == s->c[s->holder].pc,
	       "holder: seen %d", s->holder);
	SCHECK(s, d->nr_waiting == nw && nl == nw,
	       "nr_waiting %u, %u waiting, %u on the list", d->nr_waiting, nw, nl);
	SCHECK(s, d->nr_clients == nc, "nr_clients %u, %u attached",
	       d->nr_clients, nc);
	SCHECK(s, held == d->held_ns && s->held == d->held_ns,
	       "held: device %" PRIu64 ", clients %" PRIu64 ", seen %" PRIu64,
	       d->held_ns, held, s->held);
	SCHECK(s, grants == d->grants && s->grants == d->grants,
	       "grants: device %" PRIu64 ", clients %" PRIu64 ", seen %" PRIu64,
	       d->grants, grants, s->grants);
	SCHECK(s, overruns == d->overruns && s->revokes == d->overruns,
	       "overruns: device %" PRIu64 ", clients %" PRIu64 ", seen %" PRIu64,
	       d->overruns, overruns, s->revokes);
	if (d->holder && s->holder >= 0) {
		const struct scl *c = &s->c[s->holder];
		const struct gs_pol_client *h = d->holder;

		SCHECK(s, gs_pol_held_now(h, s->now) - h->held_ns ==
			  max64(c->g_held + s->now - c->grant_at, c->g_gpu) -
			  max64(c->g_held, c->g_gpu),
		       "running grant mis-measured");
		SCHECK(s, h->yield_requested == c->yielded &&
			  (!c->yielded || h->yield_at == c->yield_at),
		       "yield state %d, seen %d", h->yield_requested,
		       c->yielded);
		/* Nobody is revoked for nothing: someone waits, or a cap. */
		SCHECK(s, !h->yield_requested || nw || s->now >= h->hard_end,
		       "holder asked to yield with no waiter and no cap");
	}
	q = gs_pol_check_queues(d, s->now);
	SCHECK(s, q == 0, "waiters' trees disagree with a walk (%d)", q);
	SCHECK(s, d->min_vtime >= s->floor, "vtime floor went down");
	s->floor = d->min_vtime;
	ne = gs_pol_next_event(d, s->now);
	SCHECK(s, ne > s->now, "next event %" PRIu64 " not after now", ne);
	s->timer_due = ne;
	/* Work-conserving: a free token and a waiter means the waiter is capped */
	SCHECK(s, d->holder || !free_waiter, "token free, uncapped waiter");
	SCHECK(s, d->holder || !nw || ne != NEVER,
	       "token free, capped waiters, no event");
}

/* --trace: every call, its effects and the clients after it */
static void sim_trace(struct sim *s, const struct gs_pol_effects *fx, int actor)
{
	static const char st[] = "IWH";
	int i;

	printf("# %" PRIu64 " %s by %d: g=%d y=%d uy=%d r=%d rel=%d | next %" PRIu64 " floor %" PRIu64 "\n",
	       s->now, s->op, actor,
	       fx->granted ? idx_of(s, fx->granted) : -1,
	       fx->yield ? idx_of(s, fx->yield) : -1,
	       fx->unyield ? idx_of(s, fx->unyield) : -1,
	       fx->revoked ? idx_of(s, fx->revoked) : -1,
	       fx->released ? idx_of(s, fx->released) : -1,
	       gs_pol_next_event(&s->d, s->now), s->d.min_vtime);
	for (i = 0; i < s->n; i++) {
		const struct gs_pol_client *p = s->c[i].pc;

		if (!p)
			continue;
		printf("#   %d %c w=%u cl=%u cap=%u rank=%u vt=%" PRIu64 " ws=%" PRIu64 " se=%" PRIu64 " he=%" PRIu64 " y=%d\n",
		       i, st[p->state], p->weight, p->sched_class, p->cap_pct,
		       p->rank, p->vtime, p->wait_start, p->slice_end,
		       p->hard_end, p->yield_requested);
	}
}

/*
 * After every call, like token.c's gs_apply(): tell the clients, then arm
 * the timer for gs_pol_next_event() (which may fire late).
 */
static void sim_call_done(struct sim *s, struct gs_pol_effects *fx, int actor)
{
	if (opt_trace)
		sim_trace(s, fx, actor);
	sim_fx(s, fx, actor);
	sim_check(s);			/* sets timer_due */
	s->timer = s->timer_due;
	if (s->timer != NEVER && s->late_max)
		s->timer += rnd_below(&s->r, s->late_max + 1);
}

static int sim_attach(struct sim *s, int i)
{
	struct pcbox *b = malloc(sizeof(*b));
	struct scl *c = &s->c[i];

	if (!b)
		abort();
	s->op = "attach";
	b->idx = i;
	gs_pol_client_init(&s->d, &b->pc, s->now);
	c->pc = &b->pc;
	c->holding = c->waiting = c->yielded = false;
	c->release_at = c->wait_at = NEVER;
	c->held = c->grants = c->yields = c->unyields = c->revokes = 0;
	c->g_held = c->g_gpu = 0;
	c->since = s->now;
	c->gpu_total = 0;
	c->eperms = 0;
	c->wait_max = 0;
	SCHECK(s, b->pc.state == GS_POL_IDLE && b->pc.vtime == s->d.min_vtime,
	       "new client %d not idle at the floor", i);
	sim_check(s);
	return i;
}

static void sim_detach(struct sim *s, int i)
{
	struct gs_pol_effects fx = { 0 };
	struct scl *c = &s->c[i];
	struct gs_pol_client *p = c->pc;
	bool held = c->holding;

	s->op = "detach";
	gs_pol_client_exit(&s->d, p, s->now, &fx);
	SCHECK(s, fx.granted != p && fx.yield != p && fx.unyield != p &&
		  fx.revoked != p && fx.released != p,
	       "detached client %d still reported", i);
	SCHECK(s, s->d.holder != p, "detached client %d holds", i);
	if (held)
		end_hold(s, i);
	SCHECK(s, c->held == p->held_ns, "detached client %d charged %" PRIu64
	       ", held %" PRIu64, i, p->held_ns, c->held);
	s->gone_held += p->held_ns;
	s->gone_grants += p->grants;
	s->gone_overruns += p->overruns;
	c->pc = NULL;
	c->holding = c->waiting = false;
	c->release_at = c->wait_at = NEVER;
	free((struct pcbox *)p);
	sim_call_done(s, &fx, -1);
}

static void sim_wait(struct sim *s, int i)
{
	struct gs_pol_effects fx = { 0 };
	struct scl *c = &s->c[i];
	bool idle = c->pc->state == GS_POL_IDLE;

	s->op = "wait";
	c->wait_at = NEVER;
	if (idle) {
		c->waiting = true;
		c->wait_since = s->now;
		c->last_wait = s->now;
	}
	gs_pol_wait(&s->d, c->pc, s->now, &fx);
	if (!idle)
		SCHECK(s, fx_empty(&fx), "wait by a non-idle client acted");
	sim_call_done(s, &fx, i);
}

static void sim_cancel(struct sim *s, int i)
{
	struct gs_pol_effects fx = { 0 };
	struct scl *c = &s->c[i];
	bool waiting = c->pc->state == GS_POL_WAITING;

	s->op = "cancel";
	if (waiting)
		c->waiting = false;
	gs_pol_cancel_wait(&s->d, c->pc, s->now, &fx);
	if (!waiting)
		SCHECK(s, fx_empty(&fx), "cancel by a non-waiter acted");
	SCHECK(s, c->pc->state != GS_POL_WAITING, "still waiting");
	sim_call_done(s, &fx, i);
}

static void sim_release(struct sim *s, int i)
{
	struct gs_pol_effects fx = { 0 };
	struct scl *c = &s->c[i];
	uint64_t dheld = s->d.held_ns;
	bool holding = c->holding;
	int ret;

	s->op = "release";
	c->release_at = NEVER;
	ret = gs_pol_release(&s->d, c->pc, s->now, &fx);
	if (holding) {
		SCHECK(s, ret == 0, "holder %d: release gave %d", i, ret);
	} else {
		SCHECK(s, ret == -EPERM, "non-holder %d: release gave %d", i,
		       ret);
		SCHECK(s, fx_empty(&fx) && s->d.held_ns == dheld,
		       "failed release acted");
		c->eperms++;
	}
	sim_call_done(s, &fx, i);
	if (s->failed || c->pc->state != GS_POL_IDLE)
		return;
	if (c->period)
		c->wait_at = max64(s->now, c->last_wait + c->period);
	else if (c->sat)
		c->wait_at = s->now + c->think;
}

/* @i reports @r ns of GPU time (for its current or last grant). */
static void sim_report(struct sim *s, int i, uint64_t r)
{
	struct gs_pol_effects fx = { 0 };
	struct scl *c = &s->c[i];
	uint64_t charged;

	s->op = "report";
	charged = charge_seen(c, 0, r, s->now);
	c->held += charged;
	s->held += charged;
	gs_pol_report_gpu(&s->d, c->pc, r, s->now, &fx);
	sim_call_done(s, &fx, i);
}

static void sim_tick(struct sim *s)
{
	struct gs_pol_effects fx = { 0 };

	s->op = "tick";
	gs_pol_tick(&s->d, s->now, &fx);
	sim_call_done(s, &fx, -1);
}

static bool client_params_valid(uint32_t w, uint32_t cl, uint32_t cap)
{
	return w >= 1 && w <= 10000 && cl <= 2 && cap <= 100;
}

static int sim_set(struct sim *s, int i, uint32_t w, uint32_t cl, uint32_t cap)
{
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_client *p = s->c[i].pc, old = *p;
	int ret;

	s->op = "set_client_params";
	ret = gs_pol_set_client_params(&s->d, p, w, cl, cap, s->now, &fx);
	if (client_params_valid(w, cl, cap)) {
		SCHECK(s, ret == 0 && p->weight == w && p->sched_class == cl &&
			  p->cap_pct == cap, "set %u/%u/%u gave %d", w, cl, cap,
		       ret);
	} else {
		SCHECK(s, ret == -EINVAL && fx_empty(&fx) &&
			  !memcmp(&old, p, sizeof(old)),
		       "set %u/%u/%u gave %d, or changed something", w, cl, cap,
		       ret);
	}
	sim_call_done(s, &fx, i);
	return ret;
}

static bool dev_params_valid(const struct gs_pol_params *p)
{
	return p->slice_ns >= 100 * US && p->slice_ns <= 10 * SEC &&
	       p->grace_ns >= 1 * MS && p->grace_ns <= 10 * SEC &&
	       p->min_grant_ns >= 10 * US && p->min_grant_ns <= 1 * SEC &&
	       p->starve_ns >= 1 * MS && p->starve_ns <= 60 * SEC &&
	       p->window_ns >= 1 * MS && p->window_ns <= 10 * SEC &&
	       p->latency_pct <= 90;
}

static int sim_set_dev(struct sim *s, const struct gs_pol_params *p)
{
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_params old = s->d.p;
	int ret;

	s->op = "set_dev_params";
	ret = gs_pol_set_dev_params(&s->d, p, s->now, &fx);
	if (dev_params_valid(p))
		SCHECK(s, ret == 0 && !memcmp(&s->d.p, p, sizeof(*p)),
		       "valid device params gave %d", ret);
	else
		SCHECK(s, ret == -EINVAL && fx_empty(&fx) &&
			  !memcmp(&s->d.p, &old, sizeof(old)),
		       "invalid device params gave %d, or changed something",
		       ret);
	sim_call_done(s, &fx, -1);
	return ret;
}

/* Whatever clients planned for now or earlier. */
static void sim_actions(struct sim *s)
{
	int i;

	for (i = 0; i < s->n && !s->failed; i++) {
		struct scl *c = &s->c[i];

		if (!c->pc)
			continue;
		if (c->release_at <= s->now)
			sim_release(s, i);
		if (c->wait_at <= s->now && !s->failed)
			sim_wait(s, i);
	}
}

static uint64_t sim_next_action(const struct sim *s)
{
	uint64_t t = NEVER;
	int i;

	for (i = 0; i < s->n; i++)
		if (s->c[i].pc)
			t = min64(t, min64(s->c[i].release_at,
					   s->c[i].wait_at));
	return t;
}

/* Advances the clock to @until: client actions, and the timer. */
static void sim_run(struct sim *s, uint64_t until)
{
	while (!s->failed && s->now < until &&
	       (!s->stop_grants || s->grants < s->stop_grants)) {
		uint64_t t = min64(until, min64(s->timer, sim_next_action(s)));
		uint64_t due = min64(t, s->timer_due);

		if (s->probe && due > s->now + 1 && chance(&s->r, 4)) {
			struct gs_pol_effects fx = { 0 };
			uint64_t t0 = s->now;

			/* Nothing may happen before the announced event. */
			s->now += 1 + rnd_below(&s->r, due - s->now - 1);
			s->op = "early tick";
			gs_pol_tick(&s->d, s->now, &fx);
			SCHECK(s, fx_empty(&fx),
			       "tick %" PRIu64 " ns after %" PRIu64 ", before the next event %" PRIu64 ", acted: g=%d y=%d r=%d",
			       s->now - t0, t0, s->timer_due,
			       fx.granted ? idx_of(s, fx.granted) : -1,
			       fx.yield ? idx_of(s, fx.yield) : -1,
			       fx.revoked ? idx_of(s, fx.revoked) : -1);
			sim_call_done(s, &fx, -1);
			continue;
		}
		s->now = t;
		sim_actions(s);
		if (s->timer <= s->now && !s->failed)
			sim_tick(s);
		if (++s->steps > s->max_steps) {
			SCHECK(s, false, "runaway simulation");
			break;
		}
	}
}

static void sim_free(struct sim *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free((struct pcbox *)s->c[i].pc);
	free(s->c);
}

/* A saturating client with weight @w, class @cl and cap @cap. */
static int add_sat(struct sim *s, int i, uint32_t w, uint32_t cl, uint32_t cap,
		   uint64_t drain_hi)
{
	struct scl *c = &s->c[i];

	sim_attach(s, i);
	c->sat = true;
	c->drain_lo = 0;
	c->drain_hi = drain_hi;
	sim_set(s, i, w, cl, cap);
	return i;
}

static uint64_t held_now(const struct sim *s, int i)
{
	return gs_pol_held_now(s->c[i].pc, s->now);
}

/* ------------------------------------------------------------------ */
/* Single calls                                                        */

struct pfield {
	const char *name;
	size_t off;
	bool u32;
	uint64_t lo, hi;
};

static const struct pfield pfields[] = {
	{ "slice_ns", offsetof(struct gs_pol_params, slice_ns), false,
	  100 * US, 10 * SEC },
	{ "grace_ns", offsetof(struct gs_pol_params, grace_ns), false,
	  1 * MS, 10 * SEC },
	{ "min_grant_ns", offsetof(struct gs_pol_params, min_grant_ns), false,
	  10 * US, 1 * SEC },
	{ "starve_ns", offsetof(struct gs_pol_params, starve_ns), false,
	  1 * MS, 60 * SEC },
	{ "window_ns", offsetof(struct gs_pol_params, window_ns), false,
	  1 * MS, 10 * SEC },
	{ "latency_pct", offsetof(struct gs_pol_params, latency_pct), true,
	  0, 90 },
};

static void pset(struct gs_pol_params *p, const struct pfield *f, uint64_t v)
{
	char *at = (char *)p + f->off;

	if (f->u32) {
		uint32_t v32 = (uint32_t)v;

		memcpy(at, &v32, sizeof(v32));
	} else {
		memcpy(at, &v, sizeof(v));
	}
}

static void t_dev_params(void)
{
	struct gs_pol_params def, p;
	unsigned int k;
	struct sim s;

	gs_pol_default_params(&def);
	CHECK(gs_pol_check_params(&def) == 0, "defaults rejected");
	for (k = 0; k < ARRAY_SIZE(pfields); k++) {
		const struct pfield *f = &pfields[k];
		uint64_t top = f->u32 ? UINT32_MAX : UINT64_MAX;
		const uint64_t ok[] = { f->lo, f->hi, (f->lo + f->hi) / 2 };
		const uint64_t bad[] = { f->lo - 1, f->hi + 1, top, 0 };
		unsigned int j;

		for (j = 0; j < 3; j++) {
			p = def;
			pset(&p, f, ok[j]);
			CHECK(gs_pol_check_params(&p) == 0,
			      "%s = %" PRIu64 " rejected", f->name, ok[j]);
		}
		for (j = 0; j < 4; j++) {
			if (f->lo == 0 && (j == 0 || j == 3))
				continue;	/* 0 is valid, lo - 1 wraps */
			p = def;
			pset(&p, f, bad[j]);
			CHECK(gs_pol_check_params(&p) == -EINVAL,
			      "%s = %" PRIu64 " accepted", f->name, bad[j]);
		}
	}

	/* A rejected change changes nothing; an accepted one applies. */
	sim_init(&s, 2, NULL, 0);
	add_sat(&s, 0, 100, GPUSCHED_CLASS_NORMAL, 0, 0);
	add_sat(&s, 1, 100, GPUSCHED_CLASS_NORMAL, 0, 0);
	sim_wait(&s, 0);
	sim_wait(&s, 1);
	p = def;
	p.grace_ns = 0;
	sim_set_dev(&s, &p);
	p = def;
	p.slice_ns = 1 * MS;
	sim_set_dev(&s, &p);
	CHECK(s.d.p.slice_ns == 1 * MS, "slice not applied");
	sim_free(&s);
}

static void t_client_params(void)
{
	static const struct {
		uint32_t w, cl, cap;
		bool ok;
	} v[] = {
		{ 1, 0, 0, true }, { 10000, 2, 100, true },
		{ 100, 1, 50, true }, { 0, 1, 0, false },
		{ 10001, 1, 0, false }, { UINT32_MAX, 1, 0, false },
		{ 100, 3, 0, false }, { 100, UINT32_MAX, 0, false },
		{ 100, 1, 101, false }, { 100, 1, UINT32_MAX, false },
		{ 1, 2, 1, true },
	};
	unsigned int k;
	struct sim s;

	for (k = 0; k < ARRAY_SIZE(v); k++)
		CHECK((gs_pol_check_client_params(v[k].w, v[k].cl, v[k].cap) == 0) ==
		      v[k].ok, "%u/%u/%u: expected %s", v[k].w, v[k].cl, v[k].cap,
		      v[k].ok ? "valid" : "EINVAL");

	/* sim_set() checks that a rejected set changes nothing. */
	sim_init(&s, 2, NULL, 0);
	sim_attach(&s, 0);
	sim_attach(&s, 1);
	CHECK(s.c[0].pc->weight == GPUSCHED_WEIGHT_DEFAULT &&
	      s.c[0].pc->sched_class == GPUSCHED_CLASS_NORMAL &&
	      s.c[0].pc->cap_pct == GPUSCHED_CAP_NONE, "defaults of a client");
	sim_wait(&s, 0);
	sim_wait(&s, 1);
	for (k = 0; k < ARRAY_SIZE(v); k++) {
		sim_set(&s, 0, v[k].w, v[k].cl, v[k].cap);	/* holding */
		sim_set(&s, 1, v[k].w, v[k].cl, v[k].cap);	/* waiting */
	}
	sim_free(&s);
}

static void t_lowers(void)
{
	static const struct {
		uint32_t w, cl, cap;		/* from */
		uint32_t nw, ncl, ncap;		/* to */
		bool lowers;
	} v[] = {
		{ 100, 1, 0, 100, 1, 0, true },		/* no change */
		{ 100, 1, 0, 50, 1, 0, true },		/* weight down */
		{ 100, 1, 0, 101, 1, 0, false },	/* weight up */
		{ 100, 0, 0, 100, 1, 0, true },		/* latency -> normal */
		{ 100, 1, 0, 100, 2, 0, true },		/* normal -> batch */
		{ 100, 0, 0, 100, 2, 0, true },		/* latency -> batch */
		{ 100, 1, 0, 100, 0, 0, false },	/* normal -> latency */
		{ 100, 2, 0, 100, 1, 0, false },	/* batch -> normal */
		{ 100, 1, 0, 100, 1, 50, true },	/* add a cap */
		{ 100, 1, 50, 100, 1, 20, true },	/* lower the cap */
		{ 100, 1, 50, 100, 1, 60, false },	/* raise the cap */
		{ 100, 1, 50, 100, 1, 0, false },	/* remove the cap */
		{ 100, 1, 50, 100, 1, 100, false },	/* 100%: none */
		{ 100, 1, 0, 100, 1, 100, true },	/* none -> 100%: same */
		{ 100, 1, 100, 100, 1, 0, true },	/* 100% -> none: same */
		{ 100, 1, 100, 100, 1, 99, true },
		{ 100, 2, 50, 50, 2, 40, true },	/* all lower */
		{ 100, 2, 50, 50, 1, 40, false },	/* one higher */
		{ 100, 2, 50, 200, 2, 40, false },
	};
	unsigned int k;
	struct sim s;

	sim_init(&s, 1, NULL, 0);
	sim_attach(&s, 0);
	for (k = 0; k < ARRAY_SIZE(v); k++) {
		sim_set(&s, 0, v[k].w, v[k].cl, v[k].cap);
		CHECK(gs_pol_lowers(s.c[0].pc, v[k].nw, v[k].ncl, v[k].ncap) ==
		      v[k].lowers, "%u/%u/%u -> %u/%u/%u: expected %s",
		      v[k].w, v[k].cl, v[k].cap, v[k].nw, v[k].ncl, v[k].ncap,
		      v[k].lowers ? "lowers" : "raises");
	}
	sim_free(&s);
}

/* Release by a non-holder, and calls made in the wrong state. */
static void t_eperm(void)
{
	struct sim s;

	sim_init(&s, 3, NULL, 0);
	sim_attach(&s, 0);
	sim_attach(&s, 1);
	sim_attach(&s, 2);
	sim_release(&s, 0);			/* idle: EPERM */
	sim_wait(&s, 0);			/* granted */
	CHECK(s.holder == 0, "free token not granted");
	sim_wait(&s, 1);
	sim_release(&s, 1);			/* waiting: EPERM */
	sim_release(&s, 2);			/* idle: EPERM */
	sim_wait(&s, 0);			/* holding: no-op */
	sim_wait(&s, 1);			/* waiting: no-op */
	sim_cancel(&s, 0);			/* holding: no-op */
	sim_cancel(&s, 2);			/* idle: no-op */
	s.now += 5 * MS;
	sim_release(&s, 0);			/* the holder: 0, grants 1 */
	CHECK(s.holder == 1, "waiter not granted on release");
	sim_release(&s, 0);			/* again: EPERM */
	CHECK(s.c[0].eperms == 2 && s.c[1].eperms == 1 &&
	      s.c[2].eperms == 1, "EPERM counts %" PRIu64 " %" PRIu64 " %" PRIu64,
	      s.c[0].eperms, s.c[1].eperms, s.c[2].eperms);
	CHECK(s.c[0].pc->held_ns == 5 * MS, "charged %" PRIu64,
	      s.c[0].pc->held_ns);
	sim_free(&s);
}

/* A holder asked to yield that does not release within grace_ns. */
static void t_overrun(void)
{
	struct gs_pol_params p;
	uint64_t g0, ty;
	struct sim s;

	gs_pol_default_params(&p);
	sim_init(&s, 3, &p, 0);
	sim_attach(&s, 0);
	sim_attach(&s, 1);
	sim_attach(&s, 2);
	s.c[0].deaf = true;
	sim_wait(&s, 0);
	g0 = s.now;
	s.now += 1 * MS;
	sim_wait(&s, 1);
	CHECK(gs_pol_next_event(&s.d, s.now) == g0 + p.slice_ns,
	      "next event %" PRIu64 ", slice end %" PRIu64,
	      gs_pol_next_event(&s.d, s.now), g0 + p.slice_ns);
	s.now = g0 + p.slice_ns - 1;
	sim_tick(&s);
	CHECK(!s.c[0].yielded, "asked to yield before the slice ended");
	s.now++;
	sim_tick(&s);
	CHECK(s.c[0].yielded && s.c[0].pc->yields == 1, "not asked to yield");
	ty = s.now;
	CHECK(gs_pol_next_event(&s.d, s.now) == ty + p.grace_ns,
	      "next event is not the end of the grace time");
	s.now = ty + p.grace_ns - 1;
	sim_tick(&s);
	sim_wait(&s, 2);
	CHECK(s.holder == 0 && !s.d.overruns, "revoked within the grace time");
	s.now++;
	sim_tick(&s);
	CHECK(s.holder == 1 && s.d.overruns == 1 && s.c[0].pc->overruns == 1 &&
	      s.c[0].pc->revoked, "not revoked after the grace time");
	CHECK(s.c[0].pc->held_ns == ty + p.grace_ns - g0,
	      "revoked holder charged %" PRIu64, s.c[0].pc->held_ns);
	sim_release(&s, 0);		/* too late: EPERM */
	CHECK(s.c[0].eperms == 1, "late release not refused");

	/* A holder that releases one ns before the end of grace is fine. */
	s.now += p.slice_ns;
	sim_tick(&s);
	CHECK(s.c[1].yielded, "holder 1 not asked to yield");
	s.now += p.grace_ns - 1;
	sim_release(&s, 1);
	CHECK(s.d.overruns == 1 && s.holder == 2, "release within grace");
	/* The revoked flag clears at the next grant. */
	sim_wait(&s, 0);
	sim_cancel(&s, 2);
	sim_release(&s, 2);
	CHECK(s.holder == 0 && !s.c[0].pc->revoked, "revoked flag stuck");
	sim_free(&s);
}

/*
 * A waiter that leaves (cancel: timeout, signal; or detach: close, kill)
 * after the holder was asked to yield withdraws the request when no other
 * waiter justifies it: the holder is not revoked for nobody, the timer
 * has nothing left to do. One that still waits keeps the request.
 */
static void t_yield_withdrawn(void)
{
	struct gs_pol_params p;
	uint64_t g0, ty;
	struct sim s;

	gs_pol_default_params(&p);
	sim_init(&s, 4, &p, 0);
	sim_attach(&s, 0);
	sim_attach(&s, 1);
	sim_attach(&s, 2);
	s.c[0].deaf = true;
	sim_wait(&s, 0);
	g0 = s.now;
	s.now += 1 * MS;
	sim_wait(&s, 1);
	s.now = g0 + p.slice_ns;
	sim_tick(&s);
	CHECK(s.c[0].yielded, "not asked to yield at the end of the slice");
	ty = s.now;

	/* The only waiter cancels halfway through the grace time. */
	s.now += p.grace_ns / 2;
	sim_cancel(&s, 1);
	CHECK(!s.c[0].yielded && !s.d.holder->yield_requested &&
	      s.c[0].unyields == 1, "yield request left standing");
	CHECK(!(gs_pol_status_flags(s.d.holder) & GPUSCHED_ST_YIELD),
	      "status page still says yield");
	CHECK(gs_pol_next_event(&s.d, s.now) == NEVER,
	      "timer armed for %" PRIu64 " with nobody waiting",
	      gs_pol_next_event(&s.d, s.now));
	s.now = ty + p.grace_ns + 1 * SEC;
	sim_tick(&s);
	CHECK(s.holder == 0 && !s.d.overruns, "revoked for nobody");

	/* A new waiter asks anew, with a grace time of its own. */
	sim_wait(&s, 1);
	CHECK(s.c[0].yielded && s.c[0].yield_at == s.now,
	      "not asked anew by a new waiter");
	ty = s.now;

	/* Two wait; one leaves: the other still justifies the request. */
	s.now += 1 * MS;
	sim_wait(&s, 2);
	s.now += 1 * MS;
	sim_cancel(&s, 1);
	CHECK(s.c[0].yielded && s.d.holder->yield_at == ty,
	      "request withdrawn though a waiter is left");
	/* The last one is killed (its file closed): withdrawn again. */
	s.now += 1 * MS;
	sim_detach(&s, 2);
	CHECK(!s.c[0].yielded && s.c[0].unyields == 2,
	      "request left standing after the last waiter detached");
	s.now = ty + p.grace_ns + 1 * SEC;
	sim_tick(&s);
	CHECK(s.holder == 0 && !s.d.overruns, "revoked for nobody");

	/* A request that waiters do not justify (the cap's end) stands. */
	sim_set(&s, 0, GPUSCHED_WEIGHT_DEFAULT, GPUSCHED_CLASS_NORMAL, 10);
	s.now = gs_pol_next_event(&s.d, s.now);
	sim_tick(&s);
	CHECK(s.c[0].yielded, "capped holder not asked to yield at its end");
	sim_attach(&s, 3);
	sim_wait(&s, 3);
	s.now += 1 * MS;
	sim_cancel(&s, 3);
	CHECK(s.c[0].yielded, "cap's request withdrawn by a waiter leaving");
	/* Lifting the cap with nobody waiting withdraws it. */
	sim_set(&s, 0, GPUSCHED_WEIGHT_DEFAULT, GPUSCHED_CLASS_NORMAL,
		GPUSCHED_CAP_NONE);
	CHECK(!s.c[0].yielded, "request left standing after the cap went");
	s.now += p.grace_ns + 1 * SEC;
	sim_tick(&s);
	CHECK(s.holder == 0 && !s.d.overruns, "revoked for nobody");
	sim_free(&s);
}

static void fx_none(void *arg, struct gs_pol_effects *fx, uint64_t now)
{
	(void)arg;
	(void)fx;
	(void)now;
}

/* Device @d with parameters @p and @n clients @c, attached at @now. */
static void clients_up(struct gs_pol_dev *d, const struct gs_pol_params *p,
		       struct gs_pol_client *c, int n, uint64_t now)
{
	gs_pol_dev_init(d, p, now);
	for (int i = 0; i < n; i++)
		gs_pol_client_init(d, &c[i], now);
}

/* Make @c of the latency class at @now (its effects are not looked at). */
static int to_latency(struct gs_pol_dev *d, struct gs_pol_client *c,
		      uint64_t now)
{
	struct gs_pol_effects fx = { 0 };

	return gs_pol_set_client_params(d, c, GPUSCHED_WEIGHT_DEFAULT,
					GPUSCHED_CLASS_LATENCY,
					GPUSCHED_CAP_NONE, now, &fx);
}

/* ... and gone at @now. */
static void clients_down(struct gs_pol_dev *d, struct gs_pol_client *c, int n,
			 uint64_t now)
{
	for (int i = 0; i < n; i++) {
		struct gs_pol_effects fx = { 0 };

		gs_pol_client_exit(d, &c[i], now, &fx);
	}
}

/*
 * yield_due: when the waiters need the GPU, for the holder asked to yield.
 * The earliest of the times they gave (GPUSCHED_ACQUIRE_DUE); 0 as soon
 * as one gave none; 0 while no yield is asked; the grant clears a due.
 */
static void t_yield_due(void)
{
	struct gs_pol_client c[3];
	struct gs_pol_params p;
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC;

	gs_pol_default_params(&p);
	clients_up(&d, &p, c, 3, now);
	CHECK(gs_pol_acquire(&d, &c[0], false, false, 0, 0, now, fx_none, NULL) == 0 &&
	      d.holder == &c[0], "first acquire not granted");
	CHECK(c[0].yield_due == 0, "yield_due %" PRIu64 " with nobody waiting",
	      c[0].yield_due);
	/* Latency class: the holder is asked to yield at once. */
	CHECK(to_latency(&d, &c[1], now) == 0, "set latency class");
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[1], false, false, now + 400 * US, 0,
			     now, fx_none, NULL) == 0, "due acquire refused");
	CHECK(c[0].yield_requested && c[0].yield_due == now + 400 * US,
	      "holder asked %d, yield_due %" PRIu64 " (want %" PRIu64 ")",
	      c[0].yield_requested, c[0].yield_due, now + 400 * US);
	/* A second waiter with none: someone needs the GPU now. */
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[2], false, false, 0, 0, now, fx_none, NULL) == 0,
	      "second waiter refused");
	CHECK(c[0].yield_due == 0, "yield_due %" PRIu64 " with a waiter that gave none",
	      c[0].yield_due);
	/* It leaves: the due of the one left counts again. */
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_cancel_wait(&d, &c[2], now, &fx);
	CHECK(c[0].yield_due == now - 10 * US + 400 * US,
	      "yield_due %" PRIu64 " after the other left", c[0].yield_due);
	/* The holder yields: the waiter is granted, its due cleared. */
	now += 100 * US;
	CHECK(gs_pol_acquire(&d, &c[0], true, false, 0, 0, now, fx_none, NULL) == 0 &&
	      d.holder == &c[1] && c[1].due_at == 0 && c[1].yield_due == 0,
	      "yield: holder %td, due_at %" PRIu64, d.holder - c, c[1].due_at);
	clients_down(&d, c, 3, now);
}

/*
 * NUDGE: a latency-class client with work beside the holder asks it to let
 * its queue run out once. The holder keeps the token, is not asked to
 * yield (so no grace time runs), and sees when on its page; the nudger
 * stays idle. Only the latency class may, within its budget, and only
 * while someone else holds; YIELD with it is refused.
 */
static void t_nudge(void)
{
	struct gs_pol_client c[3];
	struct gs_pol_effects fx = { 0 };
	struct gpusched_status st;
	struct gs_pol_params p;
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC, vt;
	const u32 N = GPUSCHED_ACQUIRE_NUDGE;

	gs_pol_default_params(&p);
	p.latency_pct = 10;
	clients_up(&d, &p, c, 3, now);
	CHECK(to_latency(&d, &c[1], now) == 0, "set latency class");
	CHECK(gs_pol_acquire(&d, &c[1], false, N, 0, 0, now, fx_none, NULL) == -EALREADY,
	      "a nudge with nobody holding is not -EALREADY");
	CHECK(gs_pol_acquire(&d, &c[0], false, 0, 0, 0, now, fx_none, NULL) == 0 &&
	      d.holder == &c[0], "first acquire not granted");
	now += 50 * US;		/* the nudger's 50 us of work below ran since */
	CHECK(gs_pol_acquire(&d, &c[2], false, N, 0, 0, now, fx_none, NULL) == -EPERM,
	      "a normal-class client's nudge is not -EPERM");
	CHECK(c[0].nudge_at == 0, "refused nudge left nudge_at %" PRIu64, c[0].nudge_at);
	CHECK(gs_pol_acquire(&d, &c[1], true, N, 0, 0, now, fx_none, NULL) == -EINVAL,
	      "YIELD with NUDGE is not -EINVAL");
	vt = c[1].vtime;
	CHECK(gs_pol_acquire(&d, &c[1], false, N, 0, 50 * US, now, fx_none, NULL) == 0,
	      "the latency client's nudge refused");
	CHECK(c[0].nudge_at == now && d.holder == &c[0] && !c[0].yield_requested,
	      "after a nudge: nudge_at %" PRIu64 " (want %" PRIu64 "), holder %td, yield asked %d",
	      c[0].nudge_at, now, d.holder - c, c[0].yield_requested);
	CHECK(c[1].state == GS_POL_IDLE && c[1].nudges == 1 && d.nr_waiting == 0,
	      "the nudger: state %d, nudges %" PRIu64 ", waiting %u",
	      c[1].state, c[1].nudges, d.nr_waiting);
	CHECK(c[1].gpu_ns == 50 * US && c[1].vtime > vt,
	      "the nudge's report: gpu_ns %" PRIu64 ", vtime %" PRIu64 " from %" PRIu64,
	      c[1].gpu_ns, c[1].vtime, vt);
	gs_pol_status_fill(&d, &c[0], 1, now, &st);
	CHECK(st.nudge_ns == now && !(st.flags & GPUSCHED_ST_YIELD),
	      "holder's page: nudge_ns %" PRIu64 ", flags %#x", (uint64_t)st.nudge_ns,
	      st.flags);
	/* Waiting already (another thread's ACQUIRE on its file), a nudge
	 * still never waits, and leaves that wait as it was.
	 */
	CHECK(gs_pol_acquire(&d, &c[1], false, 0, 0, 0, now, fx_none, NULL) == 0 &&
	      gs_pol_acquire_waits(&c[1], 0, 0), "the latency client does not wait");
	CHECK(gs_pol_acquire(&d, &c[1], false, N, 0, 0, now, fx_none, NULL) == 0,
	      "a waiting client's nudge refused");
	CHECK(!gs_pol_acquire_waits(&c[1], N, 0) && c[1].state == GS_POL_WAITING &&
	      d.nr_waiting == 1,
	      "a nudge waits (%d), or moved the wait: state %d, waiting %u",
	      gs_pol_acquire_waits(&c[1], N, 0), c[1].state, d.nr_waiting);
	CHECK(c[0].nudge_at == now + 1,
	      "a second nudge at the same time: nudge_at %" PRIu64 " (want %" PRIu64 ")",
	      c[0].nudge_at, now + 1);
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_cancel_wait(&d, &c[1], now, &fx);
	/* Long after, nothing was revoked: no grace time ran. */
	now += 10 * p.grace_ns;
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_tick(&d, now, &fx);
	CHECK(!fx.revoked && d.holder == &c[0], "nudged holder revoked");
	/* Work beside the holder spends the class's budget: 10% of the window. */
	CHECK(gs_pol_acquire(&d, &c[1], false, N, 0, p.window_ns, now, fx_none,
			     NULL) == -EBUSY, "a nudge past the latency budget is not -EBUSY");
	CHECK(c[0].nudge_at == now - 10 * p.grace_ns + 1,
	      "refused nudge moved nudge_at to %" PRIu64, c[0].nudge_at);
	clients_down(&d, c, 3, now);
}

/*
 * A nudge's age (GPUSCHED_FEAT_NUDGE_AGE): the holder's page says when the
 * nudging work was launched, never later than the call, never the same
 * time twice; an age without the nudge is refused.
 */
static void t_nudge_age(void)
{
	struct gpusched_acquire a = { .flags = GPUSCHED_ACQUIRE_NUDGE };
	struct gs_pol_client c[2];
	struct gs_pol_params p;
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC, at;
	const u32 N = GPUSCHED_ACQUIRE_NUDGE;

	a.age_ns = 300 * US;
	CHECK(gs_pol_check_acquire(&a) == 0, "a nudge with an age refused");
	CHECK(gs_pol_due(&a, now) == now - 300 * US,
	      "a nudge 300 us old: at %" PRIu64 " (want %" PRIu64 ")",
	      gs_pol_due(&a, now), now - 300 * US);
	a.age_ns = now + 1;
	CHECK(gs_pol_due(&a, now) == 1, "an age before the clock's start: %" PRIu64,
	      gs_pol_due(&a, now));
	a.flags = 0;
	CHECK(gs_pol_check_acquire(&a) == -EINVAL, "an age without NUDGE taken");
	a.flags = GPUSCHED_ACQUIRE_DUE;
	CHECK(gs_pol_check_acquire(&a) == -EINVAL, "an age with DUE taken");
	a.age_ns = 0;
	a.reserved[0] = 1;
	a.flags = N;
	CHECK(gs_pol_check_acquire(&a) == -EINVAL, "reserved[0] taken");

	gs_pol_default_params(&p);
	clients_up(&d, &p, c, 2, now);
	CHECK(to_latency(&d, &c[1], now) == 0, "set latency class");
	CHECK(gs_pol_acquire(&d, &c[0], false, 0, 0, 0, now, fx_none, NULL) == 0,
	      "first acquire not granted");
	now += 10 * MS;
	at = now - 200 * US;
	CHECK(gs_pol_acquire(&d, &c[1], false, N, at, 0, now, fx_none, NULL) == 0,
	      "a nudge for work launched 200 us ago refused");
	CHECK(c[0].nudge_at == at, "nudge_at %" PRIu64 " (want %" PRIu64 ")",
	      c[0].nudge_at, at);
	CHECK(gs_pol_acquire(&d, &c[1], false, N, at - 1, 0, now, fx_none, NULL) == 0,
	      "a nudge for an older launch refused");
	CHECK(c[0].nudge_at == at + 1,
	      "an older launch after it: nudge_at %" PRIu64 " (want %" PRIu64 ")",
	      c[0].nudge_at, at + 1);
	CHECK(gs_pol_acquire(&d, &c[1], false, N, now + MS, 0, now, fx_none, NULL) == 0,
	      "a nudge for a launch after the call refused");
	CHECK(c[0].nudge_at == now,
	      "a launch after the call: nudge_at %" PRIu64 " (want %" PRIu64 ")",
	      c[0].nudge_at, now);
	clients_down(&d, c, 2, now);
}

/*
 * NUDGE_DONE: the client that nudged the holder last says its work has
 * ended, and the holder's page shows nudge_done_ns equal to nudge_ns. Only
 * that nudger, of the latency class, once per nudge, while someone else
 * holds; a later nudge by another, a new grant or the nudger's exit leaves
 * nothing of its own to answer. It takes no other flag or field.
 */
static void t_nudge_done(void)
{
	struct gpusched_acquire a = { .flags = GPUSCHED_ACQUIRE_NUDGE_DONE };
	struct gs_pol_client c[4];
	struct gs_pol_effects fx = { 0 };
	struct gpusched_status st;
	struct gs_pol_params p;
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC, gpu;
	const u32 N = GPUSCHED_ACQUIRE_NUDGE, D = GPUSCHED_ACQUIRE_NUDGE_DONE;

	CHECK(gs_pol_check_acquire(&a) == 0, "NUDGE_DONE alone refused");
	a.flags = D | GPUSCHED_ACQUIRE_NONBLOCK;
	CHECK(gs_pol_check_acquire(&a) == -EINVAL, "NUDGE_DONE with NONBLOCK taken");
	a.flags = D | N;
	CHECK(gs_pol_check_acquire(&a) == -EINVAL, "NUDGE_DONE with NUDGE taken");
	a.flags = D;
	a.age_ns = 1000;
	CHECK(gs_pol_check_acquire(&a) == -EINVAL, "NUDGE_DONE with an age taken");

	/* c[0] holds; c[1] and c[3] are of the latency class, c[2] not. */
	gs_pol_default_params(&p);
	clients_up(&d, &p, c, 4, now);
	CHECK(to_latency(&d, &c[1], now) == 0, "set latency class of c[1]");
	CHECK(to_latency(&d, &c[3], now) == 0, "set latency class of c[3]");
	CHECK(gs_pol_acquire(&d, &c[1], false, D, 0, 0, now, fx_none, NULL) == -EALREADY,
	      "NUDGE_DONE with nobody holding is not -EALREADY");
	CHECK(gs_pol_acquire(&d, &c[0], false, 0, 0, 0, now, fx_none, NULL) == 0 &&
	      d.holder == &c[0], "first acquire not granted");
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[1], false, N, 0, 0, now, fx_none, NULL) == 0,
	      "the latency client's nudge refused");
	CHECK(d.nudger == &c[1], "the nudge left nudger %p", (void *)d.nudger);
	gs_pol_status_fill(&d, &c[0], 1, now, &st);
	CHECK(st.nudge_ns == now && st.nudge_done_ns != st.nudge_ns,
	      "holder's page before the answer: nudge_ns %" PRIu64 ", nudge_done_ns %" PRIu64,
	      (uint64_t)st.nudge_ns, (uint64_t)st.nudge_done_ns);
	CHECK(gs_pol_acquire(&d, &c[2], false, D, 0, 0, now, fx_none, NULL) == -EPERM,
	      "a normal-class client's NUDGE_DONE is not -EPERM");
	CHECK(gs_pol_acquire(&d, &c[3], false, D, 0, 0, now, fx_none, NULL) == -ENOENT,
	      "NUDGE_DONE by a client that did not nudge is not -ENOENT");
	CHECK(gs_pol_acquire(&d, &c[1], true, D, 0, 0, now, fx_none, NULL) == -EINVAL,
	      "YIELD with NUDGE_DONE is not -EINVAL");
	CHECK(c[0].nudge_done == 0 && d.nudger == &c[1],
	      "refused answers changed nudge_done to %" PRIu64 ", nudger to %p",
	      c[0].nudge_done, (void *)d.nudger);
	now += 10 * US;
	gpu = c[1].gpu_ns;
	CHECK(gs_pol_acquire(&d, &c[1], false, D, 0, 20 * US, now, fx_none, NULL) == 0,
	      "the nudger's NUDGE_DONE refused");
	gs_pol_status_fill(&d, &c[0], 1, now, &st);
	CHECK(st.nudge_done_ns == st.nudge_ns && st.nudge_ns == now - 10 * US,
	      "holder's page: nudge_done_ns %" PRIu64 ", nudge_ns %" PRIu64 " (want %" PRIu64 ")",
	      (uint64_t)st.nudge_done_ns, (uint64_t)st.nudge_ns, now - 10 * US);
	CHECK(d.holder == &c[0] && c[1].state == GS_POL_IDLE && d.nr_waiting == 0 &&
	      !gs_pol_acquire_waits(&c[1], D, 0),
	      "after the answer: holder %td, the nudger's state %d, waiting %u",
	      d.holder - c, c[1].state, d.nr_waiting);
	CHECK(c[1].gpu_ns == gpu + 20 * US,
	      "the answer's report: gpu_ns %" PRIu64 " (want %" PRIu64 ")",
	      c[1].gpu_ns, gpu + 20 * US);
	CHECK(gs_pol_acquire(&d, &c[1], false, D, 0, 0, now, fx_none, NULL) == -ENOENT,
	      "a second NUDGE_DONE for the same nudge is not -ENOENT");

	/* Another client nudges after c[1]: only its answer counts. */
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[1], false, N, 0, 0, now, fx_none, NULL) == 0,
	      "c[1]'s nudge refused");
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[3], false, N, 0, 0, now, fx_none, NULL) == 0,
	      "c[3]'s nudge refused");
	CHECK(gs_pol_acquire(&d, &c[1], false, D, 0, 0, now, fx_none, NULL) == -ENOENT,
	      "NUDGE_DONE of a nudge nudged over is not -ENOENT");
	CHECK(gs_pol_acquire(&d, &c[3], false, D, 0, 0, now, fx_none, NULL) == 0,
	      "the last nudger's NUDGE_DONE refused");
	gs_pol_status_fill(&d, &c[0], 1, now, &st);
	CHECK(st.nudge_done_ns == st.nudge_ns && st.nudge_ns == now,
	      "holder's page: nudge_done_ns %" PRIu64 ", nudge_ns %" PRIu64 " (want %" PRIu64 ")",
	      (uint64_t)st.nudge_done_ns, (uint64_t)st.nudge_ns, now);

	/* The token changes hands: the nudge went with the grant. */
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[1], false, N, 0, 0, now, fx_none, NULL) == 0,
	      "c[1]'s nudge refused");
	fx = (struct gs_pol_effects){ 0 };
	CHECK(gs_pol_release(&d, &c[0], now, &fx) == 0, "the holder's release refused");
	CHECK(d.nudger == NULL, "the release left nudger %p", (void *)d.nudger);
	CHECK(gs_pol_acquire(&d, &c[1], false, D, 0, 0, now, fx_none, NULL) == -EALREADY,
	      "NUDGE_DONE with nobody holding after the release is not -EALREADY");
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[0], false, 0, 0, 0, now, fx_none, NULL) == 0 &&
	      d.holder == &c[0], "second acquire not granted");
	CHECK(gs_pol_acquire(&d, &c[1], false, D, 0, 0, now, fx_none, NULL) == -ENOENT,
	      "NUDGE_DONE of the last grant's nudge is not -ENOENT");

	/* The nudger exits: nothing is left pointing at it. */
	now += 10 * US;
	CHECK(gs_pol_acquire(&d, &c[3], false, N, 0, 0, now, fx_none, NULL) == 0 &&
	      d.nudger == &c[3], "c[3]'s nudge refused, or not its: nudger %p",
	      (void *)d.nudger);
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_client_exit(&d, &c[3], now, &fx);
	CHECK(d.nudger == NULL, "the nudger's exit left nudger %p", (void *)d.nudger);
	clients_down(&d, c, 3, now);
}

static void t_next_event(void)
{
	struct gs_pol_params p;
	struct sim s;
	uint64_t g;

	gs_pol_default_params(&p);
	sim_init(&s, 3, &p, 0);
	CHECK(gs_pol_next_event(&s.d, s.now) == NEVER, "empty device");
	sim_attach(&s, 0);
	sim_attach(&s, 1);
	sim_wait(&s, 0);
	CHECK(gs_pol_next_event(&s.d, s.now) == NEVER, "lone holder");
	s.now += 1 * SEC;
	sim_wait(&s, 1);		/* slice over: yield at once */
	CHECK(s.c[0].yielded, "lone holder past its slice not asked to yield");
	CHECK(gs_pol_next_event(&s.d, s.now) == s.now + p.grace_ns,
	      "end of grace");
	s.now += 10 * US;
	sim_release(&s, 0);
	CHECK(s.holder == 1, "not handed over");
	g = s.now;
	CHECK(gs_pol_next_event(&s.d, s.now) == NEVER, "lone holder again");
	sim_wait(&s, 0);
	CHECK(gs_pol_next_event(&s.d, s.now) == g + p.slice_ns, "slice end");
	sim_free(&s);
}

/*
 * gs_pol_next_event() asked at a time past an event that no call has acted
 * on yet must answer "now + 1". token.c re-arms its timer after every call,
 * also after calls that do not update the policy (ACQUIRE by the holder:
 * EALREADY; by a waiter: EBUSY; attach; a failed release), and one may come
 * after an event fell due but before the (soft) timer ran: a later answer
 * would postpone the event, NEVER would cancel the timer.
 */
static void overdue(struct sim *s, const char *what)
{
	uint64_t ne = gs_pol_next_event(&s->d, s->now);
	struct gs_pol_effects fx = { 0 };

	CHECK(ne == s->now + 1, "%s: next event in %" PRIu64 " ns", what,
	      ne == NEVER ? ne : ne - s->now);
	gs_pol_tick(&s->d, s->now, &fx);
	CHECK(!fx_empty(&fx), "%s: the tick did nothing", what);
	sim_call_done(s, &fx, -1);
}

static void t_next_event_overdue(void)
{
	struct gs_pol_params p;
	struct sim s;
	uint64_t g;

	gs_pol_default_params(&p);
	p.latency_pct = 10;
	p.window_ns = 10 * MS;
	p.starve_ns = 100 * MS;
	sim_init(&s, 4, &p, 0);
	add_sat(&s, 0, 100, GPUSCHED_CLASS_NORMAL, 0, 0);
	add_sat(&s, 1, 100, GPUSCHED_CLASS_NORMAL, 0, 0);

	/* The slice ended while another client waits. */
	sim_wait(&s, 0);
	g = s.now;
	s.now += 1 * MS;
	sim_wait(&s, 1);
	s.now = g + p.slice_ns + 1 * MS;
	overdue(&s, "slice end");
	CHECK(s.c[0].yielded, "no yield at the slice end");
	s.c[0].sat = false;
	sim_release(&s, 0);
	sim_detach(&s, 0);

	/* A batch waiter starved (slices are long now). */
	p.slice_ns = 10 * SEC;
	sim_set_dev(&s, &p);
	add_sat(&s, 2, 100, GPUSCHED_CLASS_BATCH, 0, 0);
	sim_wait(&s, 2);
	s.now += p.starve_ns + 1 * MS;
	overdue(&s, "batch starved");
	sim_release(&s, 1);
	sim_actions(&s);			/* 1 waits again */
	CHECK(s.holder == 2, "starved batch waiter not served");
	s.c[2].sat = false;
	sim_release(&s, 2);
	CHECK(s.holder == 1, "normal client not back");

	/* The latency budget refilled while a latency client waits. */
	add_sat(&s, 3, 1, GPUSCHED_CLASS_LATENCY, 0, 0);
	sim_wait(&s, 3);			/* preempts 1 */
	sim_release(&s, 1);
	sim_actions(&s);
	CHECK(s.holder == 3, "latency client not granted");
	s.now = s.c[3].pc->slice_end;		/* budget spent */
	sim_tick(&s);
	CHECK(s.c[3].yielded, "latency client not asked to yield");
	sim_release(&s, 3);
	sim_actions(&s);
	CHECK(s.holder == 1 && s.c[3].waiting, "latency client not behind");
	g = gs_pol_next_event(&s.d, s.now);
	CHECK(g != NEVER && g < s.now + 1 * SEC, "no event for the refill");
	if (g != NEVER)
		s.now = g + 1 * MS;
	overdue(&s, "latency budget refilled");
	sim_release(&s, 1);
	CHECK(s.holder == 3, "latency client not served after the refill");
	sim_detach(&s, 3);
	sim_release(&s, 1);
	sim_detach(&s, 1);
	sim_detach(&s, 2);

	/* A capped waiter got credit back while the token is free. */
	add_sat(&s, 0, 100, GPUSCHED_CLASS_NORMAL, 10, 0);
	sim_wait(&s, 0);
	s.now = s.c[0].pc->hard_end;
	sim_tick(&s);
	sim_release(&s, 0);
	sim_actions(&s);
	CHECK(s.holder == -1 && s.c[0].waiting, "capped waiter granted");
	g = gs_pol_next_event(&s.d, s.now);
	CHECK(g != NEVER, "no event for the cap refill");
	if (g != NEVER)
		s.now = g + 1 * MS;
	overdue(&s, "cap refilled");
	CHECK(s.holder == 0, "capped waiter not served after the refill");
	sim_free(&s);
}

/* Charged time is held time, however long a grant lasts. */
static void t_long_grant(void)
{
	static const uint64_t spans[] = { 17 * 60 * SEC, 19 * 60 * SEC,
					  3600 * SEC, 30 * 86400 * SEC };
	unsigned int k;
	struct sim s;

	sim_init(&s, 2, NULL, 0);
	sim_attach(&s, 0);
	sim_attach(&s, 1);
	for (k = 0; k < ARRAY_SIZE(spans); k++) {
		uint64_t before = s.c[0].pc->held_ns;

		sim_wait(&s, 0);
		s.now += spans[k];	/* alone: nothing to yield to */
		sim_check(&s);		/* held_now against the clock */
		sim_release(&s, 0);
		CHECK(s.c[0].pc->held_ns - before == spans[k],
		      "a grant of %" PRIu64 " s charged %" PRIu64 " ns",
		      spans[k] / SEC, s.c[0].pc->held_ns - before);
	}
	sim_free(&s);
}

/* Work-conserving for batch; a starved batch waiter is served next. */
static void t_batch(void)
{
	struct gs_pol_params p;
	struct sim s;

	gs_pol_default_params(&p);
	p.starve_ns = 200 * MS;
	sim_init(&s, 3, &p, 7);
	sim_attach(&s, 2);
	sim_set(&s, 2, 100, GPUSCHED_CLASS_BATCH, 0);
	sim_wait(&s, 2);
	CHECK(s.holder == 2, "lone batch waiter not granted");
	s.now += 1 * MS;
	add_sat(&s, 0, 100, GPUSCHED_CLASS_NORMAL, 0, 20 * US);
	sim_wait(&s, 0);
	CHECK(s.c[2].yielded, "batch holder not asked to yield to normal");
	s.c[2].sat = true;
	s.c[2].drain_hi = 20 * US;
	s.c[2].wait_max = 0;
	add_sat(&s, 1, 100, GPUSCHED_CLASS_NORMAL, 0, 20 * US);
	sim_wait(&s, 1);
	sim_run(&s, s.now + 10 * SEC);
	/* Each batch grant comes after starving, and right after. */
	CHECK(s.c[2].grants >= 40, "batch granted %" PRIu64 " times",
	      s.c[2].grants);
	CHECK(s.c[2].wait_max >= p.starve_ns &&
	      s.c[2].wait_max <= p.starve_ns + 20 * US,
	      "batch waited up to %" PRIu64 " ns", s.c[2].wait_max);
	sim_free(&s);
}

/* A capped waiter without credit is not granted, even on a free token. */
static void t_cap_free_token(void)
{
	struct gs_pol_params p;
	struct sim s;
	uint64_t ne;

	gs_pol_default_params(&p);
	sim_init(&s, 1, &p, 0);
	add_sat(&s, 0, 100, GPUSCHED_CLASS_NORMAL, 10, 0);
	sim_wait(&s, 0);
	CHECK(s.holder == 0, "capped client with credit not granted");
	/* The bucket holds 10% of 100 ms: 10 ms at 100%, earning 10%. */
	ne = gs_pol_next_event(&s.d, s.now);
	CHECK(ne > s.now + 10 * MS && ne < s.now + 12 * MS,
	      "hard end in %" PRIu64 " ns", ne - s.now);
	s.now = ne;
	sim_tick(&s);
	CHECK(s.c[0].yielded, "capped holder not asked to yield at its cap");
	sim_release(&s, 0);
	sim_actions(&s);		/* waits again */
	CHECK(s.holder == -1 && s.d.nr_waiting == 1,
	      "capped waiter without credit granted");
	ne = gs_pol_next_event(&s.d, s.now);
	CHECK(ne != NEVER, "no event for the refill");
	s.now = ne - 1;
	sim_tick(&s);
	CHECK(s.holder == -1, "granted before the refill");
	s.now = ne;
	sim_tick(&s);
	CHECK(s.holder == 0, "not granted after the refill");
	sim_free(&s);
}

/* ------------------------------------------------------------------ */
/* Long runs                                                           */

/* Shares of token time between two snapshots of held_now. */
static void snap(const struct sim *s, uint64_t *v)
{
	int i;

	for (i = 0; i < s->n; i++)
		v[i] = s->c[i].pc ? held_now(s, i) : 0;
}

/* 1. Saturating clients: shares of the token follow the weights. */
static void weights(int n, const uint32_t *w, uint64_t slices, double tol)
{
	uint64_t total = 0, wsum = 0;
	struct sim s;
	int i;

	sim_init(&s, n, NULL, 11);
	for (i = 0; i < n; i++) {
		add_sat(&s, i, w[i], GPUSCHED_CLASS_NORMAL, 0, 50 * US);
		sim_wait(&s, i);
		wsum += w[i];
	}
	s.stop_grants = slices;
	sim_run(&s, NEVER);
	for (i = 0; i < n; i++)
		total += held_now(&s, i);
	{
		char line[160];
		int len = 0;

		for (i = 0; i < n; i++)
			len += snprintf(line + len, sizeof(line) - len,
					" %u:%.2f%%", w[i],
					100.0 * held_now(&s, i) / total);
		tap_diag("weight:share over %" PRIu64 " grants:%s", slices,
			 line);
	}
	CHECK(total >= slices * s.d.p.slice_ns / 2,
	      "%" PRIu64 " grants in %" PRIu64 " ms of token time", s.grants,
	      total / MS);
	for (i = 0; i < n; i++) {
		double share = 100.0 * held_now(&s, i) / total;
		double want = 100.0 * w[i] / wsum;

		CHECK(share > want - tol && share < want + tol,
		      "weight %u of %d clients: %.2f%% of the token, want %.2f%%",
		      w[i], n, share, want);
		/* Nobody waits much longer than its turn: slice x W / w. */
		CHECK(s.c[i].wait_max <= 2 * s.d.p.slice_ns * wsum / w[i],
		      "weight %u waited up to %" PRIu64 " ms", w[i],
		      s.c[i].wait_max / MS);
	}
	CHECK(s.d.overruns == 0, "%" PRIu64 " overruns", s.d.overruns);
	sim_free(&s);
}

static void t_weights(void)
{
	static const uint32_t w4[] = { 100, 200, 300, 400 };
	static const uint32_t w2[] = { 100, 300 };
	static const uint32_t w3[] = { 1, 100, 10000 };

	weights(4, w4, 100000, 0.5);
	weights(2, w2, 20000, 0.5);
	weights(3, w3, 20000, 0.5);
}

/*
 * 2. No banked credit: after idling for @idle, a client gets its fair share
 * (@fair of the token) at once, neither more nor less.
 */
static void banked(const char *what, int n, int back, uint32_t cap_of_2,
		   bool late_attach, double fair)
{
	uint64_t a[8], b[8], t0, idle = 60 * SEC, span = 3 * SEC;
	struct sim s;
	double share;
	int i;

	sim_init(&s, n, NULL, 5);
	for (i = 0; i < n; i++) {
		if (late_attach && i == back)
			continue;
		add_sat(&s, i, 100, GPUSCHED_CLASS_NORMAL,
			i == 2 ? cap_of_2 : 0, 30 * US);
		sim_wait(&s, i);
	}
	sim_run(&s, s.now + 10 * SEC);
	if (!late_attach)
		s.c[back].sat = false;		/* goes idle at its next release */
	sim_run(&s, s.now + idle);
	if (late_attach)
		add_sat(&s, back, 100, GPUSCHED_CLASS_NORMAL, 0, 30 * US);
	s.c[back].sat = true;
	for (i = 0; i < n; i++)
		s.c[i].wait_max = 0;
	snap(&s, a);
	t0 = s.now;
	sim_wait(&s, back);
	sim_run(&s, t0 + span);
	snap(&s, b);
	share = (double)(b[back] - a[back]) / span;
	tap_diag("%s: back after %" PRIu64 " s idle, %.1f%% of the next %" PRIu64 " s (fair %.1f%%)",
		 what, idle / SEC, 100 * share, span / SEC, 100 * fair);
	CHECK(share > fair - 0.02 && share < fair + 0.02,
	      "%s: returning client got %.1f%% of the next %" PRIu64 " s, fair is %.1f%%",
	      what, 100 * share, span / SEC, 100 * fair);
	for (i = 0; i < n; i++)
		CHECK(s.c[i].pc->cap_pct || s.c[i].wait_max <= 3 * s.d.p.slice_ns,
		      "%s: client %d waited up to %" PRIu64 " ms", what, i,
		      s.c[i].wait_max / MS);
	sim_free(&s);
}

static void t_no_banked_credit(void)
{
	banked("2 clients", 2, 0, 0, false, 0.5);
	banked("3 clients", 3, 0, 0, false, 1.0 / 3);
	banked("new client", 2, 1, 0, true, 0.5);
	banked("3 clients, one capped at 10%", 3, 0, 10, false, 0.45);
}

/* 3a. A latency client preempts at once and waits only for the drain. */
static void t_latency_preempts(void)
{
	struct sim s;
	int i;

	sim_init(&s, 4, NULL, 3);
	for (i = 0; i < 3; i++) {
		add_sat(&s, i, i == 0 ? 10000 : 100, GPUSCHED_CLASS_NORMAL, 0,
			40 * US);
		sim_wait(&s, i);
	}
	sim_run(&s, s.now + 1 * SEC + 3 * MS);	/* mid-slice */
	sim_attach(&s, 3);
	sim_set(&s, 3, 1, GPUSCHED_CLASS_LATENCY, 0);
	s.c[3].work = 50 * US;
	s.c[3].period = 2 * MS;
	CHECK(s.holder >= 0 && !s.c[s.holder].yielded, "no busy holder");
	i = s.holder;
	sim_wait(&s, 3);
	CHECK(s.c[i].yielded && s.c[i].yield_at == s.now,
	      "holder not asked to yield when a latency client came");
	sim_run(&s, s.now + 50 * US);
	CHECK(s.holder == 3, "latency client not next");
	/* 50 us every 2 ms: 2.5%, within the budget: always at once. */
	sim_run(&s, s.now + 20 * SEC);
	CHECK(s.c[3].grants >= 9900, "probe granted %" PRIu64 " times",
	      s.c[3].grants);
	tap_diag("probe: %" PRIu64 " grants, waited at most %" PRIu64 " us (holders drain in <= 40 us)",
		 s.c[3].grants, s.c[3].wait_max / US);
	CHECK(s.c[3].wait_max <= 40 * US, "probe waited up to %" PRIu64 " us",
	      s.c[3].wait_max / US);
	CHECK(s.d.overruns == 0, "%" PRIu64 " overruns", s.d.overruns);
	sim_free(&s);
}

/* 3b. A saturating latency client takes latency_pct, not more. */
static void latency_bound(uint32_t pct, uint32_t lw)
{
	struct gs_pol_params p;
	uint64_t a[4], b[4], t0, span = 120 * SEC;
	struct sim s;
	double share;
	int i;

	gs_pol_default_params(&p);
	p.latency_pct = pct;
	sim_init(&s, 4, &p, 9);
	for (i = 0; i < 4; i++) {
		add_sat(&s, i, i ? 100 : lw,
			i ? GPUSCHED_CLASS_NORMAL : GPUSCHED_CLASS_LATENCY, 0,
			50 * US);
		sim_wait(&s, i);
	}
	sim_run(&s, s.now + 1 * SEC);
	snap(&s, a);
	t0 = s.now;
	sim_run(&s, t0 + span);
	snap(&s, b);
	share = 100.0 * (b[0] - a[0]) / span;
	tap_diag("latency_pct %u, latency client weight %u vs 3 x 100: %.2f%%",
		 pct, lw, share);
	CHECK(share <= pct + 0.5 && share >= pct - 1.0,
	      "latency_pct %u, weight %u: latency client took %.2f%%",
	      pct, lw, share);
	for (i = 1; i < 4; i++) {
		double sh = 100.0 * (b[i] - a[i]) / span;

		CHECK(sh > (100 - share) / 3 - 0.5 && sh < (100 - share) / 3 + 0.5,
		      "normal client %d took %.2f%%", i, sh);
	}
	sim_free(&s);
}

static void t_latency_bound(void)
{
	latency_bound(25, 1);
	latency_bound(50, 1);
	latency_bound(10, 10);
}

/*
 * 4. Caps hold, alone (the token idles) or not, over the run and over any
 * one second: at most cap% of the time, plus the burst the bucket allows
 * (cap% of window_ns), plus one grant's overshoot (min_grant_ns, drain).
 */
static void capped(uint32_t cap, uint32_t w, int others)
{
	uint64_t a[4], b[4], t0, sec0, span = 200 * SEC, worst = 0;
	const uint64_t drain = 50 * US;
	struct gs_pol_params p;
	uint64_t extra;
	struct sim s;
	double share, tok;
	int i;

	gs_pol_default_params(&p);
	extra = cap * p.window_ns / 100 + p.min_grant_ns + drain;
	sim_init(&s, 1 + others, &p, 13);
	add_sat(&s, 0, w, GPUSCHED_CLASS_NORMAL, cap, drain);
	sim_wait(&s, 0);
	for (i = 1; i <= others; i++) {
		add_sat(&s, i, 100, GPUSCHED_CLASS_NORMAL, 0, drain);
		sim_wait(&s, i);
	}
	snap(&s, a);
	t0 = s.now;
	for (sec0 = t0; sec0 < t0 + span && !s.failed; sec0 += SEC) {
		uint64_t h0 = held_now(&s, 0);

		sim_run(&s, sec0 + SEC);
		worst = max64(worst, held_now(&s, 0) - h0);
	}
	snap(&s, b);
	share = 100.0 * (b[0] - a[0]) / span;
	tap_diag("cap %u%%, weight %u, %d others: %.4f%% over %" PRIu64 " s, at most %" PRIu64 " us in a second",
		 cap, w, others, share, span / SEC, worst / US);
	CHECK(b[0] - a[0] <= cap * span / 100 + extra,
	      "cap %u%%, weight %u, %d others: %.4f%% of %" PRIu64 " s",
	      cap, w, others, share, span / SEC);
	CHECK(share >= cap - 0.5, "cap %u%%: only %.4f%%", cap, share);
	CHECK(worst <= cap * SEC / 100 + extra,
	      "cap %u%%: up to %" PRIu64 " us in one second", cap, worst / US);
	tok = 0;
	for (i = 0; i <= others; i++)
		tok += (double)(b[i] - a[i]) / span;
	if (others)
		CHECK(tok > 0.999, "token held %.2f%% of the time", 100 * tok);
	sim_free(&s);
}

static void t_caps(void)
{
	capped(30, 100, 0);
	capped(1, 100, 0);
	capped(99, 100, 0);
	capped(20, 1000, 1);
	capped(50, 10000, 3);
}

/* 5. A thousand saturating clients, weights 100 and 200, 15 rounds. */
static void t_thousand(void)
{
	const int n = 1000;
	uint64_t total = 0, heavy = 0;
	struct sim s;
	int i;

	sim_init(&s, n, NULL, 17);
	for (i = 0; i < n; i++) {
		add_sat(&s, i, i % 2 ? 200 : 100, GPUSCHED_CLASS_NORMAL, 0,
			20 * US);
		sim_wait(&s, i);
	}
	s.stop_grants = 15 * n;
	sim_run(&s, NEVER);
	for (i = 0; i < n; i++) {
		total += held_now(&s, i);
		if (i % 2)
			heavy += held_now(&s, i);
	}
	for (i = 0; i < n; i++) {
		/* 1/1500 or 2/1500 of the token (10 or 20 slices), +-2 slices */
		double want = (i % 2 ? 2.0 : 1.0) / 1500 * total;
		double got = held_now(&s, i);

		CHECK(s.c[i].grants > 0, "client %d never served", i);
		CHECK(got > want - 2.0 * s.d.p.slice_ns &&
		      got < want + 2.0 * s.d.p.slice_ns,
		      "client %d (weight %d): %.1f ms, want %.1f", i,
		      i % 2 ? 200 : 100, got / MS, want / MS);
	}
	tap_diag("1000 clients, %" PRIu64 " grants: weight-200 half %.2f%% (want 66.67%%)",
		 s.grants, 100.0 * heavy / total);
	CHECK(100.0 * heavy / total > 66.67 - 0.5 &&
	      100.0 * heavy / total < 66.67 + 0.5,
	      "weight-200 half took %.2f%%", 100.0 * heavy / total);
	sim_free(&s);
}

/* ------------------------------------------------------------------ */
/* 6. Randomized sequences                                             */

static void random_params(struct rng *r, struct gs_pol_params *p, bool valid)
{
	gs_pol_default_params(p);
	p->slice_ns = rnd_range(r, 100 * US, 50 * MS);
	p->grace_ns = rnd_range(r, 1 * MS, 200 * MS);
	p->min_grant_ns = rnd_range(r, 10 * US, 2 * MS);
	p->starve_ns = rnd_range(r, 1 * MS, 2 * SEC);
	p->window_ns = rnd_range(r, 1 * MS, 1 * SEC);
	p->latency_pct = rnd_range(r, 0, 90);
	if (!valid)
		pset(p, &pfields[rnd_below(r, 6)],
		     chance(r, 2) ? 0 : rnd(r) | (1ULL << 63));
}

static void random_client(struct sim *s, int i)
{
	struct rng *r = &s->r;
	uint32_t w, cl, cap;

	w = chance(r, 3) ? 100 : rnd_range(r, 1, 10000);
	cl = chance(r, 2) ? GPUSCHED_CLASS_NORMAL : rnd_range(r, 0, 2);
	cap = chance(r, 2) ? 0 : rnd_range(r, 1, 100);
	if (chance(r, 6)) {
		switch (rnd_below(r, 3)) {
		case 0:
			w = chance(r, 2) ? 0 : rnd_range(r, 10001, UINT32_MAX);
			break;
		case 1:
			cl = rnd_range(r, 3, UINT32_MAX);
			break;
		default:
			cap = rnd_range(r, 101, UINT32_MAX);
		}
	}
	sim_set(s, i, w, cl, cap);
}

static void random_behaviour(struct sim *s, int i)
{
	struct rng *r = &s->r;
	struct scl *c = &s->c[i];

	c->sat = !chance(r, 4);
	c->deaf = chance(r, 10);
	c->drain_lo = 0;
	c->drain_hi = rnd_range(r, 0, 900 * US);	/* below any grace */
	c->work = chance(r, 2) ? 0 : rnd_range(r, 100 * US, 30 * MS);
	c->think = chance(r, 2) ? 0 : rnd_range(r, 0, 5 * MS);
	c->period = 0;
}

/*
 * Everything stalls (a paused VM, a stuck CPU): the clock jumps while the
 * clients and the timer do nothing, then the timer fires.
 */
static void stall(struct sim *s, uint64_t jump)
{
	int i;

	for (i = 0; i < s->n; i++) {
		struct scl *c = &s->c[i];

		if (c->release_at != NEVER)
			c->release_at += jump;
		if (c->wait_at != NEVER)
			c->wait_at += jump;
		c->last_wait += jump;
	}
	s->now += jump;
	sim_tick(s);
}

static int pick_client(struct sim *s, bool attached)
{
	int i = rnd_below(&s->r, s->n), k;

	for (k = 0; k < s->n; k++, i = (i + 1) % s->n)
		if (!!s->c[i].pc == attached)
			return i;
	return -1;
}

static uint64_t rnd_grants, rnd_revokes, rnd_eperms;	/* all seeds */

static bool random_seed(uint64_t seed, uint64_t ops)
{
	struct rng setup = { seed };
	struct gs_pol_params p;
	struct sim s;
	struct rng *r;
	uint64_t op, deadline, bound = 1;
	int n, i;

	n = rnd_range(&setup, 1, 8);
	random_params(&setup, &p, true);
	sim_init(&s, n, &p, rnd(&setup));
	snprintf(s.ctx, sizeof(s.ctx), "seed %" PRIu64 " ", seed);
	r = &s.r;
	s.probe = true;
	s.max_steps = 1000000;		/* 20x the most any seed takes */
	for (i = 0; i < n; i++) {
		random_behaviour(&s, i);
		if (chance(r, 4))
			continue;
		sim_attach(&s, i);
		if (chance(r, 2))
			random_client(&s, i);
		if (chance(r, 2))
			sim_wait(&s, i);
	}

	for (op = 0; op < ops && !s.failed; op++) {
		uint64_t k = rnd_below(r, 100);

		i = pick_client(&s, true);
		if (k < 30) {
			sim_run(&s, s.now + rnd_range(r, 0, 30 * MS));
		} else if (k < 40) {
			if (i >= 0)
				sim_wait(&s, i);
		} else if (k < 44) {
			if (i >= 0)
				sim_cancel(&s, i);
		} else if (k < 50) {
			if (i >= 0)
				sim_release(&s, i);
		} else if (k < 53) {
			sim_tick(&s);
		} else if (k < 60) {
			if (i >= 0)
				random_client(&s, i);
		} else if (k < 63) {
			random_params(r, &p, !chance(r, 3));
			sim_set_dev(&s, &p);
		} else if (k < 66) {
			if (i >= 0)
				sim_detach(&s, i);
		} else if (k < 70) {
			i = pick_client(&s, false);
			if (i >= 0) {
				sim_attach(&s, i);
				if (chance(r, 2))
					sim_wait(&s, i);
			}
		} else if (k < 77) {
			if (i >= 0)
				random_behaviour(&s, i);
		} else if (k < 82) {
			/* Timers fire late (they may: the caller is busy). */
			s.late_max = rnd_range(r, 1, 3 * s.d.p.grace_ns);
			sim_run(&s, s.now + rnd_range(r, 0, 300 * MS));
			s.late_max = 0;
		} else if (k < 83) {
			/* up to 73 minutes: past GS_MAX_SPAN (2^40 ns) */
			stall(&s, chance(r, 4) ? rnd_range(r, 1, 1ULL << 42) :
			      rnd_range(r, 1, 10 * SEC));
		} else if (k < 88) {
			/* GPU time: mostly below a slice, now and then huge */
			if (i >= 0)
				sim_report(&s, i, chance(r, 20) ? rnd(r) :
					   rnd_range(r, 0, 60 * MS));
		} else {
			sim_run(&s, s.now + rnd_range(r, 0, 300 * MS));
		}
	}

	/*
	 * Liveness: when everybody behaves (uncapped, no deaf holder, each
	 * leaves after one more grant), every waiter is served in bounded
	 * time.
	 */
	for (i = 0; i < n && !s.failed; i++) {
		struct scl *c = &s.c[i];

		if (!c->pc)
			continue;
		c->deaf = c->sat = false;
		c->period = 0;
		c->work = 1 * MS;
		c->drain_hi = 100 * US;
		c->wait_at = NEVER;
		if (c->pc->cap_pct)
			sim_set(&s, i, c->pc->weight, c->pc->sched_class, 0);
		if (c->holding)
			c->release_at = min64(c->release_at, s.now + c->work);
		bound += c->work + c->drain_hi;	/* one grant each */
	}
	deadline = s.now + bound;
	sim_run(&s, deadline);
	SCHECK(&s, !s.d.holder && !s.d.nr_waiting,
	       "not all served within %" PRIu64 " us: %u waiting",
	       bound / US, s.d.nr_waiting);
	for (i = 0; i < n && !s.failed; i++)
		if (s.c[i].pc)
			sim_detach(&s, i);
	SCHECK(&s, !s.d.nr_clients && !s.d.holder, "detach left state");
	rnd_grants += s.grants;
	rnd_revokes += s.revokes;
	for (i = 0; i < n; i++)
		rnd_eperms += s.c[i].eperms;
	sim_free(&s);
	return !s.failed;
}

static void t_random(void)
{
	uint64_t seed, bad = 0;

	tap_diag("seeds %" PRIu64 "..%" PRIu64 ", %" PRIu64 " ops each",
		 opt_seed, opt_seed + opt_seeds - 1, opt_ops);
	for (seed = opt_seed; seed < opt_seed + opt_seeds; seed++) {
		if (!random_seed(seed, opt_ops)) {
			tap_diag("seed %" PRIu64 " failed: replay with --only random --seed %" PRIu64 " --seeds 1",
				 seed, seed);
			if (++bad >= 3)
				break;
		}
	}
	tap_diag("%" PRIu64 " grants, %" PRIu64 " revocations, %" PRIu64 " refused releases",
		 rnd_grants, rnd_revokes, rnd_eperms);
}

/* gs_pol_acquire() with no effects to apply; 0 or its error. */
static int acq(struct gs_pol_dev *d, struct gs_pol_client *c, bool yield,
	       uint64_t gpu_ns, uint64_t now)
{
	return gs_pol_acquire(d, c, yield, false, 0, gpu_ns, now, fx_none, NULL);
}

static int rel(struct gs_pol_dev *d, struct gs_pol_client *c, uint64_t gpu_ns,
	       uint64_t now)
{
	struct gs_pol_effects fx = { 0 };
	int err = gs_pol_release(d, c, now, &fx);

	fx = (struct gs_pol_effects){ 0 };
	gs_pol_report_gpu(d, c, gpu_ns, now, &fx);
	return err;
}

/*
 * GPU time (issue 20, item 2): a grant is charged max(held, GPU time
 * reported for it), so work that runs on after an early hand-over is paid
 * for; a report below the held time changes nothing; a report after the
 * release still belongs to the grant that ended.
 */
static void t_gpu_time(void)
{
	struct gs_pol_client c[2];
	struct gs_pol_params p;
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC, v0, h0, r;

	gs_pol_default_params(&p);
	/* Attached 100 ms before: A's reports stay within that and since. */
	clients_up(&d, &p, c, 2, now - 100 * MS);

	/* A's 80 ms kernel runs on after it hands over at 1 ms. */
	CHECK(acq(&d, &c[0], false, 0, now) == 0 && d.holder == &c[0], "A granted");
	CHECK(acq(&d, &c[1], false, 0, now) == 0, "B waits");
	v0 = c[0].vtime;
	now += 1 * MS;
	CHECK(rel(&d, &c[0], 0, now) == 0 && d.holder == &c[1],
	      "A hands over early to B");
	CHECK(c[0].held_ns == 1 * MS, "A charged %" PRIu64 " for 1 ms held",
	      c[0].held_ns);
	/* 50 ms later A asks again, with its kernel's GPU time. */
	now += 50 * MS;
	CHECK(acq(&d, &c[0], false, 80 * MS, now) == 0 &&
	      c[0].state == GS_POL_WAITING, "A waits again");
	CHECK(c[0].held_ns == 80 * MS && c[0].gpu_ns == 80 * MS &&
	      c[0].vtime - v0 == 80 * MS,
	      "A charged the GPU time: held %" PRIu64 ", vtime +%" PRIu64,
	      c[0].held_ns, c[0].vtime - v0);
	/* So B, past its slice with 50 ms to A's 80, keeps the token. */
	CHECK(!c[1].yield_requested && d.holder == &c[1],
	      "B asked to yield to A, which is ahead");
	now += 10 * MS;
	CHECK(rel(&d, &c[1], 0, now) == 0 && d.holder == &c[0], "A's turn");

	/* Less than held changes nothing; the sum counts once it is more. */
	h0 = c[0].held_ns;
	v0 = c[0].vtime;
	now += 10 * MS;
	CHECK(rel(&d, &c[0], 4 * MS, now) == 0 &&
	      c[0].held_ns - h0 == 10 * MS && c[0].vtime - v0 == 10 * MS,
	      "4 ms reported for 10 ms held: charged %" PRIu64,
	      c[0].held_ns - h0);
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_report_gpu(&d, &c[0], 3 * MS, now, &fx);
	CHECK(c[0].held_ns - h0 == 10 * MS, "7 ms of 10: charged %" PRIu64,
	      c[0].held_ns - h0);
	/* A report after the release belongs to the last grant. */
	now += 20 * MS;
	CHECK(acq(&d, &c[0], false, 5 * MS, now) == 0 && d.holder == &c[0],
	      "A granted again");
	CHECK(c[0].held_ns - h0 == 12 * MS && c[0].vtime - v0 == 12 * MS,
	      "12 ms reported for the last grant (10 ms held): charged %" PRIu64,
	      c[0].held_ns - h0);
	/* ... and the new grant starts afresh: held 3 ms, nothing reported. */
	now += 3 * MS;
	CHECK(gs_pol_held_now(&c[0], now) - h0 == 15 * MS, "held now %" PRIu64,
	      gs_pol_held_now(&c[0], now) - h0);
	/* While holding: 20 ms reported at 3 ms counts at once, net after. */
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_report_gpu(&d, &c[0], 20 * MS, now, &fx);
	CHECK(gs_pol_held_now(&c[0], now) - h0 == 32 * MS &&
	      c[0].vtime - v0 == 32 * MS,
	      "20 ms reported while holding: held now %" PRIu64,
	      gs_pol_held_now(&c[0], now) - h0);
	now += 27 * MS;		/* held 30 ms in all: 10 ms beyond the report */
	CHECK(gs_pol_held_now(&c[0], now) - h0 == 42 * MS, "held now %" PRIu64,
	      gs_pol_held_now(&c[0], now) - h0);
	CHECK(rel(&d, &c[0], 0, now) == 0 && c[0].held_ns - h0 == 42 * MS &&
	      c[0].vtime - v0 == 42 * MS && c[0].grant_held_ns == 30 * MS,
	      "released after 30 ms with 20 ms reported: charged %" PRIu64,
	      c[0].held_ns - h0);
	/*
	 * A's reports together stay within the time since it attached (100
	 * ms before the start): 80 + 4 + 3 + 5 + 20 ms reported by now.
	 */
	CHECK(c[0].gpu_ns == 112 * MS, "A's reports: %" PRIu64, c[0].gpu_ns);
	r = now - (1 * SEC - 100 * MS) - 112 * MS;
	h0 = c[0].held_ns;
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_report_gpu(&d, &c[0], UINT64_MAX, now, &fx);
	/* max(30 ms, 20 ms + r) - max(30 ms, 20 ms) */
	CHECK(c[0].held_ns - h0 == 20 * MS + r - 30 * MS,
	      "huge report charged %" PRIu64 ", want %" PRIu64,
	      c[0].held_ns - h0, 20 * MS + r - 30 * MS);
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_report_gpu(&d, &c[0], 1 * MS, now, &fx);
	CHECK(c[0].held_ns - h0 == 20 * MS + r - 30 * MS,
	      "a report past the wall time charged %" PRIu64,
	      c[0].held_ns - h0 - (20 * MS + r - 30 * MS));
	/* Hours later, one report is clamped to 2^40 ns. */
	now += UINT64_C(1) << 42;
	h0 = c[0].held_ns;
	fx = (struct gs_pol_effects){ 0 };
	gs_pol_report_gpu(&d, &c[0], UINT64_MAX, now, &fx);
	CHECK(c[0].held_ns - h0 == UINT64_C(1) << 40,
	      "a huge report hours later charged %" PRIu64, c[0].held_ns - h0);
	CHECK(d.held_ns == c[0].held_ns + c[1].held_ns,
	      "device held %" PRIu64 " != clients' %" PRIu64, d.held_ns,
	      c[0].held_ns + c[1].held_ns);
	clients_down(&d, c, 2, now);
}

/*
 * A client reporting the most GPU time in call after call (2^40 ns each,
 * 100 times that of virtual time at weight 1, each 2^40 ns after the last:
 * years of reports) saturates its virtual time at 2^62 rather than wrap
 * it: 200,000 such reports are more than 2^64, and wrapped, its virtual
 * time would be anywhere, ahead of other waiters too. Saturated, it stays
 * behind them.
 */
static void t_sums_saturate(void)
{
	struct gs_pol_client c[3];
	struct gs_pol_params p;
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC;
	int i, eperm = 0;

	gs_pol_default_params(&p);
	clients_up(&d, &p, c, 3, now);
	CHECK(gs_pol_set_client_params(&d, &c[0], GPUSCHED_WEIGHT_MIN,
				       GPUSCHED_CLASS_NORMAL, 0, now, &fx) == 0,
	      "A at weight %u", GPUSCHED_WEIGHT_MIN);
	CHECK(acq(&d, &c[0], false, 0, now) == 0 && d.holder == &c[0], "A granted");
	now += 1 * MS;
	CHECK(rel(&d, &c[0], 0, now) == 0, "A releases");
	CHECK(acq(&d, &c[1], false, 0, now) == 0 && d.holder == &c[1], "B granted");
	for (i = 0; i < 200000; i++) {
		now += UINT64_C(1) << 40;
		eperm += rel(&d, &c[0], UINT64_MAX, now) == -EPERM;
	}
	CHECK(eperm == 200000, "A's 200000 releases, not holding: %d EPERM", eperm);
	CHECK(c[0].vtime == UINT64_C(1) << 62,
	      "A's virtual time saturated at 2^62: %" PRIu64, c[0].vtime);
	CHECK(acq(&d, &c[0], false, 0, now) == 0 && acq(&d, &c[2], false, 0, now) == 0,
	      "A and C wait");
	now += 1 * MS;
	CHECK(rel(&d, &c[1], 0, now) == 0 && d.holder == &c[2],
	      "B's release grants C, not A");
	clients_down(&d, c, 3, now);
}

/*
 * A client's reports cannot carry the floor of virtual time away: at
 * weight 1, 42,000 reports of the most GPU time in a second, then a grant
 * held alone, once put its virtual time, and the floor after it, at 2^62,
 * where every client's virtual time then stood equal and weights no
 * longer ordered anyone. Its reports stay within the time since it
 * attached, and the weights of those who come after still order them.
 */
static void t_reports_within_wall(void)
{
	struct gs_pol_client c[3];
	struct gs_pol_params p;
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC, t0 = now, vb, vc;
	int i;

	gs_pol_default_params(&p);
	clients_up(&d, &p, c, 3, now);
	CHECK(gs_pol_set_client_params(&d, &c[0], GPUSCHED_WEIGHT_MIN,
				       GPUSCHED_CLASS_NORMAL, 0, now, &fx) == 0,
	      "A at weight %u", GPUSCHED_WEIGHT_MIN);
	fx = (struct gs_pol_effects){ 0 };
	CHECK(gs_pol_set_client_params(&d, &c[2], 1000,
				       GPUSCHED_CLASS_NORMAL, 0, now, &fx) == 0,
	      "C at weight 1000");
	for (i = 0; i < 42000; i++) {
		now += 20 * US;
		rel(&d, &c[0], UINT64_MAX, now);
	}
	CHECK(c[0].gpu_ns <= now - t0, "A's reports: %" PRIu64 " ns in %" PRIu64,
	      c[0].gpu_ns, now - t0);
	CHECK(acq(&d, &c[0], false, 0, now) == 0 && d.holder == &c[0], "A holds");
	now += 1 * MS;
	CHECK(acq(&d, &c[1], false, 0, now) == 0 && acq(&d, &c[2], false, 0, now) == 0,
	      "B and C wait");
	CHECK(d.min_vtime <= 100 * (now - t0),
	      "the floor at %" PRIu64 " after %" PRIu64 " ns", d.min_vtime, now - t0);
	now += 1 * MS;
	CHECK(rel(&d, &c[0], 0, now) == 0 && d.holder == &c[1], "B granted");
	vb = c[1].vtime;
	vc = c[2].vtime;
	now += 10 * MS;
	CHECK(rel(&d, &c[1], 0, now) == 0 && d.holder == &c[2], "C granted");
	now += 10 * MS;
	CHECK(rel(&d, &c[2], 0, now) == 0 && !d.holder, "C releases");
	/* Weights still count: 10 ms at weight 100 and at 1000. */
	CHECK(c[1].vtime - vb == 10 * MS && c[2].vtime - vc == 1 * MS,
	      "B's virtual time +%" PRIu64 ", C's +%" PRIu64,
	      c[1].vtime - vb, c[2].vtime - vc);
	clients_down(&d, c, 3, now);
}

/*
 * The debt of a capped client stops short of wrapping: years of reports
 * of the most GPU time, each 2^40 ns after the last, spend 100 x 2^40 of
 * its credit while it earns 10 x 2^40; 100,000 of them once carried the
 * debt past -2^63, where it wrapped to a full bucket.
 */
static void t_cap_debt_saturates(void)
{
	struct gs_pol_client c[2];
	struct gs_pol_params p;
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC;
	int64_t last;
	int i, rose = -1;

	gs_pol_default_params(&p);
	clients_up(&d, &p, c, 2, now);
	CHECK(gs_pol_set_client_params(&d, &c[0], GPUSCHED_WEIGHT_DEFAULT,
				       GPUSCHED_CLASS_NORMAL, 10, now, &fx) == 0,
	      "A capped at 10%%");
	CHECK(acq(&d, &c[1], false, 0, now) == 0 && d.holder == &c[1], "B holds");
	last = c[0].cap.credit;
	for (i = 0; i < 100000 && rose < 0; i++) {
		now += UINT64_C(1) << 40;
		rel(&d, &c[0], UINT64_MAX, now);
		if (c[0].cap.credit > last)
			rose = i;
		last = c[0].cap.credit;
	}
	CHECK(rose < 0 && last < 0,
	      "A's credit rose at report %d, to %" PRId64, rose, last);
	clients_down(&d, c, 2, now);
}

/*
 * Issue 21, bug 8: new knobs may remove what justified a standing yield
 * request (here: latency_pct 0 ranks a latency waiter as normal, inside
 * the holder's slice). The request is withdrawn, as when the waiter
 * leaves, so that the holder is not revoked for nobody.
 */
static void t_yield_rechecked_by_params(void)
{
	struct gs_pol_client c[2];
	struct gs_pol_params p;
	struct gs_pol_effects fx = { 0 };
	struct gs_pol_dev d;
	uint64_t now = 1 * SEC;

	gs_pol_default_params(&p);
	clients_up(&d, &p, c, 2, now);
	CHECK(acq(&d, &c[0], false, 0, now) == 0, "holder granted");
	CHECK(to_latency(&d, &c[1], now) == 0, "latency class");
	now += 1 * MS;
	CHECK(acq(&d, &c[1], false, 0, now) == 0 && c[0].yield_requested,
	      "latency waiter: holder asked to yield");
	p.latency_pct = 0;
	fx = (struct gs_pol_effects){ 0 };
	now += 1 * MS;
	CHECK(gs_pol_set_dev_params(&d, &p, now, &fx) == 0, "set latency_pct 0");
	CHECK(!c[0].yield_requested && fx.unyield == &c[0],
	      "yield request stands (%d) after its reason went", c[0].yield_requested);
	/* Nothing is due but the end of the slice now. */
	CHECK(gs_pol_next_event(&d, now) == c[0].slice_end,
	      "next event %" PRIu64 ", slice end %" PRIu64,
	      gs_pol_next_event(&d, now), c[0].slice_end);
	clients_down(&d, c, 2, now);
}

/*
 * The user-space red-black tree (include/kcompat/rbtree.h) that the
 * policy's host builds use in place of the kernel's lib/rbtree.c.
 */
struct rbk {
	struct rb_node n;
	uint64_t key;
	bool in;
};

static bool rbk_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct rbk, n)->key <
	       rb_entry(b, struct rbk, n)->key;
}

/* Black height of @n's subtree, or -1 where an invariant fails. */
static int rb_black_height(const struct rb_node *n, const struct rb_node *parent)
{
	int l, r;

	if (!n)
		return 1;
	if (n->rb_parent_ != parent)
		return -1;
	if (n->rb_red_ && (rb_is_red_(n->rb_left) || rb_is_red_(n->rb_right)))
		return -1;
	l = rb_black_height(n->rb_left, n);
	r = rb_black_height(n->rb_right, n);
	if (l < 0 || l != r)
		return -1;
	return l + !n->rb_red_;
}

static void t_rbtree(void)
{
	static struct rbk k[512];
	struct rb_root_cached t = RB_ROOT_CACHED;
	struct rng r = { 7 };
	unsigned int in = 0, bad = 0;
	int op;

	for (op = 0; op < 200000; op++) {
		struct rbk *x = &k[rnd(&r) % ARRAY_SIZE(k)];
		const struct rb_node *n;
		uint64_t prev = 0, least = UINT64_MAX;
		unsigned int seen = 0;
		size_t i;

		if (x->in) {
			rb_erase_cached(&x->n, &t);
			x->in = false;
			in--;
		} else {
			x->key = rnd(&r) % 1000;	/* with repeats */
			rb_add_cached(&x->n, &t, rbk_less);
			x->in = true;
			in++;
		}
		if (op % 97)
			continue;
		for (n = rb_first_cached(&t); n; n = rb_next(n)) {
			uint64_t key = rb_entry(n, struct rbk, n)->key;

			bad += key < prev;
			prev = key;
			seen++;
		}
		for (i = 0; i < ARRAY_SIZE(k); i++)
			if (k[i].in && k[i].key < least)
				least = k[i].key;
		bad += seen != in;
		for (n = rb_last(&t.rb_root); n; n = rb_prev(n)) {
			uint64_t key = rb_entry(n, struct rbk, n)->key;

			bad += key > prev;
			prev = key;
			seen--;
		}
		bad += seen != 0;
		bad += in && rb_entry(rb_first_cached(&t), struct rbk, n)->key != least;
		bad += rb_first_cached(&t) != rb_first(&t.rb_root);
		bad += t.rb_root.rb_node && t.rb_root.rb_node->rb_red_;
		bad += rb_black_height(t.rb_root.rb_node, NULL) < 0;
	}
	CHECK(!bad, "%u checks failed", bad);
}

static const struct tap_test tests[] = {
	{ "device parameters: defaults valid, bounds enforced", t_dev_params },
	{ "client parameters: bounds enforced, rejected sets change nothing", t_client_params },
	{ "gs_pol_lowers: lower weight/class, add or lower a cap; never raise", t_lowers },
	{ "release by a non-holder is EPERM; calls in the wrong state do nothing", t_eperm },
	{ "overrun: revoked after grace_ns, charged, counted; not before", t_overrun },
	{ "yield withdrawn when the waiters that justified it leave", t_yield_withdrawn },
	{ "yield_due: the waiters' earliest due, 0 once one needs it now", t_yield_due },
	{ "nudge: the holder told to run its queue out, no hand-over, within the budget", t_nudge },
	{ "nudge age: the page says when the work was launched, never twice the same", t_nudge_age },
	{ "nudge done: the last nudger's answer on the holder's page, once, while it holds", t_nudge_done },
	{ "next_event: slice end, grace end, nothing for a lone holder", t_next_event },
	{ "next_event: an overdue event is due now, even before a tick", t_next_event_overdue },
	{ "a grant of any length is charged in full", t_long_grant },
	{ "batch: served when free, and after starve_ns", t_batch },
	{ "cap: no credit, no grant even on a free token; granted on refill", t_cap_free_token },
	{ "weights 1:2:3:4 over 10^5 grants (and 1:3, 1:100:10000) within 0.5 points", t_weights },
	{ "no banked credit after idling", t_no_banked_credit },
	{ "latency class preempts at once", t_latency_preempts },
	{ "latency class bounded by latency_pct", t_latency_bound },
	{ "caps hold, alone or shared, over the run and any second", t_caps },
	{ "1000 clients: all served, shares by weight", t_thousand },
	{ "GPU time: each grant charged max(held, reported), once", t_gpu_time },
	{ "sums of reports saturate, never wrap", t_sums_saturate },
	{ "reports stay within the wall time: the floor stays", t_reports_within_wall },
	{ "a capped client's debt saturates, never wraps", t_cap_debt_saturates },
	{ "new knobs withdraw a yield request that lost its reason", t_yield_rechecked_by_params },
	{ "randomized sequences keep the invariants", t_random },
	{ "user-space rbtree: in order both ways, balanced, after random adds and erases", t_rbtree },
};

int main(int argc, char **argv)
{
	int i, rest = 1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			opt_seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			opt_seeds = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			opt_ops = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--trace"))
			opt_trace = true;
		else
			argv[rest++] = argv[i];
	}
	return tap_run(tests, ARRAY_SIZE(tests), rest, argv);
}
