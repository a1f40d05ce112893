// Where a gRPC server of ours listens, from its --p4runtime / --grpc value:
// the targets' P4Runtime server and the BaaS's (baas/grpc/server.cc).
#ifndef T4P4S_LISTEN_ADDRESS_H
#define T4P4S_LISTEN_ADDRESS_H

#include <string>

namespace t4p4s_grpc {

// "PORT" -> "127.0.0.1:PORT"; "HOST:PORT", "[V6]:PORT" and "unix:PATH" as given.
inline std::string listen_address(const std::string &address)
{
    if (address.find(':') == std::string::npos)
        return "127.0.0.1:" + address;
    return address;
}

}  // namespace t4p4s_grpc

#endif
