/* Indirect and direct counters: one slot array per lcore (no atomics on
 * the fast path), summed when read. */
#ifndef T4P4S_COUNTERS_H
#define T4P4S_COUNTERS_H

#include <stdint.h>

#include <t4p4s/pipeline.h>

#define T4P4S_MAX_COUNTERS 1024

struct t4p4s_counter_cell {
	uint64_t packets;
	uint64_t bytes;
};

struct t4p4s_counter {
	const struct t4p4s_counter_desc *desc;
	uint32_t size;
	unsigned n_workers;
	struct t4p4s_counter_cell *cells[];   /* [worker][slot] */
};

int t4p4s_counters_init(unsigned n_workers);
void t4p4s_counters_fini(void);
void t4p4s_counter_sum(const struct t4p4s_counter *c, uint32_t index,
		       struct t4p4s_counter_cell *out);
void t4p4s_counter_clear_slot(struct t4p4s_counter *c, uint32_t index);
void t4p4s_counter_clear(struct t4p4s_counter *c);
/* Sets a slot to `cell` (lcores may count a packet in the same instant). */
void t4p4s_counter_set_slot(struct t4p4s_counter *c, uint32_t index,
			    const struct t4p4s_counter_cell *cell);

#endif
