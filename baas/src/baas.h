/* The BaaS process's shared state: options, lcores, the mbuf pool. Each
 * lcore owns the DRBs whose frames arrive on its attachments; nothing per
 * packet is shared between lcores. */
#ifndef BAAS_H
#define BAAS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <baas/api.h>

#include "drb.h"
#include "governor.h"
#include "wheel.h"

#define BAAS_MAX_BURST 64
#define BAAS_MAX_ATTACH_PER_LCORE 16
#define BAAS_MAX_LCORES RTE_MAX_LCORE

struct baas_options;
struct t4p4s_ring_port_info;

/* Where copies come from and retransmissions go: an ethdev port (memif
 * VF, af_packet veth, pcap, null), or a target's ring port (zero copy,
 * the BaaS a secondary process; t4p4s/runtime/include/t4p4s/ring_port.h). */
struct baas_attachment {
	uint16_t port;                 /* ethdev port, or UINT16_MAX for rings */
	struct rte_ring *ring_in;      /* ring mode: the target's copies and STATUS PDUs */
	struct rte_ring *ring_out;     /* ring mode: retransmissions to the target */
	struct t4p4s_ring_port_info *ring_info;   /* ring mode: the port's descriptor */
	struct rte_eth_dev_tx_buffer *tx;  /* port mode */
	uint16_t rx_desc;              /* port mode: its rx ring's size */
	bool rx_intr;                  /* port mode: its rx interrupts are armed (a governor
					* that sleeps waits for them) */
	uint64_t tx_dropped;
};

struct baas_lcore {
	unsigned index;
	unsigned lcore_id;
	uint16_t txq;
	unsigned n_attach;
	struct baas_attachment attach[BAAS_MAX_ATTACH_PER_LCORE];
	struct baas_drb_table drbs;    /* this lcore's DRBs */
	struct baas_wheel wheel;       /* their t-PollRetransmit timers */
	struct rte_ring *commands;     /* API calls to run (baas_api.c) */
	struct rte_ring *events;       /* events raised, drained by the events thread */
	uint64_t events_lost;          /* raised while the ring was full */
	uint64_t now_ms;               /* this round's clock */
	struct baas_config defaults;   /* the process's defaults, as the last command set them */
	uint64_t ring_hold;            /* the target mbufs its ring ports let it hold (UINT64_MAX: none) */
	unsigned n_to_free;
	struct rte_mbuf *to_free[BAAS_MAX_BURST];   /* released, freed in bulk */
	struct baas_counters totals __rte_cache_aligned;  /* every DRB's, incl. forgotten ones */
	uint64_t polls, empty_polls, frames;
	/* the runtime's power governor (power.c) */
	struct t4p4s_governor governor __rte_cache_aligned;
} __rte_cache_aligned;

struct baas_process {
	const struct baas_options *opts;
	unsigned n_lcores;
	struct baas_lcore *lcores[BAAS_MAX_LCORES];  /* by index */
	int index_of_lcore[RTE_MAX_LCORE];
	struct rte_mempool *pool;      /* the BaaS's own: held copies (port mode) and retransmissions */
	struct baas_config defaults;   /* written by the API under a lock, read by lcores per insert */
	uint64_t start_tsc;
	volatile bool quit;
};

extern struct baas_process baas;

/* An lcore's share of the global bound: shared equally, so no packet pays
 * for an atomic; at most what its ring ports let it hold. */
static inline uint64_t
baas_held_share(const struct baas_lcore *lc, uint64_t max_pdus)
{
	uint64_t share = (max_pdus + baas.n_lcores - 1) / baas.n_lcores;
	return share < lc->ring_hold ? share : lc->ring_hold;
}

/* lcore_loop.c */
int baas_lcore_main(void *arg);
void baas_free_later(struct baas_lcore *lc, struct rte_mbuf *m);
void baas_free_flush(struct baas_lcore *lc);

/* retx.c: sends a copy of the held frame m with the poll bit as given;
 * false when it could not (no mbuf, the port full: counted) */
bool baas_retx_send(struct baas_lcore *lc, uint16_t attach, const struct rte_mbuf *m, bool poll);

/* ports.c */
int baas_ports_init(void);
void baas_ports_stop(void);
/* tells the target of each of lc's ring ports how many of its mbufs lc
 * holds (once per round, after the round's releases were freed) */
void baas_ports_publish_held(const struct baas_lcore *lc);

/* baas_api.c: the lcore side of the control API */
int baas_commands_init(void);
void baas_commands_run(struct baas_lcore *lc);
void baas_raise_event(struct baas_lcore *lc, enum baas_event_type type,
		      const struct baas_drb_key *key, uint32_t sn, uint32_t count);
int baas_events_start(void);
void baas_events_stop(void);

/* power.c: the lcores described to the runtime's governor, after the
 * attachments were made and before the ports start */
int baas_power_ready(void);

/* stats.c */
void baas_counters_add(struct baas_counters *into, const struct baas_counters *c);
void baas_telemetry_init(void);
int baas_stats_write(const char *path);
char *baas_control_line(const char *line, size_t len);

#endif
