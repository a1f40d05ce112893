#include "status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace baas_grpc {

using grpc::StatusCode;

std::string describe(const baas_drb_key &key)
{
    return "ue_id=" + std::to_string(key.ue_id) + " lcid=" + std::to_string(key.lcid);
}

grpc::Status from_errno(int ret, const baas_drb_key *key)
{
    switch (-ret) {
    case 0:
        return grpc::Status::OK;
    case ENOENT:
        return grpc::Status(StatusCode::NOT_FOUND,
                            key ? "no DRB " + describe(*key) : std::string("not found"));
    case EINVAL: {
        const char *why = baas_api_last_error();
        return grpc::Status(StatusCode::INVALID_ARGUMENT,
                            why && *why ? why : "invalid argument");
    }
    case ETIMEDOUT:
        return grpc::Status(StatusCode::UNAVAILABLE,
                            "an lcore did not answer within " +
                                std::to_string(BAAS_API_TIMEOUT_MS) + " ms");
    case ESHUTDOWN:
        return grpc::Status(StatusCode::UNAVAILABLE, "the BaaS is stopping");
    case ENOMEM:
        return grpc::Status(StatusCode::RESOURCE_EXHAUSTED, "out of memory");
    default:
        return grpc::Status(StatusCode::INTERNAL,
                            std::string("unexpected error: ") + std::strerror(-ret));
    }
}

grpc::Status drb_key(const baas::v1::DrbKey &in, baas_drb_key *out)
{
    if (in.ue_id() > UINT16_MAX)
        return grpc::Status(StatusCode::INVALID_ARGUMENT,
                            "ue_id " + std::to_string(in.ue_id()) +
                                " does not fit in 16 bits");
    if (in.lcid() > UINT8_MAX)
        return grpc::Status(StatusCode::INVALID_ARGUMENT,
                            "lcid " + std::to_string(in.lcid()) + " does not fit in 8 bits");
    out->ue_id = static_cast<uint16_t>(in.ue_id());
    out->lcid = static_cast<uint8_t>(in.lcid());
    return grpc::Status::OK;
}

}  // namespace baas_grpc
