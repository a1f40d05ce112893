#include "action_profiles.h"

#include <string>

namespace t4p4s_p4rt {

Outcome read_action_profile_entries(uint32_t action_profile_id)
{
    if (action_profile_id == 0)
        return ok();
    return fail(grpc::StatusCode::NOT_FOUND,
                "no action profile with id " + std::to_string(action_profile_id) +
                    " (this target has no action profiles)");
}

}  // namespace t4p4s_p4rt
