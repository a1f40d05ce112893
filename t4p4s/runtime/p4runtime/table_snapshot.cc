#include "table_snapshot.h"

#include <algorithm>
#include <cstring>

namespace t4p4s_p4rt {

int TableSnapshot::copy(void *snapshot, const t4p4s_entry_view *view)
{
    TableSnapshot &s = *static_cast<TableSnapshot *>(snapshot);
    Entry e{view->value == nullptr, *view};
    e.fields.value = e.fields.mask = e.fields.data = nullptr;
    size_t at = s.bytes_.size();
    s.bytes_.resize(at + s.entry_bytes(), 0);
    uint8_t *p = s.bytes_.data() + at;
    // (an empty key or action data leaves bytes_ empty: memcpy's pointers
    // must be valid even for 0 bytes)
    if (view->value != nullptr && s.key_size_ != 0)
        std::memcpy(p, view->value, s.key_size_);
    if (view->mask != nullptr && s.key_size_ != 0)
        std::memcpy(p + s.key_size_, view->mask, s.key_size_);
    // the action data of the entry's action (a default action's data is
    // only that long), at most the table's largest
    size_t data = std::min<size_t>(t4p4s_program.actions[view->action].data_size,
                                   s.data_size_);
    if (view->data != nullptr && data != 0)
        std::memcpy(p + 2 * s.key_size_, view->data, data);
    s.entries_.push_back(e);
    return 0;
}

t4p4s_entry_view TableSnapshot::view(size_t i) const
{
    const Entry &e = entries_[i];
    t4p4s_entry_view v = e.fields;
    const uint8_t *p = bytes_.data() + i * entry_bytes();
    if (!e.is_default) {
        v.value = p;
        v.mask = p + key_size_;
    }
    v.data = p + 2 * key_size_;
    return v;
}

}  // namespace t4p4s_p4rt
