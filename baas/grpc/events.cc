// Events: the event log as a server stream. Each stream is one reader of
// baas_api_events() with its own cursor, polling with a short timeout so
// that a cancelled stream or a stopping server is seen within it.
#include <vector>

#include <baas/api.h>

#include "messages.h"
#include "service.h"
#include "status.h"

namespace baas_grpc {

using grpc::StatusCode;

// Events copied per baas_api_events() call.
static constexpr size_t kEventsPerRead = 256;
// How long one call waits for events when following.
static constexpr int kEventsPollMs = 100;

grpc::Status Service::Events(grpc::ServerContext *context,
                             const baas::v1::EventsRequest *request,
                             grpc::ServerWriter<baas::v1::EventsResponse> *writer)
{
    const grpc::Status gone(StatusCode::CANCELLED, "the client went away");
    uint64_t cursor = request->from_seq();
    std::vector<baas_event> events(kEventsPerRead);
    for (;;) {
        if (stopping_)
            return grpc::Status(StatusCode::UNAVAILABLE, "the BaaS is stopping");
        if (context->IsCancelled())
            return gone;
        size_t n = 0;
        uint64_t lost = 0;
        int ret = baas_api_events(&cursor, events.data(), events.size(), &n, &lost,
                                  request->follow() ? kEventsPollMs : 0);
        if (ret < 0)
            return from_errno(ret, nullptr);
        if (lost != 0) {
            baas::v1::EventsResponse response;
            response.mutable_lost()->set_count(lost);
            if (!writer->Write(response))
                return gone;
        }
        for (size_t i = 0; i < n; i++) {
            baas::v1::EventsResponse response;
            to_message(events[i], response.mutable_event());
            if (!writer->Write(response))
                return gone;
        }
        // caught up: a read that did not fill the buffer
        if (!request->follow() && n < events.size())
            return grpc::Status::OK;
    }
}

}  // namespace baas_grpc
