#include "entities.h"

#include "action_profiles.h"
#include "clone_sessions.h"
#include "counters_registers.h"
#include "table_entries.h"

namespace t4p4s_p4rt {

using E = p4::v1::Entity;

static Outcome not_in_target(const E &entity)
{
    if (entity.entity_case() == E::ENTITY_NOT_SET)
        return fail(grpc::StatusCode::INVALID_ARGUMENT, "the entity is not set");
    return fail(grpc::StatusCode::UNIMPLEMENTED,
                "this target has no " +
                    std::string(E::descriptor()
                                    ->FindFieldByNumber(entity.entity_case())
                                    ->name()) +
                    " (it has tables, counters, registers, clone sessions and multicast groups)");
}

Outcome write_update(const ProgramIds &ids, const p4::v1::Update &update)
{
    const E &entity = update.entity();
    switch (entity.entity_case()) {
    case E::kTableEntry:
        return write_table_entry(ids, update.type(), entity.table_entry());
    case E::kCounterEntry:
        return write_counter(ids, update.type(), entity.counter_entry());
    case E::kDirectCounterEntry:
        return write_direct_counter(ids, update.type(),
                                    entity.direct_counter_entry());
    case E::kRegisterEntry:
        return write_register(ids, update.type(), entity.register_entry());
    case E::kPacketReplicationEngineEntry:
        return write_pre_entry(update.type(),
                               entity.packet_replication_engine_entry());
    default:
        return not_in_target(entity);
    }
}

Outcome read_entity(const ProgramIds &ids, const E &entity, EntitySink &sink)
{
    switch (entity.entity_case()) {
    case E::kTableEntry:
        return read_table_entries(ids, entity.table_entry(), sink);
    case E::kCounterEntry:
        return read_counters(ids, entity.counter_entry(), sink);
    case E::kDirectCounterEntry:
        return read_direct_counters(ids, entity.direct_counter_entry(), sink);
    case E::kRegisterEntry:
        return read_registers(ids, entity.register_entry(), sink);
    case E::kPacketReplicationEngineEntry:
        return read_pre_entries(entity.packet_replication_engine_entry(), sink);
    case E::kActionProfileMember:
        return read_action_profile_entries(
            entity.action_profile_member().action_profile_id());
    case E::kActionProfileGroup:
        return read_action_profile_entries(
            entity.action_profile_group().action_profile_id());
    default:
        return not_in_target(entity);
    }
}

}  // namespace t4p4s_p4rt
