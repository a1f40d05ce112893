/* The target runtime's side of the governor (governor.h): its forwarding
 * lcores and their rx queues described in t4p4s_governed, and the lcores'
 * counters the governor reads. The governor itself knows no runtime, so
 * the BaaS (baas/) links it too. */
#include <assert.h>

#include <rte_common.h>

#include "governor.h"
#include "options.h"
#include "power_stats.h"
#include "runtime.h"

static_assert(T4P4S_MAX_RX_PER_LCORE <= T4P4S_GOVERNOR_MAX_RXQ,
	      "the governor describes every rx queue of a lcore");

static void
runtime_rx_counts(const void *lcore, struct t4p4s_rx_counts *out)
{
	const struct t4p4s_lcore *lc = lcore;
	*out = (struct t4p4s_rx_counts){ 0, 0, 0 };
	for (unsigned q = 0; q < lc->n_rx; q++) {
		out->polls += __atomic_load_n(&lc->qstats[q].polls, __ATOMIC_RELAXED);
		out->empty_polls += __atomic_load_n(&lc->qstats[q].empty_polls, __ATOMIC_RELAXED);
		out->packets += __atomic_load_n(&lc->qstats[q].packets, __ATOMIC_RELAXED);
	}
}

int
t4p4s_governor_ports_ready(void)
{
	const struct t4p4s_options *o = t4p4s_rt.opts;
	t4p4s_governed_init(o->governor, &o->power_thresholds, t4p4s_rt.rcu);
	/* in worker order: the governor's index is the lcore's RCU thread id */
	for (unsigned w = 0; w < t4p4s_rt.n_workers; w++) {
		struct t4p4s_lcore *lc = t4p4s_rt.lcores[w];
		const struct t4p4s_governor_host host = {
			.lcore = lc,
			.rx_counts = runtime_rx_counts,
			.wake_by = NULL,
		};
		t4p4s_governed_add(&lc->governor, lc->lcore_id, &host);
		for (unsigned q = 0; q < lc->n_rx; q++) {
			uint16_t port = lc->rx[q].port;
			t4p4s_governor_add_ethdev_queue(&lc->governor, port, lc->rx[q].queue,
							t4p4s_rt.rx_desc[port],
							t4p4s_rt.rx_intr[port]);
		}
	}
	return t4p4s_governed_ready();
}

json_t *
t4p4s_power_lcore_json(const struct t4p4s_lcore *lc)
{
	return t4p4s_power_governor_json(&lc->governor);
}
