/* Frames arriving on a schedule into a modelled NIC rx ring: the offered
 * load of a paced --rx-replay (rx_replay.c).
 *
 * Frames "arrive" at their scheduled times whether or not the lcore polls:
 * a constant rate, or a Poisson process (exponential gaps). An arrival
 * finds a free descriptor in the ring (SIZE of them) or is lost, counted
 * as ring overflow, as a NIC drops what arrives while its ring is full.
 * A poll brings the ring up to date, then takes frames from its head,
 * oldest first, each with its arrival time. So a lcore that sleeps, pauses
 * or is busy elsewhere pays in loss and latency exactly as on a real port.
 *
 * Times are fixed point: TSC cycles << 16 since the first poll (so a rate
 * that is no whole number of cycles per frame keeps its average), good for
 * 2^48 cycles (more than a day at 3 GHz). Self-contained (DPDK only). */
#ifndef T4P4S_PACED_ARRIVALS_H
#define T4P4S_PACED_ARRIVALS_H

#include <stdbool.h>
#include <stdint.h>

enum t4p4s_arrival_pattern {
	T4P4S_ARRIVALS_CONSTANT,
	T4P4S_ARRIVALS_POISSON,
};

struct t4p4s_paced_arrivals {
	/* the modelled ring: arrival TSC and number (the arrived count
	 * then, so lost arrivals leave gaps) of each frame waiting in it */
	uint64_t *stamps;
	uint32_t *numbers;
	uint32_t size, head, count;
	/* the schedule */
	uint64_t start_tsc;        /* the first poll's; 0 before it */
	uint64_t next_fp;          /* the next arrival, fixed point since start_tsc */
	const uint64_t *gaps_fp;   /* gaps between arrivals, taken in turn, round and round */
	uint32_t n_gaps, gap;      /* the table's length and the next gap's index */
	uint64_t period_fp;        /* the sum of the table: n_gaps arrivals take exactly this */
	/* counters, written only by the polling lcore */
	uint64_t arrived;          /* every scheduled arrival so far, lost or not */
	uint64_t overflow;         /* lost: the ring was full */
};

/* RATE frames per second on a TSC of TSC_HZ into a ring of SIZE frames;
 * SEED chooses the Poisson gaps. -1 after printing why. */
int t4p4s_paced_arrivals_init(struct t4p4s_paced_arrivals *a, double rate, uint64_t tsc_hz,
			      enum t4p4s_arrival_pattern pattern, uint32_t size, uint32_t seed);

/* Brings the ring up to NOW (TSC): every frame due by then arrives or
 * overflows. Returns how many wait in the ring. */
uint32_t t4p4s_paced_arrivals_poll(struct t4p4s_paced_arrivals *a, uint64_t now);

/* Takes the oldest waiting frame (there must be one): its arrival TSC,
 * and its number in *NUMBER. */
static inline uint64_t
t4p4s_paced_arrivals_take(struct t4p4s_paced_arrivals *a, uint32_t *number)
{
	uint64_t stamp = a->stamps[a->head];
	*number = a->numbers[a->head];
	if (++a->head == a->size)
		a->head = 0;
	a->count--;
	return stamp;
}

#endif
