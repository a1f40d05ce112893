/* State shared by the runtime's own translation units (not by generated
 * code, which only sees pipeline.h). */
#ifndef T4P4S_RUNTIME_H
#define T4P4S_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_rcu_qsbr.h>

#include <t4p4s/pipeline.h>

#include "governor.h"

#define T4P4S_MAX_RX_PER_LCORE 64
#define T4P4S_MAX_BURST 256
/* Packets-per-burst histogram buckets: 0, 1, 2-3, 4-7, ..., >= 128. */
#define T4P4S_BURST_BUCKETS 9

struct t4p4s_rx_queue {
	uint16_t port;
	uint16_t queue;
};

/* Written only by the owning lcore; read by the control thread. */
struct t4p4s_queue_stats {
	uint64_t polls;
	uint64_t empty_polls;
	uint64_t packets;      /* received, processed and handed to tx */
	uint64_t burst_hist[T4P4S_BURST_BUCKETS];
};

struct t4p4s_lcore {
	/* read-mostly, used per packet */
	unsigned index;
	unsigned lcore_id;
	uint16_t txq;
	uint16_t n_ports;
	uint16_t n_rx;
	struct rte_mempool *pool;
	struct rte_eth_dev_tx_buffer *tx[RTE_MAX_ETHPORTS];
	uint32_t max_frame_len[RTE_MAX_ETHPORTS];   /* what each port can send */
	struct t4p4s_rx_queue rx[T4P4S_MAX_RX_PER_LCORE];

	/* counters written only by this lcore, no atomics */
	uint64_t drops[T4P4S_DROP_REASONS] __rte_cache_aligned;
	uint64_t tx_dropped[RTE_MAX_ETHPORTS];
	uint64_t *parser_errors;          /* t4p4s_program.n_errors slots */
	struct t4p4s_queue_stats qstats[T4P4S_MAX_RX_PER_LCORE];
	struct t4p4s_governor governor;

	/* idle detection (--exit-on-idle): written once per busy round */
	uint64_t last_rx_tsc __rte_cache_aligned;
	/* the control socket's `stall`: microseconds to sleep once, read and
	 * cleared by this lcore every check period */
	uint64_t stall_us;
} __rte_cache_aligned;

struct t4p4s_options;

struct t4p4s_runtime {
	const struct t4p4s_options *opts;
	unsigned n_workers;
	uint16_t n_ports;
	struct t4p4s_lcore *lcores[RTE_MAX_LCORE];  /* by worker index */
	int worker_of_lcore[RTE_MAX_LCORE];         /* lcore id -> index */
	struct rte_mempool *pool;
	struct rte_rcu_qsbr *rcu;
	volatile bool quit;
	uint64_t start_tsc;
	uint16_t rx_desc[RTE_MAX_ETHPORTS];         /* each port's rx ring size */
	bool rx_intr[RTE_MAX_ETHPORTS];             /* its rx interrupts are armed */
};

extern struct t4p4s_runtime t4p4s_rt;

#endif
