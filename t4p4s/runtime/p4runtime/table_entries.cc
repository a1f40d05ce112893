#include "table_entries.h"

#include <cerrno>

#include <t4p4s/control_api.h>

#include "control_batch.h"
#include "counter_data.h"
#include "entry_metadata.h"
#include "table_action.h"
#include "table_match.h"
#include "table_snapshot.h"

namespace t4p4s_p4rt {

using grpc::StatusCode;
using p4::v1::Update;

static Outcome find_table(const ProgramIds &ids, uint32_t id, int *index)
{
    *index = ids.table(id);
    if (*index < 0)
        return fail(StatusCode::NOT_FOUND,
                    "no table with id " + std::to_string(id));
    return ok();
}

// What this target's tables do not have: idle timeouts, meters.
static Outcome check_unsupported_fields(const p4::v1::TableEntry &e)
{
    if (e.idle_timeout_ns() != 0 || e.has_time_since_last_hit())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the table does not support idle timeouts");
    if (e.has_meter_config() || e.has_meter_counter_data())
        return fail(StatusCode::INVALID_ARGUMENT, "the table has no direct meter");
    return ok();
}

static Outcome write_default_entry(const ProgramIds &ids, uint16_t table,
                                   Update::Type type,
                                   const p4::v1::TableEntry &e)
{
    const t4p4s_table_desc &desc = t4p4s_program.tables[table];
    if (type != Update::MODIFY)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the default entry is always set: only MODIFY applies to it");
    if (e.match_size() != 0 || e.priority() != 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the default entry takes no match and no priority");
    if (e.has_counter_data())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the default entry has no direct counter on this target");
    if (!e.has_action())
        return from_errno(t4p4s_ctl_table_reset_default(table));
    if (desc.default_is_const)
        return fail(StatusCode::PERMISSION_DENIED,
                    std::string("table ") + desc.name +
                        " has a const default action");
    ActionBuffer action;
    Outcome r = action.parse(desc, ids, e.action(), true);
    if (!r.ok())
        return r;
    t4p4s_action_spec spec = action.spec();
    return from_errno(t4p4s_ctl_table_set_default(table, &spec));
}

static int count_nothing(void *, const t4p4s_entry_view *) { return 0; }

// 0 when the table holds an entry with this match, else -ENOENT (or the
// control API's error): for updates that change only an entry's direct
// resources, which need the entry.
static int entry_exists(uint16_t table, const t4p4s_match_spec *m)
{
    return t4p4s_ctl_table_read_entry(table, m, count_nothing, nullptr);
}

Outcome write_table_entry(const ProgramIds &ids, Update::Type type,
                          const p4::v1::TableEntry &e)
{
    int table;
    Outcome r = find_table(ids, e.table_id(), &table);
    if (!r.ok())
        return r;
    // P4Runtime spec, "TableEntry": "The is_const field must be false in
    // any INSERT, MODIFY, or DELETE write request of a table entry. If it
    // is true, the server must reject the operation and return an
    // INVALID_ARGUMENT error." (It was ignored: an INSERT with it went in.)
    if (e.is_const())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "is_const must be false in a write (only a Read sets it)");
    // P4Runtime spec, "TableEntry": a DELETE considers only the key (match,
    // priority, is_default_action); "All other fields must be ignored, even
    // if they have nonsensical values". A DELETE with counter_data or a
    // meter_config on a table without them was INVALID_ARGUMENT.
    const bool only_key = type == Update::DELETE;
    if (!only_key) {
        r = check_unsupported_fields(e);
        if (!r.ok())
            return r;
    }
    const t4p4s_table_desc &desc = t4p4s_program.tables[table];
    if (e.is_default_action())
        return write_default_entry(ids, (uint16_t)table, type, e);
    if (!only_key && e.has_counter_data() && desc.direct_counter < 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    std::string("table ") + desc.name + " has no direct counter");
    if (type == Update::INSERT && !e.has_action())
        return fail(StatusCode::INVALID_ARGUMENT, "an INSERT needs an action");

    MatchBuffer match;
    ActionBuffer action;
    t4p4s_counter_value counter = {};
    r = match.parse(desc, e);
    if (r.ok() && e.has_action() && !only_key)
        r = action.parse(desc, ids, e.action(), false);
    // Checked before anything is written: an INSERT whose counter_data was
    // refused (negative counts) left its entry in the table, while P4Runtime
    // spec, "Batching and Ordering of Updates" commits every update "with
    // the exception of any operations that return an error status".
    if (r.ok() && e.has_counter_data() && !only_key)
        r = counter_value_from_p4rt(e.counter_data(), &counter);
    if (!r.ok())
        return r;
    t4p4s_match_spec m = match.spec();
    t4p4s_action_spec a = action.spec();
    int ret;
    switch (type) {
    case Update::INSERT:
        ret = t4p4s_ctl_table_add((uint16_t)table, &m, &a);
        if (ret == 0)
            entry_metadata().store((uint16_t)table, m.value, m.mask,
                                   m.priority, e);
        break;
    case Update::MODIFY:
        // with an action the entry is replaced, metadata included; without
        // one only its direct resources change
        if (e.has_action()) {
            ret = t4p4s_ctl_table_modify((uint16_t)table, &m, &a);
            if (ret == 0)
                entry_metadata().store((uint16_t)table, m.value, m.mask,
                                       m.priority, e);
        } else if (desc.entries_are_const && !e.has_counter_data()) {
            return fail(StatusCode::PERMISSION_DENIED,
                        std::string("table ") + desc.name + " has const entries");
        } else {    /* only direct resources change: the entry must exist */
            ret = entry_exists((uint16_t)table, &m);
        }
        break;
    case Update::DELETE:
        ret = t4p4s_ctl_table_delete((uint16_t)table, &m);
        if (ret == 0)
            entry_metadata().forget((uint16_t)table, m.value, m.mask,
                                    m.priority);
        return from_errno(ret);
    default:
        return fail(StatusCode::INVALID_ARGUMENT,
                    "update type must be INSERT, MODIFY or DELETE");
    }
    if (ret == 0 && e.has_counter_data())
        ret = t4p4s_ctl_direct_counter_write((uint16_t)table, &m, &counter);
    return from_errno(ret);
}

/* ---- reads ------------------------------------------------------------ */

struct TableReader {
    uint16_t table;
    EntitySink *sink;
    int32_t priority;          // 0: any
    int action;                // -1: any
    bool with_counter;         // the query asked for counter_data
    bool as_direct_counter;    // emit DirectCounterEntry, not TableEntry

    void emit(const t4p4s_entry_view &view)
    {
        if ((priority != 0 && view.priority != priority) ||
            (action >= 0 && view.action != action))
            return;
        const t4p4s_table_desc &desc = t4p4s_program.tables[table];
        p4::v1::Entity *entity = sink->add();
        t4p4s_counter_type unit = desc.direct_counter >= 0
            ? t4p4s_program.counters[desc.direct_counter].type
            : T4P4S_COUNTER_PACKETS_AND_BYTES;
        if (as_direct_counter) {
            p4::v1::DirectCounterEntry *d = entity->mutable_direct_counter_entry();
            d->mutable_table_entry()->set_table_id(desc.id);
            match_to_p4rt(desc, view, d->mutable_table_entry());
            counter_value_to_p4rt(unit, view.packets, view.bytes, d->mutable_data());
            return;
        }
        p4::v1::TableEntry *e = entity->mutable_table_entry();
        e->set_table_id(desc.id);
        if (view.value == nullptr) {
            e->set_is_default_action(true);
        } else {
            match_to_p4rt(desc, view, e);
            e->set_is_const(desc.entries_are_const);
            entry_metadata().restore(table, view.value, view.mask,
                                     view.priority, e);
        }
        action_to_p4rt(view, e->mutable_action()->mutable_action());
        if (with_counter && view.has_counter)
            counter_value_to_p4rt(unit, view.packets, view.bytes,
                                  e->mutable_counter_data());
    }
};

// The entries of one table selected by `query` (its table_id resolved):
// copied with the control API locked, turned into entities and sent
// after (a full table must not hold up writers while it is sent). A query
// with a match that finds no entry reads nothing, or is NOT_FOUND when
// `missing_is_error`.
static Outcome read_one_table(uint16_t table,
                              const p4::v1::TableEntry &query,
                              TableReader &reader, bool missing_is_error)
{
    const t4p4s_table_desc &desc = t4p4s_program.tables[table];
    const bool one_entry = !query.is_default_action() && query.match_size() != 0;
    MatchBuffer match;
    if (one_entry) {
        Outcome r = match.parse(desc, query);
        if (!r.ok())
            return r;
    }
    t4p4s_match_spec m = match.spec();
    TableSnapshot snapshot(desc);
    int ret;
    {
        ControlBatch batch;
        if (one_entry)      // or none (not an error: the match finds nothing)
            ret = t4p4s_ctl_table_read_entry(table, &m, TableSnapshot::copy,
                                             &snapshot);
        else if (query.is_default_action())
            ret = t4p4s_ctl_table_get_default(table, TableSnapshot::copy, &snapshot);
        else
            ret = t4p4s_ctl_table_read(table, TableSnapshot::copy, &snapshot);
    }
    if (ret == -ENOENT && one_entry && !missing_is_error)
        ret = 0;
    Outcome r = from_errno(ret);
    reader.table = table;
    for (size_t i = 0; r.ok() && i < snapshot.size(); i++) {
        reader.emit(snapshot.view(i));
        r = reader.sink->flush_if_full();
    }
    return r;
}

Outcome read_table_entries(const ProgramIds &ids,
                           const p4::v1::TableEntry &query, EntitySink &sink)
{
    Outcome r = check_unsupported_fields(query);
    if (!r.ok())
        return r;
    TableReader reader{0, &sink, query.priority(), -1,
                       query.has_counter_data(), false};
    if (query.has_action() && query.action().has_action() &&
        query.action().action().action_id() != 0) {
        reader.action = ids.action(query.action().action().action_id());
        if (reader.action < 0)
            return fail(StatusCode::NOT_FOUND,
                        "no action with id " +
                            std::to_string(query.action().action().action_id()));
    }
    if (query.table_id() != 0) {
        int table;
        r = find_table(ids, query.table_id(), &table);
        return r.ok() ? read_one_table((uint16_t)table, query, reader, false) : r;
    }
    if (query.match_size() != 0 || query.is_default_action())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "a read of all tables (table_id 0) takes no match and no "
                    "is_default_action");
    for (uint16_t t = 0; t < t4p4s_program.n_tables && r.ok(); t++)
        r = read_one_table(t, query, reader, false);
    return r;
}

/* ---- direct counters -------------------------------------------------- */

Outcome write_direct_counter(const ProgramIds &ids, Update::Type type,
                             const p4::v1::DirectCounterEntry &entry)
{
    if (type != Update::MODIFY)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "direct counter cells exist with their entries: only MODIFY "
                    "applies to them");
    const p4::v1::TableEntry &key = entry.table_entry();
    int table;
    Outcome r = find_table(ids, key.table_id(), &table);
    if (!r.ok())
        return r;
    const t4p4s_table_desc &desc = t4p4s_program.tables[table];
    if (desc.direct_counter < 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    std::string("table ") + desc.name + " has no direct counter");
    if (key.is_default_action())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the default entry has no direct counter on this target");
    MatchBuffer match;
    t4p4s_counter_value value;
    r = match.parse(desc, key);
    if (r.ok())
        r = counter_value_from_p4rt(entry.data(), &value);
    if (!r.ok())
        return r;
    t4p4s_match_spec m = match.spec();
    // P4Runtime spec, "DirectCounterEntry": "Note that if this Protobuf
    // field [data] is not set, the counter value is not modified" (it was
    // set to 0); the entry must still exist.
    if (!entry.has_data())
        return from_errno(entry_exists((uint16_t)table, &m));
    return from_errno(t4p4s_ctl_direct_counter_write((uint16_t)table, &m, &value));
}

Outcome read_direct_counters(const ProgramIds &ids,
                             const p4::v1::DirectCounterEntry &query,
                             EntitySink &sink)
{
    const p4::v1::TableEntry &key = query.table_entry();
    TableReader reader{0, &sink, key.priority(), -1, true, true};
    if (key.is_default_action())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the default entry has no direct counter on this target");
    if (key.table_id() != 0) {
        int table;
        Outcome r = find_table(ids, key.table_id(), &table);
        if (!r.ok())
            return r;
        if (t4p4s_program.tables[table].direct_counter < 0)
            return fail(StatusCode::INVALID_ARGUMENT,
                        std::string("table ") + t4p4s_program.tables[table].name +
                            " has no direct counter");
        // P4Runtime spec, "DirectCounterEntry": "The table_entry.match
        // field must match the TableEntry whose counter is being read. If
        // no such entry is found, the server returns the error code
        // NOT_FOUND." (It read nothing, with OK.)
        return read_one_table((uint16_t)table, key, reader, true);
    }
    Outcome r = ok();
    for (uint16_t t = 0; t < t4p4s_program.n_tables && r.ok(); t++)
        if (t4p4s_program.tables[t].direct_counter >= 0)
            r = read_one_table(t, key, reader, false);
    return r;
}

}  // namespace t4p4s_p4rt
