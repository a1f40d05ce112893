/* A pcap replayed into a port's received mbufs (benchmark traffic source). */
#ifndef T4P4S_RX_REPLAY_H
#define T4P4S_RX_REPLAY_H

#include <stdint.h>

#include <rte_mempool.h>

/* SPEC is PORT:FILE.pcap; call once the port's rx queues are set up with
 * mbufs from POOL, before it starts.  Returns -1 after printing why. */
int t4p4s_rx_replay_attach(const char *spec, struct rte_mempool *pool);

#endif
