// TableEntry.metadata and the deprecated controller_metadata (P4Runtime
// spec, "TableEntry"): opaque to the target, which stores them and returns
// them with the entry on Read. The runtime's tables have no room for them,
// so the server keeps them here, per entry (table, match, priority); only
// entries that have some are stored. Entries written through the control
// socket or the entry file carry none.
#ifndef T4P4S_P4RT_ENTRY_METADATA_H
#define T4P4S_P4RT_ENTRY_METADATA_H

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include <t4p4s/pipeline.h>

#include "p4/v1/p4runtime.pb.h"

namespace t4p4s_p4rt {

class EntryMetadata {
public:
    // After a successful INSERT or MODIFY of `entry`: keeps its metadata
    // (forgets the entry's old one when it has none).
    void store(uint16_t table, const uint8_t *value, const uint8_t *mask,
               int32_t priority, const p4::v1::TableEntry &entry);
    // After a successful DELETE.
    void forget(uint16_t table, const uint8_t *value, const uint8_t *mask,
                int32_t priority);
    // Copies the entry's metadata, if it has some, into `entry`.
    void restore(uint16_t table, const uint8_t *value, const uint8_t *mask,
                 int32_t priority, p4::v1::TableEntry *entry) const;
    // Every table emptied (a new pipeline committed).
    void clear();

private:
    struct Value {
        std::string metadata;
        uint64_t controller_metadata;
    };
    static std::string key(uint16_t table, const uint8_t *value,
                           const uint8_t *mask, int32_t priority);

    // its own lock: Read looks entries up after the control API is unlocked
    mutable std::mutex mu_;
    std::unordered_map<std::string, Value> entries_;
};

// The one store of the process (tables are process-wide, as is the
// control API that owns them).
EntryMetadata &entry_metadata();

}  // namespace t4p4s_p4rt

#endif
