// PacketReplicationEngineEntry: clone sessions (one replica each: the
// target's session table maps a session to one egress port and a truncate
// length) here; multicast groups in multicast_groups.cc.
#ifndef T4P4S_P4RT_CLONE_SESSIONS_H
#define T4P4S_P4RT_CLONE_SESSIONS_H

#include "entity_sink.h"
#include "p4/v1/p4runtime.pb.h"
#include "status.h"

namespace t4p4s_p4rt {

Outcome write_pre_entry(p4::v1::Update::Type type,
                        const p4::v1::PacketReplicationEngineEntry &entry);
Outcome read_pre_entries(const p4::v1::PacketReplicationEngineEntry &query,
                         EntitySink &sink);

}  // namespace t4p4s_p4rt

#endif
