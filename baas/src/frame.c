#include <rte_byteorder.h>

#include "frame.h"

int
baas_frame_parse(const struct rte_mbuf *m, struct baas_frame *f)
{
	uint8_t hdr[BAAS_RLC_OFFSET + 3];
	uint32_t len = rte_pktmbuf_pkt_len(m);
	if (len < BAAS_RLC_OFFSET)
		return BAAS_DROP_NOT_BEARER;
	uint32_t n = len < sizeof(hdr) ? len : sizeof(hdr);
	const uint8_t *p = rte_pktmbuf_read(m, 0, n, hdr);
	if (((uint16_t)p[12] << 8 | p[13]) != BAAS_ETHERTYPE_BEARER)
		return BAAS_DROP_NOT_BEARER;
	uint8_t flags = p[BAAS_SHIM_OFFSET + 3];
	if (flags & ~(BAAS_SHIM_RLC_AM | BAAS_SHIM_RLC_SN18 | BAAS_SHIM_PDCP_SN18))
		return BAAS_DROP_BAD_SHIM_FLAGS;
	if (!(flags & BAAS_SHIM_RLC_AM))
		return BAAS_DROP_NOT_AM;
	f->key.ue_id = (uint16_t)(p[BAAS_SHIM_OFFSET] << 8 | p[BAAS_SHIM_OFFSET + 1]);
	f->key.lcid = p[BAAS_SHIM_OFFSET + 2];
	if (f->key.lcid >= 64)
		return BAAS_DROP_BAD_LCID;
	f->sn_bits = (flags & BAAS_SHIM_RLC_SN18) ? 18 : 12;
	if (len == BAAS_RLC_OFFSET)
		return BAAS_DROP_TRUNCATED;
	const uint8_t *rlc = p + BAAS_RLC_OFFSET;
	if (rlc[0] & BAAS_RLC_DC_DATA) {
		/* AMD PDU, 6.2.2.4: D/C P SI(2) then the SN; SI 00 only */
		uint32_t hlen = f->sn_bits == 12 ? 2 : 3;
		if (len < BAAS_RLC_OFFSET + hlen)
			return BAAS_DROP_TRUNCATED;
		if ((rlc[0] >> 4) & 0x3)
			return BAAS_DROP_SEGMENT;
		f->kind = BAAS_FRAME_AMD;
		f->poll = rlc[0] & BAAS_RLC_POLL;
		f->sn = f->sn_bits == 12
			? (uint32_t)(rlc[0] & 0x0F) << 8 | rlc[1]
			: (uint32_t)(rlc[0] & 0x03) << 16 | (uint32_t)rlc[1] << 8 | rlc[2];
		return -1;
	}
	/* a control PDU: the whole of it, up to the buffer's size (a longer
	 * one would be a STATUS of over 250 NACKs: its tail is cut and the
	 * decoder sees it truncated) */
	f->kind = BAAS_FRAME_STATUS;
	f->rlc_len = len - BAAS_RLC_OFFSET;
	if (f->rlc_len > BAAS_MAX_STATUS_BYTES)
		f->rlc_len = BAAS_MAX_STATUS_BYTES;
	return -1;
}
