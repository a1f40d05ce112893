"""``t4p4s_program``: the descriptors of every control-plane object, as
commented C initializers (layouts: see pipeline.h)."""
from __future__ import annotations

from ...diagnostics import CompileError
from ...ir import nodes as ir
from ...ir import types as T
from ..p4info import build_p4info
from ..resources import Resources, TableInfo, key_field_name
from .actions import Actions, c_ident, data_params
from .emit import CodeWriter, source_comment
from .tables import key_layout
from .types import is_wide, storage_bytes

_MATCH = {"exact": "T4P4S_MATCH_EXACT", "lpm": "T4P4S_MATCH_LPM",
          "ternary": "T4P4S_MATCH_TERNARY", "range": "T4P4S_MATCH_RANGE",
          "optional": "T4P4S_MATCH_OPTIONAL"}
_COUNTER = {"packets": "T4P4S_COUNTER_PACKETS", "bytes": "T4P4S_COUNTER_BYTES",
            "packets_and_bytes": "T4P4S_COUNTER_PACKETS_AND_BYTES"}


def _bytes(data: bytes) -> str:
    return "{ " + ", ".join(f"0x{b:02x}" for b in data) + " }"


def const_int(e) -> int:
    """Value of a folded constant (entries, default action arguments)."""
    if isinstance(e, ir.IntLiteral):
        return e.value
    if isinstance(e, ir.BoolLiteral):
        return int(e.value)
    if isinstance(e, ir.Cast):
        return const_int(e.expr) & ((1 << T.width_of(e.type)) - 1)
    if isinstance(e, ir.Member) and isinstance(e.type, T.TypeEnum) and \
            e.type.decl.underlying is not None:
        return e.type.decl.values[e.name]
    raise CompileError.at(getattr(e, "src", None), "expected a compile-time constant")


class Descriptors:
    def __init__(self, ctx, actions: Actions):
        self.ctx = ctx
        self.actions = actions
        self.w = CodeWriter()

    def emit(self, program_name: str, p4info_path: str) -> CodeWriter:
        res: Resources = self.ctx.resources
        w = self.w
        w.line("/* ---- control-plane objects (P4Info ids) ---- */")
        w.line()
        for a in res.actions:
            self._action_params(a)
        with w.block("static const struct t4p4s_action_desc actions[] =", "};"):
            for a in res.actions:
                struct = self.actions.data_struct(a.decl)
                w.line(f"[{a.index}] = {{ .name = \"{a.name}\", .id = 0x{a.id:08x}, "
                       f".n_params = {len(a.data_params)}, "
                       f".params = {'params_' + c_ident(a.name) if a.data_params else 'NULL'}, "
                       f".data_size = {f'sizeof({struct})' if struct else 0} }},")
        w.line()
        for t in res.tables:
            self._table_parts(t)
        with w.block("static const struct t4p4s_table_desc tables[] =", "};"):
            for t in res.tables:
                self._table(t)
        w.line()
        with w.block("static const struct t4p4s_counter_desc counters[] =", "};"):
            for c in res.counters:
                w.line(f"[{c.index}] = {{ .name = \"{c.name}\", .id = 0x{c.id:08x}, "
                       f".type = {_COUNTER.get(c.unit, 'T4P4S_COUNTER_PACKETS_AND_BYTES')}, "
                       f".size = {c.size}, "
                       f".direct_table = {c.table.index if c.direct and c.table else -1} }},")
        w.line()
        with w.block("static const struct t4p4s_register_desc registers[] =", "};"):
            for r in res.registers:
                w.line(f"[{r.index}] = {{ .name = \"{r.name}\", .id = 0x{r.id:08x}, "
                       f".bitwidth = {r.bitwidth}, .size = {r.size} }},")
        w.line()
        with w.block("static const char *const error_names[] =", "};"):
            for i, e in enumerate(self.ctx.errors):
                w.line(f"[{i}] = \"{e}\",")
        w.line()
        port_bits = next((T.width_of(f.type) for f in
                          self.ctx.bound.standard_metadata_type.decl.fields
                          if f.name == "egress_spec"), 9)
        self._p4info(program_name)
        with w.block("const struct t4p4s_program t4p4s_program =", "};"):
            w.line(f".name = \"{program_name}\",")
            w.line(f".p4info_path = \"{_c_string(p4info_path)}\",")
            w.line(f".n_actions = {len(res.actions)}, .actions = actions,")
            w.line(f".n_tables = {len(res.tables)}, .tables = tables,")
            w.line(f".n_counters = {len(res.counters)}, .counters = counters,")
            w.line(f".n_registers = {len(res.registers)}, .registers = registers,")
            w.line(f".n_errors = {len(self.ctx.errors)}, .error_names = error_names,")
            w.line(f".port_bits = {port_bits},")
            w.line(".p4info = p4info, .p4info_size = sizeof(p4info),")
        w.line()
        return w

    def _p4info(self, program_name: str) -> None:
        """The serialized P4Info, byte for byte the NAME.p4info.binpb the
        driver writes (same builder, deterministic serialization)."""
        data = build_p4info(self.ctx.resources, program_name).SerializeToString(
            deterministic=True)
        w = self.w
        with w.block("static const uint8_t p4info[] =", "};"):
            for i in range(0, len(data), 16):
                w.line(", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",")
        w.line()

    def _action_params(self, a) -> None:
        if not a.data_params:
            return
        w = self.w
        struct = self.actions.data_struct(a.decl)
        with w.block(f"static const struct t4p4s_param_desc params_{c_ident(a.name)}[] =", "};"):
            for i, p in enumerate(a.data_params, start=1):
                w.line(f"{{ .name = \"{p.name}\", .id = {i}, .bitwidth = {T.width_of(p.type)}, "
                       f".offset = offsetof({struct}, {p.name}), "
                       f".size = sizeof((({struct} *)0)->{p.name}) }},")
        w.line()

    def _data_initializer(self, action_decl, args, src) -> str:
        """``{ .p = v, ... }`` for an action call with constant arguments."""
        params = data_params(action_decl)
        values = [a.value for a in args][-len(params):] if params else []
        if len(values) != len(params):
            raise CompileError.at(src, f"action '{action_decl.name}' needs "
                                  f"{len(params)} arguments")
        fields = []
        for p, v in zip(params, values):
            n = const_int(v)
            if is_wide(p.type):
                fields.append(f".{p.name} = {_bytes(n.to_bytes(storage_bytes(p.type.width), 'big'))}")
            else:
                fields.append(f".{p.name} = {n & ((1 << 64) - 1):#x}")
        return "{ " + ", ".join(fields) + " }"

    def _table_parts(self, t: TableInfo) -> None:
        w = self.w
        cname = c_ident(t.name)
        layout, key_size = key_layout(t)
        w.line(source_comment(t.decl.src))
        with w.block(f"static const struct t4p4s_key_field_desc keys_{cname}[] =", "};"):
            for i, (key, width, offset) in enumerate(layout, start=1):
                w.line(f"{{ .name = \"{key_field_name(key)}\", .id = {i}, "
                       f".match_kind = {_MATCH[key.match_kind]}, .bitwidth = {width}, "
                       f".offset = {offset} }},")
        with w.block(f"static const struct t4p4s_table_action table_actions_{cname}[] =", "};"):
            for ref in t.actions:
                w.line(f"{{ .action = {ref.action.index}, .table_only = "
                       f"{'true' if ref.table_only else 'false'}, .default_only = "
                       f"{'true' if ref.default_only else 'false'} }},  /* {ref.action.name} */")
        default = t.decl.default_action
        default_decl = default.action if default else t.actions[-1].action.decl
        struct = self.actions.data_struct(default_decl)
        if struct:
            w.line(f"static const {struct} default_data_{cname} = "
                   f"{self._data_initializer(default_decl, default.args, default.src)};")
        for i, entry in enumerate(t.decl.entries):
            self._const_entry(t, i, entry, layout, key_size)
        if t.decl.entries:
            with w.block(f"static const struct t4p4s_const_entry entries_{cname}[] =", "};"):
                for i, entry in enumerate(t.decl.entries):
                    n = f"{cname}_{i}"
                    has_data = self.actions.data_struct(entry.action.action) is not None
                    w.line(f"{{ .key = entry_key_{n}, .mask = entry_mask_{n}, "
                           f".prefix_len = {self._prefix_len(t, entry)}, "
                           f".priority = {self._priority(t, i, entry)}, "
                           f".action = {t.action_index(entry.action.action)}, "
                           f".data = {f'(const uint8_t *)&entry_data_{n}' if has_data else 'NULL'} }},")
        w.line()

    def _table(self, t: TableInfo) -> None:
        w = self.w
        cname = c_ident(t.name)
        layout, key_size = key_layout(t)
        default = t.decl.default_action
        default_decl = default.action if default else t.actions[-1].action.decl
        struct = self.actions.data_struct(default_decl)
        data_structs = [self.actions.data_struct(r.action.decl) for r in t.actions
                        if self.actions.data_struct(r.action.decl)]
        w.line(f"[{t.index}] = {{  /* {source_comment(t.decl.src)[3:-3]} */")
        with w.indented():
            w.line(f".name = \"{t.name}\", .id = 0x{t.id:08x},")
            w.line(f".n_keys = {len(layout)}, .keys = keys_{cname}, .key_size = {key_size},")
            w.line(f".n_actions = {len(t.actions)}, .actions = table_actions_{cname},")
            w.line(f".size = {t.size},")
            w.line(f".data_size = {_largest_size(data_structs)},")
            w.line(f".default_action = {t.action_index(default_decl)}, "
                   f".default_data = {f'(const uint8_t *)&default_data_{cname}' if struct else 'NULL'}, "
                   f".default_is_const = {'true' if t.decl.default_action_is_const else 'false'},")
            w.line(f".direct_counter = {t.direct_counter.index if t.direct_counter else -1},")
            w.line(f".n_const_entries = {len(t.decl.entries)}, "
                   f".const_entries = {f'entries_{cname}' if t.decl.entries else 'NULL'},")
            w.line(f".entries_are_const = {'true' if t.decl.entries and t.decl.entries_are_const else 'false'},")
        w.line("},")

    def _const_entry(self, t, i, entry, layout, key_size) -> None:
        key, mask = bytearray(key_size), bytearray(key_size)
        for (k, width, offset), ks in zip(layout, entry.keys):
            n = storage_bytes(width)
            full = (1 << width) - 1
            if isinstance(ks, ir.DefaultExpr):
                v, m = (0, full) if k.match_kind == "range" else (0, 0)
            elif isinstance(ks, ir.Mask):
                v, m = const_int(ks.value), const_int(ks.mask)
                if k.match_kind == "lpm":
                    v &= m
            elif isinstance(ks, ir.Range):
                v, m = const_int(ks.lo), const_int(ks.hi)
            else:
                v = const_int(ks)
                m = v if k.match_kind == "range" else full
            key[offset:offset + n] = (v & full).to_bytes(n, "big")
            mask[offset:offset + n] = (m & full).to_bytes(n, "big")
        n = f"{c_ident(t.name)}_{i}"
        w = self.w
        w.line(source_comment(entry.src))
        key_c, mask_c = _bytes(bytes(key) or b"\0"), _bytes(bytes(mask) or b"\0")
        w.line(f"static const uint8_t entry_key_{n}[{max(key_size, 1)}] = {key_c};")
        w.line(f"static const uint8_t entry_mask_{n}[{max(key_size, 1)}] = {mask_c};")
        struct = self.actions.data_struct(entry.action.action)
        if struct:
            w.line(f"static const {struct} entry_data_{n} = "
                   f"{self._data_initializer(entry.action.action, entry.action.args, entry.src)};")

    def _prefix_len(self, t, entry) -> int:
        for k, ks in zip(t.decl.keys, entry.keys):
            if k.match_kind != "lpm":
                continue
            if isinstance(ks, ir.DefaultExpr):
                return 0
            width = T.width_of(k.expr.type)
            if isinstance(ks, ir.Mask):
                return bin(const_int(ks.mask) & ((1 << width) - 1)).count("1")
            return width
        return 0

    def _priority(self, t, i, entry) -> int:
        """P4Runtime priority (larger wins): an explicit one as given (mapped
        when the table says smaller wins), else earlier entries win."""
        needs = any(k.match_kind in ("ternary", "range", "optional") for k in t.decl.keys)
        if not needs:
            return 0
        n = len(t.decl.entries)
        if entry.priority is None:
            return n - i
        return entry.priority if t.decl.largest_priority_wins else (1 << 24) - entry.priority


def _largest_size(structs: list) -> str:
    """A constant expression for the largest of the structs (the size of
    their union): usable in a file-scope initializer, unlike RTE_MAX."""
    if not structs:
        return "0"
    if len(structs) == 1:
        return f"sizeof({structs[0]})"
    members = " ".join(f"{s} a{i};" for i, s in enumerate(structs))
    return f"sizeof(union {{ {members} }})"


def _c_string(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')
