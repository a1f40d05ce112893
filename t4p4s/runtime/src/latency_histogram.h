/* A log-linear histogram of latencies in TSC cycles, as HdrHistogram
 * lays them out: values below 16 each have a bucket; above, every
 * power-of-two range [2^e, 2^(e+1)) is split into 16 equal buckets. So a
 * bucket's width is at most 1/16 of its values, and a quantile reported
 * as its bucket's middle is within 1/32 (3.2%) of the true one, from a
 * few cycles to the whole 64-bit range, in 976 counters (7.6 KB).
 *
 * Recording is a few instructions and no allocation or lock: each
 * histogram has one writer (a lcore's tx queue of a port). Plain C, no
 * DPDK, so the tests load it on its own. */
#ifndef T4P4S_LATENCY_HISTOGRAM_H
#define T4P4S_LATENCY_HISTOGRAM_H

#include <stdint.h>

#define T4P4S_LATENCY_SUB_BITS 4
#define T4P4S_LATENCY_SUB (1u << T4P4S_LATENCY_SUB_BITS)
#define T4P4S_LATENCY_BUCKETS (T4P4S_LATENCY_SUB * (64 - T4P4S_LATENCY_SUB_BITS + 1))

struct t4p4s_latency_histogram {
	uint64_t max;             /* the largest value, exactly */
	uint64_t buckets[T4P4S_LATENCY_BUCKETS];
};

static inline unsigned
t4p4s_latency_bucket(uint64_t cycles)
{
	if (cycles < T4P4S_LATENCY_SUB)
		return (unsigned)cycles;
	unsigned e = 63u - (unsigned)__builtin_clzll(cycles);   /* >= SUB_BITS */
	unsigned shift = e - T4P4S_LATENCY_SUB_BITS;
	/* (cycles >> shift) is 16..31: the leading one and the next 4 bits */
	return shift * T4P4S_LATENCY_SUB + (unsigned)(cycles >> shift);
}

static inline void
t4p4s_latency_record(struct t4p4s_latency_histogram *h, uint64_t cycles)
{
	h->buckets[t4p4s_latency_bucket(cycles)]++;
	if (cycles > h->max)
		h->max = cycles;
}

/* The middle of bucket B's values. */
double t4p4s_latency_bucket_middle(unsigned b);

/* How many values were recorded (the buckets' sum: a per-value count
 * would cost the fast path a store). */
uint64_t t4p4s_latency_count(const struct t4p4s_latency_histogram *h);

/* Adds FROM into INTO. */
void t4p4s_latency_merge(struct t4p4s_latency_histogram *into,
			 const struct t4p4s_latency_histogram *from);

/* The Q-quantile (0 < Q <= 1: the smallest value with at least Q of all
 * values at or below it), as its bucket's middle, never above max; 0 when
 * nothing was recorded. */
double t4p4s_latency_quantile(const struct t4p4s_latency_histogram *h, double q);

#endif
