// Where Read puts the entities it finds: ReadResponse messages of at most
// kEntitiesPerMessage entities each (a read of a full table must not make
// one message larger than gRPC's 4 MB default). They are collected while
// the control API is locked and sent once it is unlocked, so a slow client
// never holds up writers.
#ifndef T4P4S_P4RT_ENTITY_SINK_H
#define T4P4S_P4RT_ENTITY_SINK_H

#include <vector>

#include <grpcpp/support/sync_stream.h>

#include "p4/v1/p4runtime.pb.h"

namespace t4p4s_p4rt {

class EntitySink {
public:
    static constexpr int kEntitiesPerMessage = 4096;

    p4::v1::Entity *add()
    {
        if (messages_.empty() ||
            messages_.back().entities_size() >= kEntitiesPerMessage)
            messages_.emplace_back();
        return messages_.back().add_entities();
    }

    // false if the client went away.
    bool send(grpc::ServerWriterInterface<p4::v1::ReadResponse> *writer)
    {
        for (const p4::v1::ReadResponse &m : messages_)
            if (!writer->Write(m))
                return false;
        return true;
    }

private:
    std::vector<p4::v1::ReadResponse> messages_;
};

}  // namespace t4p4s_p4rt

#endif
