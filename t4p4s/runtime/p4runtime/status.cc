#include "status.h"

#include <cerrno>

#include <t4p4s/control_api.h>

#include "google/rpc/status.pb.h"
#include "p4/v1/p4runtime.pb.h"

namespace t4p4s_p4rt {

Outcome fail(grpc::StatusCode code, std::string message)
{
    return {code, std::move(message)};
}

static grpc::StatusCode code_of_errno(int err)
{
    switch (err) {
    case EEXIST: return grpc::StatusCode::ALREADY_EXISTS;
    case ENOENT: return grpc::StatusCode::NOT_FOUND;
    case EINVAL: return grpc::StatusCode::INVALID_ARGUMENT;
    case ENOSPC: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ENOMEM: return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case EPERM: return grpc::StatusCode::PERMISSION_DENIED;
    default: return grpc::StatusCode::INTERNAL;
    }
}

Outcome from_errno(int ret)
{
    if (ret >= 0)
        return ok();
    return fail(code_of_errno(-ret), t4p4s_ctl_last_error());
}

grpc::Status to_status(const Outcome &outcome)
{
    return grpc::Status(outcome.code, outcome.message);
}

grpc::Status batch_status(const std::vector<Outcome> &outcomes,
                          const char *what)
{
    size_t failed = 0;
    for (const Outcome &o : outcomes)
        failed += !o.ok();
    if (failed == 0)
        return grpc::Status::OK;
    std::string message = std::to_string(failed) + " of " +
                          std::to_string(outcomes.size()) + " " + what +
                          " failed";
    google::rpc::Status details;
    details.set_code(grpc::StatusCode::UNKNOWN);
    details.set_message(message);
    for (const Outcome &o : outcomes) {
        p4::v1::Error error;
        error.set_canonical_code(o.code);
        if (!o.ok())
            error.set_message(o.message);
        details.add_details()->PackFrom(error);
    }
    return grpc::Status(grpc::StatusCode::UNKNOWN, message,
                        details.SerializeAsString());
}

}  // namespace t4p4s_p4rt
