// P4Runtime binary strings (spec "Bytestrings"): big-endian, any length on
// input as long as the value fits the P4Info bitwidth (else OUT_OF_RANGE,
// as is an empty string); the shortest form on output.
#ifndef T4P4S_P4RT_BYTESTRINGS_H
#define T4P4S_P4RT_BYTESTRINGS_H

#include <cstdint>
#include <string>

#include "status.h"

namespace t4p4s_p4rt {

inline unsigned width_bytes(unsigned bitwidth) { return (bitwidth + 7) / 8; }

// Checks that `in` fits `bitwidth` bits; `what` names it in the error.
Outcome check_fits(const std::string &in, unsigned bitwidth,
                   const std::string &what);

// check_fits(), then the value right-aligned into width_bytes(bitwidth)
// bytes at `out`.
Outcome to_field(const std::string &in, unsigned bitwidth, uint8_t *out,
                 const std::string &what);

// The value as an integer (bitwidth <= 64).
Outcome to_u64(const std::string &in, unsigned bitwidth, uint64_t *out,
               const std::string &what);

// The canonical (shortest, at least one byte) form of n big-endian bytes.
std::string canonical(const uint8_t *data, size_t n);
std::string canonical_u64(uint64_t value);

}  // namespace t4p4s_p4rt

#endif
