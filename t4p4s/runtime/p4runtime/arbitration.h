// Client arbitration (P4Runtime spec "Client Arbitration and Controller
// Replication"): StreamChannel sessions per (device_id, role), the primary
// of each role (highest election id ever seen, while connected), and the
// MasterArbitrationUpdate advisories to every controller of a role.
#ifndef T4P4S_P4RT_ARBITRATION_H
#define T4P4S_P4RT_ARBITRATION_H

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/support/sync_stream.h>

#include "p4/v1/p4runtime.pb.h"

namespace t4p4s_p4rt {

using Stream = grpc::ServerReaderWriterInterface<p4::v1::StreamMessageResponse,
                                                 p4::v1::StreamMessageRequest>;

class Arbitration {
public:
    explicit Arbitration(uint64_t device_id) : device_id_(device_id) {}

    // Serves one StreamChannel until the client closes it (or is refused).
    grpc::Status serve(Stream *stream);

    // Whether (device_id, role, election_id) of a Write or
    // SetForwardingPipelineConfig is the primary: OK, NOT_FOUND (unknown
    // device or role) or PERMISSION_DENIED.
    grpc::Status check_primary(uint64_t device_id, const std::string &role,
                               const p4::v1::Uint128 &election_id);

private:
    using ElectionId = unsigned __int128;

    struct Controller {
        Stream *stream;
        bool has_election_id = false;
        ElectionId election_id = 0;
    };

    struct Role {
        std::vector<Controller *> controllers;
        bool seen_election_id = false;   // some controller ever sent one
        ElectionId highest = 0;          // the highest election id ever seen
        Controller *primary = nullptr;
    };

    grpc::Status arbitrate(Controller &c, std::string &role_name, bool first,
                           const p4::v1::MasterArbitrationUpdate &update);
    void elect(const std::string &name, Role &role, Controller &c,
               bool was_primary);
    // The advisory to every controller of the role (or to `only`).
    void notify(const std::string &name, const Role &role,
                const Controller *only);
    void leave(const std::string &role_name, Controller &c);
    void send_error(Controller &c, grpc::StatusCode code, const std::string &message);

    static ElectionId to_id(const p4::v1::Uint128 &id)
    {
        return (ElectionId)id.high() << 64 | id.low();
    }

    const uint64_t device_id_;
    std::mutex mu_;   // guards roles_ and every write to a stream
    std::map<std::string, Role> roles_;
};

}  // namespace t4p4s_p4rt

#endif
