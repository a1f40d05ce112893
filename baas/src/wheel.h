/* A timer wheel of 1 ms buckets (paper 004, section 5.6.1): arm, re-arm
 * and stop are O(1); advancing costs one bucket per elapsed millisecond.
 * A timer further away than the wheel's span stays in its bucket until
 * its own lap comes. One wheel per lcore, never shared. */
#ifndef BAAS_WHEEL_H
#define BAAS_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#define BAAS_WHEEL_BUCKETS 4096   /* ms: t-PollRetransmit values up to 4 s in one lap */

struct baas_wheel_node {
	struct baas_wheel_node *prev, *next;   /* NULL when not armed */
	uint64_t expiry_ms;
};

struct baas_wheel {
	struct baas_wheel_node bucket[BAAS_WHEEL_BUCKETS];   /* list heads */
	uint64_t done_ms;    /* every bucket up to this tick has run */
	uint64_t armed;
};

void baas_wheel_init(struct baas_wheel *w, uint64_t now_ms);

static inline bool
baas_wheel_armed(const struct baas_wheel_node *n)
{
	return n->next != NULL;
}

/* (Re)arms n to fire once the wheel reaches expiry_ms (at least the next tick). */
void baas_wheel_arm(struct baas_wheel *w, struct baas_wheel_node *n, uint64_t expiry_ms);
void baas_wheel_stop(struct baas_wheel *w, struct baas_wheel_node *n);

/* Runs fn on every node due by now_ms, bucket by bucket, at most
 * max_ticks buckets (the rest next time); fn may re-arm the node. */
void baas_wheel_advance(struct baas_wheel *w, uint64_t now_ms, unsigned max_ticks,
			void (*fn)(struct baas_wheel_node *n, void *arg), void *arg);

#endif
