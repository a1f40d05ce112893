#include "bytestrings.h"

#include <cstring>

namespace t4p4s_p4rt {

Outcome check_fits(const std::string &in, unsigned bitwidth,
                   const std::string &what)
{
    if (in.empty())
        return fail(grpc::StatusCode::OUT_OF_RANGE, what + ": empty bytestring");
    size_t skip = 0;
    while (skip < in.size() && in[skip] == 0)
        skip++;
    size_t n = in.size() - skip;
    if (n == 0)
        return ok();
    unsigned bits = (unsigned)(n - 1) * 8 +
                    (32 - __builtin_clz((uint8_t)in[skip]));
    if (bits > bitwidth)
        return fail(grpc::StatusCode::OUT_OF_RANGE,
                    what + ": value does not fit in " +
                        std::to_string(bitwidth) + " bits");
    return ok();
}

Outcome to_field(const std::string &in, unsigned bitwidth, uint8_t *out,
                 const std::string &what)
{
    Outcome r = check_fits(in, bitwidth, what);
    if (!r.ok())
        return r;
    unsigned width = width_bytes(bitwidth);
    std::memset(out, 0, width);
    size_t n = in.size() < width ? in.size() : width;
    std::memcpy(out + width - n, in.data() + in.size() - n, n);
    return ok();
}

Outcome to_u64(const std::string &in, unsigned bitwidth, uint64_t *out,
               const std::string &what)
{
    uint8_t field[8];
    Outcome r = to_field(in, bitwidth, field, what);
    if (!r.ok())
        return r;
    uint64_t v = 0;
    for (unsigned i = 0; i < width_bytes(bitwidth); i++)
        v = v << 8 | field[i];
    *out = v;
    return ok();
}

std::string canonical(const uint8_t *data, size_t n)
{
    size_t skip = 0;
    while (skip + 1 < n && data[skip] == 0)
        skip++;
    if (n == 0)
        return std::string(1, '\0');
    return std::string(reinterpret_cast<const char *>(data + skip), n - skip);
}

std::string canonical_u64(uint64_t value)
{
    uint8_t be[8];
    for (int i = 7; i >= 0; i--, value >>= 8)
        be[i] = (uint8_t)value;
    return canonical(be, sizeof(be));
}

}  // namespace t4p4s_p4rt
