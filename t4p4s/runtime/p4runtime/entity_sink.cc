#include "entity_sink.h"

namespace t4p4s_p4rt {

p4::v1::Entity *EntitySink::add()
{
    // the last entity is complete once the next one is asked for
    int n = message_.entities_size();
    if (n > 0)
        bytes_ += message_.entities(n - 1).ByteSizeLong();
    return message_.add_entities();
}

int EntitySink::room() const
{
    int n = message_.entities_size();
    if (n >= kEntitiesPerMessage || bytes_ >= kBytesPerMessage)
        return 0;
    return kEntitiesPerMessage - n;
}

Outcome EntitySink::flush()
{
    if (client_gone_)
        return fail(grpc::StatusCode::CANCELLED, "the client went away");
    if (message_.entities_size() == 0)
        return ok();
    if (!writer_->Write(message_)) {
        client_gone_ = true;
        return fail(grpc::StatusCode::CANCELLED, "the client went away");
    }
    message_.Clear();
    bytes_ = 0;
    return ok();
}

}  // namespace t4p4s_p4rt
