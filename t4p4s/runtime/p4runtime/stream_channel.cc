#include "stream_channel.h"

#include <grpcpp/support/proto_buffer_reader.h>

namespace t4p4s_p4rt {

using grpc::StatusCode;

StreamChannelReactor::StreamChannelReactor(Arbitration &arbitration)
    : arbitration_(arbitration)
{
    StartRead(&request_);
}

void StreamChannelReactor::OnReadDone(bool ok)
{
    if (!ok) {    // the client closed its side, or the call is cancelled
        close(grpc::Status::OK);
        return;
    }
    p4::v1::StreamMessageRequest request;
    grpc::Status status;
    {
        grpc::ProtoBufferReader reader(&request_);
        if (!request.ParseFromZeroCopyStream(&reader))
            status = grpc::Status(StatusCode::INVALID_ARGUMENT,
                                  "the message does not parse as a "
                                  "p4.v1.StreamMessageRequest");
    }
    request_.Clear();
    if (status.ok())
        status = handle(request);
    if (!status.ok()) {
        close(status);
        return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!closing_)
        StartRead(&request_);
}

grpc::Status StreamChannelReactor::handle(
    const p4::v1::StreamMessageRequest &request)
{
    switch (request.update_case()) {
    case p4::v1::StreamMessageRequest::kArbitration: {
        grpc::Status status = arbitration_.arbitrate(
            self_, role_name_, !arbitrated_, request.arbitration());
        arbitrated_ = arbitrated_ || status.ok();
        return status;
    }
    case p4::v1::StreamMessageRequest::kPacket:
        send_error(StatusCode::UNIMPLEMENTED,
                   "this target has no packet I/O (no CPU port)");
        return grpc::Status::OK;
    default:
        send_error(StatusCode::UNIMPLEMENTED,
                   "this target sends no digests and takes no other stream "
                   "messages");
        return grpc::Status::OK;
    }
}

void StreamChannelReactor::send_error(StatusCode code, const std::string &message)
{
    p4::v1::StreamMessageResponse response;
    response.mutable_error()->set_canonical_code(code);
    response.mutable_error()->set_message(message);
    send(response);
}

void StreamChannelReactor::send(const p4::v1::StreamMessageResponse &response)
{
    std::string bytes = response.SerializeAsString();
    grpc::Slice slice(bytes);
    std::unique_lock<std::mutex> lock(mu_);
    if (closing_)
        return;
    if (queue_.size() > kMaxQueued) {
        // The client does not read: drop what waits (not the response
        // being written: gRPC holds it) and end the stream now, not once
        // the queue drains, which it never might.
        queue_.erase(queue_.begin() + (writing_ ? 1 : 0), queue_.end());
        closing_ = finish_called_ = true;
        self_.closed = true;
        lock.unlock();
        Finish(grpc::Status(StatusCode::RESOURCE_EXHAUSTED,
                            "the client does not read its StreamChannel: " +
                                std::to_string(kMaxQueued) +
                                " responses were waiting"));
        return;
    }
    queue_.emplace_back(&slice, 1);
    pump(lock);
}

void StreamChannelReactor::close(const grpc::Status &status)
{
    std::unique_lock<std::mutex> lock(mu_);
    if (closing_)
        return;
    closing_ = true;
    final_status_ = status;
    self_.closed = true;
    pump(lock);
}

void StreamChannelReactor::pump(std::unique_lock<std::mutex> &lock)
{
    if (writing_)
        return;
    if (!queue_.empty()) {
        writing_ = true;
        // stays put until OnWriteDone pops it (a deque's push_back moves
        // no element)
        const grpc::ByteBuffer *next = &queue_.front();
        lock.unlock();
        StartWrite(next);
        return;
    }
    if (closing_ && !finish_called_) {
        finish_called_ = true;
        grpc::Status status = final_status_;
        lock.unlock();
        Finish(status);
    }
}

void StreamChannelReactor::OnWriteDone(bool ok)
{
    std::unique_lock<std::mutex> lock(mu_);
    queue_.pop_front();
    writing_ = false;
    if (!ok) {    // the call is cancelled: nothing more gets through
        queue_.clear();
        if (!closing_) {
            closing_ = true;
            final_status_ = grpc::Status(StatusCode::CANCELLED, "the client went away");
            self_.closed = true;
        }
    }
    pump(lock);
}

void StreamChannelReactor::OnDone()
{
    if (arbitrated_)
        arbitration_.leave(role_name_, self_);
    delete this;
}

}  // namespace t4p4s_p4rt
