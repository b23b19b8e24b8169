/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The gate's states, per GPU and process, and what a launch does in each
 * (Documentation/library.md has the diagram). gate.c derives the state
 * from the status page and the process's own flags (gate_state()); this
 * decision is pure, so that tests/unit/test_gate.c covers every state.
 */
#ifndef GS_GATE_FSM_H
#define GS_GATE_FSM_H

#include <stdbool.h>

enum gs_gate_state {
	GS_GATE_CLOSED,		/* no token client yet, or the service is missing */
	GS_GATE_IDLE,		/* the token not ours, nobody of ours asking */
	GS_GATE_BESIDE,		/* the idle thread asks; launches go beside the holder */
	GS_GATE_HOLDING,	/* ours, nobody asked for it: the fast path */
	GS_GATE_NUDGED,		/* ours; work is queued beside: run ours out once */
	GS_GATE_YIELDING,	/* ours, somebody asked: drain, then yield */
	GS_GATE_DRAINING,	/* being given away: launches stay off */
	GS_GATE_REVOKED,	/* taken from us: our leftovers drain first */
	GS_GATE_NR_STATES
};

enum gs_gate_action {
	GS_LAUNCH_HELD,		/* launch now, on the token */
	GS_LAUNCH_BESIDE,	/* launch now beside the holder; the idle thread asks */
	GS_SLOW,		/* under the lock: open, drain, then acquire or yield */
};

/*
 * What a launch does in state @s. @beside: a latency-class client that
 * others share the token with: rather than wait for the holder's work in
 * flight, it launches beside it while the token is asked for (the driver
 * time-slices meanwhile).
 */
static inline enum gs_gate_action gs_gate_on_launch(enum gs_gate_state s,
						    bool beside)
{
	switch (s) {
	case GS_GATE_HOLDING:
		return GS_LAUNCH_HELD;
	case GS_GATE_BESIDE:
		return GS_LAUNCH_BESIDE;
	case GS_GATE_IDLE:
		return beside ? GS_LAUNCH_BESIDE : GS_SLOW;
	default:
		return GS_SLOW;
	}
}

#endif /* GS_GATE_FSM_H */
