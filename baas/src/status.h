/* The RLC STATUS PDU, TS 38.322 6.2.2.5, 12- and 18-bit SNs: decoded and
 * checked for what its bytes alone can say (the DRB's state checks the
 * rest, drb.c). A PDU that fails is dropped whole and counted by reason,
 * never acted on in part. */
#ifndef BAAS_STATUS_H
#define BAAS_STATUS_H

#include <stdbool.h>
#include <stdint.h>

/* 2 octets is the smallest NACK (12-bit SN): a 1500-byte STATUS holds
 * fewer than 750 */
#define BAAS_STATUS_MAX_NACKS 1024
#define BAAS_SO_END_OF_SDU 0xFFFF     /* SOend: up to the SDU's last byte (6.2.3.16) */

struct baas_nack {
	uint32_t sn;
	uint16_t range;               /* SDUs from sn on: 1 without a NACK range (E3 = 0) */
	bool has_so;                  /* E2: SOstart/SOend follow */
	uint16_t so_start, so_end;
};

struct baas_status {
	uint32_t ack_sn;
	unsigned n_nacks;
	struct baas_nack nacks[BAAS_STATUS_MAX_NACKS];
};

/* Returns -1 when p[0..len) is a well-formed STATUS PDU (trailing bytes,
 * e.g. Ethernet padding, are ignored), else the drop reason. */
int baas_status_decode(const uint8_t *p, uint32_t len, unsigned sn_bits,
		       struct baas_status *out);

#endif
