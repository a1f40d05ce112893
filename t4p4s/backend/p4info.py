"""P4Info (p4.config.v1.P4Info) for a bound v1model program.

Built from the resource catalog (``resources.py``) that the C back end also
uses, so ids and names agree with the executable's descriptors.
"""
from __future__ import annotations

from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2
from google.protobuf import text_format

from ..ir import nodes as ir
from ..ir import types as T
from .resources import (ActionInfo, Resources, TableInfo, key_field_name,
                        key_field_width)

ARCH = "v1model"

_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT,
    "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY,
    "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}

_COUNTER_UNITS = {
    "packets": p4info_pb2.CounterSpec.PACKETS,
    "bytes": p4info_pb2.CounterSpec.BYTES,
    "packets_and_bytes": p4info_pb2.CounterSpec.BOTH,
}


def build_p4info(res: Resources, program_name: str) -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    info.pkg_info.name = program_name
    info.pkg_info.arch = ARCH
    aliases = _aliases([o.name for o in
                        res.actions + res.tables + res.counters + res.registers])
    for table in res.tables:
        _add_table(info.tables.add(), table, aliases)
    for action in res.actions:
        _add_action(info.actions.add(), action, aliases)
    for counter in res.counters:
        if counter.direct:
            msg = info.direct_counters.add()
            msg.direct_table_id = counter.table.id if counter.table else 0
        else:
            msg = info.counters.add()
            msg.size = counter.size
        _preamble(msg.preamble, counter.id, counter.name, aliases, counter.decl)
        msg.spec.unit = _COUNTER_UNITS.get(counter.unit,
                                           p4info_pb2.CounterSpec.UNSPECIFIED)
    for register in res.registers:
        msg = info.registers.add()
        _preamble(msg.preamble, register.id, register.name, aliases,
                  register.decl)
        msg.type_spec.bitstring.bit.bitwidth = register.bitwidth
        msg.size = register.size
    return info


def write_p4info(info: p4info_pb2.P4Info, out_dir: Path, name: str):
    """Writes NAME.p4info.binpb and NAME.p4info.txtpb; returns both paths."""
    binary = Path(out_dir) / f"{name}.p4info.binpb"
    text = Path(out_dir) / f"{name}.p4info.txtpb"
    _write_if_changed(binary, info.SerializeToString(deterministic=True))
    _write_if_changed(text, text_format.MessageToString(info).encode())
    return binary, text


def _write_if_changed(path: Path, data: bytes) -> None:
    """Keep the mtime of unchanged outputs, so builds that depend on them
    are not redone."""
    if path.exists() and path.read_bytes() == data:
        return
    path.write_bytes(data)


def _add_table(msg, table: TableInfo, aliases) -> None:
    _preamble(msg.preamble, table.id, table.name, aliases, table.decl)
    for i, key in enumerate(table.decl.keys, start=1):
        field = msg.match_fields.add()
        field.id = i
        field.name = key_field_name(key)
        field.bitwidth = key_field_width(key)
        field.match_type = _MATCH_TYPES[key.match_kind]
    for ref in table.actions:
        action_ref = msg.action_refs.add()
        action_ref.id = ref.action.id
        if ref.table_only:
            action_ref.scope = p4info_pb2.ActionRef.TABLE_ONLY
            action_ref.annotations.append("@tableonly")
        elif ref.default_only:
            action_ref.scope = p4info_pb2.ActionRef.DEFAULT_ONLY
            action_ref.annotations.append("@defaultonly")
    decl = table.decl
    if decl.default_action is not None and decl.default_action_is_const:
        msg.const_default_action_id = table.action_ref_for(
            decl.default_action.action).action.id
    if table.direct_counter is not None:
        msg.direct_resource_ids.append(table.direct_counter.id)
    msg.size = table.size
    if decl.entries:
        msg.is_const_table = decl.entries_are_const
        msg.has_initial_entries = True


def _add_action(msg, action: ActionInfo, aliases) -> None:
    _preamble(msg.preamble, action.id, action.name, aliases, action.decl)
    for i, param in enumerate(action.data_params, start=1):
        p = msg.params.add()
        p.id = i
        p.name = param.name
        p.bitwidth = T.width_of(param.type)


def _preamble(msg, obj_id: int, name: str, aliases, decl) -> None:
    msg.id = obj_id
    msg.name = name
    msg.alias = aliases[name]
    for a in getattr(decl, "annotations", []):
        if a.name in ("name", "id", "tableonly", "defaultonly"):
            continue
        msg.annotations.append(_annotation_text(a))


def _annotation_text(a: ir.Annotation) -> str:
    if not a.args:
        return f"@{a.name}"
    args = []
    for arg in a.args:
        if isinstance(arg, ir.StringLiteral):
            args.append(f'"{arg.value}"')
        elif isinstance(arg, (ir.IntLiteral, ir.BoolLiteral)):
            args.append(str(arg.value).lower() if isinstance(arg.value, bool)
                        else str(arg.value))
        else:
            args.append(str(arg))
    return f"@{a.name}({', '.join(args)})"


def _aliases(names: list) -> dict:
    """Shortest dotted suffix of each name that no other name ends with."""
    parts = {n: n.split(".") for n in names}
    result = {}
    for name, p in parts.items():
        for k in range(1, len(p) + 1):
            suffix = ".".join(p[-k:])
            clash = any(other != name and (other == suffix or
                                           other.endswith("." + suffix))
                        for other in names)
            if not clash:
                result[name] = suffix
                break
        else:
            result[name] = name
    return result
