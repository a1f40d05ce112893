// TableEntry and DirectCounterEntry updates and reads over the C control
// API (P4Runtime spec: "TableEntry", "Default Entry", "Constant Tables",
// "Wildcard Reads", "Direct Resources").
#ifndef T4P4S_P4RT_TABLE_ENTRIES_H
#define T4P4S_P4RT_TABLE_ENTRIES_H

#include "entity_sink.h"
#include "p4/v1/p4runtime.pb.h"
#include "program_ids.h"
#include "status.h"

namespace t4p4s_p4rt {

Outcome write_table_entry(const ProgramIds &ids, p4::v1::Update::Type type,
                          const p4::v1::TableEntry &entry);
Outcome read_table_entries(const ProgramIds &ids,
                           const p4::v1::TableEntry &query, EntitySink &sink);

Outcome write_direct_counter(const ProgramIds &ids, p4::v1::Update::Type type,
                             const p4::v1::DirectCounterEntry &entry);
Outcome read_direct_counters(const ProgramIds &ids,
                             const p4::v1::DirectCounterEntry &query,
                             EntitySink &sink);

}  // namespace t4p4s_p4rt

#endif
