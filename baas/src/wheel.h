/* A timer wheel of 1 ms buckets (paper 004, section 5.6.1). One wheel per
 * lcore, never shared.
 *
 * Lazy: a node stays queued in the bucket it was inserted in while its
 * timer is stopped and started again, because a DRB's timer is started by
 * its PDUs and stopped by its STATUS PDU once per radio round trip, and
 * linking it in and out of a bucket list each time writes its neighbours
 * there: other DRBs' cold cache lines. So:
 *  - stop only marks the node stopped;
 *  - arm to an expiry not earlier than the tick the node is queued for only
 *    sets the expiry; arm to an earlier one (a lowered t-PollRetransmit)
 *    moves the node to the bucket of its expiry;
 *  - when the wheel reaches a bucket, each node in it that is stopped
 *    leaves the wheel, one that expires later goes to the bucket of its
 *    expiry (a re-arm, or a timer longer than the wheel's span waiting for
 *    its lap) and the others fire.
 * Arm, stop and remove are O(1) and write nothing but the node (and a
 * bucket head) unless a node moves to an earlier bucket; advancing costs a
 * bucket per elapsed millisecond and a step per node queued in it. A timer
 * never fires before its expiry, and advanced every millisecond, never
 * more than one tick after it.
 *
 * A bucket is BAAS_WHEEL_LANES lists, filled in turn and walked side by
 * side: each step of a walk is a cold cache line (a DRB's), and one list
 * would make them one dependent load after another. */
#ifndef BAAS_WHEEL_H
#define BAAS_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

#define BAAS_WHEEL_BUCKETS 4096   /* ms: t-PollRetransmit values up to 4 s in one lap */
#define BAAS_WHEEL_LANES 8

struct baas_wheel_link {
	struct baas_wheel_link *prev, *next;
};

/* All zero: stopped and not queued. Arming or stopping a queued node
 * reads and writes its first 16 bytes only (a user may keep its links in
 * another cache line). */
struct baas_wheel_node {
	uint64_t expiry_ms;   /* 0 when stopped: an expiry is always after the wheel's done_ms */
	uint64_t queued_ms;   /* the tick of the bucket it is in; 0 when in none */
	struct baas_wheel_link link;   /* in a lane of that bucket */
};

struct baas_wheel {
	struct baas_wheel_link lane[BAAS_WHEEL_BUCKETS][BAAS_WHEEL_LANES];   /* list heads */
	uint64_t done_ms;    /* every bucket up to this tick has run */
	uint64_t queued;     /* nodes in buckets, running or stopped: none lets advance skip */
	unsigned next_lane;
};

void baas_wheel_init(struct baas_wheel *w, uint64_t now_ms);

static inline bool
baas_wheel_armed(const struct baas_wheel_node *n)
{
	return n->expiry_ms != 0;
}

/* (Re)arms n to fire once the wheel reaches expiry_ms (at least the next tick). */
void baas_wheel_arm(struct baas_wheel *w, struct baas_wheel_node *n, uint64_t expiry_ms);

/* It stays queued: the wheel drops it when it reaches its bucket. */
static inline void
baas_wheel_stop(struct baas_wheel_node *n)
{
	n->expiry_ms = 0;
}

/* Stops n and takes it out of its bucket: before its memory is freed. */
void baas_wheel_remove(struct baas_wheel *w, struct baas_wheel_node *n);

/* The first tick up to last_ms whose bucket advancing must run (a bucket
 * that holds any node: a stopped one or one waiting for a later lap
 * counts, so this may be early, never late); UINT64_MAX when there is
 * none. Costs a look at each bucket's lanes from the wheel's position to
 * last_ms (at most a lap). */
uint64_t baas_wheel_next_due(const struct baas_wheel *w, uint64_t last_ms);

/* Runs fn on every node due by now_ms, bucket by bucket, at most
 * max_ticks buckets (the rest next time); fn may re-arm the node. */
void baas_wheel_advance(struct baas_wheel *w, uint64_t now_ms, unsigned max_ticks,
			void (*fn)(struct baas_wheel_node *n, void *arg), void *arg);

#endif
