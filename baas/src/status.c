#include <baas/api.h>

#include "status.h"

/* The optional parts of one NACK (E2: SOstart and SOend; E3: NACK range),
 * which follow its SN octets alike for both SN lengths. */
static int
nack_extras(const uint8_t *p, uint32_t len, uint32_t *at, bool e2, bool e3,
	    struct baas_nack *nk)
{
	nk->has_so = e2;
	nk->range = 1;
	if (e2) {
		if (*at + 4 > len)
			return BAAS_DROP_STATUS_TRUNCATED;
		nk->so_start = (uint16_t)(p[*at] << 8 | p[*at + 1]);
		nk->so_end = (uint16_t)(p[*at + 2] << 8 | p[*at + 3]);
		*at += 4;
	}
	if (e3) {
		if (*at + 1 > len)
			return BAAS_DROP_STATUS_TRUNCATED;
		nk->range = p[*at];
		*at += 1;
		if (nk->range == 0)   /* 6.2.3.18 counts SDUs from NACK_SN on: at least 1 */
			return BAAS_DROP_STATUS_NACK_ORDER;
	}
	/* with a NACK range, SOstart belongs to its first SDU and SOend to its
	 * last: only a single SDU's bytes can be out of order */
	if (e2 && nk->range == 1 && nk->so_end != BAAS_SO_END_OF_SDU &&
	    nk->so_start > nk->so_end)
		return BAAS_DROP_STATUS_SO;
	return -1;
}

int
baas_status_decode(const uint8_t *p, uint32_t len, unsigned sn_bits,
		   struct baas_status *out)
{
	/* D/C (0 here), CPT (3 bits), ACK_SN, E1, R: 3 octets either way */
	if (len < 3)
		return BAAS_DROP_STATUS_TRUNCATED;
	if ((p[0] >> 4) & 0x7)
		return BAAS_DROP_STATUS_CPT;
	bool e1;
	if (sn_bits == 12) {
		out->ack_sn = (uint32_t)(p[0] & 0x0F) << 8 | p[1];
		e1 = p[2] & 0x80;
	} else {
		out->ack_sn = (uint32_t)(p[0] & 0x0F) << 14 | (uint32_t)p[1] << 6 | p[2] >> 2;
		e1 = p[2] & 0x02;
	}
	uint32_t at = 3;
	out->n_nacks = 0;
	while (e1) {
		if (out->n_nacks == BAAS_STATUS_MAX_NACKS)
			return BAAS_DROP_STATUS_TOO_MANY;
		struct baas_nack *nk = &out->nacks[out->n_nacks++];
		bool e2, e3;
		if (sn_bits == 12) {
			if (at + 2 > len)
				return BAAS_DROP_STATUS_TRUNCATED;
			nk->sn = (uint32_t)p[at] << 4 | p[at + 1] >> 4;
			e1 = p[at + 1] & 0x08;
			e2 = p[at + 1] & 0x04;
			e3 = p[at + 1] & 0x02;
			at += 2;
		} else {
			if (at + 3 > len)
				return BAAS_DROP_STATUS_TRUNCATED;
			nk->sn = (uint32_t)p[at] << 10 | (uint32_t)p[at + 1] << 2 | p[at + 2] >> 6;
			e1 = p[at + 2] & 0x20;
			e2 = p[at + 2] & 0x10;
			e3 = p[at + 2] & 0x08;
			at += 3;
		}
		int reason = nack_extras(p, len, &at, e2, e3, nk);
		if (reason >= 0)
			return reason;
	}
	return -1;
}
