#include "counters_registers.h"

#include <algorithm>

#include <t4p4s/control_api.h>

#include "bytestrings.h"
#include "control_batch.h"
#include "counter_data.h"

namespace t4p4s_p4rt {

using grpc::StatusCode;
using p4::v1::Update;

// The cells [*first, *end) an entry's index selects among `size`.
static Outcome index_range(bool has_index, int64_t index, uint32_t size,
                           const char *name, uint32_t *first, uint32_t *end)
{
    if (!has_index) {
        *first = 0;
        *end = size;
        return ok();
    }
    // P4Runtime spec, "CounterEntry": an index beyond the array is
    // OUT_OF_RANGE; a negative one is no index at all, INVALID_ARGUMENT.
    if (index < 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "index " + std::to_string(index) + " of " + name +
                        " is negative");
    if (index >= (int64_t)size)
        return fail(StatusCode::OUT_OF_RANGE,
                    "index " + std::to_string(index) + " out of range for " +
                        name + " (size " + std::to_string(size) + ")");
    *first = (uint32_t)index;
    *end = (uint32_t)index + 1;
    return ok();
}

// Reads cells [i, end) with read_cell(i), which adds cell i to the
// sink: the control API is locked for as many cells as the sink's current
// message takes, and unlocked while the message is sent.
template <typename ReadCell>
static Outcome read_cells(uint32_t i, uint32_t end, EntitySink &sink,
                          ReadCell read_cell)
{
    Outcome r = sink.flush_if_full();    // the message has room from here on
    while (r.ok() && i < end) {
        uint32_t chunk_end = i + std::min<uint32_t>((uint32_t)sink.room(), end - i);
        {
            ControlBatch batch;
            for (; r.ok() && i < chunk_end; i++)
                r = read_cell(i);
        }
        if (r.ok())
            r = sink.flush_if_full();
    }
    return r;
}

static Outcome only_modify(Update::Type type)
{
    if (type != Update::MODIFY)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "counter and register cells always exist: only MODIFY "
                    "applies to them");
    return ok();
}

/* ---- indexed counters ------------------------------------------------- */

static Outcome find_counter(const ProgramIds &ids, uint32_t id, int *index)
{
    *index = ids.counter(id);
    if (*index < 0 || t4p4s_program.counters[*index].direct_table >= 0)
        return fail(StatusCode::NOT_FOUND,
                    "no indexed counter with id " + std::to_string(id));
    return ok();
}

Outcome write_counter(const ProgramIds &ids, Update::Type type,
                      const p4::v1::CounterEntry &entry)
{
    int c;
    t4p4s_counter_value value;
    uint32_t first, end;
    Outcome r = only_modify(type);
    if (r.ok())
        r = find_counter(ids, entry.counter_id(), &c);
    if (!r.ok())
        return r;
    const t4p4s_counter_desc &desc = t4p4s_program.counters[c];
    r = index_range(entry.has_index(), entry.index().index(), desc.size,
                    desc.name, &first, &end);
    if (r.ok())
        r = counter_value_from_p4rt(entry.data(), &value);
    // P4Runtime spec, "CounterEntry": "Note that the counter value is not
    // modified if this Protobuf field [data] is not set." (It was set to 0.)
    if (!entry.has_data())
        return r;
    for (uint32_t i = first; r.ok() && i < end; i++)
        r = from_errno(t4p4s_ctl_counter_write((uint16_t)c, i, &value));
    return r;
}

static Outcome read_counter(uint16_t c, const p4::v1::CounterEntry &query,
                            EntitySink &sink)
{
    const t4p4s_counter_desc &desc = t4p4s_program.counters[c];
    uint32_t first, end;
    Outcome r = index_range(query.has_index(), query.index().index(),
                            desc.size, desc.name, &first, &end);
    if (!r.ok())
        return r;
    return read_cells(first, end, sink, [&](uint32_t i) {
        t4p4s_counter_value value;
        Outcome cell = from_errno(t4p4s_ctl_counter_read(c, i, &value));
        if (!cell.ok())
            return cell;
        p4::v1::CounterEntry *e = sink.add()->mutable_counter_entry();
        e->set_counter_id(desc.id);
        e->mutable_index()->set_index(i);
        counter_value_to_p4rt(desc.type, value.packets, value.bytes,
                              e->mutable_data());
        return cell;
    });
}

Outcome read_counters(const ProgramIds &ids, const p4::v1::CounterEntry &query,
                      EntitySink &sink)
{
    if (query.counter_id() != 0) {
        int c;
        Outcome r = find_counter(ids, query.counter_id(), &c);
        return r.ok() ? read_counter((uint16_t)c, query, sink) : r;
    }
    Outcome r = ok();
    for (uint16_t c = 0; c < t4p4s_program.n_counters && r.ok(); c++)
        if (t4p4s_program.counters[c].direct_table < 0)
            r = read_counter(c, query, sink);
    return r;
}

/* ---- registers -------------------------------------------------------- */

static Outcome find_register(const ProgramIds &ids, uint32_t id, int *index)
{
    *index = ids.reg(id);
    if (*index < 0)
        return fail(StatusCode::NOT_FOUND,
                    "no register with id " + std::to_string(id));
    return ok();
}

Outcome write_register(const ProgramIds &ids, Update::Type type,
                       const p4::v1::RegisterEntry &entry)
{
    int reg;
    uint32_t first, end;
    uint64_t value;
    Outcome r = only_modify(type);
    if (r.ok())
        r = find_register(ids, entry.register_id(), &reg);
    if (!r.ok())
        return r;
    const t4p4s_register_desc &desc = t4p4s_program.registers[reg];
    if (entry.data().data_case() != p4::v1::P4Data::kBitstring)
        return fail(StatusCode::INVALID_ARGUMENT,
                    std::string(desc.name) + " holds bit<" +
                        std::to_string(desc.bitwidth) +
                        ">: its data must be a bitstring");
    r = index_range(entry.has_index(), entry.index().index(), desc.size,
                    desc.name, &first, &end);
    if (r.ok())
        r = to_u64(entry.data().bitstring(), desc.bitwidth, &value, desc.name);
    for (uint32_t i = first; r.ok() && i < end; i++)
        r = from_errno(t4p4s_ctl_register_write((uint16_t)reg, i, value));
    return r;
}

static Outcome read_register(uint16_t reg, const p4::v1::RegisterEntry &query,
                             EntitySink &sink)
{
    const t4p4s_register_desc &desc = t4p4s_program.registers[reg];
    uint32_t first, end;
    Outcome r = index_range(query.has_index(), query.index().index(),
                            desc.size, desc.name, &first, &end);
    if (!r.ok())
        return r;
    return read_cells(first, end, sink, [&](uint32_t i) {
        uint64_t value;
        Outcome cell = from_errno(t4p4s_ctl_register_read(reg, i, &value));
        if (!cell.ok())
            return cell;
        p4::v1::RegisterEntry *e = sink.add()->mutable_register_entry();
        e->set_register_id(desc.id);
        e->mutable_index()->set_index(i);
        e->mutable_data()->set_bitstring(canonical_u64(value));
        return cell;
    });
}

Outcome read_registers(const ProgramIds &ids, const p4::v1::RegisterEntry &query,
                       EntitySink &sink)
{
    if (query.register_id() != 0) {
        int reg;
        Outcome r = find_register(ids, query.register_id(), &reg);
        return r.ok() ? read_register((uint16_t)reg, query, sink) : r;
    }
    Outcome r = ok();
    for (uint16_t reg = 0; reg < t4p4s_program.n_registers && r.ok(); reg++)
        r = read_register(reg, query, sink);
    return r;
}

}  // namespace t4p4s_p4rt
