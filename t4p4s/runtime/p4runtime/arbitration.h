// Client arbitration (P4Runtime spec "Client Arbitration and Controller
// Replication"): StreamChannel sessions per (device_id, role), the primary
// of each role (highest election id ever seen, while connected), and the
// MasterArbitrationUpdate advisories to every controller of a role.
#ifndef T4P4S_P4RT_ARBITRATION_H
#define T4P4S_P4RT_ARBITRATION_H

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "p4/v1/p4runtime.pb.h"

namespace t4p4s_p4rt {

// How the arbitration sends an advisory to a controller's stream. It must
// never block: it is called with the arbitration's mutex held, which every
// Write takes (a stream that cannot take more is closed, see
// stream_channel.h).
class StreamSender {
public:
    virtual void send(const p4::v1::StreamMessageResponse &response) = 0;

protected:
    ~StreamSender() = default;
};

class Arbitration {
public:
    using ElectionId = unsigned __int128;

    // One StreamChannel's controller; its stream owns it.
    struct Controller {
        explicit Controller(StreamSender *s) : stream(s) {}
        StreamSender *stream;
        bool has_election_id = false;
        ElectionId election_id = 0;
        // the stream is ending: no longer primary, no more advisories (it
        // leaves its role once the stream is done)
        std::atomic<bool> closed{false};
    };

    explicit Arbitration(uint64_t device_id) : device_id_(device_id) {}

    // A MasterArbitrationUpdate of `c`'s stream (`first`: the stream's
    // first, which sets its role_name). An error status ends the stream.
    grpc::Status arbitrate(Controller &c, std::string &role_name, bool first,
                           const p4::v1::MasterArbitrationUpdate &update);
    // The stream of `c` (which arbitrated for `role_name`) is done.
    void leave(const std::string &role_name, Controller &c);

    // Whether (device_id, role, election_id) of a Write or
    // SetForwardingPipelineConfig is the primary: OK, NOT_FOUND (unknown
    // device or role) or PERMISSION_DENIED.
    grpc::Status check_primary(uint64_t device_id, const std::string &role,
                               const p4::v1::Uint128 &election_id);

private:
    struct Role {
        std::vector<Controller *> controllers;
        bool seen_election_id = false;   // some controller ever sent one
        ElectionId highest = 0;          // the highest election id ever seen
        Controller *primary = nullptr;
    };

    void elect(const std::string &name, Role &role, Controller &c,
               bool was_primary);
    // The advisory to every controller of the role (or to `only`).
    void notify(const std::string &name, const Role &role,
                const Controller *only);

    static ElectionId to_id(const p4::v1::Uint128 &id)
    {
        return (ElectionId)id.high() << 64 | id.low();
    }

    const uint64_t device_id_;
    std::mutex mu_;   // guards roles_ (sends to streams never block)
    std::map<std::string, Role> roles_;
};

}  // namespace t4p4s_p4rt

#endif
