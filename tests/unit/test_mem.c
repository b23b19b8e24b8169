// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of device memory accounting (kmod/mem.c), which the
 * module and the arbiter share: the effective limit, MEM_RESERVE and
 * MEM_RETURN, the lowering rule of SET_PARAMS, percentages and the
 * status page's fields.
 */
#include <errno.h>
#include <stdint.h>
#include <linux/gpusched.h>
#include "policy.h"
#include "tap.h"

#define MIB	(UINT64_C(1) << 20)
#define GIB	(UINT64_C(1) << 30)

static struct gs_pol_dev dev;
static struct gs_pol_client cl[3];

/* One device, knobs @pct and @reserve_mb, three clients with @total each. */
static void setup(uint32_t pct, uint32_t reserve_mb, uint64_t total)
{
	struct gs_pol_params p;
	int i;

	gs_pol_default_params(&p);
	gs_pol_knob_set(&p, &gs_pol_knobs[GS_POL_KNOB_MEM_DEFAULT_PCT], pct);
	gs_pol_knob_set(&p, &gs_pol_knobs[GS_POL_KNOB_MEM_RESERVE], reserve_mb);
	gs_pol_dev_init(&dev, &p, 0);
	for (i = 0; i < 3; i++) {
		gs_pol_client_init(&dev, &cl[i], 0);
		gs_mem_attach(&cl[i], total);
	}
}

static int set_limit(struct gs_pol_client *c, uint64_t limit, bool priv)
{
	struct gpusched_params p = {
		.mask = GPUSCHED_PARAM_MEM_LIMIT, .mem_limit = limit,
	};
	struct gs_pol_effects fx = { 0 };

	return gs_pol_set_params_masked(&dev, c, &p, priv, 0, &fx);
}

static void t_effective_limit(void)
{
	setup(0, 0, 80 * GIB);
	CHECK(gs_mem_limit(&dev, &cl[0]) == 0, "no knob, no own limit: none");
	setup(25, 0, 80 * GIB);
	CHECK(gs_mem_limit(&dev, &cl[0]) == 20 * GIB, "default 25%%: %llu",
	      (unsigned long long)gs_mem_limit(&dev, &cl[0]));
	cl[0].mem.limit = 30 * GIB;
	CHECK(gs_mem_limit(&dev, &cl[0]) == 30 * GIB, "own limit over the default");
	gs_mem_attach(&cl[1], 0);
	CHECK(gs_mem_limit(&dev, &cl[1]) == 0, "unknown total: no default");
	setup(0, 1024, 80 * GIB);
	CHECK(gs_mem_limit(&dev, &cl[0]) == 79 * GIB, "reserve alone bounds: %llu",
	      (unsigned long long)gs_mem_limit(&dev, &cl[0]));
	cl[0].mem.limit = 100 * GIB;
	CHECK(gs_mem_limit(&dev, &cl[0]) == 79 * GIB, "own limit past the reserve");
	cl[0].mem.limit = 10 * GIB;
	CHECK(gs_mem_limit(&dev, &cl[0]) == 10 * GIB, "own limit below it");
	setup(100, 1024, 512 * MIB);
	CHECK(gs_mem_limit(&dev, &cl[0]) == 1, "reserve of everything: 1 byte, not none");
	setup(1, 0, 50);
	CHECK(gs_mem_limit(&dev, &cl[0]) == 1, "1%% of 50 bytes: at least 1");
	setup(50, 0, UINT64_MAX);
	CHECK(gs_mem_limit(&dev, &cl[0]) == UINT64_MAX / 100 * 50 + (UINT64_MAX % 100) * 50 / 100,
	      "no overflow at the top: %llu", (unsigned long long)gs_mem_limit(&dev, &cl[0]));
}

static void t_reserve_return(void)
{
	struct gpusched_mem m = { .bytes = 1 };
	struct gs_pol_effects fx = { 0 };

	setup(0, 0, 8 * GIB);
	CHECK(gs_mem_check(&m) == 0, "good request");
	m.bytes = 0;
	CHECK(gs_mem_check(&m) == -EINVAL, "0 bytes");
	m.bytes = 1;
	m.flags = 1;
	CHECK(gs_mem_check(&m) == -EOPNOTSUPP, "flags");
	m.flags = 0;
	m.reserved0 = 1;
	CHECK(gs_mem_check(&m) == -EINVAL, "reserved0");
	m.reserved0 = 0;
	m.reserved[1] = 1;
	CHECK(gs_mem_check(&m) == -EINVAL, "reserved[1]");

	CHECK(gs_mem_reserve(&dev, &cl[0], UINT64_MAX - 1) == 0, "no limit: anything");
	CHECK(gs_mem_reserve(&dev, &cl[0], 2) == -EINVAL, "overflow");
	CHECK(cl[0].mem.reserved == UINT64_MAX - 1 && cl[0].mem.refused == 0,
	      "overflow changes nothing");
	CHECK(gs_mem_return(&dev, &cl[0], UINT64_MAX) == -EINVAL, "more than reserved");
	CHECK(gs_mem_return(&dev, &cl[0], UINT64_MAX - 1) == 0 && cl[0].mem.reserved == 0,
	      "all returned");

	CHECK(set_limit(&cl[1], 4 * GIB, false) == 0, "set a limit");
	CHECK(gs_mem_reserve(&dev, &cl[1], 3 * GIB) == 0, "within");
	CHECK(gs_mem_reserve(&dev, &cl[1], GIB + 1) == -EDQUOT, "one byte past");
	CHECK(cl[1].mem.reserved == 3 * GIB && cl[1].mem.refused == 1,
	      "refused: nothing changes but the count");
	CHECK(gs_mem_reserve(&dev, &cl[1], GIB) == 0, "exactly to the limit");
	CHECK(gs_mem_reserve(&dev, &cl[1], 1) == -EDQUOT && cl[1].mem.refused == 2,
	      "at the limit");
	CHECK(gs_mem_reserve(&dev, &cl[2], 5 * GIB) == 0, "another client's limit is its own");
	CHECK(gs_mem_dev_reserved(&dev) == 9 * GIB, "device sum %llu",
	      (unsigned long long)gs_mem_dev_reserved(&dev));
	CHECK(gs_mem_return(&dev, &cl[1], GIB) == 0 && gs_mem_reserve(&dev, &cl[1], GIB) == 0,
	      "returned room can be reserved again");
	CHECK(gs_mem_reserve(&dev, &cl[0], UINT64_MAX) == 0 &&
	      gs_mem_dev_reserved(&dev) == UINT64_MAX, "device sum saturates");
	CHECK(gs_mem_return(&dev, &cl[0], UINT64_MAX) == 0 &&
	      gs_mem_dev_reserved(&dev) == 9 * GIB,
	      "and is exact again below it: %llu",
	      (unsigned long long)gs_mem_dev_reserved(&dev));
	gs_pol_client_exit(&dev, &cl[2], 0, &fx);
	CHECK(gs_mem_dev_reserved(&dev) == 4 * GIB,
	      "a client that leaves takes its reservation along: %llu",
	      (unsigned long long)gs_mem_dev_reserved(&dev));
}

static void t_lowering_rule(void)
{
	setup(50, 0, 8 * GIB);
	/* The default gives 4 GiB: a client may go below it, not above. */
	CHECK(set_limit(&cl[0], 5 * GIB, false) == -EPERM, "raise over the default");
	CHECK(set_limit(&cl[0], 0, false) == -EPERM, "remove the default's");
	CHECK(set_limit(&cl[0], 4 * GIB, false) == 0, "equal");
	CHECK(set_limit(&cl[0], 2 * GIB, false) == 0, "lower");
	CHECK(set_limit(&cl[0], 3 * GIB, false) == -EPERM, "raise its own");
	CHECK(set_limit(&cl[0], 0, false) == -EPERM, "remove its own");
	CHECK(cl[0].mem.limit == 2 * GIB, "unchanged by the refusals");
	CHECK(set_limit(&cl[0], 6 * GIB, true) == 0 && gs_mem_limit(&dev, &cl[0]) == 6 * GIB,
	      "privileged: raise");
	CHECK(set_limit(&cl[0], 0, true) == 0 && gs_mem_limit(&dev, &cl[0]) == 4 * GIB,
	      "privileged: remove, back to the default");

	setup(0, 0, 8 * GIB);
	CHECK(set_limit(&cl[1], 0, false) == 0, "none where none: no change");
	CHECK(set_limit(&cl[1], 100 * GIB, false) == 0, "any limit where none");
	CHECK(set_limit(&cl[1], 200 * GIB, false) == -EPERM, "then only lower");

	/* A limit lowered below the reservation takes nothing back. */
	CHECK(gs_mem_reserve(&dev, &cl[2], 3 * GIB) == 0, "reserve 3 GiB");
	CHECK(set_limit(&cl[2], GIB, false) == 0, "limit 1 GiB");
	CHECK(cl[2].mem.reserved == 3 * GIB, "still reserved");
	CHECK(gs_mem_reserve(&dev, &cl[2], 1) == -EDQUOT, "no more");
	CHECK(gs_mem_return(&dev, &cl[2], 2 * GIB + 1) == 0 &&
	      gs_mem_reserve(&dev, &cl[2], 1) == 0, "below the limit again");

	/* Other fields of the same SET_PARAMS are judged too. */
	{
		struct gpusched_params p = {
			.mask = GPUSCHED_PARAM_MEM_LIMIT | GPUSCHED_PARAM_WEIGHT,
			.mem_limit = GIB / 2, .weight = GPUSCHED_WEIGHT_DEFAULT + 1,
		};
		struct gs_pol_effects fx = { 0 };

		CHECK(gs_pol_set_params_masked(&dev, &cl[2], &p, false, 0, &fx) == -EPERM &&
		      cl[2].mem.limit == GIB, "a raised weight refuses the lowered limit too");
	}
}

static void t_percent(void)
{
	uint64_t v = 0;

	setup(0, 0, 80 * GIB);
	CHECK(gs_mem_limit_pct(&cl[0], 25, &v) == 0 && v == 20 * GIB, "25%%: %llu",
	      (unsigned long long)v);
	CHECK(gs_mem_limit_pct(&cl[0], 100, &v) == 0 && v == 80 * GIB, "100%%");
	CHECK(gs_mem_limit_pct(&cl[0], 0, &v) == -EINVAL, "0%%");
	CHECK(gs_mem_limit_pct(&cl[0], 101, &v) == -EINVAL, "101%%");
	gs_mem_attach(&cl[1], 0);
	CHECK(gs_mem_limit_pct(&cl[1], 50, &v) == -EINVAL, "no total reported");
}

static void t_status_page(void)
{
	struct gpusched_status st;

	setup(50, 0, 8 * GIB);
	CHECK(gs_mem_reserve(&dev, &cl[0], GIB) == 0, "reserve");
	gs_pol_status_fill(&dev, &cl[0], 0, 0, &st);
	CHECK(st.mem_reserved == GIB && st.mem_limit == 4 * GIB, "page: %llu of %llu",
	      (unsigned long long)st.mem_reserved, (unsigned long long)st.mem_limit);
	CHECK(st.features & GPUSCHED_FEAT_MEM, "feature announced");
}

static const struct tap_test tests[] = {
	{ "effective limit: own, default percent, reserve", t_effective_limit },
	{ "reserve and return: EDQUOT, EINVAL, refusals", t_reserve_return },
	{ "SET_PARAMS may only lower a memory limit", t_lowering_rule },
	{ "percent of the client's memory", t_percent },
	{ "status page fields", t_status_page },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
