/* What the BaaS receives (docs/wire-format.md): a bearer frame, Ethernet
 * (EtherType 0x88B5), the 4-byte bearer shim, then an RLC AM PDU: a copy
 * of a downlink AMD PDU exactly as the pipeline sent it to the radio, or
 * an uplink STATUS PDU. Fixed offsets; nothing here keeps state. */
#ifndef BAAS_FRAME_H
#define BAAS_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include <baas/api.h>

#define BAAS_ETHERTYPE_BEARER 0x88B5
#define BAAS_SHIM_OFFSET 14
#define BAAS_RLC_OFFSET 18          /* Ethernet 14 + shim 4 */
#define BAAS_SHIM_RLC_AM 0x01
#define BAAS_SHIM_RLC_SN18 0x02
#define BAAS_SHIM_PDCP_SN18 0x04
#define BAAS_RLC_DC_DATA 0x80       /* first RLC octet: D/C */
#define BAAS_RLC_POLL 0x40          /* first RLC octet of an AMD PDU: P (TS 38.322 6.2.3.7) */
#define BAAS_MAX_STATUS_BYTES 2048  /* a STATUS PDU is read into a buffer of this size */

enum baas_frame_kind { BAAS_FRAME_AMD, BAAS_FRAME_STATUS };

struct baas_frame {
	enum baas_frame_kind kind;
	struct baas_drb_key key;
	uint8_t sn_bits;            /* 12 or 18 (shim flag) */
	uint32_t sn;                /* AMD */
	bool poll;                  /* AMD */
	uint32_t rlc_len;           /* STATUS: its bytes from BAAS_RLC_OFFSET on */
};

/* The UE and LCID a frame names if it is a bearer frame, before
 * baas_frame_parse checks that it is: for prefetching only (whatever the
 * bytes, they index the UE table). */
static inline struct baas_drb_key
baas_frame_peek_key(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	if (rte_pktmbuf_data_len(m) < BAAS_RLC_OFFSET)
		return (struct baas_drb_key){ 0, 0 };
	return (struct baas_drb_key){ (uint16_t)(p[BAAS_SHIM_OFFSET] << 8 | p[BAAS_SHIM_OFFSET + 1]),
				      p[BAAS_SHIM_OFFSET + 2] };
}

/* Classifies m. Returns -1 for a frame to act on (*f filled), else the
 * drop reason. Inline: the lcore loop calls it for every frame. */
static inline int
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

/* A STATUS frame's RLC bytes: in m, or copied into buf when they span
 * mbuf segments. */
static inline const uint8_t *
baas_frame_status_bytes(const struct rte_mbuf *m, const struct baas_frame *f,
			uint8_t buf[BAAS_MAX_STATUS_BYTES])
{
	return rte_pktmbuf_read(m, BAAS_RLC_OFFSET, f->rlc_len, buf);
}

#endif
