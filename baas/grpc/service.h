// The Baas service of baas.proto. Every RPC runs in gRPC's threads and
// reaches the BaaS's state only through the control API
// (baas/include/baas/api.h): the lcores never see it.
#ifndef BAAS_GRPC_SERVICE_H
#define BAAS_GRPC_SERVICE_H

#include <atomic>
#include <mutex>

#include "baas.grpc.pb.h"

namespace baas_grpc {

class Service final : public baas::v1::Baas::Service {
public:
    grpc::Status GetStats(grpc::ServerContext *, const baas::v1::StatsRequest *,
                          baas::v1::StatsResponse *) override;
    grpc::Status ListDrbs(grpc::ServerContext *, const baas::v1::ListDrbsRequest *,
                          grpc::ServerWriter<baas::v1::ListDrbsResponse> *) override;
    grpc::Status ListSns(grpc::ServerContext *, const baas::v1::ListSnsRequest *,
                         baas::v1::ListSnsResponse *) override;
    grpc::Status GetConfig(grpc::ServerContext *, const baas::v1::ConfigRequest *,
                           baas::v1::ConfigResponse *) override;
    grpc::Status SetConfig(grpc::ServerContext *, const baas::v1::SetConfigRequest *,
                           baas::v1::ConfigResponse *) override;
    grpc::Status Flush(grpc::ServerContext *, const baas::v1::FlushRequest *,
                       baas::v1::FlushResponse *) override;
    // events.cc
    grpc::Status Events(grpc::ServerContext *, const baas::v1::EventsRequest *,
                        grpc::ServerWriter<baas::v1::EventsResponse> *) override;

    // Open Events streams end (UNAVAILABLE) at their next poll; called
    // before the server shuts down, which waits for them.
    void stop() { stopping_ = true; }

private:
    std::atomic<bool> stopping_{false};
    // SetConfig reads, changes and writes a config: two of them at once
    // would each write back the other's fields as they were before.
    std::mutex set_config_;
};

// The most SNs ListSns answers (and the default): more than any DRB holds.
constexpr uint32_t kMaxSns = 262144;
// DRBs per ListDrbsResponse.
constexpr size_t kDrbsPerResponse = 1024;

}  // namespace baas_grpc

#endif
