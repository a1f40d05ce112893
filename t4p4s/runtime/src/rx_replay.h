/* A pcap replayed into a port's rx queues (benchmark traffic source),
 * saturated or paced into a modelled rx ring (rx_replay.c). */
#ifndef T4P4S_RX_REPLAY_H
#define T4P4S_RX_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

/* SPEC is PORT:FILE.pcap[,rate=PPS][,pattern=constant|poisson][,ring=N];
 * call once the port's rx queues are set up with mbufs from POOL, before
 * it starts. STAMP: saturated frames carry their poll's time as their
 * arrival stamp (paced ones always carry their arrival time). Returns -1
 * after printing why. */
int t4p4s_rx_replay_attach(const char *spec, struct rte_mempool *pool, bool stamp);

struct t4p4s_rx_replay_counters {
	double rate;              /* offered frames per second; 0: saturated */
	const char *pattern;      /* "saturated", "constant" or "poisson" */
	uint32_t ring;            /* the modelled ring's size (paced) */
	uint64_t arrived;         /* offered: every scheduled arrival (saturated: delivered) */
	uint64_t delivered;       /* handed to the lcore */
	uint64_t ring_overflow;   /* lost on arrival: the ring was full */
	uint64_t in_ring;         /* arrived, not yet polled */
	uint64_t no_mbuf;         /* polls that found the pool empty */
	uint64_t foreign;         /* frames the driver handed out on a paced port, freed */
};

/* Sums over the port's queues; false when the port has no replay. */
bool t4p4s_rx_replay_counters(uint16_t port, struct t4p4s_rx_replay_counters *out);

/* A paced replay's modelled rx ring on PORT: its size (0: the port has
 * none), and the frames waiting in QUEUE's after its last poll (for the
 * governor, on the lcore that polls it; what rte_eth_rx_queue_count
 * answers for a NIC's ring). */
uint32_t t4p4s_rx_replay_ring_size(uint16_t port);
uint32_t t4p4s_rx_replay_waiting(uint16_t port, uint16_t queue);

#endif
