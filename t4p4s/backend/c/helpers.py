"""Small C helpers every generated program carries (static inline, so
unused ones cost nothing).  They keep P4's total semantics where C has
undefined behaviour: shifts by >= 64, division by zero, out-of-range stack
indices."""

HELPERS_C = r"""
/* P4 wrap-around shift: shifting by the width or more gives 0. */
static __rte_always_inline uint64_t
p4_shl(uint64_t v, uint64_t n, unsigned width)
{
	return n >= width ? 0 : t4p4s_wrap(v << n, width);
}

static __rte_always_inline uint64_t
p4_shr(uint64_t v, uint64_t n, unsigned width)
{
	return n >= width ? 0 : v >> n;
}

/* Arithmetic shift of a signed int<width> value. */
static __rte_always_inline uint64_t
p4_sshr(uint64_t v, uint64_t n, unsigned width)
{
	int64_t s = t4p4s_sext(v, width);
	return t4p4s_wrap((uint64_t)(s >> (n >= 63 ? 63 : n)), width);
}

/* Division by zero is a P4 program error; the target must not crash. */
static __rte_always_inline uint64_t
p4_div(uint64_t a, uint64_t b)
{
	return b ? a / b : 0;
}

static __rte_always_inline uint64_t
p4_mod(uint64_t a, uint64_t b)
{
	return b ? a % b : 0;
}

static __rte_always_inline uint64_t
p4_add_sat(uint64_t a, uint64_t b, unsigned width)
{
	uint64_t r = a + b;
	uint64_t max = t4p4s_mask64(width);
	return (r > max || r < a) ? max : r;
}

static __rte_always_inline uint64_t
p4_sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static __rte_always_inline uint64_t
p4_sadd_sat(uint64_t a, uint64_t b, unsigned width)
{
	int64_t max = (int64_t)(t4p4s_mask64(width) >> 1), min = -max - 1;
	int64_t r;
	if (__builtin_add_overflow(t4p4s_sext(a, width), t4p4s_sext(b, width), &r))
		r = t4p4s_sext(a, width) < 0 ? min : max;
	r = r > max ? max : r < min ? min : r;
	return t4p4s_wrap((uint64_t)r, width);
}

static __rte_always_inline uint64_t
p4_ssub_sat(uint64_t a, uint64_t b, unsigned width)
{
	int64_t max = (int64_t)(t4p4s_mask64(width) >> 1), min = -max - 1;
	int64_t r;
	if (__builtin_sub_overflow(t4p4s_sext(a, width), t4p4s_sext(b, width), &r))
		r = t4p4s_sext(a, width) < 0 ? min : max;
	r = r > max ? max : r < min ? min : r;
	return t4p4s_wrap((uint64_t)r, width);
}

/* Equality of two bit strings of `width` bits (any alignment, any width). */
static inline bool
p4_bits_equal(const uint8_t *a, unsigned a_bit, const uint8_t *b,
	      unsigned b_bit, unsigned width)
{
	while (width > 0) {
		unsigned chunk = width > 56 ? 56 : width;
		if (t4p4s_get_bits(a, a_bit, chunk) != t4p4s_get_bits(b, b_bit, chunk))
			return false;
		a_bit += chunk;
		b_bit += chunk;
		width -= chunk;
	}
	return true;
}

/* A run-time header stack index: out-of-range reads and writes use the
 * last element instead of memory outside the stack. */
static __rte_always_inline uint32_t
p4_stack_index(uint64_t i, uint32_t size)
{
	return i < size ? (uint32_t)i : size - 1;
}

/* memmove for a constant `size` (header copies, headers moving over their
 * own bytes), where memmove itself is a call into libc: the first and the
 * last `width` bytes, which together cover all, are read into registers
 * before either is written.  Bytes read back from a buffer on the stack
 * would be slower still: a load spanning two of its stores is not
 * forwarded. */
static __rte_always_inline void
p4_move_bytes(uint8_t *to, const uint8_t *from, uint32_t size)
{
	if (size > 32) {
		memmove(to, from, size);
		return;
	}
	uint32_t width = size > 16 ? 16 : size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : size;
	unsigned __int128 first, last;
	memcpy(&first, from, width);
	memcpy(&last, from + size - width, width);
	memcpy(to, &first, width);
	memcpy(to + size - width, &last, width);
}

/* The general deparser case (deparser_X_move): some emitted header is not at
 * its final address, or the emitted headers are longer or shorter than the
 * parsed ones.  For each emit site that emitted a header, in emit order
 * (`p`: where that header's bytes are, in the packet or its scratch bytes):
 * headers in the packet but out of place first move to their scratch bytes
 * (p4_deparse_to_scratch), so that no copy overwrites another header's
 * source; the header region grows or shrinks at the front of the mbuf
 * (p4_deparse_resize); then every header not in place is copied there
 * (p4_deparse_to_place).  Parsed bytes that no emitted header covers
 * disappear.  `size` is a constant at every call, so each copy compiles to
 * a few moves. */
static __rte_always_inline uint8_t *
p4_deparse_to_scratch(uint8_t **p, uint8_t *scratch, uint8_t *at, uint32_t size)
{
	if (*p != at && *p != scratch) {
		memcpy(scratch, *p, size);
		*p = scratch;
	}
	return at + size;
}

static inline bool
p4_deparse_resize(struct rte_mbuf *m, uint32_t payload_offset, uint32_t len)
{
	if (len > payload_offset)
		return rte_pktmbuf_prepend(m, (uint16_t)(len - payload_offset)) != NULL;
	if (len < payload_offset)
		return rte_pktmbuf_adj(m, (uint16_t)(payload_offset - len)) != NULL;
	return true;
}

/* A header may overlap its own destination (p4_move_bytes). */
static __rte_always_inline uint8_t *
p4_deparse_to_place(uint8_t **p, uint8_t *at, uint32_t size)
{
	if (*p != at) {
		p4_move_bytes(at, *p, size);
		*p = at;
	}
	return at + size;
}

/* The one-pass case of a deparser without branches (deparser_X): when every
 * emitted header that is in the packet moves towards the payload (or stays),
 * copying the headers last to first never overwrites bytes still to be
 * copied; when every one moves away from it, first to last does the same.
 * p4_deparse_note records, per emitted header, `shift` = its offset now
 * minus its offset among the emitted headers; the headers move towards the
 * payload iff the largest shift is at most the new start of the header
 * region (`parsed - len`), away from it iff the smallest is at least that. */
static __rte_always_inline void
p4_deparse_note(const uint8_t *start, uint32_t parsed, const uint8_t *p, uint32_t before,
		bool *in_place, int64_t *most, int64_t *least)
{
	uint64_t offset = (uint64_t)((uintptr_t)p - (uintptr_t)start);
	*in_place &= offset == before;
	if (offset < parsed) {      /* in the packet, not in its scratch bytes */
		int64_t shift = (int64_t)offset - (int64_t)before;
		*most = RTE_MAX(*most, shift);
		*least = RTE_MIN(*least, shift);
	}
}

static __rte_always_inline uint8_t *
p4_deparse_to_place_before(uint8_t **p, uint8_t *end, uint32_t size)
{
	p4_deparse_to_place(p, end - size, size);
	return end - size;
}
"""
