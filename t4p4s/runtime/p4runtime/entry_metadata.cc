#include "entry_metadata.h"

#include "bytestrings.h"

// controller_metadata is deprecated in favour of metadata; clients of older
// versions still send it, and the spec says it is returned like metadata.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace t4p4s_p4rt {

// The bytes that identify an entry: the table, each field's value (and for
// every kind but exact, its mask: the only part an exact field's mask
// does not carry), the priority. Values and masks are in key-buffer layout,
// as the C API takes and gives them.
std::string EntryMetadata::key(uint16_t table, const uint8_t *value,
                               const uint8_t *mask, int32_t priority)
{
    const t4p4s_table_desc &desc = t4p4s_program.tables[table];
    std::string k(reinterpret_cast<const char *>(&table), sizeof table);
    k.append(reinterpret_cast<const char *>(&priority), sizeof priority);
    for (unsigned i = 0; i < desc.n_keys; i++) {
        const t4p4s_key_field_desc &f = desc.keys[i];
        unsigned n = width_bytes(f.bitwidth);
        k.append(reinterpret_cast<const char *>(value + f.offset), n);
        if (f.match_kind != T4P4S_MATCH_EXACT)
            k.append(reinterpret_cast<const char *>(mask + f.offset), n);
    }
    return k;
}

void EntryMetadata::store(uint16_t table, const uint8_t *value,
                          const uint8_t *mask, int32_t priority,
                          const p4::v1::TableEntry &entry)
{
    bool none = entry.metadata().empty() && entry.controller_metadata() == 0;
    std::lock_guard<std::mutex> lock(mu_);
    // as in restore(): a bulk load of entries without metadata (65,536
    // DRBs) builds no key at all
    if (none && entries_.empty())
        return;
    std::string k = key(table, value, mask, priority);
    if (none)
        entries_.erase(k);
    else
        entries_[k] = {entry.metadata(), entry.controller_metadata()};
}

void EntryMetadata::forget(uint16_t table, const uint8_t *value,
                           const uint8_t *mask, int32_t priority)
{
    std::lock_guard<std::mutex> lock(mu_);
    if (!entries_.empty())
        entries_.erase(key(table, value, mask, priority));
}

void EntryMetadata::restore(uint16_t table, const uint8_t *value,
                            const uint8_t *mask, int32_t priority,
                            p4::v1::TableEntry *entry) const
{
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.empty())
        return;
    auto it = entries_.find(key(table, value, mask, priority));
    if (it == entries_.end())
        return;
    entry->set_metadata(it->second.metadata);
    entry->set_controller_metadata(it->second.controller_metadata);
}

void EntryMetadata::clear()
{
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
}

EntryMetadata &entry_metadata()
{
    static EntryMetadata store;
    return store;
}

}  // namespace t4p4s_p4rt
