/* rte_eal_cleanup(), and for a primary process the removal of its EAL
 * runtime directory, which DPDK 22.11 leaves behind: the target runtime's
 * and the BaaS's. */
#ifndef T4P4S_EAL_CLEANUP_H
#define T4P4S_EAL_CLEANUP_H

void t4p4s_eal_cleanup(void);

#endif
