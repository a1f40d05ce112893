#include "clone_sessions.h"

#include <cerrno>

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

#include "bytestrings.h"
#include "multicast_groups.h"

// Replica.egress_port is deprecated since P4Runtime 1.4 in favour of the
// bytes `port`, but it is the field clients of every version understand:
// accepted on write, used on read.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace t4p4s_p4rt {

using grpc::StatusCode;
using p4::v1::Update;

// P4Runtime spec, "CloneSessionEntry": session id 0 is reserved (a read's
// wildcard), so it is INVALID_ARGUMENT in a write.
static Outcome check_session_id(uint32_t session)
{
    if (session == 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "clone session id 0 is reserved");
    if (session >= T4P4S_CTL_MAX_CLONE_SESSIONS)
        return fail(StatusCode::OUT_OF_RANGE,
                    "clone session " + std::to_string(session) +
                        " out of range (0.." +
                        std::to_string(T4P4S_CTL_MAX_CLONE_SESSIONS - 1) + ")");
    return ok();
}

// The egress port of the session's one replica.
static Outcome replica_port(const p4::v1::CloneSessionEntry &s, uint32_t *port)
{
    if (s.replicas_size() != 1)
        return fail(StatusCode::UNIMPLEMENTED,
                    "a clone session of this target has exactly one replica, not " +
                        std::to_string(s.replicas_size()));
    const p4::v1::Replica &r = s.replicas(0);
    if (r.backup_replicas_size() != 0)
        return fail(StatusCode::UNIMPLEMENTED, "backup replicas are not supported");
    // P4Runtime spec, "CloneSessionEntry": the replica instance "may not
    // exceed the maximum allowed by the target for the EgressInstance_t
    // type (0 is allowed), or the server must also return an
    // INVALID_ARGUMENT error"; this target's maximum is 0 (it said
    // UNIMPLEMENTED).
    if (r.instance() != 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "replica instance " + std::to_string(r.instance()) +
                        " exceeds this target's maximum, 0");
    unsigned bits = t4p4s_program.port_bits ? t4p4s_program.port_bits : 9;
    if (r.port_kind_case() == p4::v1::Replica::kPort) {
        uint64_t value;
        Outcome o = to_u64(r.port(), bits, &value, "replica port");
        *port = (uint32_t)value;
        return o;
    }
    if (r.egress_port() >= (1u << bits))
        return fail(StatusCode::OUT_OF_RANGE,
                    "replica port " + std::to_string(r.egress_port()) +
                        " does not fit in " + std::to_string(bits) + " bits");
    *port = r.egress_port();
    return ok();
}

static Outcome write_clone_session(Update::Type type,
                                   const p4::v1::CloneSessionEntry &s)
{
    uint32_t session = s.session_id();
    Outcome r = check_session_id(session);
    if (!r.ok())
        return r;
    if (type == Update::DELETE)
        return from_errno(t4p4s_ctl_clone_session_delete(session));
    if (type != Update::INSERT && type != Update::MODIFY)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "update type must be INSERT, MODIFY or DELETE");
    if (s.class_of_service() != 0)
        return fail(StatusCode::UNIMPLEMENTED, "class of service is not supported");
    if (s.packet_length_bytes() < 0)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "packet_length_bytes cannot be negative");
    uint32_t port = 0;
    r = replica_port(s, &port);
    if (!r.ok())
        return r;
    uint32_t old_port, old_truncate;
    bool exists = t4p4s_ctl_clone_session_read(session, &old_port,
                                               &old_truncate) == 0;
    if (type == Update::INSERT && exists)
        return fail(StatusCode::ALREADY_EXISTS,
                    "clone session " + std::to_string(session) + " exists");
    if (type == Update::MODIFY && !exists)
        return fail(StatusCode::NOT_FOUND,
                    "no clone session " + std::to_string(session));
    return from_errno(t4p4s_ctl_clone_session_add(
        session, port, (uint32_t)s.packet_length_bytes()));
}

Outcome write_pre_entry(Update::Type type,
                        const p4::v1::PacketReplicationEngineEntry &entry)
{
    if (entry.has_multicast_group_entry())
        return write_multicast_group(type, entry.multicast_group_entry());
    if (!entry.has_clone_session_entry())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the PacketReplicationEngineEntry is neither a multicast group "
                    "nor a clone session");
    return write_clone_session(type, entry.clone_session_entry());
}

static void emit_session(uint32_t session, uint32_t port, uint32_t truncate,
                         EntitySink &sink)
{
    p4::v1::CloneSessionEntry *s = sink.add()
        ->mutable_packet_replication_engine_entry()
        ->mutable_clone_session_entry();
    s->set_session_id(session);
    s->set_packet_length_bytes((int32_t)truncate);
    // the field every P4Runtime version knows (`port` came with 1.4)
    s->add_replicas()->set_egress_port(port);
}

Outcome read_pre_entries(const p4::v1::PacketReplicationEngineEntry &query,
                         EntitySink &sink)
{
    if (query.has_multicast_group_entry())
        return read_multicast_groups(query.multicast_group_entry(), sink);
    if (!query.has_clone_session_entry())
        return fail(StatusCode::INVALID_ARGUMENT,
                    "the PacketReplicationEngineEntry is neither a multicast group "
                    "nor a clone session");
    uint32_t wanted = query.clone_session_entry().session_id();
    uint32_t port, truncate;
    if (wanted != 0) {
        Outcome r = check_session_id(wanted);
        if (r.ok() && t4p4s_ctl_clone_session_read(wanted, &port, &truncate) == 0)
            emit_session(wanted, port, truncate, sink);
        return r;
    }
    // each session is read on its own (no lock held here, so the sink
    // may send as it fills)
    Outcome r = ok();
    for (uint32_t s = 0; r.ok() && s < T4P4S_CTL_MAX_CLONE_SESSIONS; s++)
        if (t4p4s_ctl_clone_session_read(s, &port, &truncate) == 0) {
            emit_session(s, port, truncate, sink);
            r = sink.flush_if_full();
        }
    return r;
}

}  // namespace t4p4s_p4rt
