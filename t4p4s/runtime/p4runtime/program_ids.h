// P4Info ids -> indices in the program descriptors (t4p4s_program), built
// once: every update and read request looks its objects up here.
#ifndef T4P4S_P4RT_PROGRAM_IDS_H
#define T4P4S_P4RT_PROGRAM_IDS_H

#include <cstdint>
#include <unordered_map>

#include <t4p4s/pipeline.h>

namespace t4p4s_p4rt {

class ProgramIds {
public:
    ProgramIds();

    // -1 when the program has no such object.
    int table(uint32_t id) const { return find(tables_, id); }
    int action(uint32_t id) const { return find(actions_, id); }
    int counter(uint32_t id) const { return find(counters_, id); }
    int reg(uint32_t id) const { return find(registers_, id); }

private:
    using Map = std::unordered_map<uint32_t, int>;
    static int find(const Map &m, uint32_t id)
    {
        auto it = m.find(id);
        return it == m.end() ? -1 : it->second;
    }
    Map tables_, actions_, counters_, registers_;
};

}  // namespace t4p4s_p4rt

#endif
