#include <errno.h>
#include <stdio.h>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "rcu.h"
#include "runtime.h"

#define DEFER_QUEUE_SIZE 16384

struct deferred {
	t4p4s_reclaim_fn fn;
	void *a;
	void *b;
};

static struct rte_rcu_qsbr_dq *defer_queue;

static void
release(void *p __rte_unused, void *elements, unsigned n)
{
	struct deferred *d = elements;
	for (unsigned i = 0; i < n; i++)
		d[i].fn(d[i].a, d[i].b);
}

int
t4p4s_rcu_init(unsigned n_workers)
{
	size_t sz = rte_rcu_qsbr_get_memsize(n_workers);
	struct rte_rcu_qsbr *v = rte_zmalloc("t4p4s_rcu", sz, RTE_CACHE_LINE_SIZE);
	if (v == NULL || rte_rcu_qsbr_init(v, n_workers) != 0)
		return -ENOMEM;
	struct rte_rcu_qsbr_dq_parameters params = {
		.name = "t4p4s_defer",
		.flags = RTE_RCU_QSBR_DQ_MT_UNSAFE,  /* one writer at a time */
		.size = DEFER_QUEUE_SIZE,
		.esize = sizeof(struct deferred),
		.trigger_reclaim_limit = 64,
		.max_reclaim_size = DEFER_QUEUE_SIZE,
		.free_fn = release,
		.v = v,
	};
	defer_queue = rte_rcu_qsbr_dq_create(&params);
	if (defer_queue == NULL)
		return -ENOMEM;
	t4p4s_rt.rcu = v;
	return 0;
}

void
t4p4s_rcu_defer(t4p4s_reclaim_fn fn, void *a, void *b)
{
	struct deferred d = { fn, a, b };
	if (rte_rcu_qsbr_dq_enqueue(defer_queue, &d) == 0)
		return;
	/* queue full even after reclaiming: wait out a grace period */
	t4p4s_rcu_drain();
	if (rte_rcu_qsbr_dq_enqueue(defer_queue, &d) != 0) {
		rte_rcu_qsbr_synchronize(t4p4s_rt.rcu, RTE_QSBR_THRID_INVALID);
		fn(a, b);
	}
}

void
t4p4s_rcu_reclaim(void)
{
	unsigned freed, pending, available;
	rte_rcu_qsbr_dq_reclaim(defer_queue, DEFER_QUEUE_SIZE, &freed,
				&pending, &available);
}

void
t4p4s_rcu_drain(void)
{
	rte_rcu_qsbr_synchronize(t4p4s_rt.rcu, RTE_QSBR_THRID_INVALID);
	t4p4s_rcu_reclaim();
}

void
t4p4s_rcu_fini(void)
{
	if (defer_queue != NULL) {
		rte_rcu_qsbr_dq_delete(defer_queue);  /* frees what remains */
		defer_queue = NULL;
	}
}
