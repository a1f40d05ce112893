// CounterEntry and RegisterEntry updates and reads (indexed externs: only
// MODIFY; an unset index means every cell, on write as on read).
#ifndef T4P4S_P4RT_COUNTERS_REGISTERS_H
#define T4P4S_P4RT_COUNTERS_REGISTERS_H

#include "entity_sink.h"
#include "p4/v1/p4runtime.pb.h"
#include "program_ids.h"
#include "status.h"

namespace t4p4s_p4rt {

Outcome write_counter(const ProgramIds &ids, p4::v1::Update::Type type,
                      const p4::v1::CounterEntry &entry);
Outcome read_counters(const ProgramIds &ids, const p4::v1::CounterEntry &query,
                      EntitySink &sink);

Outcome write_register(const ProgramIds &ids, p4::v1::Update::Type type,
                       const p4::v1::RegisterEntry &entry);
Outcome read_registers(const ProgramIds &ids, const p4::v1::RegisterEntry &query,
                       EntitySink &sink);

}  // namespace t4p4s_p4rt

#endif
