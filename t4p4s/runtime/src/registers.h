/* Registers: shared by all lcores, each cell read and written as one
 * relaxed 64-bit atomic (see the concurrency note in tables.c).
 *
 * Their cells live in one block: anonymous memory (rte_zmalloc), or with
 * --registers-file PATH a file mapped MAP_SHARED, so that every value an
 * lcore stores is in the file's page cache at once and survives the
 * process (kill -9 included). The file starts with a header that says
 * whose registers it holds (registers.c); a file of another program or
 * register layout is refused, never reused or overwritten. */
#ifndef T4P4S_REGISTERS_H
#define T4P4S_REGISTERS_H

#include <stdbool.h>
#include <stdint.h>

#include <t4p4s/pipeline.h>

#define T4P4S_MAX_REGISTERS 1024

struct t4p4s_register {
	uint64_t *cells;
	uint32_t size;
	uint64_t mask;
	const struct t4p4s_register_desc *desc;
};

/* Allocates every register of t4p4s_program; with a registers file
 * (t4p4s_rt.opts->registers_file) maps it, creating it when it does not
 * exist or is empty. On error says why on stderr and returns -errno. */
int t4p4s_registers_init(void);
void t4p4s_registers_fini(void);
void t4p4s_register_reset(struct t4p4s_register *r);
/* Whether the registers outlive the process (they are in a registers
 * file): a pipeline commit then keeps them (control_api.c). */
bool t4p4s_registers_persistent(void);

#endif
