// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the gate's launch decision (libgpusched/gate_fsm.h): what
 * a launch does in every state of a GPU's token. tests/unit/gate.t runs it
 * plainly and under ASan+UBSan.
 */
#include "tap.h"
#include "gate_fsm.h"

static void t_fast(void)
{
	for (int b = 0; b < 2; b++)
		CHECK(gs_gate_on_launch(GS_GATE_HOLDING, b) == GS_LAUNCH_HELD,
		      "holding, nobody asking: the fast path (beside %d)", b);
}

static void t_slow(void)
{
	static const enum gs_gate_state s[] = {
		GS_GATE_CLOSED, GS_GATE_NUDGED, GS_GATE_YIELDING, GS_GATE_DRAINING,
		GS_GATE_REVOKED,
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(s); i++)
		for (int b = 0; b < 2; b++)
			CHECK(gs_gate_on_launch(s[i], b) == GS_SLOW,
			      "state %d: the slow path, even for a client that would go beside (%d)",
			      s[i], b);
}

static void t_idle(void)
{
	CHECK(gs_gate_on_launch(GS_GATE_IDLE, false) == GS_SLOW,
	      "idle: acquire");
	CHECK(gs_gate_on_launch(GS_GATE_IDLE, true) == GS_LAUNCH_BESIDE,
	      "idle, latency class beside others: beside the holder");
}

static void t_beside(void)
{
	for (int b = 0; b < 2; b++)
		CHECK(gs_gate_on_launch(GS_GATE_BESIDE, b) == GS_LAUNCH_BESIDE,
		      "while the idle thread asks, every launch goes beside (%d)", b);
}

static void t_all(void)
{
	for (int s = 0; s < GS_GATE_NR_STATES; s++)
		for (int b = 0; b < 2; b++) {
			enum gs_gate_action a = gs_gate_on_launch((enum gs_gate_state)s, b);

			CHECK(a == GS_LAUNCH_HELD || a == GS_LAUNCH_BESIDE || a == GS_SLOW,
			      "state %d has an action (%d, beside %d)", s, a, b);
		}
}

static const struct tap_test tests[] = {
	{ "holding: the fast path", t_fast },
	{ "states that take the slow path", t_slow },
	{ "idle", t_idle },
	{ "beside the holder", t_beside },
	{ "every state decides", t_all },
};

int main(int argc, char **argv)
{
	return tap_run(tests, ARRAY_SIZE(tests), argc, argv);
}
