/* A retransmission: the held frame copied into an mbuf of the BaaS's own
 * pool, byte for byte, with only the poll bit set as TS 38.322 5.3.3.2
 * says. The held frame itself is never written: in ring mode it is the
 * target's mbuf, which its radio port may still be sending (a shared
 * clone), and a copy costs little at the retransmission rate. */
#include "baas.h"
#include "frame.h"

bool
baas_retx_send(struct baas_lcore *lc, uint16_t attach, const struct rte_mbuf *m, bool poll)
{
	struct baas_attachment *a = &lc->attach[attach];
	struct rte_mbuf *copy = rte_pktmbuf_copy(m, baas.pool, 0, UINT32_MAX);
	if (copy == NULL) {
		lc->totals.dropped[BAAS_DROP_NO_MEMORY]++;
		return false;
	}
	uint8_t *rlc = rte_pktmbuf_mtod_offset(copy, uint8_t *, BAAS_RLC_OFFSET);
	if (poll)
		*rlc |= BAAS_RLC_POLL;
	else
		*rlc &= (uint8_t)~BAAS_RLC_POLL;
	if (a->ring_out != NULL) {
		if (rte_ring_enqueue(a->ring_out, copy) != 0) {
			rte_pktmbuf_free(copy);
			a->tx_dropped++;
			lc->totals.dropped[BAAS_DROP_TX_FULL]++;
			return false;
		}
		return true;
	}
	/* the buffer's error callback counts what the port refuses */
	rte_eth_tx_buffer(a->port, lc->txq, a->tx, copy);
	return true;
}
