#include <stddef.h>

#include "wheel.h"

static void
list_init(struct baas_wheel_node *head)
{
	head->prev = head->next = head;
}

static void
unlink_node(struct baas_wheel *w, struct baas_wheel_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
	w->queued--;
}

static void
insert(struct baas_wheel *w, struct baas_wheel_node *n, uint64_t tick)
{
	struct baas_wheel_node *head = &w->bucket[tick % BAAS_WHEEL_BUCKETS];
	n->queued_ms = tick;
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
	w->queued++;
}

void
baas_wheel_init(struct baas_wheel *w, uint64_t now_ms)
{
	for (unsigned i = 0; i < BAAS_WHEEL_BUCKETS; i++)
		list_init(&w->bucket[i]);
	w->done_ms = now_ms;
	w->queued = 0;
}

void
baas_wheel_arm(struct baas_wheel *w, struct baas_wheel_node *n, uint64_t expiry_ms)
{
	/* a bucket already run this lap would wait a whole lap */
	n->expiry_ms = expiry_ms > w->done_ms ? expiry_ms : w->done_ms + 1;
	if (n->next != NULL) {
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
	if (n->next != NULL)
		unlink_node(w, n);
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
		struct baas_wheel_node *head = &w->bucket[tick % BAAS_WHEEL_BUCKETS];
		/* detach the bucket first: fn may re-arm a node into it */
		struct baas_wheel_node due;
		if (head->next == head)
			continue;
		due.next = head->next;
		due.prev = head->prev;
		due.next->prev = &due;
		due.prev->next = &due;
		list_init(head);
		while (due.next != &due) {
			struct baas_wheel_node *n = due.next;
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
