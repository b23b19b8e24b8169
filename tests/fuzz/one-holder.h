/* SPDX-License-Identifier: GPL-2.0 */
/*
 * At most one holder per token, checked from the clients' side: the
 * invariant that storm, fuzz-dev, fuzz-netlink and lf-arbiter share.
 *
 * A client enters its critical section once granted (ACQUIRE or YIELD
 * returned 0) and leaves it before it gives the token back. On entering it
 * looks at the other clients of the token:
 *
 * - where no revocation can happen (storm sets a grace time longer than
 *   any hold), another client inside is a second holder at once;
 * - where one can (the fuzzers write the knobs, so the grace time may be
 *   short), either of the two may have lost the token without knowing
 *   yet: the one inside while it was asked to yield, or the one entering
 *   while it was descheduled between its grant and its look. So the pair
 *   is noted, and it is a second holder only once both RELEASEs that end
 *   the two sections have succeeded: a client whose RELEASE succeeds held
 *   the token from its grant until then (a revoked one gets EPERM, and
 *   only its own ACQUIRE can make it a holder again), and at the look both
 *   had been granted and neither had given the token back.
 *
 * Slots are clients, in memory shared by every process that takes part
 * (or plain memory, for threads or a single process).
 */
#ifndef GS_ONE_HOLDER_H
#define GS_ONE_HOLDER_H

#include <stdbool.h>
#include <stdint.h>

#define GS_HOLD_SLOTS	64

struct gs_holders {
	/* Critical sections entered << 1, | 1 while inside one. */
	uint64_t state[GS_HOLD_SLOTS];
	/* The last section of each that ended with a RELEASE that held. */
	uint64_t held[GS_HOLD_SLOTS];
	/*
	 * A pair seen inside at once: [i][j] is i's section when j, in its
	 * section [j][i] of beside, found i inside.
	 */
	uint64_t found[GS_HOLD_SLOTS][GS_HOLD_SLOTS];
	uint64_t beside[GS_HOLD_SLOTS][GS_HOLD_SLOTS];
	int dying[GS_HOLD_SLOTS];	/* being killed: not looked at */
	uint64_t entered;		/* critical sections */
	uint64_t judged;		/* ended by a RELEASE that still held */
	uint64_t pairs;			/* of them, found beside another */
	uint64_t violations;		/* second holders found */
};

/*
 * Slot @me (< GS_HOLD_SLOTS) was granted the token. @revocable: note the
 * clients found inside, for gs_hold_released(), rather than count them as
 * second holders now. Returns the number found inside.
 */
static inline unsigned int gs_hold_enter(struct gs_holders *h, unsigned int me,
					 bool revocable)
{
	uint64_t s = __atomic_load_n(&h->state[me], __ATOMIC_RELAXED);
	unsigned int j, n = 0;

	s = (((s >> 1) + 1) << 1) | 1;
	__atomic_store_n(&h->state[me], s, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&h->entered, 1, __ATOMIC_RELAXED);
	for (j = 0; j < GS_HOLD_SLOTS; j++) {
		uint64_t o;

		if (j == me)
			continue;
		/*
		 * dying[j] first, then state[j]. The killer sets dying,
		 * kills, waits, clears the inside bit and only then clears
		 * dying, so a client killed inside is either seen dying or,
		 * if its dying flag is seen clear, its inside bit was
		 * cleared before that and what is read after it is a live
		 * section. In the other order, the inside bit of a client
		 * killed inside (whose death gave us the token) could be read
		 * first and its dying flag read clear after the killer had
		 * finished with it: a second holder that never was.
		 */
		if (__atomic_load_n(&h->dying[j], __ATOMIC_SEQ_CST))
			continue;
		o = __atomic_load_n(&h->state[j], __ATOMIC_SEQ_CST);
		if (!(o & 1))
			continue;
		n++;
		if (!revocable)
			continue;
		__atomic_store_n(&h->found[j][me], o, __ATOMIC_SEQ_CST);
		__atomic_store_n(&h->beside[me][j], s, __ATOMIC_SEQ_CST);
	}
	if (n && !revocable)
		__atomic_add_fetch(&h->violations, n, __ATOMIC_SEQ_CST);
	return n;
}

/* Slot @me is about to give the token back (or was killed). */
static inline void gs_hold_leave(struct gs_holders *h, unsigned int me)
{
	uint64_t s = __atomic_load_n(&h->state[me], __ATOMIC_RELAXED);

	__atomic_store_n(&h->state[me], s & ~1ull, __ATOMIC_SEQ_CST);
}

/*
 * Slot @me's RELEASE after its last critical section answered; @held: it
 * succeeded. Returns the number of second holders this completes: pairs
 * seen inside at once whose other section ended holding too (the second
 * of the two RELEASEs finds the pair).
 */
static inline unsigned int gs_hold_released(struct gs_holders *h,
					    unsigned int me, bool held)
{
	uint64_t s = __atomic_load_n(&h->state[me], __ATOMIC_RELAXED) | 1;
	unsigned int j, n = 0;
	bool paired = false;

	if (!held)
		return 0;
	__atomic_add_fetch(&h->judged, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->held[me], s, __ATOMIC_SEQ_CST);
	for (j = 0; j < GS_HOLD_SLOTS; j++) {
		uint64_t o = __atomic_load_n(&h->held[j], __ATOMIC_SEQ_CST);

		if (j == me || !o)
			continue;
		/* I was found inside by j, or found j inside. */
		if (__atomic_load_n(&h->found[me][j], __ATOMIC_SEQ_CST) == s) {
			paired = true;
			n += __atomic_load_n(&h->beside[j][me], __ATOMIC_SEQ_CST) == o;
		}
		if (__atomic_load_n(&h->beside[me][j], __ATOMIC_SEQ_CST) == s) {
			paired = true;
			n += __atomic_load_n(&h->found[j][me], __ATOMIC_SEQ_CST) == o;
		}
	}
	if (paired)
		__atomic_add_fetch(&h->pairs, 1, __ATOMIC_RELAXED);
	if (n)
		__atomic_add_fetch(&h->violations, n, __ATOMIC_SEQ_CST);
	return n;
}

static inline bool gs_hold_inside(struct gs_holders *h, unsigned int me)
{
	return __atomic_load_n(&h->state[me], __ATOMIC_SEQ_CST) & 1;
}

#endif /* GS_ONE_HOLDER_H */
