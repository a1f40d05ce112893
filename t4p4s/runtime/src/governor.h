/* The power-governor decision point: every lcore calls
 * t4p4s_governor_after_round() once after each poll round with what the
 * round received. A later issue replaces the `nap` policy with paper 000's
 * Algorithm 1; everything it needs (per-round packets, time, queue
 * statistics in struct t4p4s_lcore) is available here. */
#ifndef T4P4S_GOVERNOR_H
#define T4P4S_GOVERNOR_H

#include <stdint.h>

enum t4p4s_governor_policy {
	T4P4S_GOVERNOR_BUSY,   /* pure polling */
	T4P4S_GOVERNOR_NAP,    /* sleep briefly after many empty rounds */
};

struct t4p4s_governor {
	enum t4p4s_governor_policy policy;
	uint32_t empty_rounds;
	uint64_t naps;
};

struct t4p4s_lcore;

int t4p4s_governor_parse(const char *name, enum t4p4s_governor_policy *out);
void t4p4s_governor_init(struct t4p4s_governor *g,
			 enum t4p4s_governor_policy policy);
/* Slow path of the nap policy, out of line. */
void t4p4s_governor_nap(struct t4p4s_lcore *lc);

#define T4P4S_NAP_AFTER_EMPTY_ROUNDS 1024

static inline void
t4p4s_governor_after_round(struct t4p4s_governor *g, struct t4p4s_lcore *lc,
			   unsigned rx_packets)
{
	if (g->policy == T4P4S_GOVERNOR_BUSY)
		return;
	if (rx_packets != 0) {
		g->empty_rounds = 0;
		return;
	}
	if (++g->empty_rounds >= T4P4S_NAP_AFTER_EMPTY_ROUNDS)
		t4p4s_governor_nap(lc);
}

#endif
