// Where Read puts the entities it finds: ReadResponse messages streamed to
// the client as they fill, each at most kEntitiesPerMessage entities and
// about kBytesPerMessage bytes (a read of millions of counter cells must
// neither make one huge message nor hold them all in memory).
//
// Readers fill it while holding the control API's mutex and call
// flush_if_full() after releasing it: sending waits for the client, and a
// slow client must never hold up writers.
#ifndef T4P4S_P4RT_ENTITY_SINK_H
#define T4P4S_P4RT_ENTITY_SINK_H

#include <cstddef>

#include <grpcpp/support/sync_stream.h>

#include "p4/v1/p4runtime.pb.h"
#include "status.h"

namespace t4p4s_p4rt {

class EntitySink {
public:
    static constexpr int kEntitiesPerMessage = 4096;
    static constexpr size_t kBytesPerMessage = 1 << 20;

    explicit EntitySink(grpc::ServerWriterInterface<p4::v1::ReadResponse> *writer)
        : writer_(writer) {}

    p4::v1::Entity *add();

    // How many more entities the current message takes (>= 1 unless full).
    int room() const;
    bool full() const { return room() == 0; }

    // Sends the current message if it is full / if it has any entities.
    // Never with the control API locked. CANCELLED once the client went away.
    Outcome flush_if_full() { return full() ? flush() : ok(); }
    Outcome flush();

    bool client_gone() const { return client_gone_; }

private:
    grpc::ServerWriterInterface<p4::v1::ReadResponse> *writer_;
    p4::v1::ReadResponse message_;
    size_t bytes_ = 0;    // of the entities before the last one added
    bool client_gone_ = false;
};

}  // namespace t4p4s_p4rt

#endif
