// PacketReplicationEngineEntry: multicast groups (P4Runtime spec,
// "MulticastGroupEntry"), kept by the runtime's group table (src/multicast.c)
// and replicated by the data plane after ingress.
#ifndef T4P4S_P4RT_MULTICAST_GROUPS_H
#define T4P4S_P4RT_MULTICAST_GROUPS_H

#include "entity_sink.h"
#include "p4/v1/p4runtime.pb.h"
#include "status.h"

namespace t4p4s_p4rt {

Outcome write_multicast_group(p4::v1::Update::Type type,
                              const p4::v1::MulticastGroupEntry &entry);
// multicast_group_id 0: every group (spec: a wildcard read).
Outcome read_multicast_groups(const p4::v1::MulticastGroupEntry &query,
                              EntitySink &sink);

}  // namespace t4p4s_p4rt

#endif
