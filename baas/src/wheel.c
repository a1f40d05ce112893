#include <stddef.h>

#include <rte_common.h>
#include <rte_prefetch.h>

#include "wheel.h"

static void
list_init(struct baas_wheel_link *head)
{
	head->prev = head->next = head;
}

static bool
list_empty(const struct baas_wheel_link *head)
{
	return head->next == head;
}

static void
unlink_node(struct baas_wheel *w, struct baas_wheel_node *n)
{
	n->link.prev->next = n->link.next;
	n->link.next->prev = n->link.prev;
	n->queued_ms = 0;
	w->queued--;
}

static void
insert(struct baas_wheel *w, struct baas_wheel_node *n, uint64_t tick)
{
	struct baas_wheel_link *head =
		&w->lane[tick % BAAS_WHEEL_BUCKETS][w->next_lane++ % BAAS_WHEEL_LANES];
	n->queued_ms = tick;
	n->link.next = head->next;
	n->link.prev = head;
	head->next->prev = &n->link;
	head->next = &n->link;
	w->queued++;
}

void
baas_wheel_init(struct baas_wheel *w, uint64_t now_ms)
{
	for (unsigned b = 0; b < BAAS_WHEEL_BUCKETS; b++)
		for (unsigned l = 0; l < BAAS_WHEEL_LANES; l++)
			list_init(&w->lane[b][l]);
	w->done_ms = now_ms;
	w->queued = 0;
	w->next_lane = 0;
}

void
baas_wheel_arm(struct baas_wheel *w, struct baas_wheel_node *n, uint64_t expiry_ms)
{
	/* a bucket already run this lap would wait a whole lap */
	n->expiry_ms = expiry_ms > w->done_ms ? expiry_ms : w->done_ms + 1;
	if (n->queued_ms != 0) {
		if (n->expiry_ms >= n->queued_ms)
			return;   /* its bucket comes first and moves it on */
		unlink_node(w, n);
	}
	insert(w, n, n->expiry_ms);
}

void
baas_wheel_remove(struct baas_wheel *w, struct baas_wheel_node *n)
{
	baas_wheel_stop(n);
	if (n->queued_ms != 0)
		unlink_node(w, n);
}

uint64_t
baas_wheel_next_due(const struct baas_wheel *w, uint64_t last_ms)
{
	if (w->queued == 0)
		return UINT64_MAX;
	uint64_t end = RTE_MIN(last_ms, w->done_ms + BAAS_WHEEL_BUCKETS);
	for (uint64_t tick = w->done_ms + 1; tick <= end; tick++) {
		const struct baas_wheel_link *bucket = w->lane[tick % BAAS_WHEEL_BUCKETS];
		for (unsigned l = 0; l < BAAS_WHEEL_LANES; l++)
			if (!list_empty(&bucket[l]))
				return tick;
	}
	return UINT64_MAX;
}

/* Moves list from's nodes to the empty list to. */
static void
list_move(struct baas_wheel_link *to, struct baas_wheel_link *from)
{
	if (list_empty(from)) {
		list_init(to);
		return;
	}
	*to = *from;
	to->next->prev = to;
	to->prev->next = to;
	list_init(from);
}

void
baas_wheel_advance(struct baas_wheel *w, uint64_t now_ms, unsigned max_ticks,
		   void (*fn)(struct baas_wheel_node *n, void *arg), void *arg)
{
	if (w->queued == 0) {
		w->done_ms = now_ms;   /* nothing queued: skip the empty buckets */
		return;
	}
	for (unsigned t = 0; t < max_ticks && w->done_ms < now_ms; t++) {
		uint64_t tick = ++w->done_ms;
		/* detach the bucket first: fn may re-arm a node into it */
		struct baas_wheel_link due[BAAS_WHEEL_LANES];
		for (unsigned l = 0; l < BAAS_WHEEL_LANES; l++)
			list_move(&due[l], &w->lane[tick % BAAS_WHEEL_BUCKETS][l]);
		for (bool more = true; more;) {
			more = false;
			for (unsigned l = 0; l < BAAS_WHEEL_LANES; l++) {
				if (list_empty(&due[l]))
					continue;
				more = true;
				struct baas_wheel_node *n =
					container_of(due[l].next, struct baas_wheel_node, link);
				/* the lane's next node (both its lines: a user may keep
				 * its links apart), while the other lanes take a step */
				rte_prefetch0(n->link.next);
				rte_prefetch0(container_of(n->link.next, struct baas_wheel_node, link));
				unlink_node(w, n);
				if (!baas_wheel_armed(n))
					continue;
				if (n->expiry_ms > tick) {   /* re-armed since, or a later lap */
					insert(w, n, n->expiry_ms);
					continue;
				}
				baas_wheel_stop(n);
				fn(n, arg);
			}
		}
	}
}
