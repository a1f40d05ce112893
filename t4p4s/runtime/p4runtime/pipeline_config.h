// Set/GetForwardingPipelineConfig for a target whose pipeline is compiled
// into its executable: a config is realizable iff its P4Info equals the
// program's own (embedded by `t4p4s compile`, compared field by field).
// The p4_device_config is opaque here: stored and returned as given.
// VERIFY_AND_COMMIT clears the forwarding state, but for registers kept in
// a registers file (--registers-file: they outlive the process, and the
// P4Info pushed is always the program's own, so a commit never changes
// their meaning; a file of another program is refused when the process
// starts); RECONCILE_AND_COMMIT and COMMIT keep it all (the pipeline does
// not change, so nothing is lost).
#ifndef T4P4S_P4RT_PIPELINE_CONFIG_H
#define T4P4S_P4RT_PIPELINE_CONFIG_H

#include <mutex>

#include <grpcpp/support/status.h>

#include "p4/v1/p4runtime.pb.h"

namespace t4p4s_p4rt {

class PipelineConfig {
public:
    PipelineConfig();

    // After the device and primary checks.
    grpc::Status set(const p4::v1::SetForwardingPipelineConfigRequest &request);
    void get(p4::v1::GetForwardingPipelineConfigRequest::ResponseType type,
             p4::v1::GetForwardingPipelineConfigResponse *response);

private:
    grpc::Status verify(const p4::v1::ForwardingPipelineConfig &config) const;

    bool has_p4info_ = false;
    p4::config::v1::P4Info p4info_;
    std::mutex mu_;
    p4::v1::ForwardingPipelineConfig committed_;   // device config and cookie
    bool has_saved_ = false;
    p4::v1::ForwardingPipelineConfig saved_;
};

}  // namespace t4p4s_p4rt

#endif
