/* Ethdev setup: every port gets one rx queue per worker lcore where the
 * driver allows (else fewer, spread over the lcores) and one tx queue per
 * worker lcore, all fed from one mempool. */
#ifndef T4P4S_PORTS_H
#define T4P4S_PORTS_H

/* Configures and starts every port and fills each lcore's rx queue list
 * and tx buffers. On failure prints why and returns -1. */
int t4p4s_ports_init(void);
void t4p4s_ports_stop(void);

#endif
