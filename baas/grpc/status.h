// How the control API's results (baas/include/baas/api.h) become gRPC
// statuses, and the checks of a request's DRB key.
#ifndef BAAS_GRPC_STATUS_H
#define BAAS_GRPC_STATUS_H

#include <string>

#include <grpcpp/support/status.h>

#include <baas/api.h>

#include "baas.pb.h"

namespace baas_grpc {

// 0 -> OK; -ENOENT -> NOT_FOUND naming the DRB (key may be NULL: the
// defaults); -EINVAL -> INVALID_ARGUMENT with baas_api_last_error() (so
// call it on the thread that made the call, right after it); -ETIMEDOUT,
// -ESHUTDOWN -> UNAVAILABLE; -ENOMEM -> RESOURCE_EXHAUSTED; anything else
// -> INTERNAL.
grpc::Status from_errno(int ret, const baas_drb_key *key);

// A DrbKey of the wire (uint32 fields) as the API's key: INVALID_ARGUMENT
// when ue_id does not fit 16 bits or lcid 8 bits.
grpc::Status drb_key(const baas::v1::DrbKey &in, baas_drb_key *out);

// "ue_id=U lcid=L"
std::string describe(const baas_drb_key &key);

}  // namespace baas_grpc

#endif
