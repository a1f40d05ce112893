/* The --vdev arguments of the command line: a vdev that fails to probe is
 * only logged by the EAL, and the ports after it would silently be
 * renumbered (P4 port N is DPDK port N; the BaaS's attachments too). */
#ifndef T4P4S_VDEVS_H
#define T4P4S_VDEVS_H

/* Notes them, before rte_eal_init() consumes them; removes a memif server
 * socket file nobody listens on (a killed run's). */
void t4p4s_vdevs_note(int argc, char **argv);

/* After rte_eal_init(): 0 when every noted vdev became a port, else -1
 * after printing which did not. */
int t4p4s_vdevs_check_probed(void);

#endif
