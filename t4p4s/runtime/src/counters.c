#include <errno.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "counters.h"
#include "runtime.h"

struct t4p4s_counter *t4p4s_counters[T4P4S_MAX_COUNTERS];

void
t4p4s_counter_count(struct t4p4s_lcore *lc, struct t4p4s_counter *c,
		    uint32_t index, uint32_t bytes)
{
	if (unlikely(index >= c->size))
		return;
	struct t4p4s_counter_cell *cell = &c->cells[lc->index][index];
	cell->packets++;
	cell->bytes += bytes;
}

void
t4p4s_counter_prefetch(const struct t4p4s_lcore *lc,
		       const struct t4p4s_counter *c, uint32_t index)
{
	if (likely(index < c->size))
		rte_prefetch0(&c->cells[lc->index][index]);
}

int
t4p4s_counters_init(unsigned n_workers)
{
	if (t4p4s_program.n_counters > T4P4S_MAX_COUNTERS)
		return -E2BIG;
	for (uint16_t i = 0; i < t4p4s_program.n_counters; i++) {
		const struct t4p4s_counter_desc *d = &t4p4s_program.counters[i];
		struct t4p4s_counter *c = rte_zmalloc(NULL, sizeof(*c) +
			n_workers * sizeof(c->cells[0]), RTE_CACHE_LINE_SIZE);
		if (c == NULL)
			return -ENOMEM;
		c->desc = d;
		c->size = d->size;
		c->n_workers = n_workers;
		t4p4s_counters[i] = c;
		for (unsigned w = 0; w < n_workers; w++) {
			/* each lcore's slots on their own cache lines */
			c->cells[w] = rte_zmalloc(NULL, (d->size ? d->size : 1) *
				sizeof(struct t4p4s_counter_cell), RTE_CACHE_LINE_SIZE);
			if (c->cells[w] == NULL)
				return -ENOMEM;
		}
	}
	return 0;
}

void
t4p4s_counter_sum(const struct t4p4s_counter *c, uint32_t index,
		  struct t4p4s_counter_cell *out)
{
	out->packets = 0;
	out->bytes = 0;
	for (unsigned w = 0; w < c->n_workers; w++) {
		const volatile struct t4p4s_counter_cell *cell =
			&c->cells[w][index];
		out->packets += cell->packets;
		out->bytes += cell->bytes;
	}
}

void
t4p4s_counter_clear_slot(struct t4p4s_counter *c, uint32_t index)
{
	for (unsigned w = 0; w < c->n_workers; w++) {
		volatile struct t4p4s_counter_cell *cell = &c->cells[w][index];
		cell->packets = 0;
		cell->bytes = 0;
	}
}

void
t4p4s_counter_set_slot(struct t4p4s_counter *c, uint32_t index,
		       const struct t4p4s_counter_cell *cell)
{
	t4p4s_counter_clear_slot(c, index);
	volatile struct t4p4s_counter_cell *first = &c->cells[0][index];
	first->packets = cell->packets;
	first->bytes = cell->bytes;
}

void
t4p4s_counter_clear(struct t4p4s_counter *c)
{
	for (uint32_t i = 0; i < c->size; i++)
		t4p4s_counter_clear_slot(c, i);
}

void
t4p4s_counters_fini(void)
{
	for (uint16_t i = 0; i < t4p4s_program.n_counters; i++) {
		struct t4p4s_counter *c = t4p4s_counters[i];
		if (c == NULL)
			continue;
		for (unsigned w = 0; w < c->n_workers; w++)
			rte_free(c->cells[w]);
		rte_free(c);
		t4p4s_counters[i] = NULL;
	}
}
