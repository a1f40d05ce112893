#include <stddef.h>

#include "wheel.h"

static void
list_init(struct baas_wheel_node *head)
{
	head->prev = head->next = head;
}

static void
unlink_node(struct baas_wheel_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

static void
insert(struct baas_wheel *w, struct baas_wheel_node *n)
{
	struct baas_wheel_node *head = &w->bucket[n->expiry_ms % BAAS_WHEEL_BUCKETS];
	n->next = head->next;
	n->prev = head;
	head->next->prev = n;
	head->next = n;
}

void
baas_wheel_init(struct baas_wheel *w, uint64_t now_ms)
{
	for (unsigned i = 0; i < BAAS_WHEEL_BUCKETS; i++)
		list_init(&w->bucket[i]);
	w->done_ms = now_ms;
	w->armed = 0;
}

void
baas_wheel_arm(struct baas_wheel *w, struct baas_wheel_node *n, uint64_t expiry_ms)
{
	if (baas_wheel_armed(n))
		unlink_node(n);
	else
		w->armed++;
	/* a bucket already run this lap would wait a whole lap */
	n->expiry_ms = expiry_ms > w->done_ms ? expiry_ms : w->done_ms + 1;
	insert(w, n);
}

void
baas_wheel_stop(struct baas_wheel *w, struct baas_wheel_node *n)
{
	if (!baas_wheel_armed(n))
		return;
	unlink_node(n);
	w->armed--;
}

void
baas_wheel_advance(struct baas_wheel *w, uint64_t now_ms, unsigned max_ticks,
		   void (*fn)(struct baas_wheel_node *n, void *arg), void *arg)
{
	if (w->armed == 0) {
		w->done_ms = now_ms;   /* nothing to run: skip the empty buckets */
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
			unlink_node(n);
			if (n->expiry_ms > tick) {   /* a later lap */
				insert(w, n);
				continue;
			}
			w->armed--;
			fn(n, arg);
		}
	}
}
