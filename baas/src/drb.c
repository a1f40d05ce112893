#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "baas.h"
#include "drb.h"

#define FIRST_CAP 16
#define OVERFLOW_EVENT_MS 100

/* a DRB's counter and its lcore's total (which keeps counting after the
 * DRB is forgotten); COUNT_HOT for those kept outside c (drb.h) */
#define COUNT(lc, d, field, n) do { \
	(d)->c.field += (n); \
	(lc)->totals.field += (n); \
} while (0)
#define COUNT_HOT(lc, d, field, n) do { \
	(d)->field += (n); \
	(lc)->totals.field += (n); \
} while (0)

static void
count_received(struct baas_lcore *lc, struct baas_drb *d, uint16_t len)
{
	if (unlikely(++d->pdus_received_low == 0))
		d->c.pdus_received += 1ull << 32;
	uint32_t bytes_before = d->bytes_received_low;
	d->bytes_received_low += len;
	if (unlikely(d->bytes_received_low < bytes_before))
		d->c.bytes_received += 1ull << 32;
	lc->totals.pdus_received++;
	lc->totals.bytes_received += len;
}

const struct baas_config *
baas_drb_config(const struct baas_lcore *lc, const struct baas_drb *d)
{
	return d->own_config ? &d->config : &lc->defaults;
}

int
baas_drb_table_init(struct baas_drb_table *t, uint64_t max_held)
{
	memset(t, 0, sizeof(*t));
	t->ues = calloc(UINT16_MAX + 1u, sizeof(t->ues[0]));
	t->max_held = max_held;
	return t->ues == NULL ? -ENOMEM : 0;
}

static void
release(struct baas_lcore *lc, struct baas_drb *d, struct baas_slot *s)
{
	baas_free_later(lc, s->m);
	s->m = NULL;
	d->held--;
	lc->drbs.held--;
	lc->drbs.held_bytes -= s->len;
}

static void
note_overflow(struct baas_lcore *lc, struct baas_drb *d, uint32_t released)
{
	COUNT(lc, d, released_bound, released);
	d->overflow_pending += released;
	if (lc->now_ms - d->overflow_event_ms >= OVERFLOW_EVENT_MS) {
		baas_raise_event(lc, BAAS_EVENT_OVERFLOW, &d->key, 0, d->overflow_pending);
		d->overflow_event_ms = lc->now_ms;
		d->overflow_pending = 0;
	}
}

/* Releases the held PDUs below new_base and moves buf_base there. */
static void
release_below(struct baas_lcore *lc, struct baas_drb *d, uint32_t new_base)
{
	uint32_t released = 0;
	for (uint32_t sn = d->buf_base; baas_sn_off(d, sn, d->buf_base) < baas_sn_off(d, new_base, d->buf_base);
	     sn = (sn + 1) & d->sn_mask) {
		struct baas_slot *s = baas_held_slot(d, sn);
		if (s != NULL) {
			release(lc, d, s);
			released++;
		}
	}
	d->buf_base = new_base;
	if (released != 0)
		note_overflow(lc, d, released);
}

/* Releases d's oldest held PDU (global bound); false if it holds none. */
static bool
release_oldest(struct baas_lcore *lc, struct baas_drb *d)
{
	if (d->held == 0)
		return false;
	uint32_t sn = d->buf_base;
	while (baas_held_slot(d, sn) == NULL)
		sn = (sn + 1) & d->sn_mask;
	release_below(lc, d, (sn + 1) & d->sn_mask);
	return true;
}

/* zeroed and cache-aligned: with 4 slots to a line, the ring's lines hold
 * 4 consecutive SNs each (baas_drb_prefetch_status_slots) */
static struct baas_slot *
alloc_slots(uint32_t cap)
{
	size_t bytes = RTE_ALIGN_CEIL(cap * sizeof(struct baas_slot), RTE_CACHE_LINE_SIZE);
	struct baas_slot *slots = aligned_alloc(RTE_CACHE_LINE_SIZE, bytes);
	if (slots != NULL)
		memset(slots, 0, bytes);
	return slots;
}

static int
grow(struct baas_drb *d, uint32_t cap)
{
	struct baas_slot *slots = alloc_slots(cap);
	if (slots == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->cap; i++)
		if (d->slots[i].m != NULL)
			slots[d->slots[i].sn & (cap - 1)] = d->slots[i];
	free(d->slots);
	d->slots = slots;
	d->cap = cap;
	return 0;
}

static uint32_t
bound_of(const struct baas_lcore *lc, const struct baas_drb *d)
{
	uint32_t bound = baas_drb_config(lc, d)->drb_max_pdus;
	bound = rte_align32pow2(bound);
	return RTE_MIN(bound, baas_am_window(d));
}

void
baas_drb_apply_bound(struct baas_lcore *lc, struct baas_drb *d)
{
	uint32_t bound = bound_of(lc, d);
	uint32_t span = baas_sn_off(d, d->tx_next, d->buf_base);
	if (span > bound)
		release_below(lc, d, (d->tx_next - bound) & d->sn_mask);
	if (d->cap > bound) {
		/* every held SN now lies in [tx_next - bound, tx_next): no two share a slot */
		struct baas_slot *old = d->slots;
		uint32_t old_cap = d->cap;
		d->slots = alloc_slots(bound);
		if (d->slots == NULL) {   /* keep the larger ring */
			d->slots = old;
			return;
		}
		d->cap = bound;
		for (uint32_t i = 0; i < old_cap; i++)
			if (old[i].m != NULL)
				d->slots[old[i].sn & (bound - 1)] = old[i];
		free(old);
	}
}

static struct baas_drb *
create(struct baas_lcore *lc, const struct baas_drb_key *key, uint8_t sn_bits,
       uint32_t sn, uint16_t attach)
{
	struct baas_drb_table *t = &lc->drbs;
	struct baas_ue *u = &t->ues[key->ue_id];
	if (u->first != 0 && u->others == NULL) {
		u->others = calloc(1, sizeof(*u->others));
		if (u->others == NULL)
			return NULL;
	}
	/* aligned, so that its hot part is its first cache lines; from the
	 * heap, where the sanitizer build checks it (hugepage memory made no
	 * measurable difference to the bench) */
	struct baas_drb *d = aligned_alloc(RTE_CACHE_LINE_SIZE, sizeof(*d));
	if (d == NULL)
		return NULL;
	memset(d, 0, sizeof(*d));
	d->key = *key;
	d->sn_bits = sn_bits;
	d->attach = attach;
	d->sn_mask = (1u << sn_bits) - 1;
	d->cap = RTE_MIN((uint32_t)FIRST_CAP, bound_of(lc, d));
	d->slots = alloc_slots(d->cap);
	if (d->slots == NULL) {
		free(d);
		return NULL;
	}
	d->tx_next_ack = d->tx_next = d->buf_base = d->poll_sn = sn;
	d->overflow_event_ms = lc->now_ms - OVERFLOW_EVENT_MS;
	if (u->first == 0)
		u->first = (uintptr_t)d | key->lcid;
	else
		u->others->by_lcid[key->lcid] = d;
	t->n_drbs++;
	return d;
}

uint64_t
baas_drb_flush(struct baas_lcore *lc, struct baas_drb *d)
{
	uint64_t n = d->held;
	for (uint32_t i = 0; i < d->cap; i++)
		if (d->slots[i].m != NULL)
			release(lc, d, &d->slots[i]);
	baas_wheel_remove(&lc->wheel, &d->poll_timer);
	struct baas_ue *u = &lc->drbs.ues[d->key.ue_id];
	if (baas_ue_first(u, d->key.lcid) == d)
		u->first = 0;
	else
		u->others->by_lcid[d->key.lcid] = NULL;
	lc->drbs.n_drbs--;
	free(d->slots);
	free(d);
	return n;
}

static int
flush_at_exit(struct baas_drb *d, void *lc)
{
	baas_drb_flush(lc, d);
	return 0;
}

void
baas_drb_table_free(struct baas_lcore *lc)
{
	struct baas_drb_table *t = &lc->drbs;
	if (t->ues == NULL)
		return;
	baas_drb_foreach(t, flush_at_exit, lc);
	for (uint32_t ue = 0; ue <= UINT16_MAX; ue++)
		free(t->ues[ue].others);
	free(t->ues);
	t->ues = NULL;
	baas_free_flush(lc);
}

int
baas_drb_foreach(struct baas_drb_table *t, int (*fn)(struct baas_drb *, void *), void *arg)
{
	for (uint32_t ue = 0; ue <= UINT16_MAX; ue++) {
		if (t->ues[ue].first == 0 && t->ues[ue].others == NULL)
			continue;
		for (uint8_t lcid = 0; lcid < 64; lcid++) {
			struct baas_drb *d = baas_drb_find(t, &(struct baas_drb_key){ (uint16_t)ue, lcid });
			int ret = d != NULL ? fn(d, arg) : 0;
			if (ret != 0)
				return ret;
		}
	}
	return 0;
}

static void
arm_poll_timer(struct baas_lcore *lc, struct baas_drb *d)
{
	baas_wheel_arm(&lc->wheel, &d->poll_timer,
		       lc->now_ms + baas_drb_config(lc, d)->t_poll_retransmit_ms);
}

void
baas_drb_pdu(struct baas_lcore *lc, struct rte_mbuf *m, const struct baas_drb_key *key,
	     uint8_t sn_bits, uint32_t sn, bool poll, uint16_t attach)
{
	struct baas_drb *d = baas_drb_find(&lc->drbs, key);
	if (d == NULL) {
		d = create(lc, key, sn_bits, sn, attach);
		if (d == NULL) {
			lc->totals.dropped[BAAS_DROP_NO_MEMORY]++;
			baas_free_later(lc, m);
			return;
		}
	}
	if (unlikely(d->sn_bits != sn_bits)) {
		COUNT(lc, d, dropped[BAAS_DROP_DRB_SN_LENGTH], 1);
		baas_free_later(lc, m);
		return;
	}
	uint32_t off = baas_sn_off(d, sn, d->tx_next_ack);
	if (unlikely(off >= baas_am_window(d))) {
		if (d->held != 0) {
			COUNT(lc, d, dropped[BAAS_DROP_OUTSIDE_WINDOW], 1);
			baas_free_later(lc, m);
			return;
		}
		/* nothing outstanding: the transmitting window starts again here
		 * (TX_Next_Ack is only ever moved by acknowledgements, and all
		 * that were due came) */
		d->tx_next_ack = d->tx_next = d->buf_base = sn;
		off = 0;
	}
	uint32_t base_off = baas_sn_off(d, d->buf_base, d->tx_next_ack);
	if (unlikely(off < base_off)) {   /* below what a bound already released */
		COUNT(lc, d, dropped[BAAS_DROP_OUTSIDE_WINDOW], 1);
		baas_free_later(lc, m);
		return;
	}
	if (unlikely(baas_held_slot(d, sn) != NULL)) {
		COUNT(lc, d, dropped[BAAS_DROP_DUPLICATE_SN], 1);
		baas_free_later(lc, m);
		return;
	}
	uint32_t need = off - base_off + 1;
	if (unlikely(need > d->cap)) {
		uint32_t bound = bound_of(lc, d);
		uint32_t cap = d->cap;
		while (cap < need && cap < bound)
			cap <<= 1;
		if (cap != d->cap && grow(d, cap) != 0) {
			COUNT(lc, d, dropped[BAAS_DROP_NO_MEMORY], 1);
			baas_free_later(lc, m);
			return;
		}
		if (need > d->cap)   /* the DRB's bound: its oldest go */
			release_below(lc, d, (sn - d->cap + 1) & d->sn_mask);
	}
	if (unlikely(lc->drbs.held >= lc->drbs.max_held) && !release_oldest(lc, d)) {
		/* the global bound, and this DRB holds nothing to give up */
		note_overflow(lc, d, 1);
		baas_free_later(lc, m);
		return;
	}

	struct baas_slot *s = baas_slot_of(d, sn);
	s->m = m;
	s->sn = sn;
	s->considered = 0;
	s->len = (uint16_t)RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)UINT16_MAX);
	d->held++;
	lc->drbs.held++;
	lc->drbs.held_bytes += s->len;
	count_received(lc, d, s->len);
	if (baas_sn_off(d, sn, d->tx_next_ack) >= baas_sn_off(d, d->tx_next, d->tx_next_ack))
		d->tx_next = (sn + 1) & d->sn_mask;
	d->attach = attach;

	/* 5.3.3.2: a PDU with a poll sets POLL_SN and (re)starts
	 * t-PollRetransmit. Without a poll the timer is started if it is not
	 * running: the pipeline cannot know when its buffer becomes empty,
	 * where a transmitter would poll (5.3.3.2), so an unpolled tail is
	 * polled when the timer expires instead. */
	if (poll) {
		d->poll_sn = sn;
		arm_poll_timer(lc, d);
	} else if (!baas_wheel_armed(&d->poll_timer)) {
		arm_poll_timer(lc, d);
	}
}

/* 5.3.2: an SDU considered for retransmission; false when it reached
 * maxRetxThreshold (the caller raises the RLF). */
static bool
consider_for_retx(const struct baas_lcore *lc, const struct baas_drb *d, struct baas_slot *s)
{
	/* RETX_COUNT is 0 the first time, then counts each further time */
	s->considered++;
	return s->considered - 1u < baas_drb_config(lc, d)->max_retx_threshold;
}

/* 5.3.2 "indicate to upper layers that max retransmission has been
 * reached": a radio link failure. The RLC entity would be re-established
 * (its buffers discarded), so the DRB's PDUs are released and its state
 * forgotten; the next copy starts it again. */
static void
radio_link_failure(struct baas_lcore *lc, struct baas_drb *d, const struct baas_slot *s)
{
	struct baas_drb_key key = d->key;
	uint32_t sn = s->sn, retx = s->considered - 1u;
	COUNT(lc, d, rlf, 1);
	lc->totals.released_rlf += d->held;
	baas_raise_event(lc, BAAS_EVENT_RLF, &key, sn, retx);
	baas_drb_flush(lc, d);
}

static bool
retransmit(struct baas_lcore *lc, struct baas_drb *d, const struct baas_slot *s, bool poll)
{
	if (!baas_retx_send(lc, d->attach, s->m, poll))
		return false;
	COUNT(lc, d, retransmitted, 1);
	return true;
}

/* The semantic checks of 6.2.2.5 against the DRB's state, all modulo
 * 2^sn_bits from TX_Next_Ack (7.1), before anything is applied. */
static int
check_status(const struct baas_drb *d, const struct baas_status *st)
{
	uint32_t ack_off = baas_sn_off(d, st->ack_sn, d->tx_next_ack);
	if (ack_off > baas_sn_off(d, d->tx_next, d->tx_next_ack))
		return BAAS_DROP_STATUS_ACK_OUTSIDE;
	uint32_t next_free = 0;   /* offsets below it were NACKed already */
	for (unsigned i = 0; i < st->n_nacks; i++) {
		const struct baas_nack *nk = &st->nacks[i];
		uint32_t off = baas_sn_off(d, nk->sn, d->tx_next_ack);
		if (off >= ack_off || off + nk->range > ack_off)
			return BAAS_DROP_STATUS_NACK_OUTSIDE;
		if (off < next_free)
			return BAAS_DROP_STATUS_NACK_ORDER;
		next_free = off + nk->range;
	}
	return -1;
}

int
baas_drb_status(struct baas_lcore *lc, const struct baas_drb_key *key, uint8_t sn_bits,
		const struct baas_status *st)
{
	struct baas_drb *d = baas_drb_find(&lc->drbs, key);
	if (d == NULL) {
		lc->totals.dropped[BAAS_DROP_STATUS_UNKNOWN_DRB]++;
		return BAAS_DROP_STATUS_UNKNOWN_DRB;
	}
	if (d->sn_bits != sn_bits) {
		COUNT(lc, d, dropped[BAAS_DROP_STATUS_SN_LENGTH], 1);
		return BAAS_DROP_STATUS_SN_LENGTH;
	}
	int reason = check_status(d, st);
	if (reason >= 0) {
		COUNT(lc, d, dropped[reason], 1);
		return reason;
	}
	COUNT_HOT(lc, d, status_received, 1);
	uint32_t tna = d->tx_next_ack;
	uint32_t ack_off = baas_sn_off(d, st->ack_sn, tna);
	/* 5.3.3.3: a STATUS that reports on POLL_SN stops t-PollRetransmit */
	bool poll_answered = baas_sn_off(d, d->poll_sn, tna) < ack_off;
	uint32_t new_tna = st->ack_sn;
	bool new_tna_set = false;

	/* NACKed SDUs, in SN order: retransmitted (5.3.2), the last with a
	 * poll (5.3.3.2); one RETX_COUNT step each per STATUS PDU */
	const struct baas_slot *pending = NULL;
	uint32_t from_off = 0;
	for (unsigned i = 0; i < st->n_nacks; i++) {
		const struct baas_nack *nk = &st->nacks[i];
		uint32_t off = baas_sn_off(d, nk->sn, tna);
		/* everything between the previous NACK and this one is acknowledged */
		for (uint32_t o = from_off; o < off; o++) {
			struct baas_slot *s = baas_held_slot(d, (tna + o) & d->sn_mask);
			if (s != NULL) {
				release(lc, d, s);
				COUNT_HOT(lc, d, acked, 1);
			}
		}
		for (uint32_t k = 0; k < nk->range; k++) {
			uint32_t sn = (nk->sn + k) & d->sn_mask;
			if (!new_tna_set) {
				new_tna = sn;
				new_tna_set = true;
			}
			COUNT(lc, d, nacked, 1);
			struct baas_slot *s = baas_held_slot(d, sn);
			if (s == NULL) {
				COUNT(lc, d, nack_not_held, 1);
				baas_raise_event(lc, BAAS_EVENT_NACK_NOT_HELD, &d->key, sn, 0);
				continue;
			}
			if (!consider_for_retx(lc, d, s)) {
				if (pending != NULL)
					retransmit(lc, d, pending, true);
				radio_link_failure(lc, d, s);
				return -1;
			}
			if (pending != NULL)
				retransmit(lc, d, pending, false);
			pending = s;
		}
		from_off = off + nk->range;
	}
	for (uint32_t o = from_off; o < ack_off; o++) {
		struct baas_slot *s = baas_held_slot(d, (tna + o) & d->sn_mask);
		if (s != NULL) {
			release(lc, d, s);
			COUNT_HOT(lc, d, acked, 1);
		}
	}
	d->tx_next_ack = new_tna;
	if (baas_sn_off(d, d->buf_base, tna) < baas_sn_off(d, new_tna, tna))
		d->buf_base = new_tna;

	if (poll_answered)
		baas_wheel_stop(&d->poll_timer);
	if (pending != NULL) {
		retransmit(lc, d, pending, true);
		/* 5.3.3.2: POLL_SN is the highest SN submitted to lower layer */
		d->poll_sn = (d->tx_next - 1) & d->sn_mask;
		arm_poll_timer(lc, d);
	} else if (d->held != 0 && !baas_wheel_armed(&d->poll_timer)) {
		arm_poll_timer(lc, d);
	}
	return -1;
}

void
baas_drb_poll_expired(struct baas_wheel_node *n, void *lcore)
{
	struct baas_lcore *lc = lcore;
	struct baas_drb *d = container_of(n, struct baas_drb, poll_timer);
	if (d->held == 0)
		return;
	COUNT(lc, d, poll_timeouts, 1);
	/* 5.3.3.4: the SDU with the highest SN submitted is considered for
	 * retransmission, with a poll */
	uint32_t sn = (d->tx_next - 1) & d->sn_mask;
	struct baas_slot *s;
	while ((s = baas_held_slot(d, sn)) == NULL)
		sn = (sn - 1) & d->sn_mask;
	if (!consider_for_retx(lc, d, s)) {
		radio_link_failure(lc, d, s);
		return;
	}
	retransmit(lc, d, s, true);
	d->poll_sn = (d->tx_next - 1) & d->sn_mask;
	arm_poll_timer(lc, d);
}

void
baas_drb_info(const struct baas_drb *d, struct baas_drb_info *out)
{
	memset(out, 0, sizeof(*out));
	out->key = d->key;
	out->sn_bits = d->sn_bits;
	out->tx_next_ack = d->tx_next_ack;
	out->tx_next = d->tx_next;
	out->poll_sn = d->poll_sn;
	out->poll_timer_running = baas_wheel_armed(&d->poll_timer);
	out->held = d->held;
	for (uint32_t i = 0; i < d->cap; i++)
		if (d->slots[i].m != NULL)
			out->held_bytes += d->slots[i].len;
	out->counters = d->c;
	out->counters.pdus_received += d->pdus_received_low;
	out->counters.bytes_received += d->bytes_received_low;
	out->counters.acked = d->acked;
	out->counters.status_received = d->status_received;
}
