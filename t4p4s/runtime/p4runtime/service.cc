#include "service.h"

#include <t4p4s/control_api.h>

#include "control_batch.h"
#include "entities.h"
#include "status.h"
#include "stream_channel.h"

namespace t4p4s_p4rt {

using grpc::StatusCode;

// The P4Runtime version of the .proto files this server is built from.
static const char kApiVersion[] = "1.5.0";

grpc::Status Service::check_device(uint64_t device_id) const
{
    if (device_id != device_id_)
        return grpc::Status(StatusCode::NOT_FOUND,
                            "no device with id " + std::to_string(device_id) +
                                " (this target is device " +
                                std::to_string(device_id_) + ")");
    return grpc::Status::OK;
}

grpc::Status Service::Write(grpc::ServerContext *,
                            const p4::v1::WriteRequest *request,
                            p4::v1::WriteResponse *)
{
    grpc::Status status = arbitration_.check_primary(
        request->device_id(), request->role(), request->election_id());
    if (!status.ok())
        return status;
    if (request->atomicity() != p4::v1::WriteRequest::CONTINUE_ON_ERROR)
        return grpc::Status(StatusCode::UNIMPLEMENTED,
                            "only CONTINUE_ON_ERROR atomicity is supported");
    std::vector<Outcome> outcomes;
    outcomes.reserve(request->updates_size());
    {
        ControlBatch batch;
        for (const p4::v1::Update &update : request->updates())
            outcomes.push_back(write_update(ids_, update));
    }
    return batch_status(outcomes, "updates");
}

grpc::Status Service::Read(grpc::ServerContext *,
                           const p4::v1::ReadRequest *request,
                           grpc::ServerWriter<p4::v1::ReadResponse> *writer)
{
    grpc::Status status = check_device(request->device_id());
    if (!status.ok())
        return status;
    // Each reader locks the control API per chunk and streams what it
    // found as it goes: a Read is not atomic with respect to Writes (the
    // spec asks for no such thing), and never holds them up for long.
    EntitySink sink(writer);
    std::vector<Outcome> outcomes;
    outcomes.reserve(request->entities_size());
    for (const p4::v1::Entity &entity : request->entities()) {
        outcomes.push_back(read_entity(ids_, entity, sink));
        if (sink.client_gone())
            break;
    }
    Outcome sent = sink.flush();
    if (!sent.ok())
        return to_status(sent);
    return batch_status(outcomes, "read requests");
}

grpc::Status Service::SetForwardingPipelineConfig(
    grpc::ServerContext *, const p4::v1::SetForwardingPipelineConfigRequest *request,
    p4::v1::SetForwardingPipelineConfigResponse *)
{
    grpc::Status status = arbitration_.check_primary(
        request->device_id(), request->role(), request->election_id());
    return status.ok() ? pipeline_.set(*request) : status;
}

grpc::Status Service::GetForwardingPipelineConfig(
    grpc::ServerContext *, const p4::v1::GetForwardingPipelineConfigRequest *request,
    p4::v1::GetForwardingPipelineConfigResponse *response)
{
    grpc::Status status = check_device(request->device_id());
    if (status.ok())
        pipeline_.get(request->response_type(), response);
    return status;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> *
Service::StreamChannel(grpc::CallbackServerContext *)
{
    return new StreamChannelReactor(arbitration_);
}

grpc::Status Service::Capabilities(grpc::ServerContext *,
                                   const p4::v1::CapabilitiesRequest *,
                                   p4::v1::CapabilitiesResponse *response)
{
    response->set_p4runtime_api_version(kApiVersion);
    return grpc::Status::OK;
}

}  // namespace t4p4s_p4rt
