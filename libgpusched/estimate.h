/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Launch lengths from the GPU's clock: a running mean and deviation per
 * context, and a table of lengths by what was launched. Pure arithmetic
 * on nanoseconds, so that tests/unit/test_estimate.c drives it with
 * made-up samples.
 */
#ifndef GS_ESTIMATE_H
#define GS_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#define GS_HIDDEN_EST __attribute__((visibility("hidden")))

/* A mean and how far samples fall from it, both averaged 3:1. */
struct gs_est {
	uint64_t mean;			/* 0: no sample yet */
	uint64_t dev;
};

/* One launch's GPU time: @ns. The first sample is the mean. */
void gs_est_add(struct gs_est *e, uint64_t ns) GS_HIDDEN_EST;

/*
 * Lengths that differ from launch to launch by more than a quarter of
 * their mean, on average (small element-wise kernels beside GEMMs): the
 * mean then says little of the next launch.
 */
bool gs_est_unsteady(const struct gs_est *e) GS_HIDDEN_EST;

/*
 * The least a launch measured as @e is likely to take: twice the
 * deviation below the mean, 0 where that is no time.
 */
uint64_t gs_est_least(const struct gs_est *e) GS_HIDDEN_EST;

/*
 * One kernel's GPU time, by what was launched (gs_launch_key()): with its
 * deviation, as one function whose arguments set its length may vary.
 */
struct gs_klen {
	uint64_t key;			/* 0: free */
	struct gs_est len;		/* gs_est_add() */
};

/*
 * @key's entry in an open-addressed table of @n entries, @probe tries a
 * key; with @add, made (zeroed) if absent, taking the first place tried
 * when all are in use. NULL without @add if absent. Inline: a launch
 * looks its kernel up several times, and with the table's size a
 * constant at the call the modulo is a mask, not a division.
 */
static inline struct gs_klen *gs_klen_find(struct gs_klen *tab, unsigned int n,
					   unsigned int probe, uint64_t key,
					   bool add)
{
	uint64_t h = key ^ (key >> 29);
	struct gs_klen *k;

	for (unsigned int i = 0; i < probe; i++) {
		k = &tab[(h + i) % n];
		if (k->key == key)
			return k;
		if (!k->key)
			goto take;
	}
	/* Full around it: the newest kernel takes the first place. */
	k = &tab[h % n];
take:
	if (!add)
		return NULL;
	k->key = key;
	k->len = (struct gs_est){ 0 };
	return k;
}

/*
 * What a launch runs: the function (or graph) and its shape, mixed into
 * 64 bits, never 0.
 */
uint64_t gs_launch_key(const void *f, unsigned int gx, unsigned int gy,
		       unsigned int gz, unsigned int bx, unsigned int by,
		       unsigned int bz, unsigned int shmem) GS_HIDDEN_EST;

/*
 * GPU time from cuEventElapsedTime's milliseconds: 0 for a value that is
 * no time (negative, NaN, a minute or more), at least 1 ns otherwise.
 */
uint64_t gs_elapsed_ns(float ms) GS_HIDDEN_EST;

/*
 * Is a frame of @ns of GPU time, which may hold @away of host time beyond
 * the kernel (a host away around the launch), a sample of the kernel: is
 * @away no more than a @part'th of it? A frame holding no host time
 * always is.
 */
bool gs_frame_holds(uint64_t ns, uint64_t away, unsigned int part) GS_HIDDEN_EST;
/*
 * From when a launch predicted to end at @end may well end: twice @e's
 * deviation before @end (0: any time).
 */
uint64_t gs_est_near(const struct gs_est *e, uint64_t end) GS_HIDDEN_EST;

/*
 * The longest nap of a wait for an event with @behind of our GPU time
 * queued after it: half of that, so that a look sees the event before the
 * GPU runs out of our work, and no less than @min. 0 where @behind is
 * @spin or more (@spin 0: always): the usual wait's longer naps (up to
 * GS_EV_NAP_MAX_NS) hide behind that much work, and cost fewer wake-ups.
 */
uint64_t gs_nap_most(uint64_t behind, uint64_t spin, uint64_t min) GS_HIDDEN_EST;

/*
 * How many launches to one timed: @every, or, where that is more, as many
 * as take @budget of GPU time at @mean (0: not measured yet), so that the
 * timestamps of a timed launch cost the GPU no more than a fixed part of
 * its time however short the kernels; never more than @most (a mean
 * measured too short, a change of sharing, wait no longer for a sample).
 */
unsigned int gs_time_interval(unsigned int every, uint64_t mean,
			      uint64_t budget, unsigned int most) GS_HIDDEN_EST;

/*
 * Naps between looks at an event: each twice the last, from @min up to
 * @max, while the event is not expected; @min from @near on, where it may
 * complete any time. @cur: the last nap (0: none yet).
 */
struct gs_nap {
	uint64_t min, max, cur;
};

/*
 * Looking at @now, toward @near (UINT64_MAX: never) and @until: when to
 * look next. Never past @until, nor past @near while before it.
 */
uint64_t gs_nap_next(struct gs_nap *n, uint64_t now, uint64_t near,
		     uint64_t until) GS_HIDDEN_EST;

/*
 * Lengths timed on each stream add up to more than the GPU's time where
 * kernels of several streams wait for, or share, the GPU together: the
 * part of the sum the GPU's clock saw pass, in GS_SCALE_ONE'ths.
 */
#define GS_SCALE_ONE 1024u

/*
 * The next such part, from @scale, after a span of @span ns of the GPU's
 * clock that held @ns of lengths predicted at @scale: averaged 3:1
 * toward what would have predicted @span, never above GS_SCALE_ONE (a
 * span holds gaps too) nor below GS_SCALE_ONE / @most_streams. @scale 0
 * is GS_SCALE_ONE.
 */
unsigned int gs_scale_next(unsigned int scale, uint64_t ns, uint64_t span,
			   unsigned int most_streams) GS_HIDDEN_EST;

#endif /* GS_ESTIMATE_H */
