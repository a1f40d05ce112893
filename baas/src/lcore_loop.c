/* The per-lcore loop, as the target runtime's (t4p4s/runtime/src/
 * lcore_loop.c): rx burst from each attachment, prefetch, each frame to
 * its DRB; once per round: free what was released, flush tx, advance the
 * timer wheel, run the control API's commands, then the power governor. */
#include <rte_cycles.h>
#include <rte_prefetch.h>

#include "baas.h"
#include "frame.h"
#include "options.h"
#include "status.h"

/* wheel buckets run per round at most: a long stall catches up over
 * several rounds instead of holding rx */
#define MAX_TICKS_PER_ROUND 64
/* how often the governor takes requests and ends its periods */
#define CHECK_PERIOD_MS 1

/* An mbuf of the BaaS's own pool that nothing else references (a copy a
 * port's driver made, a STATUS PDU) goes straight back to the pool, as a
 * driver's fast free does: rte_pktmbuf_free_bulk's per-mbuf checks for
 * chains, attached buffers, other references and other pools cost as
 * much again as the rest of freeing (measured). A target's mbufs (ring
 * attachments) take the general way. One segment means next is NULL (an
 * mbuf invariant). */
void
baas_free_flush(struct baas_lcore *lc)
{
	struct rte_mbuf *own[BAAS_MAX_BURST], *others[BAAS_MAX_BURST];
	unsigned n_own = 0, n_others = 0;
	for (unsigned i = 0; i < lc->n_to_free; i++) {
		struct rte_mbuf *m = lc->to_free[i];
		if (m->pool == baas.pool && RTE_MBUF_DIRECT(m) && m->nb_segs == 1 &&
		    rte_mbuf_refcnt_read(m) == 1)
			own[n_own++] = m;
		else
			others[n_others++] = m;
	}
	if (n_own != 0)
		rte_mempool_put_bulk(baas.pool, (void **)own, n_own);
	if (n_others != 0)
		rte_pktmbuf_free_bulk(others, n_others);
	lc->n_to_free = 0;
}

void
baas_free_later(struct baas_lcore *lc, struct rte_mbuf *m)
{
	if (lc->n_to_free == BAAS_MAX_BURST)
		baas_free_flush(lc);
	lc->to_free[lc->n_to_free++] = m;
}

static void
handle_frame(struct baas_lcore *lc, struct rte_mbuf *m, const struct baas_frame *f,
	     int reason, uint16_t attach)
{
	static __thread uint8_t status_bytes[BAAS_MAX_STATUS_BYTES];
	static __thread struct baas_status status;
	if (reason >= 0) {
		lc->totals.dropped[reason]++;
		baas_free_later(lc, m);
		return;
	}
	if (f->kind == BAAS_FRAME_AMD) {
		baas_drb_pdu(lc, m, &f->key, f->sn_bits, f->sn, f->poll, attach);
		return;
	}
	reason = baas_status_decode(baas_frame_status_bytes(m, f, status_bytes), f->rlc_len,
				    f->sn_bits, &status);
	if (reason >= 0) {
		struct baas_drb *d = baas_drb_find(&lc->drbs, &f->key);
		if (d != NULL)
			d->c.dropped[reason]++;
		lc->totals.dropped[reason]++;
	} else {
		baas_drb_status(lc, &f->key, f->sn_bits, &status);   /* counts its own drops */
	}
	baas_free_later(lc, m);
}

static bool
same_key(const struct baas_drb_key *a, const struct baas_drb_key *b)
{
	return a->ue_id == b->ue_id && a->lcid == b->lcid;
}

/* A burst in stages, as DPDK's l3fwd does: each loop over the whole burst
 * prefetches what the next one reads, so each level of a frame's way to
 * its state (UE entry, DRB or LCID table, slots, the mbufs a STATUS PDU
 * releases) has a burst's work to hide its memory latency behind: with
 * many DRBs, each is cold when its next frame comes. The UE entry is
 * prefetched from the frame's unchecked shim bytes, so that parsing the
 * burst is the work that hides the DRB's latency; reading those bytes
 * needs no stage of its own, each frame's load being independent of the
 * others'. The prefetches are hints only: handle_frame looks everything
 * up again, so a DRB that an earlier frame of the burst creates, changes
 * or forgets is right. (Measured on the bench: prefetching a few frames
 * ahead inside the handling loop, or overlapping two bursts, is slower.) */
static unsigned
poll_attachment(struct baas_lcore *lc, uint16_t i, unsigned burst)
{
	struct baas_attachment *a = &lc->attach[i];
	struct rte_mbuf *pkts[BAAS_MAX_BURST];
	struct baas_drb_key peeked[BAAS_MAX_BURST];
	struct baas_frame frames[BAAS_MAX_BURST];
	int reasons[BAAS_MAX_BURST];
	const struct baas_drb *drbs[BAAS_MAX_BURST];
	unsigned n = a->ring_in != NULL
		? rte_ring_dequeue_burst(a->ring_in, (void **)pkts, burst, NULL)
		: rte_eth_rx_burst(a->port, 0, pkts, (uint16_t)burst);
	for (unsigned k = 0; k < n; k++) {
		peeked[k] = baas_frame_peek_key(pkts[k]);
		rte_prefetch0(&lc->drbs.ues[peeked[k].ue_id]);
	}
	for (unsigned k = 0; k < n; k++) {
		const struct baas_ue *u = &lc->drbs.ues[peeked[k].ue_id];
		drbs[k] = baas_ue_first(u, peeked[k].lcid);
		if (drbs[k] != NULL)
			baas_drb_prefetch(drbs[k]);
		else if (u->others != NULL && peeked[k].lcid < 64)
			rte_prefetch0(&u->others->by_lcid[peeked[k].lcid]);
	}
	for (unsigned k = 0; k < n; k++) {
		reasons[k] = baas_frame_parse(pkts[k], &frames[k]);
		if (reasons[k] >= 0 || !same_key(&peeked[k], &frames[k].key))
			drbs[k] = NULL;
	}
	for (unsigned k = 0; k < n; k++) {
		if (drbs[k] != NULL || reasons[k] >= 0)
			continue;
		drbs[k] = baas_drb_find(&lc->drbs, &frames[k].key);
		if (drbs[k] != NULL)
			baas_drb_prefetch(drbs[k]);
	}
	for (unsigned k = 0; k < n; k++) {
		if (drbs[k] == NULL)
			continue;
		if (frames[k].kind == BAAS_FRAME_AMD)
			baas_drb_prefetch_pdu_slot(drbs[k], frames[k].sn);
		else
			baas_drb_prefetch_status_slots(drbs[k]);
	}
	for (unsigned k = 0; k < n; k++)
		if (drbs[k] != NULL && frames[k].kind == BAAS_FRAME_STATUS)
			baas_drb_prefetch_status_mbufs(drbs[k]);
	for (unsigned k = 0; k < n; k++)
		handle_frame(lc, pkts[k], &frames[k], reasons[k], i);
	return n;
}

static void
flush_tx(struct baas_lcore *lc)
{
	for (unsigned i = 0; i < lc->n_attach; i++)
		if (lc->attach[i].tx != NULL)
			rte_eth_tx_buffer_flush(lc->attach[i].port, lc->txq, lc->attach[i].tx);
}

int
baas_lcore_main(void *arg __rte_unused)
{
	struct baas_lcore *lc = baas.lcores[baas.index_of_lcore[rte_lcore_id()]];
	const unsigned burst = baas.opts->burst;
	const uint64_t tsc_per_ms = rte_get_tsc_hz() / 1000;
	const uint64_t check_period = tsc_per_ms * CHECK_PERIOD_MS;
	const uint64_t end = baas.opts->duration_s > 0
		? baas.start_tsc + (uint64_t)(baas.opts->duration_s * (double)rte_get_tsc_hz())
		: UINT64_MAX;

	t4p4s_governor_start(&lc->governor);
	uint64_t now = rte_rdtsc();
	uint64_t next_check = now + check_period;
	while (likely(!baas.quit)) {
		/* the round's clock: the end of the last round and its idle */
		lc->now_ms = now / tsc_per_ms;
		unsigned round = 0;
		unsigned got[BAAS_MAX_ATTACH_PER_LCORE];
		for (unsigned i = 0; i < lc->n_attach; i++) {
			got[i] = poll_attachment(lc, (uint16_t)i, burst);
			round += got[i];
		}
		baas_wheel_advance(&lc->wheel, lc->now_ms, MAX_TICKS_PER_ROUND,
				   baas_drb_poll_expired, lc);
		baas_free_flush(lc);
		baas_ports_publish_held(lc);
		flush_tx(lc);
		baas_commands_run(lc);
		lc->polls++;
		lc->empty_polls += round == 0;
		lc->frames += round;
		if (unlikely(now >= end) && lc->index == 0)
			baas.quit = true;

		/* the governor (t4p4s/runtime/src/governor.h, power.c): it may
		 * pause or sleep the lcore, never past its next timer's bucket */
		now = rte_rdtsc();
		if (unlikely(now >= next_check)) {
			next_check = now + check_period;
			t4p4s_governor_tick(&lc->governor, now);
		}
		now = t4p4s_governor_after_round(&lc->governor, got, round, now);
	}
	baas_free_flush(lc);
	flush_tx(lc);
	return 0;
}
