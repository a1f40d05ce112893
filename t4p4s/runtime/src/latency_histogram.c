#include <math.h>

#include "latency_histogram.h"

double
t4p4s_latency_bucket_middle(unsigned b)
{
	if (b < 2 * T4P4S_LATENCY_SUB)
		return b;     /* one value per bucket: below 16, and 16..31 */
	unsigned shift = b / T4P4S_LATENCY_SUB - 1;
	double low = (double)((uint64_t)(b - shift * T4P4S_LATENCY_SUB) << shift);
	return low + (double)((uint64_t)1 << shift) / 2 - 0.5;
}

uint64_t
t4p4s_latency_count(const struct t4p4s_latency_histogram *h)
{
	uint64_t total = 0;
	for (unsigned b = 0; b < T4P4S_LATENCY_BUCKETS; b++)
		total += h->buckets[b];
	return total;
}

void
t4p4s_latency_merge(struct t4p4s_latency_histogram *into,
		    const struct t4p4s_latency_histogram *from)
{
	if (from->max > into->max)
		into->max = from->max;
	for (unsigned b = 0; b < T4P4S_LATENCY_BUCKETS; b++)
		into->buckets[b] += from->buckets[b];
}

double
t4p4s_latency_quantile(const struct t4p4s_latency_histogram *h, double q)
{
	uint64_t total = t4p4s_latency_count(h);
	if (total == 0)
		return 0;
	uint64_t rank = (uint64_t)ceil(q * (double)total);
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < T4P4S_LATENCY_BUCKETS; b++) {
		seen += h->buckets[b];
		if (seen >= rank) {
			double middle = t4p4s_latency_bucket_middle(b);
			return middle < (double)h->max ? middle : (double)h->max;
		}
	}
	return (double)h->max;
}
