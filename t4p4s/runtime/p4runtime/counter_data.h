// p4.v1.CounterData <-> struct t4p4s_counter_value, per counter unit.
#ifndef T4P4S_P4RT_COUNTER_DATA_H
#define T4P4S_P4RT_COUNTER_DATA_H

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

#include "p4/v1/p4runtime.pb.h"
#include "status.h"

namespace t4p4s_p4rt {

Outcome counter_value_from_p4rt(const p4::v1::CounterData &data,
                                t4p4s_counter_value *out);

// Only the counts the counter's unit keeps.
void counter_value_to_p4rt(t4p4s_counter_type type, uint64_t packets,
                           uint64_t bytes, p4::v1::CounterData *out);

}  // namespace t4p4s_p4rt

#endif
