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
 * drop reason. */
int baas_frame_parse(const struct rte_mbuf *m, struct baas_frame *f);

/* A STATUS frame's RLC bytes: in m, or copied into buf when they span
 * mbuf segments. */
static inline const uint8_t *
baas_frame_status_bytes(const struct rte_mbuf *m, const struct baas_frame *f,
			uint8_t buf[BAAS_MAX_STATUS_BYTES])
{
	return rte_pktmbuf_read(m, BAAS_RLC_OFFSET, f->rlc_len, buf);
}

#endif
