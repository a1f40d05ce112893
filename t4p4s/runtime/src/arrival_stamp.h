/* A frame's arrival time (TSC) in an mbuf dynamic field, with a dynamic
 * flag saying it is set: the offered-load source (rx_replay.c) stamps the
 * frames it delivers, the latency histograms (latency.c) read the stamp
 * when the frame leaves. The flag lives in ol_flags, which every mbuf
 * allocation clears, so a recycled mbuf never shows an old stamp.
 *
 * Self-contained (DPDK only): the buffering service links it too. */
#ifndef T4P4S_ARRIVAL_STAMP_H
#define T4P4S_ARRIVAL_STAMP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

extern int t4p4s_arrival_offset;       /* of the dynamic field, -1 before registration */
extern uint64_t t4p4s_arrival_flag;    /* the dynamic flag's ol_flags bit */

/* Registers the field and the flag (idempotent); -1 after printing why. */
int t4p4s_arrival_stamp_register(void);

static inline void
t4p4s_arrival_set(struct rte_mbuf *m, uint64_t tsc)
{
	*RTE_MBUF_DYNFIELD(m, t4p4s_arrival_offset, uint64_t *) = tsc;
	m->ol_flags |= t4p4s_arrival_flag;
}

static inline bool
t4p4s_arrival_get(const struct rte_mbuf *m, uint64_t *tsc)
{
	if (!(m->ol_flags & t4p4s_arrival_flag))
		return false;
	*tsc = *RTE_MBUF_DYNFIELD(m, t4p4s_arrival_offset, const uint64_t *);
	return true;
}

/* The stamp as it travels inside a frame, across processes (the hybrid
 * topology: a frame the NIC process received leaves it over a VF, comes
 * back from a host process and is sent to the radio by the NIC in a
 * fresh mbuf): the last 16 octets of the frame, which the gNB carries
 * unchanged as the end of the inner payload (docs/wire-format.md). Little
 * endian, as the machine's own TSC. */
struct t4p4s_payload_stamp {
	uint64_t tsc;         /* arrival at the source */
	uint32_t seq;         /* the arrival's number in its stream, lost ones included */
	uint16_t stream;      /* the source's port << 8 | rx queue */
	uint16_t magic;       /* T4P4S_PAYLOAD_STAMP_MAGIC */
} __attribute__((packed));

#define T4P4S_PAYLOAD_STAMP_MAGIC 0x5434      /* "4T" in memory */

/* A copy made by hand (not rte_pktmbuf_copy, which copies both) arrived
 * when its original did. */
static inline void
t4p4s_arrival_copy(struct rte_mbuf *to, const struct rte_mbuf *from)
{
	uint64_t tsc;
	if (t4p4s_arrival_get(from, &tsc))
		t4p4s_arrival_set(to, tsc);
}

#endif
