// SPDX-License-Identifier: GPL-2.0
/*
 * Weighted fair share of one GPU token on virtual time, with three classes
 * and optional caps. See policy.h for the calling rules and
 * Documentation/design.md for the policy and its invariants.
 */
#include <linux/errno.h>
#include <linux/gpusched.h>
#include "policy.h"

#define gs_div64(a, b)	div64_u64((a), (b))

/* Priority ranks, best first. A batch waiter that starved is served next. */
enum {
	GS_RANK_STARVED,
	GS_RANK_LATENCY,
	GS_RANK_NORMAL,
	GS_RANK_BATCH,
};

#define NSEC_PER_USEC_	1000ULL
/* Bounds durations before they are scaled, so no product overflows. */
#define GS_MAX_SPAN	(1ULL << 40)	/* about 18 minutes */

static u64 min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

static u64 clamp_span(u64 t)
{
	return min_u64(t, GS_MAX_SPAN);
}

/*
 * Sums of charges stop at GS_MAX_SUM rather than wrap: held time and GPU
 * time reported (no more than the wall time: report_gpu()) at weight 1
 * reach it only after months, and a wrapped virtual time would put its
 * client ahead of every other waiter. Far below ~0 so that vtime_now()
 * adds a running grant's charge to it without overflow.
 */
#define GS_MAX_SUM	(1ULL << 62)

static u64 add_sum(u64 sum, u64 n)
{
	return n >= GS_MAX_SUM || sum >= GS_MAX_SUM - n ? GS_MAX_SUM : sum + n;
}

#define GS_KNOB(_id, _name, _attr, _field, _scale, _min, _max, _def, _doc) \
	[_id] = {							\
		.name = _name, .nl_attr = _attr,			\
		.offset = offsetof(struct gs_pol_params, _field),	\
		.is_u32 = sizeof(((struct gs_pol_params *)0)->_field) == 4, \
		.scale = _scale, .min = _min, .max = _max, .def = _def,	\
		.doc = _doc,						\
	}

const struct gs_pol_knob gs_pol_knobs[GS_POL_NR_KNOBS] = {
	GS_KNOB(GS_POL_KNOB_TIMESLICE, "timeslice_us",
		GPUSCHED_A_GPU_TIMESLICE_US, slice_ns, 1000, 100, 10000000, 20000,
		"slice a holder keeps the token while others wait"),
	GS_KNOB(GS_POL_KNOB_GRACE, "grace_us",
		GPUSCHED_A_GPU_GRACE_US, grace_ns, 1000, 1000, 10000000, 100000,
		"time a holder has to release once asked"),
	GS_KNOB(GS_POL_KNOB_MIN_GRANT, "min_grant_us",
		GPUSCHED_A_GPU_MIN_GRANT_US, min_grant_ns, 1000, 10, 1000000, 500,
		"shortest grant that a cap or budget allows"),
	GS_KNOB(GS_POL_KNOB_STARVE, "starve_us",
		GPUSCHED_A_GPU_STARVE_US, starve_ns, 1000, 1000, 60000000, 1000000,
		"a batch client waiting this long is served next"),
	GS_KNOB(GS_POL_KNOB_WINDOW, "window_us",
		GPUSCHED_A_GPU_WINDOW_US, window_ns, 1000, 1000, 10000000, 100000,
		"burst allowed by caps and the latency budget"),
	GS_KNOB(GS_POL_KNOB_LATENCY_PCT, "latency_pct",
		GPUSCHED_A_GPU_LATENCY_PCT, latency_pct, 1, 0, 90, 50,
		"token time the latency class may take first, percent"),
	GS_KNOB(GS_POL_KNOB_LATENCY_QUEUE, "latency_queue_us",
		GPUSCHED_A_GPU_LATENCY_QUEUE_US, latency_queue_ns, 1000, 10,
		1000000, 300,
		"GPU time a holder keeps queued beside a latency client"),
	GS_KNOB(GS_POL_KNOB_HANDOVER, "handover_us",
		GPUSCHED_A_GPU_HANDOVER_US, handover_ns, 1000, 0, 1000000, 600,
		"work a yielding holder may leave running"),
	GS_KNOB(GS_POL_KNOB_MEM_DEFAULT_PCT, "mem_default_pct",
		GPUSCHED_A_GPU_MEM_DEFAULT_PCT, mem_default_pct, 1, 0, 100, 0,
		"memory limit of clients without their own, percent of theirs"),
	/* MiB, up to 16 TiB. */
	GS_KNOB(GS_POL_KNOB_MEM_RESERVE, "mem_reserve_mb",
		GPUSCHED_A_GPU_MEM_RESERVE_MB, mem_reserve, 1U << 20, 0,
		1U << 24, 0,
		"device memory no client's limit may claim, MiB"),
};

/* The classes' names, for the tools (enum gpusched_class). */
const char *const gs_pol_class_names[GPUSCHED_CLASS_MAX + 1] = {
	[GPUSCHED_CLASS_LATENCY] = "latency",
	[GPUSCHED_CLASS_NORMAL] = "normal",
	[GPUSCHED_CLASS_BATCH] = "batch",
};

/**
 * gs_pol_knob_get() - read a knob in the unit its name says
 * @p: the parameters
 * @k: an entry of gs_pol_knobs
 *
 * Return: the value divided by the knob's scale.
 */
u32 gs_pol_knob_get(const struct gs_pol_params *p, const struct gs_pol_knob *k)
{
	const void *field = (const char *)p + k->offset;
	u64 v = k->is_u32 ? *(const u32 *)field : *(const u64 *)field;

	return (u32)gs_div64(v, k->scale);
}

/**
 * gs_pol_knob_set() - write a knob given in the unit its name says
 * @p: the parameters
 * @k: an entry of gs_pol_knobs
 * @v: the value, multiplied by the knob's scale; gs_pol_check_params()
 *     checks the range
 */
void gs_pol_knob_set(struct gs_pol_params *p, const struct gs_pol_knob *k,
		     u32 v)
{
	void *field = (char *)p + k->offset;

	if (k->is_u32)
		*(u32 *)field = v * k->scale;
	else
		*(u64 *)field = (u64)v * k->scale;
}

/**
 * gs_pol_default_params() - the knobs' defaults (the knob table's)
 * @p: filled in
 */
void gs_pol_default_params(struct gs_pol_params *p)
{
	int i;

	*p = (struct gs_pol_params){ 0 };
	for (i = 0; i < GS_POL_NR_KNOBS; i++)
		gs_pol_knob_set(p, &gs_pol_knobs[i], gs_pol_knobs[i].def);
}

/**
 * gs_pol_check_params() - are the knobs all within their ranges?
 * @p: the knobs
 *
 * Return: 0 or -EINVAL.
 */
int gs_pol_check_params(const struct gs_pol_params *p)
{
	int i;

	for (i = 0; i < GS_POL_NR_KNOBS; i++) {
		const struct gs_pol_knob *k = &gs_pol_knobs[i];
		const void *field = (const char *)p + k->offset;
		u64 v = k->is_u32 ? *(const u32 *)field : *(const u64 *)field;

		/* Exact multiples only: what is read back is what was set. */
		if (v < (u64)k->min * k->scale || v > (u64)k->max * k->scale)
			return -EINVAL;
	}
	return 0;
}

/*
 * Buckets: credit earns pct x elapsed and spends 100 x held, both in ns x 100,
 * and never exceeds pct x window. Credit may go negative (a grant is never
 * shorter than min_grant_ns, and a holder may overrun): the debt is repaid
 * before the bucket allows more, so the long-run rate still holds.
 */
static s64 bucket_peek(const struct gs_pol_bucket *b, u32 pct, u64 window,
		       u64 now)
{
	s64 max = (s64)pct * (s64)window;
	s64 credit = b->credit;

	if (now > b->stamp)
		credit += (s64)pct * (s64)clamp_span(now - b->stamp);
	return credit < max ? credit : max;
}

static void bucket_refill(struct gs_pol_bucket *b, u32 pct,
			  u64 window, u64 now)
{
	b->credit = bucket_peek(b, pct, window, now);
	b->stamp = max_u64(b->stamp, now);
}

static void bucket_fill(struct gs_pol_bucket *b, u32 pct,
			u64 window, u64 now)
{
	b->credit = (s64)pct * (s64)window;
	b->stamp = now;
}

/*
 * Charge a grant of @held ns that ended at @now. The bucket kept earning
 * while it was spent, so it is capped after the spending, not before (that
 * would throw away what the grant earned).
 */
static void bucket_spend(struct gs_pol_bucket *b, u32 pct, u64 window,
			 u64 start, u64 now, u64 held)
{
	s64 max = (s64)pct * (s64)window;

	bucket_refill(b, pct, window, start);
	if (now > b->stamp)
		b->credit += (s64)pct * (s64)clamp_span(now - b->stamp);
	b->credit -= (s64)(held * 100);
	if (b->credit > max)
		b->credit = max;
	/* Debt of a long overrun stops here rather than wrap to credit. */
	if (b->credit < -(s64)GS_MAX_SUM)
		b->credit = -(s64)GS_MAX_SUM;
	b->stamp = max_u64(b->stamp, now);
}

/* How long a holder can run from @credit until the bucket is empty. */
static u64 bucket_runway(s64 credit, u32 pct, u64 min_ns)
{
	u64 t = credit > 0 ? gs_div64((u64)credit + 99 - pct, 100 - pct) : 0;

	return clamp_span(max_u64(t, min_ns));
}

/* When an empty bucket will hold credit again. */
static u64 bucket_refilled_at(s64 credit, u32 pct, u64 now)
{
	if (credit > 0)
		return now;
	return now + gs_div64((u64)(-credit), pct) + 1;
}

static bool capped(const struct gs_pol_client *c)
{
	return c->cap_pct != GPUSCHED_CAP_NONE && c->cap_pct < 100;
}

static bool latency_budget(const struct gs_pol_dev *d, u64 now)
{
	return d->p.latency_pct &&
	       bucket_peek(&d->latency, d->p.latency_pct, d->p.window_ns, now) > 0;
}

static u32 rank_of(const struct gs_pol_dev *d, const struct gs_pol_client *c,
		   u64 now)
{
	switch (c->sched_class) {
	case GPUSCHED_CLASS_LATENCY:
		return latency_budget(d, now) ? GS_RANK_LATENCY : GS_RANK_NORMAL;
	case GPUSCHED_CLASS_BATCH:
		if (c->state == GS_POL_WAITING &&
		    now - c->wait_start >= d->p.starve_ns)
			return GS_RANK_STARVED;
		return GS_RANK_BATCH;
	default:
		return GS_RANK_NORMAL;
	}
}

static bool eligible(const struct gs_pol_dev *d, const struct gs_pol_client *c,
		     u64 now)
{
	return !capped(c) ||
	       bucket_peek(&c->cap, c->cap_pct, d->p.window_ns, now) > 0;
}

/* Is @a to be served before @b, both of rank @r? */
static bool before(const struct gs_pol_client *a, const struct gs_pol_client *b,
		   u32 r)
{
	if (r != GS_RANK_STARVED && a->vtime != b->vtime)
		return a->vtime < b->vtime;
	if (a->wait_start != b->wait_start)
		return a->wait_start < b->wait_start;
	return a->seq < b->seq;
}

/*
 * The waiters' trees (see struct gs_pol_client). Orders are total: seq is
 * unique. A waiter moves between them only when a call changes it (wait,
 * grant, cancel, new parameters, a charge) or when its cap earns credit
 * (unthrottle()), so every call costs O(log n) in the number of waiters.
 */
#define qnode_client(n)	rb_entry(n, struct gs_pol_client, qnode)
#define anode_client(n)	rb_entry(n, struct gs_pol_client, anode)
#define vnode_client(n)	rb_entry(n, struct gs_pol_client, vnode)
#define dnode_client(n)	rb_entry(n, struct gs_pol_client, dnode)

static bool queue_less(struct rb_node *a, const struct rb_node *b)
{
	return before(qnode_client(a), qnode_client(b), GS_RANK_NORMAL);
}

static bool age_less(struct rb_node *a, const struct rb_node *b)
{
	return before(anode_client(a), anode_client(b), GS_RANK_STARVED);
}

static bool throttled_less(struct rb_node *a, const struct rb_node *b)
{
	const struct gs_pol_client *x = qnode_client(a), *y = qnode_client(b);

	if (x->throttled_until != y->throttled_until)
		return x->throttled_until < y->throttled_until;
	return x->seq < y->seq;
}

static bool vtime_less(struct rb_node *a, const struct rb_node *b)
{
	const struct gs_pol_client *x = vnode_client(a), *y = vnode_client(b);

	if (x->vtime != y->vtime)
		return x->vtime < y->vtime;
	return x->seq < y->seq;
}

static bool due_less(struct rb_node *a, const struct rb_node *b)
{
	const struct gs_pol_client *x = dnode_client(a), *y = dnode_client(b);

	if (x->due_at != y->due_at)
		return x->due_at < y->due_at;
	return x->seq < y->seq;
}

/*
 * Put @node in @q after every node not more than it. The search starts
 * from the greatest node and climbs its ancestors (the tree's right spine,
 * greatest first) to the first not more than @node, whose right subtree is
 * where @node goes: O(log k) for k nodes greater than @node. A client that
 * queues again after its grant has about the greatest virtual time, so a
 * hand-off does not cost O(log n) in the waiters here.
 *
 * Not rb_add_cached(): it descends from the root, log2(n) comparisons
 * for every insert, each on another waiter's node (a cache miss once the
 * waiters outgrow the cache), where a client queued behind all others
 * costs one comparison here. The recolouring after the link is amortised
 * O(1) either way; the worst case here, a node less than all, climbs the
 * spine and descends again: about twice rb_add_cached()'s comparisons.
 */
static void queue_insert(struct gs_pol_queue *q, struct rb_node *node,
			 bool (*less)(struct rb_node *, const struct rb_node *))
{
	struct rb_node **link = &q->root.rb_root.rb_node, *parent = NULL;
	struct rb_node *s = q->rightmost;
	bool leftmost = true;

	while (s && less(node, s))
		s = rb_parent(s);
	if (s) {
		link = &s->rb_right;
		parent = s;
		leftmost = false;
	}
	while (*link) {
		parent = *link;
		if (less(node, parent)) {
			link = &parent->rb_left;
		} else {
			link = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(node, parent, link);
	rb_insert_color_cached(node, &q->root, leftmost);
	if (!q->rightmost || !less(node, q->rightmost))
		q->rightmost = node;
}

static void queue_erase(struct gs_pol_queue *q, struct rb_node *node)
{
	if (q->rightmost == node)
		q->rightmost = rb_prev(node);
	rb_erase_cached(node, &q->root);
}

/* Into queue[] when it may be served at @now, else into throttled. */
static void queue_add(struct gs_pol_dev *d, struct gs_pol_client *c, u64 now)
{
	if (eligible(d, c, now)) {
		c->throttled = false;
		queue_insert(&d->queue[c->sched_class], &c->qnode, queue_less);
		if (c->sched_class == GPUSCHED_CLASS_BATCH)
			queue_insert(&d->starve, &c->anode, age_less);
		return;
	}
	c->throttled = true;
	c->throttled_until =
		bucket_refilled_at(bucket_peek(&c->cap, c->cap_pct,
					       d->p.window_ns, now),
				   c->cap_pct, now);
	rb_add_cached(&c->qnode, &d->throttled, throttled_less);
	rb_add_cached(&c->vnode, &d->throttled_vtime, vtime_less);
}

static void queue_del(struct gs_pol_dev *d, struct gs_pol_client *c)
{
	if (c->throttled) {
		rb_erase_cached(&c->qnode, &d->throttled);
		rb_erase_cached(&c->vnode, &d->throttled_vtime);
		return;
	}
	queue_erase(&d->queue[c->sched_class], &c->qnode);
	if (c->sched_class == GPUSCHED_CLASS_BATCH)
		queue_erase(&d->starve, &c->anode);
}

/* A client that starts waiting: on every structure of the waiters. */
static void enqueue(struct gs_pol_dev *d, struct gs_pol_client *c, u64 now)
{
	list_add_tail(&c->wnode, &d->waiting);
	d->nr_waiting++;
	queue_add(d, c, now);
	if (c->due_at)
		rb_add_cached(&c->dnode, &d->by_due, due_less);
	else
		d->nr_due_now++;
}

static void dequeue(struct gs_pol_dev *d, struct gs_pol_client *c)
{
	list_del_init(&c->wnode);
	d->nr_waiting--;
	queue_del(d, c);
	if (c->due_at)
		rb_erase_cached(&c->dnode, &d->by_due);
	else
		d->nr_due_now--;
}

/* Capped waiters whose cap has earned credit by @now may be served. */
static void unthrottle(struct gs_pol_dev *d, u64 now)
{
	struct rb_node *n;

	while ((n = rb_first_cached(&d->throttled))) {
		struct gs_pol_client *c = qnode_client(n);

		if (c->throttled_until > now)
			break;
		queue_del(d, c);
		queue_add(d, c, now);	/* throttled again until later if not */
	}
}

static struct gs_pol_client *queue_first(const struct gs_pol_queue *q)
{
	struct rb_node *n = rb_first_cached(&q->root);

	return n ? qnode_client(n) : NULL;
}

/* The least virtual time of the waiters, or GS_POL_NEVER. */
static u64 waiters_min_vtime(const struct gs_pol_dev *d)
{
	struct rb_node *n = rb_first_cached(&d->throttled_vtime);
	u64 lo = n ? vnode_client(n)->vtime : GS_POL_NEVER;
	int i;

	for (i = 0; i <= GPUSCHED_CLASS_MAX; i++) {
		const struct gs_pol_client *c = queue_first(&d->queue[i]);

		if (c)
			lo = min_u64(lo, c->vtime);
	}
	return lo;
}

/*
 * The waiter to serve next, or NULL when none is eligible: the best rank,
 * then before(). The batch waiter waiting longest has starved if any has;
 * latency waiters rank as normal ones without the class's budget. Capped
 * waiters whose credit came after the last unthrottle() are looked at
 * one by one (none once a call at @now has run).
 */
static struct gs_pol_client *pick(const struct gs_pol_dev *d, u64 now,
				  u32 *rank)
{
	struct gs_pol_client *best, *lat, *c;
	u32 best_rank = GS_RANK_BATCH + 1;
	struct rb_node *n;

	n = rb_first_cached(&d->starve.root);
	lat = queue_first(&d->queue[GPUSCHED_CLASS_LATENCY]);
	best = queue_first(&d->queue[GPUSCHED_CLASS_NORMAL]);
	if (n && now - anode_client(n)->wait_start >= d->p.starve_ns) {
		best = anode_client(n);
		best_rank = GS_RANK_STARVED;
	} else if (lat && latency_budget(d, now)) {
		best = lat;
		best_rank = GS_RANK_LATENCY;
	} else if (lat || best) {
		if (lat && (!best || before(lat, best, GS_RANK_NORMAL)))
			best = lat;
		best_rank = GS_RANK_NORMAL;
	} else {
		best = queue_first(&d->queue[GPUSCHED_CLASS_BATCH]);
		if (best)
			best_rank = GS_RANK_BATCH;
	}

	for (n = rb_first_cached(&d->throttled); n; n = rb_next(n)) {
		u32 r;

		c = qnode_client(n);
		if (c->throttled_until > now)
			break;
		if (!eligible(d, c, now))
			continue;
		r = rank_of(d, c, now);
		if (r < best_rank || (r == best_rank && before(c, best, r))) {
			best = c;
			best_rank = r;
		}
	}
	if (rank)
		*rank = best_rank;
	return best;
}

/*
 * What charging @h more of held time adds to a grant charged
 * max(held, gpu): its held time so far @held, its GPU time @gpu.
 */
static u64 charge_delta(u64 held, u64 gpu, u64 h)
{
	return max_u64(held + h, gpu) - max_u64(held, gpu);
}

/* The running grant's charge not yet made: its held time beyond the GPU's. */
static u64 running_charge(const struct gs_pol_client *c, u64 now)
{
	if (c->state != GS_POL_HOLDING)
		return 0;
	return charge_delta(c->grant_held_ns, c->grant_gpu_ns,
			    now - c->grant_start);
}

/* Virtual time of @c, counting the running grant. */
static u64 vtime_now(const struct gs_pol_client *c, u64 now)
{
	return c->vtime + gs_div64(clamp_span(running_charge(c, now)) *
				   GPUSCHED_WEIGHT_DEFAULT, c->weight);
}

/*
 * The floor of virtual time: the least virtual time of the active clients,
 * and it never falls. A client that becomes active starts no lower, so
 * idling banks no credit.
 */
static u64 raise_floor(struct gs_pol_dev *d, u64 now)
{
	u64 lo = waiters_min_vtime(d);

	if (d->holder)
		lo = min_u64(lo, vtime_now(d->holder, now));
	if (lo != GS_POL_NEVER && lo > d->min_vtime)
		d->min_vtime = lo;
	return d->min_vtime;
}

static void grant(struct gs_pol_dev *d, struct gs_pol_client *c, u32 rank,
		  u64 now, struct gs_pol_effects *fx)
{
	u64 waited = now - c->wait_start;

	dequeue(d, c);
	c->state = GS_POL_HOLDING;
	d->holder = c;
	c->vtime = max_u64(c->vtime, d->min_vtime);
	c->rank = rank;
	c->grant_start = now;
	c->grant_held_ns = 0;
	c->grant_gpu_ns = 0;
	c->due_at = 0;
	c->yield_requested = false;
	c->yield_at = 0;
	c->revoked = false;
	c->grants++;
	d->grants++;
	c->wait_ns_total += waited;
	c->wait_ns_max = max_u64(c->wait_ns_max, waited);

	c->slice_end = now + d->p.slice_ns;
	c->hard_end = GS_POL_NEVER;
	if (capped(c)) {
		bucket_refill(&c->cap, c->cap_pct, d->p.window_ns, now);
		c->hard_end = now + bucket_runway(c->cap.credit, c->cap_pct,
						  d->p.min_grant_ns);
	}
	if (rank == GS_RANK_LATENCY) {
		bucket_refill(&d->latency, d->p.latency_pct, d->p.window_ns, now);
		c->slice_end = min_u64(c->slice_end,
				       now + bucket_runway(d->latency.credit,
							   d->p.latency_pct,
							   d->p.min_grant_ns));
	}
	fx->granted = c;
}

/*
 * Charge @c @amount ns of work done at @rank: held time in full; virtual
 * time, its cap's budget and, at latency rank, the class's budget at most
 * GS_MAX_SPAN (what is scaled). The buckets earned from @start to @now
 * meanwhile.
 */
static void charge_time(struct gs_pol_dev *d, struct gs_pol_client *c,
			u64 amount, u32 rank, u64 start, u64 now)
{
	u64 span = clamp_span(amount);

	c->held_ns = add_sum(c->held_ns, amount);
	d->held_ns = add_sum(d->held_ns, amount);
	c->vtime = add_sum(c->vtime,
			   gs_div64(span * GPUSCHED_WEIGHT_DEFAULT, c->weight));
	if (capped(c))
		bucket_spend(&c->cap, c->cap_pct, d->p.window_ns, start, now,
			     span);
	if (rank == GS_RANK_LATENCY)
		bucket_spend(&d->latency, d->p.latency_pct, d->p.window_ns,
			     start, now, span);
}

/*
 * End the holder's grant and charge it: the held time, as far as it is
 * more than the GPU time already reported for the grant.
 */
static void charge(struct gs_pol_dev *d, struct gs_pol_client *c, u64 now)
{
	u64 held = now - c->grant_start;
	u64 amount = charge_delta(c->grant_held_ns, c->grant_gpu_ns, held);

	c->grant_held_ns += held;
	charge_time(d, c, amount, c->rank, c->grant_start, now);
	c->state = GS_POL_IDLE;
	c->yield_requested = false;
	d->holder = NULL;
	d->nudger = NULL;
}

/* The rank a holder competes at once its slice is over. */
static u32 rank_after_slice(const struct gs_pol_client *c)
{
	u32 base = c->sched_class == GPUSCHED_CLASS_BATCH ? GS_RANK_BATCH :
						      GS_RANK_NORMAL;

	return max_u64(c->rank, base);
}

/*
 * Should holder @c be asked to yield now? A better-ranked waiter preempts at
 * once; at the end of a slice, a waiter of the same rank takes over only if
 * it is behind in virtual time, otherwise the holder starts a new slice.
 */
static bool should_yield(struct gs_pol_dev *d, struct gs_pol_client *c,
			 u64 now)
{
	struct gs_pol_client *next;
	u32 rank, after;

	if (now >= c->hard_end)
		return true;
	next = pick(d, now, &rank);
	if (!next)
		return false;
	if (rank < c->rank)
		return true;
	if (now < c->slice_end)
		return false;
	after = rank_after_slice(c);
	if (rank < after || (rank == after && next->vtime <= vtime_now(c, now)))
		return true;
	c->slice_end = now + d->p.slice_ns;
	return false;
}

/*
 * A yield request stands while something justifies it: a waiter that
 * should_yield() still lets take over, or the holder's hard end. When that
 * is gone (the waiter cancelled, timed out, was killed, or lowered its
 * class; the holder's cap was lifted), withdraw it, so that the holder is
 * not revoked after the grace time for nobody. A later waiter asks anew,
 * with a grace time of its own.
 */
static void recheck_yield(struct gs_pol_dev *d, u64 now,
			  struct gs_pol_effects *fx)
{
	struct gs_pol_client *c = d->holder;

	if (!c || !c->yield_requested || should_yield(d, c, now))
		return;
	c->yield_requested = false;
	c->yield_at = 0;
	fx->unyield = c;
}

/*
 * When the waiters need the GPU: the earliest time they gave
 * (GPUSCHED_ACQUIRE_DUE), or 0 if one of them gave none (it needs it now).
 * The holder asked to yield may leave what ends by then running.
 */
static u64 waiters_due(const struct gs_pol_dev *d)
{
	struct rb_node *n = rb_first_cached(&d->by_due);

	if (d->nr_due_now || !n)
		return 0;
	return dnode_client(n)->due_at;
}

/* Bring the token's state up to date at @now; every entry point ends here. */
static void update(struct gs_pol_dev *d, u64 now,
		   struct gs_pol_effects *fx)
{
	struct gs_pol_client *c = d->holder;
	u32 rank;

	unthrottle(d, now);
	if (c && c->yield_requested && now - c->yield_at >= d->p.grace_ns) {
		charge(d, c, now);
		c->revoked = true;
		c->overruns++;
		d->overruns++;
		fx->revoked = c;
	} else if (c && !c->yield_requested && should_yield(d, c, now)) {
		c->yield_requested = true;
		c->yield_at = now;
		c->yields++;
		fx->yield = c;
	}
	if (!d->holder) {
		c = pick(d, now, &rank);
		if (c)
			grant(d, c, rank, now, fx);
	}
	c = d->holder;
	if (c)
		c->yield_due = c->yield_requested ? waiters_due(d) : 0;
}

/**
 * gs_pol_dev_init() - a token with no client
 * @d: the device
 * @p: its knobs, already checked
 * @now: the time
 */
void gs_pol_dev_init(struct gs_pol_dev *d, const struct gs_pol_params *p,
		     u64 now)
{
	int i;

	*d = (struct gs_pol_dev){ .p = *p };
	INIT_LIST_HEAD(&d->clients);
	INIT_LIST_HEAD(&d->waiting);
	for (i = 0; i <= GPUSCHED_CLASS_MAX; i++)
		d->queue[i] = (struct gs_pol_queue){ RB_ROOT_CACHED, NULL };
	d->starve = (struct gs_pol_queue){ RB_ROOT_CACHED, NULL };
	d->throttled = RB_ROOT_CACHED;
	d->throttled_vtime = RB_ROOT_CACHED;
	d->by_due = RB_ROOT_CACHED;
	bucket_fill(&d->latency, p->latency_pct, p->window_ns, now);
}

/**
 * gs_pol_set_dev_params() - new knobs, all at once or none
 * @d: the device
 * @p: the knobs
 * @now: the time
 * @fx: what changed (a standing yield request may be withdrawn)
 *
 * Return: 0 or -EINVAL (nothing changes).
 */
int gs_pol_set_dev_params(struct gs_pol_dev *d, const struct gs_pol_params *p,
			  u64 now, struct gs_pol_effects *fx)
{
	int err = gs_pol_check_params(p);

	if (err)
		return err;
	bucket_refill(&d->latency, d->p.latency_pct, d->p.window_ns, now);
	d->p = *p;
	/* The new knobs may take away what a standing yield request had. */
	recheck_yield(d, now, fx);
	update(d, now, fx);
	return 0;
}

/**
 * gs_pol_client_init() - a new, idle client of default weight and class
 * @d: the device
 * @c: the client
 * @now: the time
 */
void gs_pol_client_init(struct gs_pol_dev *d, struct gs_pol_client *c,
			u64 now)
{
	*c = (struct gs_pol_client){
		.state = GS_POL_IDLE,
		.weight = GPUSCHED_WEIGHT_DEFAULT,
		.sched_class = GPUSCHED_CLASS_NORMAL,
		.vtime = d->min_vtime,
		.seq = d->next_seq++,
		.since = now,
		.cap = { .stamp = now },
	};
	INIT_LIST_HEAD(&c->wnode);
	list_add_tail(&c->node, &d->clients);
	d->nr_clients++;
}

/*
 * Take @c's report of @gpu_ns (gs_pol_report_gpu()) and charge what it adds
 * at @rank: the rank of the grant it belongs to, or GS_RANK_LATENCY for
 * work beside the holder (nudge()).
 */
static void report_gpu(struct gs_pol_dev *d, struct gs_pol_client *c,
		       u64 gpu_ns, u32 rank, u64 now, struct gs_pol_effects *fx)
{
	u64 r = clamp_span(gpu_ns);
	u64 amount, gpu, wall = now > c->since ? now - c->since : 0;

	/*
	 * A GPU runs no longer than the wall time: all of a client's
	 * reports together stay within the time since it attached. A
	 * report is the client's own word; unbounded, one client's virtual
	 * time would reach its ceiling in seconds, and the floor with it
	 * once it held the token alone (raise_floor()), where every
	 * client's would then stand equal.
	 */
	r = min_u64(r, wall > c->gpu_ns ? wall - c->gpu_ns : 0);
	if (!r)
		return;
	gpu = add_sum(c->grant_gpu_ns, r);
	amount = max_u64(c->grant_held_ns, gpu) -
		 max_u64(c->grant_held_ns, c->grant_gpu_ns);
	c->grant_gpu_ns = gpu;
	c->gpu_ns = add_sum(c->gpu_ns, r);
	/*
	 * A running grant's held time is charged at its end (charge()),
	 * net of what was reported by then: the grant's total is the same.
	 */
	if (amount && c->state == GS_POL_WAITING) {
		/* Its vtime and cap credit order it among the waiters. */
		queue_del(d, c);
		charge_time(d, c, amount, rank, now, now);
		queue_add(d, c, now);
	} else if (amount) {
		charge_time(d, c, amount, rank, now, now);
	}
	update(d, now, fx);
}

/**
 * gs_pol_report_gpu() - charge GPU time a client reports for its grant
 * @d: the device
 * @c: the reporting client
 * @gpu_ns: GPU time of @c's own work since its last report (0: none),
 *          clamped to 2^40 ns, and so that @c's reports together stay
 *          within the time since it attached
 * @now: the time
 * @fx: what changed, for the caller to tell clients
 *
 * The report belongs to @c's current grant, or to its last when it holds
 * none. A grant is charged max(held, GPU time reported for it): what a
 * report adds beyond that is charged like held time, at the rank the
 * grant was made at (held accounting, virtual time, cap and, at latency
 * rank, the class's budget), so a report only ever raises @c's own charge.
 */
void gs_pol_report_gpu(struct gs_pol_dev *d, struct gs_pol_client *c,
		       u64 gpu_ns, u64 now, struct gs_pol_effects *fx)
{
	report_gpu(d, c, gpu_ns, c->rank, now, fx);
}

/**
 * gs_pol_client_exit() - remove a client: release or stop waiting first
 * @d: the device
 * @c: the client, which @fx no longer names afterwards
 * @now: the time
 * @fx: what changed
 */
void gs_pol_client_exit(struct gs_pol_dev *d, struct gs_pol_client *c,
			u64 now, struct gs_pol_effects *fx)
{
	if (c->state == GS_POL_WAITING)
		gs_pol_cancel_wait(d, c, now, fx);
	else if (c->state == GS_POL_HOLDING)
		gs_pol_release(d, c, now, fx);
	gs_mem_exit(d, c);
	if (d->nudger == c)
		d->nudger = NULL;
	list_del_init(&c->node);
	d->nr_clients--;
	if (c->sched_class == GPUSCHED_CLASS_LATENCY)
		d->nr_latency--;
	/* The caller frees @c: it must not be reported as granted later. */
	if (fx->yield == c)
		fx->yield = NULL;
	if (fx->unyield == c)
		fx->unyield = NULL;
	if (fx->revoked == c)
		fx->revoked = NULL;
	if (fx->released == c)
		fx->released = NULL;
}

/**
 * gs_pol_check_client_params() - are a client's parameters in range?
 * @weight: GPUSCHED_WEIGHT_MIN..MAX
 * @sched_class: enum gpusched_class
 * @cap_pct: 1..100 or GPUSCHED_CAP_NONE
 *
 * Return: 0 or -EINVAL.
 */
int gs_pol_check_client_params(u32 weight, u32 sched_class,
			       u32 cap_pct)
{
	if (weight < GPUSCHED_WEIGHT_MIN || weight > GPUSCHED_WEIGHT_MAX)
		return -EINVAL;
	if (sched_class > GPUSCHED_CLASS_MAX)
		return -EINVAL;
	if (cap_pct > 100)
		return -EINVAL;
	return 0;
}

/* Does the change only lower @c's share (what anyone may do to itself)? */
/**
 * gs_pol_lowers() - does a change only lower @c's share, as nice(2) allows?
 * @c: the client
 * @weight: the new weight
 * @sched_class: the new class
 * @cap_pct: the new cap
 *
 * Return: true for a weight no larger, a class no better and a cap no
 * larger (none counts as 100).
 */
bool gs_pol_lowers(const struct gs_pol_client *c, u32 weight,
		   u32 sched_class, u32 cap_pct)
{
	u32 old_cap = capped(c) ? c->cap_pct : 100;
	u32 new_cap = cap_pct == GPUSCHED_CAP_NONE ? 100 : cap_pct;

	return weight <= c->weight && sched_class >= c->sched_class && new_cap <= old_cap;
}

/**
 * gs_pol_set_client_params() - set a client's weight, class and cap
 * @d: the device
 * @c: the client
 * @weight: the weight
 * @sched_class: the class
 * @cap_pct: the cap
 * @now: the time
 * @fx: what changed
 *
 * A lower class or a new cap applies to a running grant at once.
 *
 * Return: 0 or -EINVAL (nothing changes).
 */
int gs_pol_set_client_params(struct gs_pol_dev *d, struct gs_pol_client *c,
			     u32 weight, u32 sched_class, u32 cap_pct,
			     u64 now, struct gs_pol_effects *fx)
{
	int err = gs_pol_check_client_params(weight, sched_class, cap_pct);
	bool was_capped = capped(c);

	if (err)
		return err;
	/* Its class and cap say which tree it waits in. */
	if (c->state == GS_POL_WAITING)
		queue_del(d, c);
	if (was_capped)
		bucket_refill(&c->cap, c->cap_pct, d->p.window_ns, now);
	c->weight = weight;
	if (c->sched_class == GPUSCHED_CLASS_LATENCY)
		d->nr_latency--;
	if (sched_class == GPUSCHED_CLASS_LATENCY)
		d->nr_latency++;
	c->sched_class = sched_class;
	c->cap_pct = cap_pct;
	if (capped(c) && !was_capped)
		bucket_fill(&c->cap, c->cap_pct, d->p.window_ns, now);
	if (c->state == GS_POL_WAITING)
		queue_add(d, c, now);
	if (c->state == GS_POL_HOLDING) {
		/* A lower class or a new cap applies to the running grant. */
		u32 r = rank_of(d, c, now);

		if (r > c->rank)
			c->rank = r;
		c->hard_end = GS_POL_NEVER;
		if (capped(c)) {
			u64 running = clamp_span(now - c->grant_start);

			c->hard_end = now + bucket_runway(c->cap.credit -
							  (s64)(running * 100),
							  c->cap_pct,
							  d->p.min_grant_ns);
		}
	}
	recheck_yield(d, now, fx);
	update(d, now, fx);
	return 0;
}

/**
 * gs_pol_set_params_masked() - SET_PARAMS: the fields of @p->mask
 * @d: the device
 * @c: the client
 * @p: the request
 * @priv: may raise the share (CAP_SYS_NICE, or root for the arbiter)
 * @now: the time
 * @fx: what changed
 *
 * Return: 0, -EINVAL or -EPERM; nothing changes on an error.
 */
int gs_pol_set_params_masked(struct gs_pol_dev *d, struct gs_pol_client *c,
			     const struct gpusched_params *p, bool priv,
			     u64 now, struct gs_pol_effects *fx)
{
	u32 weight = p->mask & GPUSCHED_PARAM_WEIGHT ? p->weight : c->weight;
	u32 sched_class = p->mask & GPUSCHED_PARAM_CLASS ? p->sched_class : c->sched_class;
	u32 cap = p->mask & GPUSCHED_PARAM_CAP ? p->cap_pct : c->cap_pct;
	bool mem = p->mask & GPUSCHED_PARAM_MEM_LIMIT;
	int err = gs_pol_check_client_params(weight, sched_class, cap);

	if (err)
		return err;
	if (!priv && (!gs_pol_lowers(c, weight, sched_class, cap) ||
		      (mem && !gs_mem_lowers(d, c, p->mem_limit))))
		return -EPERM;
	err = gs_pol_set_client_params(d, c, weight, sched_class, cap, now, fx);
	if (!err && mem)
		c->mem.limit = p->mem_limit;
	return err;
}

/**
 * gs_pol_wait() - an idle client starts waiting (and may be granted)
 * @d: the device
 * @c: the client; nothing happens unless it is idle
 * @now: the time
 * @fx: what changed
 */
void gs_pol_wait(struct gs_pol_dev *d, struct gs_pol_client *c, u64 now,
		 struct gs_pol_effects *fx)
{
	if (c->state != GS_POL_IDLE)
		return;
	c->state = GS_POL_WAITING;
	c->wait_start = now;
	c->vtime = max_u64(c->vtime, raise_floor(d, now));
	enqueue(d, c, now);
	update(d, now, fx);
}

/**
 * gs_pol_cancel_wait() - a waiting client stops waiting
 * @d: the device
 * @c: the client; nothing happens unless it waits
 * @now: the time
 * @fx: what changed (a yield it justified is withdrawn)
 */
void gs_pol_cancel_wait(struct gs_pol_dev *d, struct gs_pol_client *c,
			u64 now, struct gs_pol_effects *fx)
{
	if (c->state != GS_POL_WAITING)
		return;
	dequeue(d, c);
	c->state = GS_POL_IDLE;
	c->due_at = 0;
	recheck_yield(d, now, fx);
	update(d, now, fx);
}

/**
 * gs_pol_check_acquire() - the argument checks of ACQUIRE and YIELD
 * @a: the request as copied in
 *
 * Return: 0, -EOPNOTSUPP for unknown flags, -EINVAL for NONBLOCK with
 * TIMEOUT, NUDGE or NUDGE_DONE with any other flag, a timeout, due time or
 * age without its flag, or reserved fields set.
 */
int gs_pol_check_acquire(const struct gpusched_acquire *a)
{
	const u32 both = GPUSCHED_ACQUIRE_NONBLOCK | GPUSCHED_ACQUIRE_TIMEOUT;

	if (a->flags & ~GS_ACQUIRE_FLAGS)
		return -EOPNOTSUPP;
	if ((a->flags & both) == both)
		return -EINVAL;
	if (a->timeout_ns && !(a->flags & GPUSCHED_ACQUIRE_TIMEOUT))
		return -EINVAL;
	if (a->due_us && !(a->flags & GPUSCHED_ACQUIRE_DUE))
		return -EINVAL;
	/* NUDGE and NUDGE_DONE go alone: no other bit beside either. */
	if ((a->flags & (GPUSCHED_ACQUIRE_NUDGE | GPUSCHED_ACQUIRE_NUDGE_DONE)) &&
	    (a->flags & (a->flags - 1)))
		return -EINVAL;
	if (a->age_ns && !(a->flags & GPUSCHED_ACQUIRE_NUDGE))
		return -EINVAL;
	if (a->reserved[0])
		return -EINVAL;
	return 0;
}

/**
 * gs_pol_check_attach() - the argument checks of ATTACH
 * @a: the request as copied in
 *
 * Return: 0, -EOPNOTSUPP for flags, -EINVAL for reserved fields set or an
 * all-zero UUID.
 */
int gs_pol_check_attach(const struct gpusched_attach *a)
{
	u32 any = 0;
	int i;

	if (a->flags)
		return -EOPNOTSUPP;
	for (i = 0; i < GPUSCHED_UUID_LEN; i++)
		any |= a->uuid[i];
	if (a->reserved0 || a->reserved[0] || !any)
		return -EINVAL;
	return 0;
}

/**
 * gs_pol_check_set_params() - the argument checks of SET_PARAMS
 * @p: the request as copied in; its values are checked by the setters
 *
 * Return: 0, -EOPNOTSUPP for unknown mask bits, -EINVAL for reserved
 * fields set.
 */
int gs_pol_check_set_params(const struct gpusched_params *p)
{
	if (p->mask & ~GS_PARAM_MASK)
		return -EOPNOTSUPP;
	if (p->reserved[0])
		return -EINVAL;
	return 0;
}

/**
 * gs_pol_due() - when an ACQUIRE says its work comes
 * @a: the request, checked
 * @now: the time of the call
 *
 * Return: CLOCK_MONOTONIC ns of @a->due_us after @now with
 * GPUSCHED_ACQUIRE_DUE; with GPUSCHED_ACQUIRE_NUDGE, @a->age_ns before
 * @now (the work beside the holder launched then; not before the clock's
 * start); else 0 (now).
 */
u64 gs_pol_due(const struct gpusched_acquire *a, u64 now)
{
	if (a->flags & GPUSCHED_ACQUIRE_NUDGE)
		return a->age_ns < now ? now - a->age_ns : 1;
	if (!(a->flags & GPUSCHED_ACQUIRE_DUE))
		return 0;
	return now + (u64)a->due_us * NSEC_PER_USEC_;
}

/**
 * gs_pol_check_release() - the argument checks of RELEASE
 * @r: the request as copied in
 *
 * Return: 0, -EOPNOTSUPP for flags, -EINVAL for reserved fields set.
 */
int gs_pol_check_release(const struct gpusched_release *r)
{
	if (r->flags)
		return -EOPNOTSUPP;
	if (r->reserved0 || r->reserved[0] || r->reserved[1])
		return -EINVAL;
	return 0;
}

/*
 * What NUDGE and NUDGE_DONE share: @c's report (@gpu_ns), taken whatever
 * the answer, as ACQUIRE takes it, at latency rank for work beside the
 * holder; then -EPERM unless @c is of the latency class, -EALREADY unless
 * another client holds the token, else 0.
 */
static int nudge_check(struct gs_pol_dev *d, struct gs_pol_client *c,
		       u64 gpu_ns, u64 now, struct gs_pol_effects *fx)
{
	bool lat = c->sched_class == GPUSCHED_CLASS_LATENCY;
	bool beside = lat && c->state != GS_POL_HOLDING;

	report_gpu(d, c, gpu_ns, beside ? GS_RANK_LATENCY : c->rank, now, fx);
	if (!lat)
		return -EPERM;
	if (!d->holder || d->holder == c)
		return -EALREADY;
	return 0;
}

/*
 * NUDGE: @c, of the latency class, launched work beside the holder without
 * the token, at @at (gs_pol_due(); 0: now). The holder is told on its page
 * (nudge_ns) to let its queue run out once: the driver then runs @c's
 * work, queued already, and switches back when it is done, while the
 * holder launches on. Nobody waits, no grant changes hands and no grace
 * time runs, so neither the hand-over's host round trips nor a revocation
 * can cost the holder GPU time. The page says when @c's work was queued,
 * which the holder's predictions of @c's next request go by, but never the
 * same time twice: a new value is how the holder tells a new nudge. The
 * report is @c's work beside the holder: charged like a grant at latency
 * rank, it spends the class's budget, which bounds how often @c may nudge.
 */
static int nudge(struct gs_pol_dev *d, struct gs_pol_client *c, u64 at,
		 u64 gpu_ns, u64 now, struct gs_pol_effects *fx)
{
	int err = nudge_check(d, c, gpu_ns, now, fx);

	if (err)
		return err;
	if (!latency_budget(d, now))
		return -EBUSY;
	if (!at || at > now)
		at = now;
	if (at <= d->holder->nudge_at)
		at = d->holder->nudge_at + 1;
	d->holder->nudge_at = at;
	d->nudger = c;
	c->nudges++;
	return 0;
}

/*
 * NUDGE_DONE: @c's work of its last nudge has ended. The holder, which may
 * still be letting its queue run out for it, is told on its page
 * (nudge_done_ns) that it need not: the driver ran that work already. Only
 * the answer to the holder's last nudge counts: an earlier nudger's work
 * says nothing of the later one's.
 */
static int nudge_done(struct gs_pol_dev *d, struct gs_pol_client *c,
		      u64 gpu_ns, u64 now, struct gs_pol_effects *fx)
{
	int err = nudge_check(d, c, gpu_ns, now, fx);

	if (err)
		return err;
	if (d->nudger != c)
		return -ENOENT;
	d->holder->nudge_done = d->holder->nudge_at;
	d->nudger = NULL;
	return 0;
}

/**
 * gs_pol_acquire() - ACQUIRE, or YIELD, as both token services run it
 * @d: the device
 * @c: the client
 * @yield: YIELD: release first if holding
 * @flags: the request's GPUSCHED_ACQUIRE_* (checked by gs_pol_check_acquire())
 * @due: when @c needs the GPU (GPUSCHED_ACQUIRE_DUE), or launched the work
 *	it nudges for (GPUSCHED_ACQUIRE_NUDGE); 0: now (gs_pol_due())
 * @gpu_ns: GPU time reported, taken before the wait (gs_pol_report_gpu())
 * @now: the time
 * @apply: told each step's effects before the next step
 * @arg: @apply's argument
 *
 * Return: 0 with @c holding or waiting, -EALREADY (holding), -EBUSY
 * (waiting already) or -EAGAIN (NONBLOCK and not granted at once). With
 * GPUSCHED_ACQUIRE_NUDGE: 0 with the holder nudged, -EINVAL for YIELD,
 * -EPERM, -EALREADY or -EBUSY (see nudge()); with
 * GPUSCHED_ACQUIRE_NUDGE_DONE: 0 with the holder told, -EINVAL for YIELD,
 * -EPERM, -EALREADY or -ENOENT (see nudge_done()).
 */
int gs_pol_acquire(struct gs_pol_dev *d, struct gs_pol_client *c, bool yield,
		   u32 flags, u64 due, u64 gpu_ns, u64 now,
		   gs_pol_apply_fn *apply, void *arg)
{
	bool nonblock = flags & GPUSCHED_ACQUIRE_NONBLOCK;
	struct gs_pol_effects fx = { 0 };
	int err = 0;

	if (flags & (GPUSCHED_ACQUIRE_NUDGE | GPUSCHED_ACQUIRE_NUDGE_DONE)) {
		if (yield)
			return -EINVAL;
		if (flags & GPUSCHED_ACQUIRE_NUDGE)
			err = nudge(d, c, due, gpu_ns, now, &fx);
		else
			err = nudge_done(d, c, gpu_ns, now, &fx);
		apply(arg, &fx, now);
		return err;
	}
	if (c->state == GS_POL_HOLDING && yield)
		gs_pol_release(d, c, now, &fx);
	/* Before the wait: it belongs to the grant that just ended. */
	gs_pol_report_gpu(d, c, gpu_ns, now, &fx);
	if (c->state == GS_POL_IDLE)
		c->due_at = due;
	if (c->state == GS_POL_HOLDING)
		err = -EALREADY;
	else if (c->state == GS_POL_WAITING)
		err = -EBUSY;
	else if (nonblock && d->holder)
		err = -EAGAIN;
	else
		gs_pol_wait(d, c, now, &fx);
	apply(arg, &fx, now);
	if (!err && nonblock && c->state == GS_POL_WAITING) {
		/* Free but not ours to take (a cap or a better waiter). */
		fx = (struct gs_pol_effects){ 0 };
		gs_pol_cancel_wait(d, c, now, &fx);
		apply(arg, &fx, now);
		err = -EAGAIN;
	}
	return err;
}

/**
 * gs_pol_release() - RELEASE: end @c's grant and charge it
 * @d: the device
 * @c: the client
 * @now: the time
 * @fx: what changed (the next waiter may be granted)
 *
 * Return: 0, or -EPERM if @c does not hold the token.
 */
int gs_pol_release(struct gs_pol_dev *d, struct gs_pol_client *c,
		   u64 now, struct gs_pol_effects *fx)
{
	if (d->holder != c)
		return -EPERM;
	charge(d, c, now);
	fx->released = c;
	update(d, now, fx);
	return 0;
}

/**
 * gs_pol_tick() - act on what fell due: slice ends, grace ends, refills
 * @d: the device
 * @now: the time, at or after gs_pol_next_event()
 * @fx: what changed
 */
void gs_pol_tick(struct gs_pol_dev *d, u64 now, struct gs_pol_effects *fx)
{
	update(d, now, fx);
}

/*
 * Would update() act at @now? True when an event fell due that no call has
 * acted on yet (the caller's timer has not run, and it asks again).
 */
static bool overdue(const struct gs_pol_dev *d, u64 now)
{
	const struct gs_pol_client *h = d->holder;
	const struct gs_pol_client *next;
	u32 rank;

	next = pick(d, now, &rank);
	if (!h)
		return next;
	if (now >= h->hard_end)
		return true;
	return next && (rank < h->rank || now >= h->slice_end);
}

/**
 * gs_pol_next_event() - when the policy may next decide on its own
 * @d: the device
 * @now: the time
 *
 * Callers arm a timer for it. An event already due (no call acted on it
 * yet) is due at @now + 1.
 *
 * Return: the earliest time after @now at which update() could decide
 * differently without any call in between, or GS_POL_NEVER.
 */
u64 gs_pol_next_event(const struct gs_pol_dev *d, u64 now)
{
	const struct gs_pol_client *h = d->holder;
	const struct gs_pol_client *c;
	struct rb_node *n;
	u64 t = GS_POL_NEVER;

	if (h && h->yield_requested)
		return max_u64(h->yield_at + d->p.grace_ns, now + 1);
	if (overdue(d, now))
		return now + 1;
	if (h) {
		t = h->hard_end;
		if (d->nr_waiting && h->slice_end > now)
			t = min_u64(t, h->slice_end);
	}
	/* A capped waiter's credit: the first throttled one still without. */
	for (n = rb_first_cached(&d->throttled); n; n = rb_next(n)) {
		s64 cr;

		c = qnode_client(n);
		cr = bucket_peek(&c->cap, c->cap_pct, d->p.window_ns, now);
		if (cr <= 0)
			t = min_u64(t, bucket_refilled_at(cr, c->cap_pct, now));
		if (c->throttled_until > now)
			break;
	}
	if (!h)
		goto out;
	/* The first batch waiter to starve, of those that have not yet. */
	c = NULL;
	n = d->starve.root.rb_root.rb_node;
	while (n) {
		if (anode_client(n)->wait_start + d->p.starve_ns > now) {
			c = anode_client(n);
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	if (c)
		t = min_u64(t, c->wait_start + d->p.starve_ns);
	if (queue_first(&d->queue[GPUSCHED_CLASS_LATENCY]) &&
	    d->p.latency_pct && !latency_budget(d, now)) {
		s64 cr = bucket_peek(&d->latency, d->p.latency_pct,
				     d->p.window_ns, now);

		t = min_u64(t, bucket_refilled_at(cr, d->p.latency_pct, now));
	}
out:
	return t <= now ? now + 1 : t;
}

/**
 * gs_pol_status_flags() - the status page's flags for @c
 * @c: the client
 *
 * Return: GPUSCHED_ST_* bits.
 */
u32 gs_pol_status_flags(const struct gs_pol_client *c)
{
	u32 flags = GPUSCHED_ST_ATTACHED;

	if (c->state == GS_POL_HOLDING)
		flags |= GPUSCHED_ST_HOLDING;
	if (c->state == GS_POL_HOLDING && c->yield_requested)
		flags |= GPUSCHED_ST_YIELD;
	if (c->revoked)
		flags |= GPUSCHED_ST_REVOKED;
	return flags;
}

/**
 * gs_pol_status_fill() - what @c's status page says, as both services fill it
 * @d: the device
 * @c: the client
 * @grant_gen: the number of @c's current grant (kept by the service)
 * @now: the time
 * @st: filled in, from @grant_gen on, and @flags; the caller publishes it
 *      (seq odd, the words from @grant_gen on, @flags, seq even)
 */
void gs_pol_status_fill(const struct gs_pol_dev *d,
			const struct gs_pol_client *c, u64 grant_gen, u64 now,
			struct gpusched_status *st)
{
	u32 flags = gs_pol_status_flags(c);
	bool yield = flags & GPUSCHED_ST_YIELD;

	*st = (struct gpusched_status){
		.flags = flags,
		.grant_gen = grant_gen,
		.slice_end_ns = c->slice_end,
		.grace_ns = d->p.grace_ns,
		.nr_waiting = d->nr_waiting,
		.nr_clients = d->nr_clients,
		.held_ns = gs_pol_held_now(c, now),
		.overruns = c->overruns,
		.nr_latency = d->nr_latency,
		.class_plus_one = c->sched_class + 1,
		.yield_ns = yield ? c->yield_at : 0,
		.yield_due_ns = yield ? c->yield_due : 0,
		.features = GS_FEATURES,
		.latency_queue_ns = d->p.latency_queue_ns,
		.handover_ns = d->p.handover_ns,
		.mem_reserved = c->mem.reserved,
		.mem_limit = gs_mem_limit(d, c),
		.nudge_ns = c->nudge_at,
		.nudge_done_ns = c->nudge_done,
	};
}

/**
 * gs_pol_held_now() - time charged to @c, counting the running grant
 * @c: the client
 * @now: the time
 *
 * Return: nanoseconds: per grant, max(held, GPU time reported).
 */
u64 gs_pol_held_now(const struct gs_pol_client *c, u64 now)
{
	return c->held_ns + running_charge(c, now);
}

/**
 * gs_pol_check_queues() - the waiters' trees against a walk of them all
 * @d: the device
 * @now: the time
 *
 * A test aid: what pick(), raise_floor() and waiters_due() find in the
 * trees is compared with what a walk of every waiter finds, the way the
 * policy is defined.
 *
 * Return: 0 when they agree; -1 (next holder), -2 (its rank), -3 (least
 * virtual time), -4 (due time), -5 (tree sizes), -6 (a greatest node).
 */
int gs_pol_check_queues(const struct gs_pol_dev *d, u64 now)
{
	struct gs_pol_client *best = NULL, *c;
	u32 best_rank = GS_RANK_BATCH + 1, rank;
	u64 lo = GS_POL_NEVER, due = GS_POL_NEVER;
	struct rb_node *n;
	bool due_now = false;
	u32 nw = 0, nq = 0;
	int i;

	list_for_each_entry(c, &d->waiting, wnode) {
		nw++;
		lo = min_u64(lo, c->vtime);
		if (!c->due_at)
			due_now = true;
		else
			due = min_u64(due, c->due_at);
		if (!eligible(d, c, now))
			continue;
		rank = rank_of(d, c, now);
		if (rank < best_rank ||
		    (rank == best_rank && before(c, best, rank))) {
			best = c;
			best_rank = rank;
		}
	}
	if (pick(d, now, &rank) != best)
		return -1;
	if (best && rank != best_rank)
		return -2;
	if (waiters_min_vtime(d) != lo)
		return -3;
	if (waiters_due(d) != (due_now || due == GS_POL_NEVER ? 0 : due))
		return -4;
	for (i = 0; i <= GPUSCHED_CLASS_MAX; i++) {
		n = rb_last(&d->queue[i].root.rb_root);
		if (d->queue[i].rightmost != n)
			return -6;
		for (n = rb_first_cached(&d->queue[i].root); n; n = rb_next(n))
			nq++;
	}
	if (d->starve.rightmost != rb_last(&d->starve.root.rb_root))
		return -6;
	for (n = rb_first_cached(&d->throttled); n; n = rb_next(n))
		nq++;
	if (nq != nw || nw != d->nr_waiting)
		return -5;
	return 0;
}
