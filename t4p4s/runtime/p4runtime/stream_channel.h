// One StreamChannel (P4Runtime spec, "StreamChannel"), served by a gRPC
// callback reactor on raw bytes, so that
//  - nothing ever waits for the client: responses (arbitration advisories,
//    stream errors) go into a bounded queue written out one at a time as
//    the client reads them. A client that lets kMaxQueued of them pile up
//    is not reading: its stream ends with RESOURCE_EXHAUSTED, and no Write
//    of the primary ever waits for it;
//  - a request that does not parse ends the stream with INVALID_ARGUMENT
//    (gRPC's own deserialization would report it to the server as the end
//    of the stream, and the stream would end with OK).
#ifndef T4P4S_P4RT_STREAM_CHANNEL_H
#define T4P4S_P4RT_STREAM_CHANNEL_H

#include <deque>
#include <mutex>
#include <string>

#include <grpcpp/grpcpp.h>

#include "arbitration.h"
#include "p4/v1/p4runtime.pb.h"

namespace t4p4s_p4rt {

class StreamChannelReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
      private StreamSender {
public:
    // Responses waiting for the client, beyond the one being written.
    static constexpr size_t kMaxQueued = 1024;

    // Starts serving; it deletes itself when the RPC is done.
    explicit StreamChannelReactor(Arbitration &arbitration);

    void OnReadDone(bool ok) override;
    void OnWriteDone(bool ok) override;
    void OnDone() override;

private:
    void send(const p4::v1::StreamMessageResponse &response) override;
    // A parsed request; an error status ends the stream.
    grpc::Status handle(const p4::v1::StreamMessageRequest &request);
    void send_error(grpc::StatusCode code, const std::string &message);
    // Ends the stream with `status` once the queued responses are written.
    void close(const grpc::Status &status);
    // Writes the next queued response, or finishes when closing and none
    // is left. Called with mu_ held; returns with it released.
    void pump(std::unique_lock<std::mutex> &lock);

    Arbitration &arbitration_;
    Arbitration::Controller self_{this};
    // touched only by the reactor's read side (one read at a time) and
    // OnDone (after every other callback)
    std::string role_name_;
    bool arbitrated_ = false;
    grpc::ByteBuffer request_;

    std::mutex mu_;   // guards what follows: the write side
    std::deque<grpc::ByteBuffer> queue_;   // front: being written if writing_
    bool writing_ = false;
    bool closing_ = false;         // no more responses; Finish when drained
    bool finish_called_ = false;
    grpc::Status final_status_;
};

}  // namespace t4p4s_p4rt

#endif
