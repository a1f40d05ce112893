// The P4Runtime service of one device: request-level checks (device id,
// primary controller, atomicity), then entities.h per update / read
// request, batch status per the spec's error reporting.
#ifndef T4P4S_P4RT_SERVICE_H
#define T4P4S_P4RT_SERVICE_H

#include "arbitration.h"
#include "p4/v1/p4runtime.grpc.pb.h"
#include "pipeline_config.h"
#include "program_ids.h"

namespace t4p4s_p4rt {

// StreamChannel is a callback method on raw bytes (stream_channel.h); the
// others are synchronous.
class Service final
    : public p4::v1::P4Runtime::WithRawCallbackMethod_StreamChannel<
          p4::v1::P4Runtime::Service> {
public:
    explicit Service(uint64_t device_id)
        : device_id_(device_id), arbitration_(device_id) {}

    grpc::Status Write(grpc::ServerContext *, const p4::v1::WriteRequest *,
                       p4::v1::WriteResponse *) override;
    grpc::Status Read(grpc::ServerContext *, const p4::v1::ReadRequest *,
                      grpc::ServerWriter<p4::v1::ReadResponse> *) override;
    grpc::Status SetForwardingPipelineConfig(
        grpc::ServerContext *, const p4::v1::SetForwardingPipelineConfigRequest *,
        p4::v1::SetForwardingPipelineConfigResponse *) override;
    grpc::Status GetForwardingPipelineConfig(
        grpc::ServerContext *, const p4::v1::GetForwardingPipelineConfigRequest *,
        p4::v1::GetForwardingPipelineConfigResponse *) override;
    grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> *StreamChannel(
        grpc::CallbackServerContext *) override;
    grpc::Status Capabilities(grpc::ServerContext *,
                              const p4::v1::CapabilitiesRequest *,
                              p4::v1::CapabilitiesResponse *) override;

private:
    grpc::Status check_device(uint64_t device_id) const;

    const uint64_t device_id_;
    const ProgramIds ids_;
    Arbitration arbitration_;
    PipelineConfig pipeline_;
};

}  // namespace t4p4s_p4rt

#endif
