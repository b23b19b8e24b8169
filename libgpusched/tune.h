/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's internal constants, each with its reason. None is a user
 * setting: users set policy (GPUSCHED_WEIGHT, _CLASS, _CAP, _LABEL) and
 * deployment (GPUSCHED_BACKEND, _ARBITER, _FAIL, _MPS). What a latency-class
 * client is promised (its neighbour's queue, the hand-over allowance) is the
 * service's, per GPU, on the status page; the values here stand in only
 * where a service does not say. The tests may override the ones config.c
 * lists in GPUSCHED_TUNE=name=value,... (undocumented for users).
 */
#ifndef GS_TUNE_H
#define GS_TUNE_H

/* A token held with no launch this long goes back: longer than a program's gaps between launches, short next to a time slice. */
#define GS_IDLE_US 2000
/* A latency-class holder gives it back this soon once someone waits: it asks again, or launches beside, when it needs the GPU. */
#define GS_IDLE_LATENCY_US 100
/* Grants in a row whose launches never followed the end of our work before a latency-class holder gives the token back as its last work runs: a pattern of the program's, and one wrong costs one hand-over. */
#define GS_LAT_EARLY_AFTER 8
/* The idle thread looks for yield requests at half the idle time while nothing launches, no more often than this: each look is a wake-up on a core the program may want ... */
#define GS_IDLE_TICK_MIN_NS 100000ull
/* ... and no less often than this: a yield asked of a holder that stopped launching is answered within it, far inside the grace time. */
#define GS_IDLE_TICK_MAX_NS 5000000ull
/* A wait for other threads' CPU work of microseconds (a launch passing the gate, a device opening) yields the CPU this many times, then naps ... */
#define GS_SPIN_YIELDS 64
/* ... this long between looks for a launch passing the gate: that thread, if preempted, is back within a scheduler tick or so, and a nap this short costs little. */
#define GS_SPIN_NAP_NS 20000ull
/* ... this long between looks for the device another thread opens: that thread may wait for the token meanwhile, for as long as the token takes. */
#define GS_OPEN_NAP_NS 50000ull
/* Launches in flight at most: the driver's push buffer, not the GPU, would otherwise bound them. */
#define GS_QUEUE 1024
/* Launches in flight alone before one is timed on the GPU (beside others, one): their length may be anything. */
#define GS_QUEUE_UNMEASURED 4
/* GPU time in flight while others share the token: a yield drains within it, and a loop launching at Python's pace keeps the GPU busy. */
#define GS_QUEUE_US 10000
/* GPU time in flight while nobody else is attached: no yield to drain for, and it hides the CPU's hiccups. */
#define GS_QUEUE_ALONE_US 20000
/* GPU time in flight beside a latency-class client, where the service does not say: the client's request waits no longer. */
#define GS_QUEUE_LATENCY_US 300
/* Work left running at a hand-over, where the service does not say: the next holder's wake-up and first launches hide behind it. */
#define GS_HANDOVER_US 600
/* Left running at a hand-over to a latency-class request that came off its predicted beat: the token's way, no more. */
#define GS_LAT_HANDOVER_NS 100000ull
/* Poll, not sleep, this close to the predicted end of our work: a blocking wake-up comes tens of microseconds late. */
#define GS_SPIN_US 200
/* An early hand-over spins this last stretch rather than trust a wake-up. */
#define GS_SPIN_NS 100000ull
/* A launch call this long is the driver loading a kernel, not queueing one: counted (stats) when the token is held. */
#define GS_SLOW_LAUNCH_US 1000
/* With GPUSCHED_DEBUG=stats, one launch call in this many is timed: the clock reads are before the kernel is queued, on the GPU's path for a program that waits for each kernel. */
#define GS_CALL_TIME_EVERY 16
/* Host time around a timed launch (its call, the events' records) shorter than this is the path's own, not a host away that may lie in the kernel's frame: a call that only queues takes microseconds. */
#define GS_FRAME_AWAY_US 50
/* A frame that may hold host time beyond this part of its length gives no sample: one an eighth off moves the 3:1 mean by a thirty-second. */
#define GS_FRAME_PART 8
/* While someone waits for a token we hold, the idle thread looks this often: a yield is answered even when no launch comes. */
#define GS_YIELD_POLL_NS 50000ull
/* The idle thread waits for a grant asked for a request launched beside the holder this long at most: it has other GPUs to watch. */
#define GS_BESIDE_WAIT_NS 20000000ull
/* Away from a latency-class client, time about one launch in this many (and record an event after one in half as many, or after half GS_QUEUE_US of predicted work, so that what is in flight stays known): each costs the launching thread a driver call or two. */
#define GS_TIME_EVERY 16
/* ... and while nobody else is attached (no yield is pending, and a program of short kernels alone pays every call in throughput) or the lengths measured are steady (a sample tells little, and costs the GPU about 2 us of timestamps). */
#define GS_TIME_EVERY_STEADY 64
/* While nobody else is attached, and for a latency-class client once its lengths are steady, no more than one launch timed per this much of our GPU time: a timed launch's timestamps cost the GPU a few microseconds (one in GS_TIME_EVERY_STEADY of 20 us kernels: 0.2% of its throughput; a latency-class request's latency), and no queue waits on the lengths meanwhile. */
#define GS_TIME_SPARSE_NS 20000000ull
/* A wait for one of our events (none is blocking sync: costly to record) sleeps this long between looks at first, about a blocking wake-up's lateness (and always, where a nudge's answer may end it: answer_nudge(), wait_answer()) ... */
#define GS_EV_NAP_NS 10000ull
/* ... doubling up to this: a long wait costs a few thousand wake-ups a second, and ends no later than this after the event. */
#define GS_EV_NAP_MAX_NS 200000ull
/* A wait for our own work gives up this long past its predicted end (past its start, unmeasured): a kernel may wait for the host, which acts only after the launch the wait holds up. */
#define GS_STUCK_NS 200000000ull
/* Streams of one context whose work a drain joins (ctx_join()): a program's handful; with more, that grant's GPU time goes unchecked. */
#define GS_JOIN_STREAMS 8
/* A span of several streams' work that no drain ends is joined after this much of it: what it holds is reported no later. */
#define GS_SPAN_MAX_NS 50000000ull
/* Events per context: up to one after every launch, so a queue's worth. */
#define GS_RING 64
/* Kernel lengths remembered per context, by what was launched; tries per key. */
#define GS_KLEN 128
#define GS_KLEN_PROBE 8

#endif /* GS_TUNE_H */
