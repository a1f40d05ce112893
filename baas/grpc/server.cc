// baas_grpc_start/stop: the gRPC server around the Service (service.h).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include <baas/api.h>

#include "listen_address.h"
#include "service.h"

namespace {

std::unique_ptr<baas_grpc::Service> service;
std::unique_ptr<grpc::Server> server;

}  // namespace

extern "C" int baas_grpc_start(const char *address)
{
    if (server != nullptr) {
        std::fprintf(stderr, "error: --grpc: the gRPC server is already running\n");
        return -1;
    }
    std::string where = t4p4s_grpc::listen_address(address);
    service = std::make_unique<baas_grpc::Service>();
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort(where, grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    if (server == nullptr || port == 0) {
        std::fprintf(stderr, "error: --grpc: cannot listen on %s\n", where.c_str());
        server.reset();
        service.reset();
        return -1;
    }
    if (where.rfind("unix:", 0) == 0) {
        // a UNIX socket: reachable from any network namespace (the
        // topology runs the BaaS in its own, gnbctl in the root one)
        std::printf("baas: gRPC server on %s\n", where.c_str());
        std::fflush(stdout);
        return 0;
    }
    std::string host = where.substr(0, where.rfind(':'));
    std::printf("baas: gRPC server on %s:%d\n", host.c_str(), port);
    std::fflush(stdout);
    return 0;
}

extern "C" void baas_grpc_stop(void)
{
    if (server == nullptr)
        return;
    // open Events streams end at their next poll; unary RPCs get a moment
    // to finish (an lcore answers within BAAS_API_TIMEOUT_MS)
    service->stop();
    server->Shutdown(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(BAAS_API_TIMEOUT_MS + 500));
    server->Wait();
    server.reset();
    service.reset();
}
