#include "multicast_groups.h"

#include <vector>

#include <t4p4s/control_api.h>

#include "bytestrings.h"

// Replica.egress_port is deprecated since P4Runtime 1.4 in favour of the
// bytes `port`, but it is the field clients of every version understand:
// accepted on write, used on read (as for clone sessions).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace t4p4s_p4rt {

using grpc::StatusCode;
using p4::v1::Update;

// Spec, "Valid Values for multicast_group_id": 0 is the read wildcard, never
// written (INVALID_ARGUMENT); mcast_grp is bit<16>, so larger ids name no
// group this target can have (OUT_OF_RANGE, as clone session ids beyond
// the target's).
static Outcome check_group_id(uint32_t group)
{
    if (group == 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "multicast group id 0 is reserved (it means no multicast)");
    if (group >= T4P4S_CTL_MAX_MCAST_GROUPS)
        return fail(StatusCode::OUT_OF_RANGE,
                    "multicast group " + std::to_string(group) + " out of range (1.." +
                        std::to_string(T4P4S_CTL_MAX_MCAST_GROUPS - 1) +
                        ": mcast_grp is bit<16>)");
    return ok();
}

// The replicas in the C API's form. Their ports, instances and uniqueness
// are checked by the C API (INVALID_ARGUMENT), so the control socket and
// P4Runtime accept the same groups.
static Outcome to_replicas(const p4::v1::MulticastGroupEntry &g,
                           std::vector<t4p4s_ctl_mcast_replica> *out)
{
    for (int i = 0; i < g.replicas_size(); i++) {
        const p4::v1::Replica &r = g.replicas(i);
        if (r.backup_replicas_size() != 0)
            return fail(StatusCode::UNIMPLEMENTED, "backup replicas are not supported");
        uint32_t port = r.egress_port();
        if (r.port_kind_case() == p4::v1::Replica::kPort) {
            uint64_t value;
            Outcome o = to_u64(r.port(), 32, &value, "replica port");
            if (!o.ok())   // a port no port type holds: a bad argument
                return fail(StatusCode::INVALID_ARGUMENT,
                            "replica " + std::to_string(i) + ": " + o.message);
            port = (uint32_t)value;
        }
        out->push_back({port, r.instance()});
    }
    return ok();
}

Outcome write_multicast_group(Update::Type type, const p4::v1::MulticastGroupEntry &g)
{
    uint32_t group = g.multicast_group_id();
    Outcome r = check_group_id(group);
    if (!r.ok())
        return r;
    if (type == Update::DELETE)
        return from_errno(t4p4s_ctl_mcast_group_delete(group));
    if (type != Update::INSERT && type != Update::MODIFY)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "update type must be INSERT, MODIFY or DELETE");
    std::vector<t4p4s_ctl_mcast_replica> replicas;
    r = to_replicas(g, &replicas);
    if (!r.ok())
        return r;
    const std::string &md = g.metadata();
    auto write = type == Update::INSERT ? t4p4s_ctl_mcast_group_insert
                                        : t4p4s_ctl_mcast_group_modify;
    return from_errno(write(group, replicas.data(), (uint32_t)replicas.size(),
                            md.data(), (uint32_t)md.size()));
}

// Reads one group into the sink; -ENOENT if it does not exist.
static int emit_group(uint32_t group, std::vector<t4p4s_ctl_mcast_replica> &replicas,
                      std::vector<uint8_t> &metadata, EntitySink &sink)
{
    uint32_t metadata_len = 0;
    int n = t4p4s_ctl_mcast_group_read(group, replicas.data(), metadata.data(),
                                       &metadata_len);
    if (n < 0)
        return n;
    p4::v1::MulticastGroupEntry *g = sink.add()
        ->mutable_packet_replication_engine_entry()
        ->mutable_multicast_group_entry();
    g->set_multicast_group_id(group);
    for (int i = 0; i < n; i++) {
        p4::v1::Replica *r = g->add_replicas();
        r->set_egress_port(replicas[i].port);
        r->set_instance(replicas[i].instance);
    }
    if (metadata_len != 0)
        g->set_metadata(metadata.data(), metadata_len);
    return 0;
}

Outcome read_multicast_groups(const p4::v1::MulticastGroupEntry &query, EntitySink &sink)
{
    std::vector<t4p4s_ctl_mcast_replica> replicas(T4P4S_CTL_MAX_MCAST_REPLICAS);
    std::vector<uint8_t> metadata(T4P4S_CTL_MAX_MCAST_METADATA);
    uint32_t wanted = query.multicast_group_id();
    if (wanted != 0) {
        Outcome r = check_group_id(wanted);
        if (!r.ok())
            return r;
        return from_errno(emit_group(wanted, replicas, metadata, sink));
    }
    // each group is read on its own (no lock held here, so the sink may
    // send as it fills); a group deleted meanwhile is skipped
    Outcome r = ok();
    for (int g = t4p4s_ctl_mcast_group_next(0); r.ok() && g > 0;
         g = t4p4s_ctl_mcast_group_next((uint32_t)g))
        if (emit_group((uint32_t)g, replicas, metadata, sink) == 0)
            r = sink.flush_if_full();
    return r;
}

}  // namespace t4p4s_p4rt
