/* Per-DRB transmit-side state of RLC AM (TS 38.322 7.1) for the PDUs the
 * pipeline sent: the copies held until acknowledged, keyed by SN.
 *
 * The held PDUs sit in a ring of slots indexed by SN modulo its capacity
 * (a power of two, grown on demand up to the DRB's bound, at most
 * AM_Window_Size): an insert, an acknowledgement and a NACK lookup each
 * cost O(1), with no hashing and no per-PDU allocation. A slot is 16
 * bytes, so a DRB's ring lives in a few cache lines per 4 SNs.
 *
 * DRBs are found by (ue_id, lcid) in a table of 65,536 UEs (struct
 * baas_ue: a UE's first DRB right there, any others in a table of 64
 * LCIDs: NR's LCID has 6 bits).
 *
 * SNs are compared as TS 38.322 7.1 says: modulo 2^sn_bits, relative to
 * TX_Next_Ack. Besides TX_Next_Ack (the lowest SN not positively
 * acknowledged) the DRB keeps buf_base, the lowest SN it can still hold:
 * a bound that releases the oldest PDUs moves buf_base only, so the
 * receiver's later STATUS PDUs, which may still NACK them, stay valid (the
 * NACK is then counted as nack_not_held). */
#ifndef BAAS_DRB_H
#define BAAS_DRB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include <baas/api.h>

#include "status.h"
#include "wheel.h"

struct baas_lcore;

struct baas_slot {
	struct rte_mbuf *m;           /* NULL: empty */
	uint32_t sn;
	uint16_t considered;          /* times considered for retransmission (RETX_COUNT + 1) */
	uint16_t len;                 /* frame bytes (for held_bytes) */
};

/* Laid out by use: a STATUS PDU touches the first two cache lines, an AMD
 * PDU the first only (but when it links the timer into the wheel, which a
 * queued timer is not), so that with many DRBs (each a cache miss when its
 * next frame comes) a round of PDUs leaves the second lines clean: no
 * write-back. So pdus_received and bytes_received keep their low 32 bits
 * in the first line and carry into c, acked and status_received are kept
 * in the second instead of c (baas_drb_info adds them up), the timer's
 * expiry and queue tick are in the first line and its links in the
 * second (a PDU re-arms a queued timer lazily, wheel.h), and the DRB's
 * held_bytes is summed from its slots when asked for. */
struct baas_drb {
	uint8_t sn_bits;
	bool own_config;
	uint16_t attach;              /* where its copies arrive and its retransmissions leave */
	uint32_t sn_mask;             /* 2^sn_bits - 1 */
	uint32_t tx_next_ack;
	uint32_t tx_next;             /* highest SN received + 1 */
	uint32_t buf_base;            /* lowest SN it can still hold (>= tx_next_ack) */
	uint32_t poll_sn;
	uint32_t cap;                 /* slots, a power of two */
	uint32_t held;
	struct baas_slot *slots;
	uint32_t pdus_received_low, bytes_received_low;
	struct baas_wheel_node poll_timer;   /* t-PollRetransmit, TS 38.322 7.3 */
	uint64_t acked, status_received;

	struct baas_drb_key key;
	uint32_t overflow_pending;    /* PDUs released since the last OVERFLOW event */
	uint64_t overflow_event_ms;   /* that event (one per 100 ms at most) */
	struct baas_config config;    /* its own values when own_config */
	struct baas_counters c;
} __rte_cache_aligned;

_Static_assert(offsetof(struct baas_drb, poll_timer) + offsetof(struct baas_wheel_node, link) ==
	       RTE_CACHE_LINE_SIZE, "an AMD PDU writes the first cache line only");
_Static_assert(offsetof(struct baas_drb, key) <= 2 * RTE_CACHE_LINE_SIZE,
	       "a STATUS PDU touches the first two cache lines only");

/* The SNs from TX_Next_Ack on that a STATUS PDU's prefetches cover: a
 * STATUS acknowledges about a round trip's PDUs, and a burst's prefetches
 * must stay well within L1. */
#define BAAS_STATUS_PREFETCH_SNS 8

/* sn's offset from base, modulo 2^sn_bits (TS 38.322 7.1) */
static inline uint32_t
baas_sn_off(const struct baas_drb *d, uint32_t sn, uint32_t base)
{
	return (sn - base) & d->sn_mask;
}

static inline struct baas_slot *
baas_slot_of(const struct baas_drb *d, uint32_t sn)
{
	return &d->slots[sn & (d->cap - 1)];
}

/* the slot holding sn, or NULL */
static inline struct baas_slot *
baas_held_slot(const struct baas_drb *d, uint32_t sn)
{
	struct baas_slot *s = baas_slot_of(d, sn);
	return s->m != NULL && s->sn == sn ? s : NULL;
}

struct baas_ue_drbs {
	struct baas_drb *by_lcid[64];
};

/* A UE's entry: the DRB it had first is found from here directly, one
 * cache line before the DRB's own (most UEs have one DRB, and with many
 * UEs every line on the way is a cache miss); its others through a table
 * of 64 LCIDs. The first's LCID is kept in the low bits of its pointer,
 * which a DRB's cache alignment leaves 0: an entry is 16 bytes, and no
 * DRB is read to tell LCIDs apart. */
struct baas_ue {
	uintptr_t first;                /* its first DRB | that DRB's LCID, or 0 */
	struct baas_ue_drbs *others;    /* made at its second DRB */
};

#define BAAS_LCID_BITS 6
_Static_assert(_Alignof(struct baas_drb) >= 1 << BAAS_LCID_BITS,
	       "an LCID fits in a DRB pointer's low bits");

struct baas_drb_table {
	struct baas_ue *ues;          /* 65,536, by ue_id */
	uint32_t n_drbs;
	uint64_t held;                /* PDUs held by this lcore's DRBs */
	uint64_t held_bytes;
	uint64_t max_held;            /* this lcore's share of the global bound */
};

int baas_drb_table_init(struct baas_drb_table *t, uint64_t max_held);
void baas_drb_table_free(struct baas_lcore *lc);

/* For the next frame of d: both lines, for an AMD PDU too (measured: the
 * second only for a STATUS PDU is slower). */
static inline void
baas_drb_prefetch(const struct baas_drb *d)
{
	rte_prefetch0(d);
	rte_prefetch0((const char *)d + RTE_CACHE_LINE_SIZE);
}

/* AM_Window_Size, TS 38.322 7.2 */
static inline uint32_t
baas_am_window(const struct baas_drb *d)
{
	return (d->sn_mask >> 1) + 1;
}

/* Once d's state is in cache: the slot an AMD PDU with sn goes to. */
static inline void
baas_drb_prefetch_pdu_slot(const struct baas_drb *d, uint32_t sn)
{
	rte_prefetch0(baas_slot_of(d, sn));
}

static inline uint32_t
baas_drb_status_prefetch_sns(const struct baas_drb *d)
{
	uint32_t outstanding = baas_sn_off(d, d->tx_next, d->tx_next_ack);
	return outstanding < BAAS_STATUS_PREFETCH_SNS ? outstanding : BAAS_STATUS_PREFETCH_SNS;
}

/* Once d's state is in cache: the slots a STATUS PDU reads first. */
static inline void
baas_drb_prefetch_status_slots(const struct baas_drb *d)
{
	const uint32_t per_line = RTE_CACHE_LINE_SIZE / sizeof(struct baas_slot);
	uint32_t n = baas_drb_status_prefetch_sns(d);
	for (uint32_t o = 0; o < n; o++) {
		uint32_t i = (d->tx_next_ack + o) & (d->cap - 1);
		if (o == 0 || i % per_line == 0)
			rte_prefetch0(&d->slots[i]);
	}
}

/* Once those slots are in cache: the mbufs the STATUS PDU may release
 * (both lines: rte_pktmbuf_free_bulk reads the refcnt and pool in the
 * first, next in the second). */
static inline void
baas_drb_prefetch_status_mbufs(const struct baas_drb *d)
{
	uint32_t n = baas_drb_status_prefetch_sns(d);
	for (uint32_t o = 0; o < n; o++) {
		const struct baas_slot *s = baas_held_slot(d, (d->tx_next_ack + o) & d->sn_mask);
		if (s != NULL) {
			rte_mbuf_prefetch_part1(s->m);
			rte_mbuf_prefetch_part2(s->m);
		}
	}
}

/* u's first DRB if its LCID is lcid, else NULL */
static inline struct baas_drb *
baas_ue_first(const struct baas_ue *u, uint8_t lcid)
{
	return u->first != 0 && (u->first & ((1u << BAAS_LCID_BITS) - 1)) == lcid
		? (struct baas_drb *)(u->first - lcid) : NULL;
}

static inline struct baas_drb *
baas_drb_find(const struct baas_drb_table *t, const struct baas_drb_key *key)
{
	const struct baas_ue *u = &t->ues[key->ue_id];
	struct baas_drb *d = baas_ue_first(u, key->lcid);
	if (d != NULL || u->others == NULL || key->lcid >= 64)
		return d;
	return u->others->by_lcid[key->lcid];
}

/* Every DRB, in (ue_id, lcid) order, until fn returns non-zero. */
int baas_drb_foreach(struct baas_drb_table *t, int (*fn)(struct baas_drb *, void *), void *arg);

/* A received AMD PDU copy: the DRB takes m (held or freed). */
void baas_drb_pdu(struct baas_lcore *lc, struct rte_mbuf *m, const struct baas_drb_key *key,
		  uint8_t sn_bits, uint32_t sn, bool poll, uint16_t attach);

/* A received, decoded STATUS PDU for key. Returns -1 when applied, else
 * the reason it was dropped (nothing changed). */
int baas_drb_status(struct baas_lcore *lc, const struct baas_drb_key *key, uint8_t sn_bits,
		    const struct baas_status *st);

/* t-PollRetransmit expired (wheel callback; arg is the lcore). */
void baas_drb_poll_expired(struct baas_wheel_node *n, void *lcore);

/* Releases every PDU of d and forgets it; returns how many it held. */
uint64_t baas_drb_flush(struct baas_lcore *lc, struct baas_drb *d);

/* The values that apply to d. */
const struct baas_config *baas_drb_config(const struct baas_lcore *lc, const struct baas_drb *d);

/* Applies a (lowered) bound: releases d's oldest PDUs above it. */
void baas_drb_apply_bound(struct baas_lcore *lc, struct baas_drb *d);

void baas_drb_info(const struct baas_drb *d, struct baas_drb_info *out);

#endif
