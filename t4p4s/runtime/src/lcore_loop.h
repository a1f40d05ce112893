#ifndef T4P4S_LCORE_LOOP_H
#define T4P4S_LCORE_LOOP_H

/* The poll loop every worker lcore runs (rte_eal_mp_remote_launch). */
int t4p4s_lcore_main(void *unused);

#endif
