/* The BaaS's lcores under the target runtime's power governor
 * (t4p4s/runtime/src/governor.h, linked in, not copied): each lcore and
 * its attachments described in t4p4s_governed, its counters, and the
 * bound its retransmission timers put on every idle.
 *
 * A lcore that pauses, naps or sleeps still runs its timers on time: an
 * idle ends by the time the timer wheel's next bucket with a timer in it
 * is due (baas_wheel_next_due), so a t-PollRetransmit fires as late as it
 * would on a busy lcore, within the wheel's millisecond, and an lcore
 * without timers sleeps as long as its governor asks. */
#include <rte_cycles.h>

#include "baas.h"
#include "options.h"

static void
baas_rx_counts(const void *lcore, struct t4p4s_rx_counts *out)
{
	const struct baas_lcore *lc = lcore;
	/* a round polls each attachment once */
	out->polls = __atomic_load_n(&lc->polls, __ATOMIC_RELAXED) * lc->n_attach;
	out->empty_polls = __atomic_load_n(&lc->empty_polls, __ATOMIC_RELAXED) * lc->n_attach;
	out->packets = __atomic_load_n(&lc->frames, __ATOMIC_RELAXED);
}

/* The wheel's bucket for tick T runs in the first round whose clock
 * (baas_lcore_main: TSC / tsc_per_ms) reaches T. */
static uint64_t
baas_wake_by(const void *lcore, uint64_t now __rte_unused, uint64_t until)
{
	const struct baas_lcore *lc = lcore;
	uint64_t tsc_per_ms = rte_get_tsc_hz() / 1000;
	uint64_t due_ms = baas_wheel_next_due(&lc->wheel, until / tsc_per_ms);
	return due_ms == UINT64_MAX ? until : due_ms * tsc_per_ms;
}

int
baas_power_ready(void)
{
	const struct baas_options *o = baas.opts;
	/* no RCU: the lcores share nothing the control thread frees */
	t4p4s_governed_init(o->governor, &o->power_thresholds, NULL);
	for (unsigned w = 0; w < baas.n_lcores; w++) {
		struct baas_lcore *lc = baas.lcores[w];
		const struct t4p4s_governor_host host = {
			.lcore = lc,
			.rx_counts = baas_rx_counts,
			.wake_by = baas_wake_by,
		};
		t4p4s_governed_add(&lc->governor, lc->lcore_id, &host);
		for (unsigned i = 0; i < lc->n_attach; i++) {
			const struct baas_attachment *a = &lc->attach[i];
			if (a->ring_in != NULL)
				t4p4s_governor_add_ring_queue(&lc->governor, a->ring_in);
			else
				t4p4s_governor_add_ethdev_queue(&lc->governor, a->port, 0,
								a->rx_desc, a->rx_intr);
		}
	}
	return t4p4s_governed_ready();
}
