#ifndef T4P4S_LCORE_LOOP_H
#define T4P4S_LCORE_LOOP_H

#include <stdint.h>

/* The poll loop every worker lcore runs (rte_eal_mp_remote_launch). */
int t4p4s_lcore_main(void *unused);

struct t4p4s_lcore;

/* Sends what the lcore's tx buffers hold (once per poll round). */
void t4p4s_lcore_flush_tx(struct t4p4s_lcore *lc);

/* Every worker lcore sleeps US microseconds once, within a millisecond
 * (the control socket's `stall`). */
void t4p4s_lcores_stall(uint64_t us);

#endif
