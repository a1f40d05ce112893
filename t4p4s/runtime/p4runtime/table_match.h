// TableEntry.match <-> the key-buffer match of the C API
// (struct t4p4s_match_spec), per P4Runtime's rules for each match kind:
// "don't care" fields are omitted on both sides, exact fields never are.
#ifndef T4P4S_P4RT_TABLE_MATCH_H
#define T4P4S_P4RT_TABLE_MATCH_H

#include <cstdint>
#include <vector>

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

#include "p4/v1/p4runtime.pb.h"
#include "status.h"

namespace t4p4s_p4rt {

class MatchBuffer {
public:
    // The match of `entry` (its `match` and `priority`) for `table`.
    Outcome parse(const t4p4s_table_desc &table, const p4::v1::TableEntry &entry);

    t4p4s_match_spec spec() const { return {value_.data(), mask_.data(), priority_}; }

private:
    Outcome parse_field(const t4p4s_key_field_desc &f,
                        const p4::v1::FieldMatch &m);
    std::vector<uint8_t> value_, mask_;
    int32_t priority_ = 0;
};

// Fills entry->match and priority from a C API entry view.
void match_to_p4rt(const t4p4s_table_desc &table,
                   const t4p4s_entry_view &view, p4::v1::TableEntry *entry);

}  // namespace t4p4s_p4rt

#endif
