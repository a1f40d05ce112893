#include "table_match.h"

#include <algorithm>
#include <cstring>

#include "bytestrings.h"

namespace t4p4s_p4rt {

using grpc::StatusCode;

// Bits of the first byte a field of `bitwidth` bits may use.
static uint8_t top_mask(unsigned bitwidth)
{
    return (uint8_t)(0xFFu >> (width_bytes(bitwidth) * 8 - bitwidth));
}

static void set_all_ones(uint8_t *p, unsigned bitwidth)
{
    unsigned n = width_bytes(bitwidth);
    std::memset(p, 0xFF, n);
    if (n > 0)
        p[0] = top_mask(bitwidth);
}

static bool is_zero(const uint8_t *p, unsigned n)
{
    return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

static bool is_all_ones(const uint8_t *p, unsigned bitwidth)
{
    unsigned n = width_bytes(bitwidth);
    if (n == 0)
        return true;
    return p[0] == top_mask(bitwidth) &&
           std::all_of(p + 1, p + n, [](uint8_t b) { return b == 0xFF; });
}

static void set_prefix(uint8_t *mask, unsigned bitwidth, unsigned prefix_len)
{
    unsigned n = width_bytes(bitwidth);
    std::memset(mask, 0, n);
    for (unsigned i = 0; i < prefix_len; i++) {
        unsigned pos = n * 8 - bitwidth + i;
        mask[pos / 8] |= (uint8_t)(0x80u >> (pos % 8));
    }
}

static const char *kind_name(t4p4s_match_kind k)
{
    switch (k) {
    case T4P4S_MATCH_EXACT: return "exact";
    case T4P4S_MATCH_LPM: return "lpm";
    case T4P4S_MATCH_TERNARY: return "ternary";
    case T4P4S_MATCH_RANGE: return "range";
    case T4P4S_MATCH_OPTIONAL: return "optional";
    }
    return "?";
}

static bool kind_matches(t4p4s_match_kind k, const p4::v1::FieldMatch &m)
{
    using F = p4::v1::FieldMatch;
    switch (m.field_match_type_case()) {
    case F::kExact: return k == T4P4S_MATCH_EXACT;
    case F::kLpm: return k == T4P4S_MATCH_LPM;
    case F::kTernary: return k == T4P4S_MATCH_TERNARY;
    case F::kRange: return k == T4P4S_MATCH_RANGE;
    case F::kOptional: return k == T4P4S_MATCH_OPTIONAL;
    default: return false;
    }
}

Outcome MatchBuffer::parse_field(const t4p4s_key_field_desc &f,
                                 const p4::v1::FieldMatch &m)
{
    std::string name = std::string("match field ") + f.name;
    if (!kind_matches(f.match_kind, m))
        return fail(StatusCode::INVALID_ARGUMENT,
                    name + " is " + kind_name(f.match_kind) +
                        ": the FieldMatch must be of that kind");
    unsigned n = width_bytes(f.bitwidth);
    uint8_t *value = value_.data() + f.offset;
    uint8_t *mask = mask_.data() + f.offset;
    Outcome r;
    switch (f.match_kind) {
    case T4P4S_MATCH_EXACT:
        return to_field(m.exact().value(), f.bitwidth, value, name);
    case T4P4S_MATCH_OPTIONAL:
        set_all_ones(mask, f.bitwidth);
        return to_field(m.optional().value(), f.bitwidth, value, name);
    case T4P4S_MATCH_TERNARY:
        r = to_field(m.ternary().value(), f.bitwidth, value, name);
        if (r.ok())
            r = to_field(m.ternary().mask(), f.bitwidth, mask, name + " mask");
        if (!r.ok())
            return r;
        if (is_zero(mask, n))
            return fail(StatusCode::INVALID_ARGUMENT,
                        name + ": a \"don't care\" ternary match must be omitted");
        for (unsigned i = 0; i < n; i++)
            if (value[i] & ~mask[i])
                return fail(StatusCode::INVALID_ARGUMENT,
                            name + ": value has bits outside the mask");
        return ok();
    case T4P4S_MATCH_LPM: {
        int32_t len = m.lpm().prefix_len();
        if (len == 0)
            return fail(StatusCode::INVALID_ARGUMENT,
                        name + ": a \"don't care\" lpm match (prefix 0) must be omitted");
        if (len < 0 || (unsigned)len > f.bitwidth)
            return fail(StatusCode::INVALID_ARGUMENT,
                        name + ": prefix length " + std::to_string(len) +
                            " not in 1.." + std::to_string(f.bitwidth));
        r = to_field(m.lpm().value(), f.bitwidth, value, name);
        if (!r.ok())
            return r;
        set_prefix(mask, f.bitwidth, (unsigned)len);
        for (unsigned i = 0; i < n; i++)
            if (value[i] & ~mask[i])
                return fail(StatusCode::INVALID_ARGUMENT,
                            name + ": value has bits set beyond the prefix length");
        return ok();
    }
    case T4P4S_MATCH_RANGE:
        r = to_field(m.range().low(), f.bitwidth, value, name + " low");
        if (r.ok())
            r = to_field(m.range().high(), f.bitwidth, mask, name + " high");
        if (!r.ok())
            return r;
        if (std::memcmp(value, mask, n) > 0)
            return fail(StatusCode::INVALID_ARGUMENT, name + ": low > high");
        if (is_zero(value, n) && is_all_ones(mask, f.bitwidth))
            return fail(StatusCode::INVALID_ARGUMENT,
                        name + ": a \"don't care\" range must be omitted");
        return ok();
    }
    return fail(StatusCode::INTERNAL, name + ": unknown match kind");
}

Outcome MatchBuffer::parse(const t4p4s_table_desc &table,
                           const p4::v1::TableEntry &entry)
{
    value_.assign(table.key_size ? table.key_size : 1, 0);
    mask_.assign(value_.size(), 0);
    priority_ = entry.priority();
    // omitted fields: wildcards (a range's wildcard is 0..max)
    for (unsigned k = 0; k < table.n_keys; k++)
        if (table.keys[k].match_kind == T4P4S_MATCH_RANGE)
            set_all_ones(mask_.data() + table.keys[k].offset,
                         table.keys[k].bitwidth);
    std::vector<bool> seen(table.n_keys);
    for (const p4::v1::FieldMatch &m : entry.match()) {
        unsigned k = 0;
        while (k < table.n_keys && table.keys[k].id != m.field_id())
            k++;
        if (k == table.n_keys)
            return fail(StatusCode::INVALID_ARGUMENT,
                        "table " + std::string(table.name) +
                            " has no match field with id " +
                            std::to_string(m.field_id()));
        if (seen[k])
            return fail(StatusCode::INVALID_ARGUMENT,
                        std::string("match field ") + table.keys[k].name +
                            " given twice");
        seen[k] = true;
        Outcome r = parse_field(table.keys[k], m);
        if (!r.ok())
            return r;
    }
    for (unsigned k = 0; k < table.n_keys; k++)
        if (table.keys[k].match_kind == T4P4S_MATCH_EXACT &&
            !seen[k])
            return fail(StatusCode::INVALID_ARGUMENT,
                        std::string("exact match field ") + table.keys[k].name +
                            " is missing");
    return ok();
}

static unsigned prefix_length(const uint8_t *mask, unsigned n)
{
    unsigned len = 0;
    for (unsigned i = 0; i < n; i++)
        len += (unsigned)__builtin_popcount(mask[i]);
    return len;
}

void match_to_p4rt(const t4p4s_table_desc &table,
                   const t4p4s_entry_view &view, p4::v1::TableEntry *entry)
{
    for (unsigned k = 0; k < table.n_keys; k++) {
        const t4p4s_key_field_desc &f = table.keys[k];
        unsigned n = width_bytes(f.bitwidth);
        const uint8_t *value = view.value + f.offset;
        const uint8_t *mask = view.mask + f.offset;
        bool dont_care = false;
        switch (f.match_kind) {
        case T4P4S_MATCH_EXACT:
            break;
        case T4P4S_MATCH_TERNARY:
        case T4P4S_MATCH_OPTIONAL:
        case T4P4S_MATCH_LPM:
            dont_care = is_zero(mask, n);
            break;
        case T4P4S_MATCH_RANGE:
            dont_care = is_zero(value, n) && is_all_ones(mask, f.bitwidth);
            break;
        }
        if (dont_care)
            continue;
        p4::v1::FieldMatch *m = entry->add_match();
        m->set_field_id(f.id);
        switch (f.match_kind) {
        case T4P4S_MATCH_EXACT:
            m->mutable_exact()->set_value(canonical(value, n));
            break;
        case T4P4S_MATCH_OPTIONAL:
            m->mutable_optional()->set_value(canonical(value, n));
            break;
        case T4P4S_MATCH_TERNARY:
            m->mutable_ternary()->set_value(canonical(value, n));
            m->mutable_ternary()->set_mask(canonical(mask, n));
            break;
        case T4P4S_MATCH_LPM:
            m->mutable_lpm()->set_value(canonical(value, n));
            m->mutable_lpm()->set_prefix_len((int32_t)prefix_length(mask, n));
            break;
        case T4P4S_MATCH_RANGE:
            m->mutable_range()->set_low(canonical(value, n));
            m->mutable_range()->set_high(canonical(mask, n));
            break;
        }
    }
    entry->set_priority(view.priority);
}

}  // namespace t4p4s_p4rt
