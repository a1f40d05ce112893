// One update or one read request on any entity this target has, dispatched
// to its translation (table_entries, counters_registers, clone_sessions).
#ifndef T4P4S_P4RT_ENTITIES_H
#define T4P4S_P4RT_ENTITIES_H

#include "entity_sink.h"
#include "p4/v1/p4runtime.pb.h"
#include "program_ids.h"
#include "status.h"

namespace t4p4s_p4rt {

Outcome write_update(const ProgramIds &ids, const p4::v1::Update &update);
Outcome read_entity(const ProgramIds &ids, const p4::v1::Entity &entity,
                    EntitySink &sink);

}  // namespace t4p4s_p4rt

#endif
