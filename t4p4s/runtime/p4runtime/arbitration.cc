#include "arbitration.h"

#include <algorithm>

namespace t4p4s_p4rt {

using grpc::StatusCode;

grpc::Status Arbitration::check_primary(uint64_t device_id,
                                        const std::string &role_name,
                                        const p4::v1::Uint128 &election_id)
{
    if (device_id != device_id_)
        return grpc::Status(StatusCode::NOT_FOUND,
                            "no device with id " + std::to_string(device_id));
    std::lock_guard<std::mutex> lock(mu_);
    auto it = roles_.find(role_name);
    if (it == roles_.end() && !role_name.empty())
        return grpc::Status(StatusCode::NOT_FOUND,
                            "no controller has arbitrated for role '" +
                                role_name + "'");
    const Controller *primary = it == roles_.end() ? nullptr : it->second.primary;
    if (primary == nullptr || primary->closed ||
        primary->election_id != to_id(election_id))
        return grpc::Status(StatusCode::PERMISSION_DENIED,
                            "not the primary controller (no StreamChannel "
                            "arbitration with this election id holds primary)");
    return grpc::Status::OK;
}

grpc::Status Arbitration::arbitrate(Controller &c, std::string &role_name,
                                    bool first,
                                    const p4::v1::MasterArbitrationUpdate &u)
{
    const std::string &name = u.role().name();
    if (u.device_id() != device_id_)
        return grpc::Status(first ? StatusCode::NOT_FOUND
                                  : StatusCode::FAILED_PRECONDITION,
                            "no device with id " + std::to_string(u.device_id()) +
                                (first ? "" : " on this stream"));
    if (!first && name != role_name)
        return grpc::Status(StatusCode::FAILED_PRECONDITION,
                            "a stream keeps its role: open another stream for "
                            "role '" + name + "'");
    if (u.role().has_config())
        return grpc::Status(StatusCode::INVALID_ARGUMENT,
                            "this target knows no role configuration scheme: "
                            "leave role.config unset (full pipeline access)");
    std::lock_guard<std::mutex> lock(mu_);
    Role &role = roles_[name];
    ElectionId id = to_id(u.election_id());
    if (u.has_election_id())
        for (const Controller *other : role.controllers)
            if (other != &c && !other->closed && other->has_election_id &&
                other->election_id == id)
                return grpc::Status(StatusCode::INVALID_ARGUMENT,
                                    "another live controller uses this election id");
    bool was_primary = role.primary == &c;
    if (first) {
        role_name = name;
        role.controllers.push_back(&c);
    }
    c.has_election_id = u.has_election_id();
    c.election_id = id;
    elect(name, role, c, was_primary);
    return grpc::Status::OK;
}

void Arbitration::elect(const std::string &name, Role &role, Controller &c,
                        bool was_primary)
{
    if (c.has_election_id &&
        (!role.seen_election_id || c.election_id >= role.highest)) {
        role.seen_election_id = true;
        role.highest = c.election_id;
        role.primary = &c;
        notify(name, role, nullptr);
    } else if (was_primary) {    // it downgraded itself: nobody is primary
        role.primary = nullptr;
        notify(name, role, nullptr);
    } else {
        notify(name, role, &c);
    }
}

void Arbitration::notify(const std::string &name, const Role &role,
                         const Controller *only)
{
    for (Controller *c : role.controllers) {
        if ((only != nullptr && c != only) || c->closed)
            continue;
        p4::v1::StreamMessageResponse response;
        p4::v1::MasterArbitrationUpdate *u = response.mutable_arbitration();
        u->set_device_id(device_id_);
        if (!name.empty())
            u->mutable_role()->set_name(name);
        if (role.seen_election_id) {
            u->mutable_election_id()->set_high((uint64_t)(role.highest >> 64));
            u->mutable_election_id()->set_low((uint64_t)role.highest);
        }
        if (role.primary == c) {
            u->mutable_status()->set_code(grpc::StatusCode::OK);
        } else if (role.primary != nullptr) {
            u->mutable_status()->set_code(grpc::StatusCode::ALREADY_EXISTS);
            u->mutable_status()->set_message("a primary controller exists");
        } else {
            u->mutable_status()->set_code(grpc::StatusCode::NOT_FOUND);
            u->mutable_status()->set_message("no primary controller");
        }
        c->stream->send(response);
    }
}

void Arbitration::leave(const std::string &role_name, Controller &c)
{
    std::lock_guard<std::mutex> lock(mu_);
    Role &role = roles_[role_name];
    role.controllers.erase(std::remove(role.controllers.begin(),
                                       role.controllers.end(), &c),
                           role.controllers.end());
    if (role.primary == &c) {
        role.primary = nullptr;
        notify(role_name, role, nullptr);
    }
}

}  // namespace t4p4s_p4rt
