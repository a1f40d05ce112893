/* Bit-exact access to big-endian (network order) fields in byte arrays.
 *
 * Headers live in generated code in wire format ("uint8_t b[N]"), so a field
 * read is a load + byte swap + shift/mask at a compile-time constant offset.
 * The generated code calls these with constant arguments; the compiler
 * folds the branches away. Widths up to 64 bits; wider fields are copied as
 * bytes (t4p4s_copy_bits). */
#ifndef T4P4S_BITS_H
#define T4P4S_BITS_H

#include <stdint.h>
#include <string.h>
#include <rte_byteorder.h>
#include <rte_common.h>

/* Network order through GCC's byte swaps rather than DPDK's: on x86 those
 * are asm volatile (an xchg of byte registers for 16 bits) that the
 * compiler can neither fold nor schedule. A swap is its own inverse. */
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
#define T4P4S_BE16(x) __builtin_bswap16(x)
#define T4P4S_BE32(x) __builtin_bswap32(x)
#define T4P4S_BE64(x) __builtin_bswap64(x)
#else
#define T4P4S_BE16(x) (x)
#define T4P4S_BE32(x) (x)
#define T4P4S_BE64(x) (x)
#endif

/* Loads and stores are split into naturally sized pieces (nbytes is a
 * compile-time constant in generated code, so the switch folds away). A
 * memcpy into part of a stack word followed by a full-word load would
 * defeat store-to-load forwarding and cost ~15 cycles per field. */
static __rte_always_inline uint64_t
t4p4s_load_be_piece(const uint8_t *p, unsigned nbytes)
{
	uint32_t v32;
	uint16_t v16;
	switch (nbytes) {
	case 4:
		memcpy(&v32, p, 4);
		return T4P4S_BE32(v32);
	case 2:
		memcpy(&v16, p, 2);
		return T4P4S_BE16(v16);
	default:
		return p[0];
	}
}

static __rte_always_inline uint64_t
t4p4s_load_be64(const uint8_t *p, unsigned nbytes)
{
	/* nbytes in 1..8: the first nbytes bytes as a big-endian number */
	uint64_t v64;
	switch (nbytes) {
	case 8:
		memcpy(&v64, p, 8);
		return T4P4S_BE64(v64);
	case 7:
		return t4p4s_load_be_piece(p, 4) << 24 |
		       t4p4s_load_be_piece(p + 4, 2) << 8 | p[6];
	case 6:
		return t4p4s_load_be_piece(p, 4) << 16 |
		       t4p4s_load_be_piece(p + 4, 2);
	case 5:
		return t4p4s_load_be_piece(p, 4) << 8 | p[4];
	case 4:
		return t4p4s_load_be_piece(p, 4);
	case 3:
		return t4p4s_load_be_piece(p, 2) << 8 | p[2];
	case 2:
		return t4p4s_load_be_piece(p, 2);
	default:
		return p[0];
	}
}

static __rte_always_inline void
t4p4s_store_be_piece(uint8_t *p, unsigned nbytes, uint64_t v)
{
	uint32_t v32;
	uint16_t v16;
	switch (nbytes) {
	case 4:
		v32 = T4P4S_BE32((uint32_t)v);
		memcpy(p, &v32, 4);
		break;
	case 2:
		v16 = T4P4S_BE16((uint16_t)v);
		memcpy(p, &v16, 2);
		break;
	default:
		p[0] = (uint8_t)v;
	}
}

static __rte_always_inline void
t4p4s_store_be64(uint8_t *p, unsigned nbytes, uint64_t v)
{
	uint64_t be;
	switch (nbytes) {
	case 8:
		be = T4P4S_BE64(v);
		memcpy(p, &be, 8);
		break;
	case 7:
		t4p4s_store_be_piece(p, 4, v >> 24);
		t4p4s_store_be_piece(p + 4, 2, v >> 8);
		p[6] = (uint8_t)v;
		break;
	case 6:
		t4p4s_store_be_piece(p, 4, v >> 16);
		t4p4s_store_be_piece(p + 4, 2, v);
		break;
	case 5:
		t4p4s_store_be_piece(p, 4, v >> 8);
		p[4] = (uint8_t)v;
		break;
	case 4:
		t4p4s_store_be_piece(p, 4, v);
		break;
	case 3:
		t4p4s_store_be_piece(p, 2, v >> 8);
		p[2] = (uint8_t)v;
		break;
	case 2:
		t4p4s_store_be_piece(p, 2, v);
		break;
	default:
		p[0] = (uint8_t)v;
	}
}

static __rte_always_inline uint64_t
t4p4s_mask64(unsigned width)
{
	return width >= 64 ? UINT64_MAX : ((UINT64_C(1) << width) - 1);
}

/* Field of `width` bits starting `bit_offset` bits after `p` (bit 0 is the
 * most significant bit of p[0], as P4 lays out headers). width <= 64 and
 * bit_offset % 8 + width <= 64. */
static __rte_always_inline uint64_t
t4p4s_get_bits(const uint8_t *p, unsigned bit_offset, unsigned width)
{
	const uint8_t *q = p + bit_offset / 8;
	unsigned lead = bit_offset % 8;
	unsigned nbytes = (lead + width + 7) / 8;
	uint64_t v = t4p4s_load_be64(q, nbytes);
	return (v >> (nbytes * 8 - lead - width)) & t4p4s_mask64(width);
}

static __rte_always_inline void
t4p4s_set_bits(uint8_t *p, unsigned bit_offset, unsigned width, uint64_t value)
{
	uint8_t *q = p + bit_offset / 8;
	unsigned lead = bit_offset % 8;
	unsigned nbytes = (lead + width + 7) / 8;
	unsigned shift = nbytes * 8 - lead - width;
	uint64_t mask = t4p4s_mask64(width) << shift;
	uint64_t v = t4p4s_load_be64(q, nbytes);
	v = (v & ~mask) | ((value << shift) & mask);
	t4p4s_store_be64(q, nbytes, v);
}

/* Copy `width` bits between bit positions of two byte arrays (for fields
 * wider than 64 bits and for bit-packed hash/checksum inputs). */
static inline void
t4p4s_copy_bits(uint8_t *dst, unsigned dst_bit, const uint8_t *src,
		unsigned src_bit, unsigned width)
{
	if (dst_bit % 8 == 0 && src_bit % 8 == 0 && width % 8 == 0) {
		memcpy(dst + dst_bit / 8, src + src_bit / 8, width / 8);
		return;
	}
	while (width > 0) {
		unsigned chunk = width > 56 ? 56 : width;
		t4p4s_set_bits(dst, dst_bit, chunk,
			       t4p4s_get_bits(src, src_bit, chunk));
		dst_bit += chunk;
		src_bit += chunk;
		width -= chunk;
	}
}

/* Truncate v to `width` bits (P4's wrap-around for bit<W>). */
static __rte_always_inline uint64_t
t4p4s_wrap(uint64_t v, unsigned width)
{
	return v & t4p4s_mask64(width);
}

/* Sign-extend a `width`-bit two's complement value (int<W>). */
static __rte_always_inline int64_t
t4p4s_sext(uint64_t v, unsigned width)
{
	if (width >= 64)
		return (int64_t)v;
	uint64_t m = UINT64_C(1) << (width - 1);
	v &= t4p4s_mask64(width);
	return (int64_t)((v ^ m) - m);
}

#endif
