// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of what both token services tell their clients
 * (kmod/status.c): a status page published as a sequence count, a policy
 * call's effects told to the pages before the service's hooks run, and
 * GET_INFO's answer.
 */
#include <errno.h>
#include <stdint.h>
#include <linux/gpusched.h>
#include "policy.h"
#include "tap.h"

#define MS	UINT64_C(1000000)

static struct gs_pol_dev dev;
static struct gs_pol_client cl[2];
static struct gpusched_status page[2];

/* What the hooks saw: each call, and the page's flags at that moment. */
static struct {
	int granted, revoked;
	struct gs_pol_client *who;
	uint32_t flags_then, seq_then;
} seen;

static void saw(int *count, struct gs_pol_client *c)
{
	++*count;
	seen.who = c;
	seen.flags_then = c->page->flags;
	seen.seq_then = c->page->seq;
}

static void on_granted(void *arg, struct gs_pol_client *c)
{
	(void)arg;
	saw(&seen.granted, c);
}

static void on_revoked(void *arg, struct gs_pol_client *c)
{
	(void)arg;
	saw(&seen.revoked, c);
}

static const struct gs_status_ops ops = {
	.granted = on_granted,
	.revoked = on_revoked,
};

static void tell(void *arg, struct gs_pol_effects *fx, uint64_t now)
{
	gs_status_apply(&dev, fx, now, &ops, arg);
}

static void setup(void)
{
	struct gs_pol_params p;
	int i;

	gs_pol_default_params(&p);
	gs_pol_dev_init(&dev, &p, 0);
	memset(page, 0, sizeof(page));
	memset(&seen, 0, sizeof(seen));
	for (i = 0; i < 2; i++) {
		gs_pol_client_init(&dev, &cl[i], 0);
		cl[i].page = &page[i];
		gs_status_sync(&dev, &cl[i], 0);
	}
}

static void t_sync(void)
{
	struct gs_pol_client none;

	setup();
	/* Synced once, while it was the only client. */
	CHECK(page[0].seq == 2 && page[0].flags == GPUSCHED_ST_ATTACHED &&
	      page[0].nr_clients == 1, "one update: seq %u flags %#x clients %u",
	      page[0].seq, page[0].flags, page[0].nr_clients);
	/* The header's fields are the service's: version and size kept. */
	page[0].version = GPUSCHED_STATUS_VERSION;
	gs_status_sync(&dev, &cl[0], 0);
	CHECK(page[0].seq == 4 && page[0].version == GPUSCHED_STATUS_VERSION,
	      "seq %u, version %u", page[0].seq, page[0].version);
	CHECK(page[0].nr_clients == 2 && page[0].class_plus_one == GPUSCHED_CLASS_NORMAL + 1,
	      "fields: %u clients, class+1 %u", page[0].nr_clients,
	      page[0].class_plus_one);
	/* A client without a page is not written to. */
	gs_pol_client_init(&dev, &none, 0);
	gs_status_sync(&dev, &none, 0);
	CHECK(!none.page && !none.grant_gen, "no page");
}

static void t_grant_told(void)
{
	setup();
	CHECK(gs_pol_acquire(&dev, &cl[0], false, false, 0, 0, MS, tell, NULL) == 0,
	      "acquire");
	CHECK(seen.granted == 1 && seen.who == &cl[0], "granted hook once: %d",
	      seen.granted);
	CHECK(seen.flags_then & GPUSCHED_ST_HOLDING,
	      "the page showed the grant before the hook: %#x", seen.flags_then);
	CHECK(!(seen.seq_then & 1), "and was whole (seq %u)", seen.seq_then);
	CHECK(cl[0].grant_gen == 1 && page[0].grant_gen == 1,
	      "grant number %llu, on the page %llu",
	      (unsigned long long)cl[0].grant_gen,
	      (unsigned long long)page[0].grant_gen);
	/* A waiter: the holder's page shows it, though only one was granted. */
	CHECK(gs_pol_acquire(&dev, &cl[1], false, false, 0, 0, 2 * MS, tell, NULL) == 0,
	      "second acquire waits");
	CHECK(seen.granted == 1 && page[0].nr_waiting == 1,
	      "no grant, the holder's page counts %u waiting", page[0].nr_waiting);
}

static void t_revoke_told(void)
{
	struct gs_pol_effects fx = { 0 };
	uint64_t t;

	setup();
	gs_pol_acquire(&dev, &cl[0], false, false, 0, 0, MS, tell, NULL);
	gs_pol_acquire(&dev, &cl[1], false, false, 0, 0, MS, tell, NULL);
	t = MS + dev.p.slice_ns;
	/* The slice ends: asked to yield; the grace passes: revoked. */
	gs_pol_tick(&dev, t, &fx);
	tell(NULL, &fx, t);
	memset(&fx, 0, sizeof(fx));
	t += dev.p.grace_ns;
	gs_pol_tick(&dev, t, &fx);
	CHECK(fx.revoked == &cl[0] && fx.granted == &cl[1], "revoked %p granted %p",
	      (void *)fx.revoked, (void *)fx.granted);
	memset(&seen, 0, sizeof(seen));
	tell(NULL, &fx, t);
	CHECK(seen.revoked == 1 && seen.granted == 1, "hooks: revoked %d granted %d",
	      seen.revoked, seen.granted);
	CHECK((page[0].flags & GPUSCHED_ST_REVOKED) && !(page[0].flags & GPUSCHED_ST_HOLDING),
	      "the revoked page: %#x", page[0].flags);
	CHECK((page[1].flags & GPUSCHED_ST_HOLDING) && cl[1].grant_gen == 1,
	      "the new holder's page: %#x, grant %llu", page[1].flags,
	      (unsigned long long)cl[1].grant_gen);
}

static void t_info(void)
{
	struct gpusched_client_info info;

	setup();
	memset(&info, 0xa5, sizeof(info));
	gs_status_info(NULL, NULL, 0, &info);
	CHECK(info.size == sizeof(info) && info.state == GPUSCHED_STATE_DETACHED &&
	      info.abi_version == GPUSCHED_ABI_VERSION && info.features == GS_FEATURES,
	      "detached: size %u state %u abi %u", info.size, info.state,
	      info.abi_version);
	CHECK(!info.weight && !info.grants && !info.uuid[0], "the rest zeroed");
	gs_pol_acquire(&dev, &cl[0], false, false, 0, 0, MS, tell, NULL);
	gs_status_info(&dev, &cl[0], 3 * MS, &info);
	CHECK(info.state == GPUSCHED_STATE_HOLDING && info.grants == 1 &&
	      info.weight == GPUSCHED_WEIGHT_DEFAULT && info.held_ns == 2 * MS,
	      "holding: state %u grants %llu weight %u held %llu", info.state,
	      (unsigned long long)info.grants, info.weight,
	      (unsigned long long)info.held_ns);
	CHECK(gs_status_state(&cl[1]) == GPUSCHED_STATE_IDLE, "the other is idle");
}

static const struct tap_test tests[] = {
	{ "a page is published as a sequence count", t_sync },
	{ "a grant: the page first, then the hook, once", t_grant_told },
	{ "a revocation and the grant it makes", t_revoke_told },
	{ "GET_INFO, before and after ATTACH", t_info },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
