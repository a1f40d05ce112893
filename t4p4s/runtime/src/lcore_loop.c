/* The per-lcore poll loop, modelled on DPDK's l3fwd: rx burst, prefetch
 * the packets, run the pipeline on the burst (each packet ends in a
 * buffered per-port tx),
 * flush every tx buffer once per round, then per-round bookkeeping: queue
 * statistics, the RCU quiescent state, the governor (governor.h: it may
 * pause or sleep the lcore here). Nothing per packet is
 * atomic or shared with other lcores. */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_prefetch.h>

#include "lcore_loop.h"
#include "options.h"
#include "runtime.h"

/* how often lcore 0 checks --duration and --exit-on-idle */
#define CHECK_PERIOD_US 1000

unsigned
t4p4s_lcore_index(const struct t4p4s_lcore *lc)
{
	return lc->index;
}

void
t4p4s_drop(struct t4p4s_lcore *lc, struct rte_mbuf *m,
	   enum t4p4s_drop_reason reason)
{
	lc->drops[reason]++;
	rte_pktmbuf_free(m);
}

__attribute__((always_inline)) inline void
t4p4s_send(struct t4p4s_lcore *lc, struct rte_mbuf *m, uint32_t port)
{
	if (unlikely(port >= lc->n_ports)) {
		t4p4s_drop(lc, m, T4P4S_DROP_BAD_PORT);
		return;
	}
	if (unlikely(rte_pktmbuf_pkt_len(m) > lc->max_frame_len[port])) {
		t4p4s_drop(lc, m, T4P4S_DROP_TOO_LONG);
		return;
	}
	rte_eth_tx_buffer((uint16_t)port, lc->txq, lc->tx[port], m);
}

void
t4p4s_count_parser_error(struct t4p4s_lcore *lc, uint16_t error_code)
{
	if (likely(error_code < t4p4s_program.n_errors))
		lc->parser_errors[error_code]++;
}

static inline unsigned
burst_bucket(unsigned n)
{
	unsigned b = n == 0 ? 0 : 32 - (unsigned)__builtin_clz(n);
	return b < T4P4S_BURST_BUCKETS ? b : T4P4S_BURST_BUCKETS - 1;
}

static inline unsigned
poll_queue(struct t4p4s_lcore *lc, const struct t4p4s_rx_queue *q,
	   unsigned burst)
{
	struct rte_mbuf *pkts[T4P4S_MAX_BURST];
	unsigned n = rte_eth_rx_burst(q->port, q->queue, pkts, (uint16_t)burst);

	for (unsigned i = 0; i < n && i < T4P4S_STAGE_BURST; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	t4p4s_pipeline_process_burst(lc, pkts, n, q->port);
	return n;
}

void
t4p4s_lcore_flush_tx(struct t4p4s_lcore *lc)
{
	for (uint16_t p = 0; p < lc->n_ports; p++)
		rte_eth_tx_buffer_flush(p, lc->txq, lc->tx[p]);
}

/* Lcore 0 decides when the whole process stops (--duration,
 * --exit-on-idle); the others follow t4p4s_rt.quit. */
static void
check_exit(uint64_t now)
{
	const struct t4p4s_options *o = t4p4s_rt.opts;
	uint64_t hz = rte_get_tsc_hz();
	if (o->duration_s > 0 &&
	    now - t4p4s_rt.start_tsc >= (uint64_t)(o->duration_s * (double)hz))
		t4p4s_rt.quit = true;
	if (o->exit_on_idle_ms == 0)
		return;
	uint64_t last = 0;
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		uint64_t t = __atomic_load_n(&t4p4s_rt.lcores[w]->last_rx_tsc,
					     __ATOMIC_RELAXED);
		last = RTE_MAX(last, t);
	}
	if (last != 0 && now - last >= o->exit_on_idle_ms * hz / 1000)
		t4p4s_rt.quit = true;
}

void
t4p4s_lcores_stall(uint64_t us)
{
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++)
		__atomic_store_n(&t4p4s_rt.lcores[w]->stall_us, us, __ATOMIC_RELAXED);
}

/* A stall asked for by the control socket: the lcore neither polls nor
 * flushes while it sleeps, as a lcore preempted or in a deep idle state. */
static void
stall_if_asked(struct t4p4s_lcore *lc)
{
	uint64_t us = __atomic_exchange_n(&lc->stall_us, 0, __ATOMIC_RELAXED);
	if (unlikely(us != 0))
		rte_delay_us_sleep((unsigned)us);
}

int
t4p4s_lcore_main(void *unused __rte_unused)
{
	struct t4p4s_lcore *lc =
		t4p4s_rt.lcores[t4p4s_rt.worker_of_lcore[rte_lcore_id()]];
	const unsigned burst = t4p4s_rt.opts->burst;
	const uint64_t check_period = rte_get_tsc_hz() / 1000000 * CHECK_PERIOD_US;
	uint64_t next_check = rte_rdtsc() + check_period;

	rte_rcu_qsbr_thread_register(t4p4s_rt.rcu, lc->index);
	rte_rcu_qsbr_thread_online(t4p4s_rt.rcu, lc->index);
	t4p4s_governor_start(&lc->governor);

	while (likely(!t4p4s_rt.quit)) {
		unsigned round = 0;
		unsigned got[T4P4S_MAX_RX_PER_LCORE];
		for (unsigned q = 0; q < lc->n_rx; q++) {
			got[q] = poll_queue(lc, &lc->rx[q], burst);
			round += got[q];
		}
		t4p4s_lcore_flush_tx(lc);

		/* statistics after the flush: a packet counted as received has
		 * been handed to its tx queue (the STF runner relies on it) */
		for (unsigned q = 0; q < lc->n_rx; q++) {
			struct t4p4s_queue_stats *s = &lc->qstats[q];
			s->polls++;
			s->empty_polls += got[q] == 0;
			s->packets += got[q];
			s->burst_hist[burst_bucket(got[q])]++;
		}
		rte_rcu_qsbr_quiescent(t4p4s_rt.rcu, lc->index);

		uint64_t now = rte_rdtsc();
		if (round != 0)
			__atomic_store_n(&lc->last_rx_tsc, now, __ATOMIC_RELAXED);
		if (unlikely(now >= next_check)) {
			next_check = now + check_period;
			if (lc->index == 0)
				check_exit(now);
			stall_if_asked(lc);
			t4p4s_governor_tick(&lc->governor, now);
		}
		t4p4s_governor_after_round(&lc->governor, got, round, now);
	}

	t4p4s_lcore_flush_tx(lc);
	rte_rcu_qsbr_thread_offline(t4p4s_rt.rcu, lc->index);
	rte_rcu_qsbr_thread_unregister(t4p4s_rt.rcu, lc->index);
	return 0;
}
