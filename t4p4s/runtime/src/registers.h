/* Registers: shared by all lcores, each cell read and written as one
 * relaxed 64-bit atomic (see the concurrency note in tables.c). */
#ifndef T4P4S_REGISTERS_H
#define T4P4S_REGISTERS_H

#include <stdint.h>

#include <t4p4s/pipeline.h>

#define T4P4S_MAX_REGISTERS 1024

struct t4p4s_register {
	uint64_t *cells;
	uint32_t size;
	uint64_t mask;
	const struct t4p4s_register_desc *desc;
};

int t4p4s_registers_init(void);
void t4p4s_registers_fini(void);
void t4p4s_register_reset(struct t4p4s_register *r);

#endif
