// t4p4s_p4runtime_start/stop: the gRPC server around the Service.
#include "p4runtime_server.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "listen_address.h"
#include "service.h"

namespace {

std::unique_ptr<t4p4s_p4rt::Service> service;
std::unique_ptr<grpc::Server> server;

}  // namespace

extern "C" int t4p4s_p4runtime_start(const char *address, uint64_t device_id)
{
    std::string where = t4p4s_grpc::listen_address(address);
    service = std::make_unique<t4p4s_p4rt::Service>(device_id);
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort(where, grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    // a Write of many thousand entries in one request
    builder.SetMaxReceiveMessageSize(256 << 20);
    server = builder.BuildAndStart();
    if (server == nullptr || port == 0) {
        std::fprintf(stderr, "error: --p4runtime: cannot listen on %s\n",
                     where.c_str());
        server.reset();
        service.reset();
        return -1;
    }
    std::string host = where.substr(0, where.rfind(':'));
    std::printf("t4p4s: P4Runtime server on %s:%d (device id %llu)\n",
                host.c_str(), port, (unsigned long long)device_id);
    std::fflush(stdout);
    return 0;
}

extern "C" void t4p4s_p4runtime_stop(void)
{
    if (server == nullptr)
        return;
    // open StreamChannels end now; unary RPCs get a moment to finish
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server->Wait();
    server.reset();
    service.reset();
}
