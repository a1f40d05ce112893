// The entries of one table (or its default entry, or one entry) copied out
// while the control API is locked, so that they are turned into P4Runtime
// entities and sent after it is unlocked: a read of a full table holds up
// writers only for the copy, and keeps no entry pointer past the lock (an
// entry may be freed once its RCU grace period is over).
#ifndef T4P4S_P4RT_TABLE_SNAPSHOT_H
#define T4P4S_P4RT_TABLE_SNAPSHOT_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include <t4p4s/control_api.h>
#include <t4p4s/pipeline.h>

namespace t4p4s_p4rt {

class TableSnapshot {
public:
    explicit TableSnapshot(const t4p4s_table_desc &table)
        : key_size_(table.key_size), data_size_(table.data_size) {}

    // A t4p4s_entry_visitor: the snapshot is `snapshot`.
    static int copy(void *snapshot, const t4p4s_entry_view *view);

    size_t size() const { return entries_.size(); }
    // The i-th entry copied, as the C API gave it; valid while the
    // snapshot lives.
    t4p4s_entry_view view(size_t i) const;

private:
    struct Entry {
        bool is_default;      // the view had no match
        t4p4s_entry_view fields;    // pointers unset: they are in bytes_
    };
    size_t entry_bytes() const { return 2 * (size_t)key_size_ + data_size_; }

    size_t key_size_, data_size_;
    std::vector<Entry> entries_;
    std::vector<uint8_t> bytes_;   // per entry: value, mask, action data
};

}  // namespace t4p4s_p4rt

#endif
