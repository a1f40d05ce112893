// TableEntry.action <-> the C API's action spec and entry views.
#ifndef T4P4S_P4RT_TABLE_ACTION_H
#define T4P4S_P4RT_TABLE_ACTION_H

#include <vector>

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

#include "p4/v1/p4runtime.pb.h"
#include "program_ids.h"
#include "status.h"

namespace t4p4s_p4rt {

class ActionBuffer {
public:
    // The action of an entry (as_default: of the default entry) of
    // `table`. The spec points into `action`: keep it alive meanwhile.
    Outcome parse(const t4p4s_table_desc &table, const ProgramIds &ids,
                  const p4::v1::TableAction &action, bool as_default);

    t4p4s_action_spec spec() const { return {action_, params_.data()}; }

private:
    uint16_t action_ = 0;
    std::vector<t4p4s_bytes> params_;
};

void action_to_p4rt(const t4p4s_entry_view &view, p4::v1::Action *action);

}  // namespace t4p4s_p4rt

#endif
