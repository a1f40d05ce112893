#include "table_action.h"

#include "bytestrings.h"

namespace t4p4s_p4rt {

using grpc::StatusCode;

Outcome ActionBuffer::parse(const t4p4s_table_desc &table,
                            const ProgramIds &ids,
                            const p4::v1::TableAction &action, bool as_default)
{
    if (action.type_case() != p4::v1::TableAction::kAction)
        return fail(StatusCode::INVALID_ARGUMENT,
                    std::string("table ") + table.name +
                        " is a direct table: its entries take an action, not "
                        "action profile members or groups");
    const p4::v1::Action &a = action.action();
    int index = ids.action(a.action_id());
    const t4p4s_table_action *ta = nullptr;
    for (unsigned i = 0; index >= 0 && i < table.n_actions; i++)
        if (table.actions[i].action == index)
            ta = &table.actions[i];
    if (ta == nullptr)
        return fail(StatusCode::INVALID_ARGUMENT,
                    "action id " + std::to_string(a.action_id()) +
                        " is not an action of table " + table.name);
    const t4p4s_action_desc &desc = t4p4s_program.actions[index];
    if (as_default ? ta->table_only : ta->default_only)
        return fail(StatusCode::PERMISSION_DENIED,
                    std::string(desc.name) + " is " +
                        (as_default ? "@tableonly" : "@defaultonly") +
                        " in table " + table.name);
    if ((unsigned)a.params_size() != desc.n_params)
        return fail(StatusCode::INVALID_ARGUMENT,
                    std::string(desc.name) + " takes " +
                        std::to_string(desc.n_params) + " parameters, not " +
                        std::to_string(a.params_size()));
    action_ = (uint16_t)index;
    params_.assign(desc.n_params, t4p4s_bytes{nullptr, 0});
    for (const p4::v1::Action::Param &p : a.params()) {
        unsigned i = 0;
        while (i < desc.n_params && desc.params[i].id != p.param_id())
            i++;
        if (i == desc.n_params)
            return fail(StatusCode::INVALID_ARGUMENT,
                        std::string(desc.name) + " has no parameter with id " +
                            std::to_string(p.param_id()));
        if (params_[i].data != nullptr)
            return fail(StatusCode::INVALID_ARGUMENT,
                        std::string("parameter ") + desc.params[i].name +
                            " given twice");
        Outcome r = check_fits(p.value(), desc.params[i].bitwidth,
                               std::string("parameter ") + desc.params[i].name);
        if (!r.ok())
            return r;
        params_[i] = {reinterpret_cast<const uint8_t *>(p.value().data()),
                      p.value().size()};
    }
    return ok();
}

void action_to_p4rt(const t4p4s_entry_view &view, p4::v1::Action *action)
{
    const t4p4s_action_desc &desc = t4p4s_program.actions[view.action];
    action->set_action_id(desc.id);
    for (unsigned i = 0; i < desc.n_params; i++) {
        const t4p4s_param_desc &p = desc.params[i];
        std::vector<uint8_t> be(width_bytes(p.bitwidth));
        t4p4s_ctl_param_to_bytes(&p, view.data, be.data());
        p4::v1::Action::Param *out = action->add_params();
        out->set_param_id(p.id);
        out->set_value(canonical(be.data(), be.size()));
    }
}

}  // namespace t4p4s_p4rt
