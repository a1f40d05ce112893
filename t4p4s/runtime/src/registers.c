#include <errno.h>

#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "registers.h"

struct t4p4s_register *t4p4s_registers[T4P4S_MAX_REGISTERS];

uint64_t
t4p4s_register_read(struct t4p4s_register *r, uint32_t index)
{
	if (unlikely(index >= r->size))
		return 0;
	return __atomic_load_n(&r->cells[index], __ATOMIC_RELAXED);
}

void
t4p4s_register_prefetch(const struct t4p4s_register *r, uint32_t index)
{
	if (likely(index < r->size))
		rte_prefetch0(&r->cells[index]);
}

void
t4p4s_register_write(struct t4p4s_register *r, uint32_t index, uint64_t value)
{
	if (unlikely(index >= r->size))
		return;
	__atomic_store_n(&r->cells[index], value & r->mask, __ATOMIC_RELAXED);
}

void
t4p4s_register_reset(struct t4p4s_register *r)
{
	for (uint32_t i = 0; i < r->size; i++)
		__atomic_store_n(&r->cells[i], 0, __ATOMIC_RELAXED);
}

int
t4p4s_registers_init(void)
{
	if (t4p4s_program.n_registers > T4P4S_MAX_REGISTERS)
		return -E2BIG;
	for (uint16_t i = 0; i < t4p4s_program.n_registers; i++) {
		const struct t4p4s_register_desc *d = &t4p4s_program.registers[i];
		struct t4p4s_register *r = rte_zmalloc(NULL, sizeof(*r), 0);
		if (r == NULL)
			return -ENOMEM;
		r->desc = d;
		r->size = d->size;
		r->mask = t4p4s_mask64(d->bitwidth);
		r->cells = rte_zmalloc(NULL, (d->size ? d->size : 1) *
				       sizeof(uint64_t), RTE_CACHE_LINE_SIZE);
		if (r->cells == NULL)
			return -ENOMEM;
		t4p4s_registers[i] = r;
	}
	return 0;
}

void
t4p4s_registers_fini(void)
{
	for (uint16_t i = 0; i < t4p4s_program.n_registers; i++) {
		if (t4p4s_registers[i] == NULL)
			continue;
		rte_free(t4p4s_registers[i]->cells);
		rte_free(t4p4s_registers[i]);
		t4p4s_registers[i] = NULL;
	}
}
