#include "program_ids.h"

namespace t4p4s_p4rt {

ProgramIds::ProgramIds()
{
    const struct t4p4s_program &p = t4p4s_program;
    for (int i = 0; i < p.n_tables; i++)
        tables_[p.tables[i].id] = i;
    for (int i = 0; i < p.n_actions; i++)
        actions_[p.actions[i].id] = i;
    for (int i = 0; i < p.n_counters; i++)
        counters_[p.counters[i].id] = i;
    for (int i = 0; i < p.n_registers; i++)
        registers_[p.registers[i].id] = i;
}

}  // namespace t4p4s_p4rt
