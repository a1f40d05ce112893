// Outcomes of P4Runtime operations and how they become gRPC statuses:
// one update or read request -> an Outcome; a batch -> OK, or UNKNOWN with
// one p4.v1.Error per element in google.rpc.Status.details (P4Runtime spec,
// "Error Reporting").
#ifndef T4P4S_P4RT_STATUS_H
#define T4P4S_P4RT_STATUS_H

#include <string>
#include <vector>

#include <grpcpp/support/status.h>

namespace t4p4s_p4rt {

struct Outcome {
    grpc::StatusCode code = grpc::StatusCode::OK;
    std::string message;

    bool ok() const { return code == grpc::StatusCode::OK; }
};

inline Outcome ok() { return {}; }
Outcome fail(grpc::StatusCode code, std::string message);

// A negative errno of the C control API, with its last error message.
Outcome from_errno(int ret);

grpc::Status to_status(const Outcome &outcome);

// OK when every element succeeded, else UNKNOWN with their details.
grpc::Status batch_status(const std::vector<Outcome> &outcomes,
                          const char *what);

}  // namespace t4p4s_p4rt

#endif
