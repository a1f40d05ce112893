/* v1model externs that are plain functions: hash(), checksums, random(),
 * log_msg(). The CRCs are the ones bmv2 registers under the same names, so
 * STF expectations written for bmv2 hold: crc32 is CRC-32/ISO-HDLC
 * (reflected 0x04C11DB7, init and xorout 0xFFFFFFFF), crc16 is CRC-16/ARC
 * (reflected 0x8005, init 0, xorout 0); identity is the first 8 bytes as a
 * big-endian number. Inputs are the fields concatenated MSB first, padded
 * with zero bits to whole bytes. */
#include <stdarg.h>
#include <stdio.h>

#include <rte_random.h>

#include "runtime.h"
#include "options.h"

/* Slicing by 4 (tables[k][i]: byte i's CRC followed by k zero bytes): four
 * input bytes take four independent table loads instead of a chain of
 * four dependent ones (nic.p4's offload bucket, a CRC-32 of the TEID on
 * every downlink packet, took ~19 cycles a packet bytewise on AMD EPYC).
 * The results are the bytewise CRCs' to the bit. */
static uint32_t crc32_tables[4][256];
static uint16_t crc16_tables[4][256];

RTE_INIT(crc_tables_init)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c32 = i;
		uint16_t c16 = (uint16_t)i;
		for (int b = 0; b < 8; b++) {
			c32 = (c32 & 1) ? (c32 >> 1) ^ 0xEDB88320u : c32 >> 1;
			c16 = (c16 & 1) ? (uint16_t)((c16 >> 1) ^ 0xA001u)
					: (uint16_t)(c16 >> 1);
		}
		crc32_tables[0][i] = c32;
		crc16_tables[0][i] = c16;
	}
	for (int k = 1; k < 4; k++)
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c32 = crc32_tables[k - 1][i];
			uint16_t c16 = crc16_tables[k - 1][i];
			crc32_tables[k][i] =
				(c32 >> 8) ^ crc32_tables[0][c32 & 0xFF];
			crc16_tables[k][i] = (uint16_t)(
				(c16 >> 8) ^ crc16_tables[0][c16 & 0xFF]);
		}
}

static inline uint32_t
load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t
crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		c ^= load_le32(p + i);
		c = crc32_tables[3][c & 0xFF] ^
		    crc32_tables[2][(c >> 8) & 0xFF] ^
		    crc32_tables[1][(c >> 16) & 0xFF] ^
		    crc32_tables[0][c >> 24];
	}
	for (; i < n; i++)
		c = crc32_tables[0][(c ^ p[i]) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

static uint16_t
crc16(const uint8_t *p, size_t n)
{
	uint32_t c = 0;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		c ^= load_le32(p + i);
		c = (uint32_t)crc16_tables[3][c & 0xFF] ^
		    crc16_tables[2][(c >> 8) & 0xFF] ^
		    crc16_tables[1][(c >> 16) & 0xFF] ^
		    crc16_tables[0][c >> 24];
	}
	for (; i < n; i++)
		c = crc16_tables[0][(c ^ p[i]) & 0xFF] ^ (c >> 8);
	return (uint16_t)c;
}

static uint64_t
identity(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n && i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static uint16_t
xor16(const uint8_t *p, size_t n)
{
	uint16_t x = 0;
	for (size_t i = 0; i < n; i += 2)
		x ^= (uint16_t)(p[i] << 8 | (i + 1 < n ? p[i + 1] : 0));
	return x;
}

uint16_t
t4p4s_csum16(const uint8_t *data, unsigned nbits)
{
	size_t n = (nbits + 7) / 8;
	uint32_t sum = 0;
	for (size_t i = 0; i < n; i += 2)
		sum += (uint32_t)(data[i] << 8 | (i + 1 < n ? data[i + 1] : 0));
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

uint64_t
t4p4s_hash(enum t4p4s_hash_algorithm algo, const uint8_t *data,
	   unsigned nbits)
{
	size_t n = (nbits + 7) / 8;
	switch (algo) {
	case T4P4S_HASH_CRC32:
	case T4P4S_HASH_CRC32_CUSTOM:
		return crc32(data, n);
	case T4P4S_HASH_CRC16:
	case T4P4S_HASH_CRC16_CUSTOM:
		return crc16(data, n);
	case T4P4S_HASH_RANDOM:
		return rte_rand();
	case T4P4S_HASH_IDENTITY:
		return identity(data, n);
	case T4P4S_HASH_CSUM16:
		return t4p4s_csum16(data, nbits);
	case T4P4S_HASH_XOR16:
		return xor16(data, n);
	}
	return 0;
}

uint64_t
t4p4s_random(uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	uint64_t span = hi - lo + 1;
	return span == 0 ? rte_rand() : lo + rte_rand_max(span);
}

void
t4p4s_log_msg(struct t4p4s_lcore *lc, const char *fmt, ...)
{
	if (!t4p4s_rt.opts->log_msg)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("log_msg[lcore %u]: %s\n", lc->index, line);
	fflush(stdout);
}
