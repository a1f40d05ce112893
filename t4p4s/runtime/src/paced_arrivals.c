#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "paced_arrivals.h"

#define FP_SHIFT 16
/* Poisson gaps are a table of exponential variates, scaled so that they
 * average exactly the rate's gap: 4096 of them make the offered rate
 * exact over every 4096 frames and keep the per-frame cost one load. */
#define POISSON_GAPS 4096

/* A uniform double in (0, 1], from a small generator of our own (xorshift
 * 32): the table must be the same on every machine for a given seed. */
static double
uniform(uint32_t *state)
{
	uint32_t x = *state;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return ((double)x + 1.0) / 4294967296.0;
}

static uint64_t *
poisson_gaps(uint64_t mean_fp, uint32_t seed)
{
	uint64_t *gaps = rte_malloc("paced_arrivals", POISSON_GAPS * sizeof(*gaps), 0);
	if (gaps == NULL)
		return NULL;
	uint32_t state = seed != 0 ? seed : 1;
	double raw[POISSON_GAPS], sum = 0;
	for (unsigned i = 0; i < POISSON_GAPS; i++) {
		raw[i] = -log(uniform(&state));
		sum += raw[i];
	}
	uint64_t total = 0;
	for (unsigned i = 0; i < POISSON_GAPS; i++) {
		gaps[i] = (uint64_t)llround(raw[i] / sum * (double)mean_fp * POISSON_GAPS);
		total += gaps[i];
	}
	/* the rounding's remainder, so the table sums to exactly its mean */
	gaps[POISSON_GAPS - 1] += mean_fp * POISSON_GAPS - total;
	return gaps;
}

int
t4p4s_paced_arrivals_init(struct t4p4s_paced_arrivals *a, double rate, uint64_t tsc_hz,
			  enum t4p4s_arrival_pattern pattern, uint32_t size, uint32_t seed)
{
	double mean = (double)tsc_hz / rate * (double)(1 << FP_SHIFT);
	/* at most a frame per TSC cycle; at least one a day or so */
	if (!(rate > 0) || !(mean >= 1 << FP_SHIFT) ||
	    mean > (double)(UINT64_C(1) << 60) / POISSON_GAPS) {
		fprintf(stderr, "error: --rx-replay: rate %g frames/s is out of range "
			"(at most one frame per TSC cycle, %" PRIu64 " a second)\n", rate, tsc_hz);
		return -1;
	}
	*a = (struct t4p4s_paced_arrivals){ .size = size };
	a->stamps = rte_malloc("paced_arrivals", size * sizeof(*a->stamps), RTE_CACHE_LINE_SIZE);
	a->numbers = rte_malloc("paced_arrivals", size * sizeof(*a->numbers), RTE_CACHE_LINE_SIZE);
	uint64_t mean_fp = (uint64_t)llround(mean);
	if (pattern == T4P4S_ARRIVALS_POISSON) {
		a->gaps_fp = poisson_gaps(mean_fp, seed);
		a->n_gaps = POISSON_GAPS;
	} else {
		uint64_t *gap = rte_malloc("paced_arrivals", sizeof(*gap), 0);
		if (gap != NULL)
			*gap = mean_fp;
		a->gaps_fp = gap;
		a->n_gaps = 1;
	}
	if (a->stamps == NULL || a->numbers == NULL || a->gaps_fp == NULL) {
		fprintf(stderr, "error: --rx-replay: no memory for a ring of %u frames\n", size);
		return -1;
	}
	a->period_fp = mean_fp * a->n_gaps;
	return 0;
}

static inline void
advance(struct t4p4s_paced_arrivals *a)
{
	a->next_fp += a->gaps_fp[a->gap];
	if (++a->gap == a->n_gaps)
		a->gap = 0;
	a->arrived++;
}

/* The ring is full until the next poll: everything due by NOW_FP is lost.
 * Whole rounds of the gap table are skipped at once, so a long stall (a
 * sleeping lcore) costs no more than one round of the table. */
static void
overflow_until(struct t4p4s_paced_arrivals *a, uint64_t now_fp)
{
	uint64_t rounds = (now_fp - a->next_fp) / a->period_fp;
	a->next_fp += rounds * a->period_fp;
	a->arrived += rounds * a->n_gaps;
	a->overflow += rounds * a->n_gaps;
	while (a->next_fp <= now_fp) {
		advance(a);
		a->overflow++;
	}
}

uint32_t
t4p4s_paced_arrivals_poll(struct t4p4s_paced_arrivals *a, uint64_t now)
{
	if (unlikely(a->start_tsc == 0)) {
		/* the schedule starts at the first poll, not when the process
		 * started: the EAL's and the tables' set-up is no traffic */
		a->start_tsc = now;
		a->next_fp = a->gaps_fp[0];
		a->gap = 1 % a->n_gaps;
	}
	uint64_t now_fp = (now - a->start_tsc) << FP_SHIFT;
	uint32_t tail = a->head + a->count;
	if (tail >= a->size)
		tail -= a->size;
	while (a->next_fp <= now_fp && a->count < a->size) {
		a->stamps[tail] = a->start_tsc + (a->next_fp >> FP_SHIFT);
		a->numbers[tail] = (uint32_t)a->arrived;
		if (++tail == a->size)
			tail = 0;
		a->count++;
		advance(a);
	}
	if (a->next_fp <= now_fp)
		overflow_until(a, now_fp);
	return a->count;
}
