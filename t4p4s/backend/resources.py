"""The control-plane visible objects of a bound program and their ids.

Both back ends read this catalog: P4Info describes it, the C back end lays
out its descriptors from it, so the ids and the names in the executable and
in the P4Info can never disagree.

Ids follow the P4Runtime specification and are p4c's (``p4info_ids.py``):
the resource type prefix in the top byte, a hash of the fully qualified name
below it (so adding an unrelated object does not renumber the others),
``@id`` annotations honoured, collisions probed in sorted-name order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..diagnostics import CompileError
from ..ir import nodes as ir
from ..ir import types as T
from ..midend.v1model import V1ModelProgram

from .p4info_ids import (PREFIX_ACTION, PREFIX_COUNTER, PREFIX_DIRECT_COUNTER,
                         PREFIX_REGISTER, PREFIX_TABLE, IdError, assign_ids)

DEFAULT_TABLE_SIZE = 1024

# Externs whose instances the runtime does not implement yet.
_UNSUPPORTED_EXTERNS = {
    "meter": "meter", "direct_meter": "direct_meter",
    "action_profile": "action_profile", "action_selector": "action_selector",
    "Checksum16": "Checksum16 (deprecated; use verify_checksum/update_checksum)",
}


@dataclass
class ActionInfo:
    decl: ir.ActionDecl
    name: str
    id: int = 0
    index: int = 0                 # position in t4p4s_program.actions

    @property
    def data_params(self) -> list:
        """Directionless parameters: the action data the control plane sets."""
        return [p for p in self.decl.params if p.direction == ir.Direction.NONE]


@dataclass
class TableActionRef:
    action: ActionInfo
    ref: ir.ActionRef
    table_only: bool = False
    default_only: bool = False


@dataclass
class TableInfo:
    decl: ir.TableDecl
    control: ir.ControlDecl
    name: str
    actions: list = field(default_factory=list)    # list[TableActionRef]
    direct_counter: Optional["CounterInfo"] = None
    id: int = 0
    index: int = 0

    @property
    def size(self) -> int:
        return self.decl.size if self.decl.size is not None else DEFAULT_TABLE_SIZE

    def action_index(self, decl: ir.ActionDecl) -> int:
        for i, ref in enumerate(self.actions):
            if ref.action.decl is decl:
                return i
        raise KeyError(decl.name)

    def action_ref_for(self, decl: ir.ActionDecl) -> TableActionRef:
        return self.actions[self.action_index(decl)]


@dataclass
class CounterInfo:
    decl: ir.Instantiation
    name: str
    unit: str                      # "packets" | "bytes" | "packets_and_bytes"
    size: int
    direct: bool = False
    table: Optional[TableInfo] = None
    id: int = 0
    index: int = 0


@dataclass
class RegisterInfo:
    decl: ir.Instantiation
    name: str
    bitwidth: int
    size: int
    id: int = 0
    index: int = 0


@dataclass
class Resources:
    actions: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    counters: list = field(default_factory=list)    # indirect and direct
    registers: list = field(default_factory=list)
    _by_decl: dict = field(default_factory=dict)

    def of(self, decl):
        """The catalog entry of a declaration (table, action, instance)."""
        return self._by_decl.get(id(decl))

    def _add(self, info, decl):
        self._by_decl[id(decl)] = info


def qualified_name(decl: ir.Declaration, scope: Optional[ir.Declaration]) -> str:
    """P4Info name: ``Control.object`` for objects declared in a control,
    the bare name at top level; an ``@name(".x")`` is global."""
    name = decl.external_name
    if name.startswith("."):
        return name[1:]
    if scope is None:
        return name
    return f"{scope.external_name}.{name}"


def extern_type_name(inst: ir.Instantiation) -> str:
    return getattr(getattr(inst.type, "decl", None), "name", "")


def collect(bound: V1ModelProgram) -> Resources:
    res = Resources()
    no_action = bound.program.find("NoAction")
    scopes = [(None, d) for d in bound.program.declarations
              if isinstance(d, ir.Instantiation)]
    for control in bound.controls:
        scopes += [(control, d) for d in control.locals]
    for parser_local in bound.parser.locals:
        scopes.append((bound.parser, parser_local))

    for scope, decl in scopes:
        if isinstance(decl, ir.Instantiation):
            _collect_instance(res, scope, decl)
    for control in bound.controls:
        for decl in control.locals:
            if isinstance(decl, ir.TableDecl):
                _collect_table(res, control, decl, no_action)

    _assign_ids(res.actions, PREFIX_ACTION)
    _assign_ids(res.tables, PREFIX_TABLE)
    _assign_ids([c for c in res.counters if not c.direct], PREFIX_COUNTER)
    _assign_ids([c for c in res.counters if c.direct], PREFIX_DIRECT_COUNTER)
    _assign_ids(res.registers, PREFIX_REGISTER)
    for group in (res.actions, res.tables, res.counters, res.registers):
        for i, info in enumerate(group):
            info.index = i
    return res


def _collect_instance(res: Resources, scope, inst: ir.Instantiation) -> None:
    kind = extern_type_name(inst)
    if kind in _UNSUPPORTED_EXTERNS:
        raise CompileError.at(inst.src, f"unsupported: extern "
                              f"{_UNSUPPORTED_EXTERNS[kind]} ('{inst.name}')")
    name = qualified_name(inst, scope)
    if kind == "counter":
        size = _int_arg(inst, 0, "size")
        info = CounterInfo(inst, name, _enum_arg(inst, 1), size)
        res.counters.append(info)
    elif kind == "direct_counter":
        info = CounterInfo(inst, name, _enum_arg(inst, 0), 0, direct=True)
        res.counters.append(info)
    elif kind == "register":
        elem = inst.type_args[0] if inst.type_args else None
        if not isinstance(elem, T.TypeBits):
            raise CompileError.at(inst.src, f"unsupported: register of "
                                  f"{elem} (only bit<W>/int<W> cells)")
        if elem.width > 64:
            raise CompileError.at(inst.src, f"unsupported: register cells "
                                  f"wider than 64 bits ({elem})")
        info = RegisterInfo(inst, name, elem.width, _int_arg(inst, 0, "size"))
        res.registers.append(info)
    else:
        return
    res._add(info, inst)


def _collect_table(res: Resources, control, decl: ir.TableDecl, no_action) -> None:
    table = TableInfo(decl, control, qualified_name(decl, control))
    if decl.properties.get("implementation") is not None:
        raise CompileError.at(decl.src, "unsupported: table implementation "
                              "(action profiles / selectors)")
    for key in decl.keys:
        if key.match_kind not in ("exact", "lpm", "ternary", "range", "optional"):
            raise CompileError.at(key.src, f"unsupported: match kind "
                                  f"'{key.match_kind}'")
    if sum(1 for k in decl.keys if k.match_kind == "lpm") > 1:
        raise CompileError.at(decl.src, "a table may have at most one lpm key")
    for ref in decl.actions:
        table.actions.append(TableActionRef(
            _action_info(res, ref.action, control), ref,
            table_only=_has(ref.annotations, "tableonly"),
            default_only=_has(ref.annotations, "defaultonly")))
    default = decl.default_action.action if decl.default_action else no_action
    if default is not None and all(r.action.decl is not default for r in table.actions):
        # No default_action given: P4 makes it NoAction, which the control
        # plane may only use as the default.
        table.actions.append(TableActionRef(
            _action_info(res, default, None), ir.ActionRef(default),
            default_only=True))
    counters = decl.properties.get("counters")
    if counters is not None:
        inst = getattr(counters, "decl", None)
        info = res.of(inst)
        if not isinstance(info, CounterInfo) or not info.direct:
            raise CompileError.at(counters.src, "the 'counters' property "
                                  "must name a direct_counter instance")
        if info.table is not None:
            raise CompileError.at(counters.src, f"direct_counter "
                                  f"'{inst.name}' is already used by table "
                                  f"'{info.table.name}'")
        info.table = table
        info.size = table.size
        table.direct_counter = info
    for prop, value in decl.properties.items():
        if prop in ("meters", "support_timeout") and value is not None:
            if prop == "support_timeout" and isinstance(value, ir.BoolLiteral) \
                    and not value.value:
                continue
            raise CompileError.at(getattr(value, "src", decl.src),
                                  f"unsupported: table property '{prop}'")
    res.tables.append(table)
    res._add(table, decl)


def _action_info(res: Resources, decl: ir.ActionDecl, control) -> ActionInfo:
    info = res.of(decl)
    if info is None:
        declared_in_control = control is not None and any(
            d is decl for d in control.locals)
        scope = control if declared_in_control else None
        info = ActionInfo(decl, qualified_name(decl, scope))
        res.actions.append(info)
        res._add(info, decl)
    return info


def _has(annotations, name: str) -> bool:
    return any(a.name == name for a in annotations)


def _int_arg(inst: ir.Instantiation, i: int, what: str) -> int:
    arg = inst.args[i].value if i < len(inst.args) else None
    if not isinstance(arg, ir.IntLiteral):
        raise CompileError.at(inst.src, f"'{inst.name}': {what} must be a "
                              f"compile-time constant")
    return arg.value


def _enum_arg(inst: ir.Instantiation, i: int) -> str:
    arg = inst.args[i].value if i < len(inst.args) else None
    if isinstance(arg, ir.Member):
        return arg.name
    raise CompileError.at(inst.src, f"'{inst.name}': expected a CounterType")


def annotated_id(decl) -> Optional[int]:
    for a in getattr(decl, "annotations", []):
        if a.name == "id" and a.args:
            v = a.args[0]
            v = v.value if isinstance(v, ir.IntLiteral) else v
            try:
                return int(str(v), 0)
            except ValueError:
                raise CompileError.at(a.src, f"@id needs an integer, got {v!r}")
    return None


def _assign_ids(infos: list, prefix: int) -> None:
    """p4c's ids (see p4info_ids): @id first, then hashed names probed in
    sorted order; errors located at the declaration."""
    explicit = {}
    for info in infos:
        value = annotated_id(info.decl)
        if value is not None:
            if info.name in explicit:
                continue        # one object reached twice
            explicit[info.name] = value
    try:
        ids = assign_ids(prefix, [i.name for i in infos], explicit)
    except IdError as e:
        decl = next(i.decl for i in infos if i.name == e.name)
        raise CompileError.at(decl.src, str(e)) from None
    for info in infos:
        info.id = ids[info.name]


def key_field_name(key: ir.KeyElement) -> str:
    """P4Info match field name: ``@name`` or the key expression's text."""
    return key.name or expression_text(key.expr)


def key_field_width(key: ir.KeyElement) -> int:
    try:
        return T.width_of(key.expr.type)
    except ValueError:
        raise CompileError.at(key.src, f"unsupported: key of type "
                              f"{key.expr.type}")


def expression_text(e) -> str:
    """P4 source text of a simple expression (field paths, slices)."""
    if isinstance(e, ir.PathExpr):
        return e.name
    if isinstance(e, ir.Member):
        return f"{expression_text(e.expr)}.{e.name}"
    if isinstance(e, ir.ArrayIndex):
        return f"{expression_text(e.expr)}[{expression_text(e.index)}]"
    if isinstance(e, ir.Slice):
        return f"{expression_text(e.expr)}[{e.hi}:{e.lo}]"
    if isinstance(e, ir.IntLiteral):
        return str(e.value)
    if isinstance(e, ir.Cast):
        return f"({e.type}){expression_text(e.expr)}"
    if isinstance(e, ir.MethodCall):
        return f"{expression_text(e.target)}()"
    if isinstance(e, ir.TypeNameExpr):
        return e.name
    return type(e).__name__
