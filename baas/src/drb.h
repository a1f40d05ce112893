/* Per-DRB transmit-side state of RLC AM (TS 38.322 7.1) for the PDUs the
 * pipeline sent: the copies held until acknowledged, keyed by SN.
 *
 * The held PDUs sit in a ring of slots indexed by SN modulo its capacity
 * (a power of two, grown on demand up to the DRB's bound, at most
 * AM_Window_Size): an insert, an acknowledgement and a NACK lookup each
 * cost O(1), with no hashing and no per-PDU allocation. A slot is 16
 * bytes, so a DRB's ring lives in a few cache lines per 4 SNs.
 *
 * DRBs are found by (ue_id, lcid) in two levels: 65,536 UE pointers, then
 * 64 LCIDs per UE seen (NR's LCID has 6 bits).
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
#include <stdint.h>

#include <rte_mbuf.h>

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

struct baas_drb {
	struct baas_drb_key key;
	uint8_t sn_bits;
	uint16_t attach;              /* where its copies arrive and its retransmissions leave */
	uint32_t sn_mask;             /* 2^sn_bits - 1 */
	uint32_t window;              /* AM_Window_Size, TS 38.322 7.2 */
	uint32_t tx_next_ack;
	uint32_t tx_next;             /* highest SN received + 1 */
	uint32_t buf_base;            /* lowest SN it can still hold (>= tx_next_ack) */
	uint32_t poll_sn;
	uint32_t cap;                 /* slots, a power of two */
	struct baas_slot *slots;
	uint32_t held;
	uint64_t held_bytes;
	bool own_config;
	struct baas_config config;    /* its own values when own_config */
	struct baas_wheel_node poll_timer;   /* t-PollRetransmit, TS 38.322 7.3 */
	uint64_t overflow_event_ms;   /* the last OVERFLOW event (one per 100 ms at most) */
	uint32_t overflow_pending;    /* PDUs released since */
	struct baas_counters c;
};

struct baas_ue_drbs {
	struct baas_drb *by_lcid[64];
};

struct baas_drb_table {
	struct baas_ue_drbs **ues;    /* 65,536, by ue_id */
	uint32_t n_drbs;
	uint64_t held;                /* PDUs held by this lcore's DRBs */
	uint64_t held_bytes;
	uint64_t max_held;            /* this lcore's share of the global bound */
};

int baas_drb_table_init(struct baas_drb_table *t, uint64_t max_held);
void baas_drb_table_free(struct baas_lcore *lc);

static inline struct baas_drb *
baas_drb_find(const struct baas_drb_table *t, const struct baas_drb_key *key)
{
	const struct baas_ue_drbs *u = t->ues[key->ue_id];
	return u == NULL || key->lcid >= 64 ? NULL : u->by_lcid[key->lcid];
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
