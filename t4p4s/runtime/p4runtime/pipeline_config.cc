#include "pipeline_config.h"

#include <google/protobuf/util/message_differencer.h>

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

#include "entry_metadata.h"

namespace t4p4s_p4rt {

using grpc::StatusCode;
using Request = p4::v1::SetForwardingPipelineConfigRequest;

PipelineConfig::PipelineConfig()
{
    has_p4info_ = t4p4s_program.p4info != nullptr &&
                  p4info_.ParseFromArray(t4p4s_program.p4info,
                                         (int)t4p4s_program.p4info_size);
}

grpc::Status PipelineConfig::verify(const p4::v1::ForwardingPipelineConfig &config) const
{
    if (!has_p4info_)
        return grpc::Status(StatusCode::FAILED_PRECONDITION,
                            "this executable carries no P4Info (not built by "
                            "`t4p4s compile`)");
    if (!config.has_p4info())
        return grpc::Status(StatusCode::INVALID_ARGUMENT, "the config has no P4Info");
    google::protobuf::util::MessageDifferencer differ;
    std::string differences;
    differ.ReportDifferencesToString(&differences);
    if (differ.Compare(p4info_, config.p4info()))
        return grpc::Status::OK;
    const size_t shown = 2000;
    if (differences.size() > shown)
        differences = differences.substr(0, shown) + "...";
    return grpc::Status(StatusCode::INVALID_ARGUMENT,
                        std::string("this target runs ") + t4p4s_program.name +
                            " and cannot load another pipeline; the P4Info "
                            "differs from it:\n" + differences);
}

grpc::Status PipelineConfig::set(const Request &request)
{
    std::lock_guard<std::mutex> lock(mu_);
    grpc::Status status;
    switch (request.action()) {
    case Request::VERIFY:
        return verify(request.config());
    case Request::VERIFY_AND_SAVE:
        status = verify(request.config());
        if (status.ok()) {
            saved_ = request.config();
            saved_.clear_p4info();
            has_saved_ = true;
        }
        return status;
    case Request::VERIFY_AND_COMMIT:
        status = verify(request.config());
        if (!status.ok())
            return status;
        if (t4p4s_ctl_reset_state() != 0)
            return grpc::Status(StatusCode::INTERNAL, t4p4s_ctl_last_error());
        entry_metadata().clear();    // the tables are empty again
        committed_ = request.config();
        committed_.clear_p4info();
        has_saved_ = false;
        return grpc::Status::OK;
    case Request::RECONCILE_AND_COMMIT:
        status = verify(request.config());
        if (status.ok()) {
            committed_ = request.config();
            committed_.clear_p4info();
            has_saved_ = false;
        }
        return status;
    case Request::COMMIT:
        if (request.has_config())
            return grpc::Status(StatusCode::INVALID_ARGUMENT,
                                "COMMIT takes no config: it commits the saved one");
        if (!has_saved_)
            return grpc::Status(StatusCode::NOT_FOUND,
                                "no config saved by VERIFY_AND_SAVE");
        committed_ = saved_;
        has_saved_ = false;
        return grpc::Status::OK;
    default:
        return grpc::Status(StatusCode::INVALID_ARGUMENT,
                            "action must be VERIFY, VERIFY_AND_SAVE, "
                            "VERIFY_AND_COMMIT, COMMIT or RECONCILE_AND_COMMIT");
    }
}

void PipelineConfig::get(p4::v1::GetForwardingPipelineConfigRequest::ResponseType type,
                         p4::v1::GetForwardingPipelineConfigResponse *response)
{
    using Get = p4::v1::GetForwardingPipelineConfigRequest;
    if (!has_p4info_)
        return;    // the config is not known: left unset, as the spec says
    std::lock_guard<std::mutex> lock(mu_);
    p4::v1::ForwardingPipelineConfig *config = response->mutable_config();
    if (committed_.has_cookie())
        *config->mutable_cookie() = committed_.cookie();
    if (type == Get::ALL || type == Get::P4INFO_AND_COOKIE)
        *config->mutable_p4info() = p4info_;
    if (type == Get::ALL || type == Get::DEVICE_CONFIG_AND_COOKIE)
        config->set_p4_device_config(committed_.p4_device_config());
}

}  // namespace t4p4s_p4rt
