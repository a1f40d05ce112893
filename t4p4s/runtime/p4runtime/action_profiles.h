// ActionProfileMember and ActionProfileGroup: this target has no action
// profiles (no table of the P4Info has an implementation). A wildcard read
// over every profile (action_profile_id 0) finds nothing, as on any
// program without profiles, so clients that read everything (finsy's
// Switch.delete_all()) work; naming a profile is NOT_FOUND. Writes stay
// UNIMPLEMENTED (entities.cc).
#ifndef T4P4S_P4RT_ACTION_PROFILES_H
#define T4P4S_P4RT_ACTION_PROFILES_H

#include <cstdint>

#include "status.h"

namespace t4p4s_p4rt {

Outcome read_action_profile_entries(uint32_t action_profile_id);

}  // namespace t4p4s_p4rt

#endif
