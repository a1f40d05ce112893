#include "counter_data.h"

namespace t4p4s_p4rt {

Outcome counter_value_from_p4rt(const p4::v1::CounterData &data,
                                t4p4s_counter_value *out)
{
    if (data.packet_count() < 0 || data.byte_count() < 0)
        return fail(grpc::StatusCode::INVALID_ARGUMENT,
                    "counter values cannot be negative");
    out->packets = (uint64_t)data.packet_count();
    out->bytes = (uint64_t)data.byte_count();
    return ok();
}

void counter_value_to_p4rt(t4p4s_counter_type type, uint64_t packets,
                           uint64_t bytes, p4::v1::CounterData *out)
{
    if (type != T4P4S_COUNTER_BYTES)
        out->set_packet_count((int64_t)packets);
    if (type != T4P4S_COUNTER_PACKETS)
        out->set_byte_count((int64_t)bytes);
}

}  // namespace t4p4s_p4rt
