"""Turn parsed STF commands into control-protocol objects (JSON lines the
compiled executable serves on its --control socket), resolving the names
written in the STF (bare, partial or fully qualified) against the P4Info.

A name resolves to the one P4Info name that equals it or ends with it at a
`.` boundary (`t`, `MyIngress.t` and `hdr.eth.dst`, `eth.dst`, `dst`);
no match or several matches is an error naming the STF line.

Priorities follow P4Runtime: larger wins. An `add` without a priority on a
table that needs one (ternary, range or optional keys) gets one below every
earlier such entry, so entries written earlier win, as in p4c's STF tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf import text_format

from t4p4s.stf import parser as stf
from t4p4s.stf.multicast import MulticastModel
from t4p4s.stf.parser import StfError

_EXACT, _LPM, _TERNARY, _RANGE, _OPTIONAL = 2, 3, 4, 5, 6
_NEEDS_PRIORITY = {_TERNARY, _RANGE, _OPTIONAL}
_AUTO_PRIORITY_START = 1 << 20
_JSON_SAFE_INT = 1 << 53


def _number(value: int):
    """JSON numbers lose precision above 2**53: send wide values as hex strings."""
    return value if value < _JSON_SAFE_INT else hex(value)


@dataclass
class MatchFieldInfo:
    name: str
    bitwidth: int
    match_type: int


@dataclass
class TableInfo:
    name: str
    fields: list[MatchFieldInfo]
    actions: list[str]

    @property
    def needs_priority(self) -> bool:
        return any(f.match_type in _NEEDS_PRIORITY for f in self.fields)


@dataclass
class P4InfoNames:
    tables: dict[str, TableInfo] = field(default_factory=dict)
    actions: dict[str, list[tuple[str, int]]] = field(default_factory=dict)   # name -> params
    registers: dict[str, int] = field(default_factory=dict)                   # name -> bitwidth
    counters: set[str] = field(default_factory=set)
    direct_counters: dict[str, str] = field(default_factory=dict)             # table -> counter

    @classmethod
    def load(cls, p4info_text_path) -> "P4InfoNames":
        from finsy.proto.p4.config.v1 import p4info_pb2
        info = text_format.Parse(Path(p4info_text_path).read_text(), p4info_pb2.P4Info())
        names = cls()
        action_names = {a.preamble.id: a.preamble.name for a in info.actions}
        table_names = {t.preamble.id: t.preamble.name for t in info.tables}
        for action in info.actions:
            names.actions[action.preamble.name] = [(p.name, p.bitwidth) for p in action.params]
        for table in info.tables:
            names.tables[table.preamble.name] = TableInfo(
                table.preamble.name,
                [MatchFieldInfo(m.name, m.bitwidth, m.match_type) for m in table.match_fields],
                [action_names[ref.id] for ref in table.action_refs if ref.id in action_names])
        for register in info.registers:
            names.registers[register.preamble.name] = register.type_spec.bitstring.bit.bitwidth
        names.counters = {c.preamble.name for c in info.counters}
        for counter in info.direct_counters:
            names.direct_counters[table_names.get(counter.direct_table_id, "")] = counter.preamble.name
        return names


def resolve_name(written: str, candidates, what: str, source: str) -> str:
    candidates = list(candidates)
    if written in candidates:
        return written
    matches = [c for c in candidates if c.endswith("." + written)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        known = ", ".join(sorted(candidates)) or "none"
        raise StfError(f"{source}: error: no {what} named '{written}' (known: {known})")
    raise StfError(f"{source}: error: {what} name '{written}' is ambiguous: "
                   f"{', '.join(sorted(matches))}")


class Resolver:
    """Stateful over one STF file: it numbers automatic priorities and
    keeps the multicast nodes and groups (so commands resolve in order)."""

    def __init__(self, names: P4InfoNames):
        self.names = names
        self._next_priority: dict[str, int] = {}
        self.multicast = MulticastModel()

    def _fit(self, value: int, bits: int, what: str, source: str) -> int:
        if value < 0:
            if value < -(1 << (bits - 1)):
                raise StfError(f"{source}: error: {what} {value} does not fit in {bits} bits")
            return value + (1 << bits)        # two's complement of a signed field
        if value >= 1 << bits:
            raise StfError(f"{source}: error: {what} {value:#x} does not fit in {bits} bits")
        return value

    def _match_value(self, info: MatchFieldInfo, key, source: str):
        """The control-protocol form of one key, or None for a wildcard."""
        full = (1 << info.bitwidth) - 1
        what = f"key '{info.name}'"
        fit = lambda v: self._fit(v, info.bitwidth, what, source)  # noqa: E731
        wrong = StfError(f"{source}: error: {what} is matched {_KIND_NAMES[info.match_type]}; "
                         f"'{type(key).__name__.lower()}' values do not apply")
        kind = info.match_type
        if kind == _EXACT:
            if isinstance(key, stf.Ternary) and fit(key.mask) == full:
                key = stf.Exact(key.value)
            if not isinstance(key, stf.Exact):
                raise wrong
            return _number(fit(key.value))
        if kind == _TERNARY:
            if isinstance(key, stf.Exact):
                key = stf.Ternary(key.value, full)
            if not isinstance(key, stf.Ternary):
                raise wrong
            mask = fit(key.mask)
            if mask == 0:
                return None
            return {"value": _number(fit(key.value) & mask), "mask": _number(mask)}
        if kind == _LPM:
            if isinstance(key, stf.Exact):
                key = stf.Lpm(key.value, info.bitwidth)
            if not isinstance(key, stf.Lpm):
                raise wrong
            if not 0 <= key.prefix_len <= info.bitwidth:
                raise StfError(f"{source}: error: {what}: prefix length {key.prefix_len} "
                               f"is not in 0..{info.bitwidth}")
            if key.prefix_len == 0:
                return None
            host_bits = info.bitwidth - key.prefix_len
            return {"value": _number(fit(key.value) >> host_bits << host_bits),
                    "prefix_len": key.prefix_len}
        if kind == _RANGE:
            if isinstance(key, stf.Exact):
                key = stf.Range(key.value, key.value)
            if not isinstance(key, stf.Range):
                raise wrong
            low, high = fit(key.low), fit(key.high)
            if low > high:
                raise StfError(f"{source}: error: {what}: empty range {low}..{high}")
            if low == 0 and high == full:
                return None
            return {"low": _number(low), "high": _number(high)}
        if kind == _OPTIONAL:
            if isinstance(key, stf.Ternary):
                if fit(key.mask) == 0:
                    return None
                if key.mask != full:
                    raise StfError(f"{source}: error: {what} is optional: "
                                   "mask must be all ones or zero")
                key = stf.Exact(key.value)
            if not isinstance(key, stf.Exact):
                raise wrong
            return _number(fit(key.value))
        raise StfError(f"{source}: error: {what} has a match kind the STF runner does not know")

    def table(self, written: str, source: str) -> TableInfo:
        return self.names.tables[resolve_name(written, self.names.tables, "table", source)]

    def match(self, table: TableInfo, keys, source: str) -> dict:
        by_name = {f.name: f for f in table.fields}
        match = {}
        for written, key in keys:
            name = resolve_name(written, by_name, f"match field of table '{table.name}'", source)
            if name in match:
                raise StfError(f"{source}: error: match field '{name}' given twice")
            value = self._match_value(by_name[name], key, source)
            if value is not None:
                match[name] = value
        missing = [f.name for f in table.fields if f.match_type == _EXACT and f.name not in match]
        if missing:
            raise StfError(f"{source}: error: exact match field(s) {', '.join(missing)} "
                           f"of table '{table.name}' not given")
        return match

    def action(self, table: TableInfo, call: stf.ActionCall, source: str) -> tuple[str, dict]:
        name = resolve_name(call.name, table.actions, f"action of table '{table.name}'", source)
        declared = dict(self.names.actions[name])
        params = {}
        for written, value in call.params:
            param = resolve_name(written, declared, f"parameter of action '{name}'", source)
            params[param] = _number(self._fit(value, declared[param], f"parameter '{param}'", source))
        missing = [p for p in declared if p not in params]
        if missing:
            raise StfError(f"{source}: error: action '{name}' needs parameter(s) {', '.join(missing)}")
        return name, params

    def priority(self, table: TableInfo, written: int | None, source: str):
        if not table.needs_priority:
            if written is not None:
                raise StfError(f"{source}: error: table '{table.name}' has no ternary, range or "
                               "optional key, so its entries take no priority")
            return None
        if written is not None:
            if written <= 0:
                raise StfError(f"{source}: error: priority must be positive (larger wins)")
            return written
        priority = self._next_priority.get(table.name, _AUTO_PRIORITY_START)
        self._next_priority[table.name] = priority - 1
        return priority

    def control_command(self, command: stf.Command) -> dict:
        """The control-protocol object for an STF command that changes or
        reads state (not packet, expect, wait); for a multicast command, a
        list of them (maybe empty)."""
        src = command.source
        if isinstance(command, stf.TableAdd):
            table = self.table(command.table, src)
            request = {"cmd": "table_add", "table": table.name,
                       "match": self.match(table, command.keys, src)}
            priority = self.priority(table, command.priority, src)
            if priority is not None:
                request["priority"] = priority
            request["action"], request["params"] = self.action(table, command.action, src)
            return request
        if isinstance(command, stf.SetDefault):
            table = self.table(command.table, src)
            action, params = self.action(table, command.action, src)
            return {"cmd": "table_set_default", "table": table.name, "action": action,
                    "params": params}
        if isinstance(command, stf.Multicast):
            # a list: one command changes every group its node is in
            return self.multicast.requests(command.op, command.args, command.ports, src)
        if isinstance(command, stf.MirroringAdd):
            return {"cmd": "clone_session_add", "session": command.session, "port": command.port,
                    "truncate": command.truncate}
        if isinstance(command, (stf.RegisterWrite, stf.RegisterRead)):
            name = resolve_name(command.register, self.names.registers, "register", src)
            request = {"cmd": "register_read", "register": name, "index": command.index}
            if isinstance(command, stf.RegisterWrite):
                value = self._fit(command.value, self.names.registers[name], "register value", src)
                request.update(cmd="register_write", value=_number(value))
            return request
        if isinstance(command, stf.CheckCounter):
            name = resolve_name(command.counter, self.names.counters, "counter", src)
            return {"cmd": "counter_read", "counter": name, "index": command.index}
        if isinstance(command, stf.CheckDirectCounter):
            table = self.table(command.table, src)
            if table.name not in self.names.direct_counters:
                raise StfError(f"{src}: error: table '{table.name}' has no direct counter")
            return {"cmd": "table_read", "table": table.name}
        raise TypeError(f"not a control command: {command!r}")

    def direct_counter_entry(self, command: stf.CheckDirectCounter) -> tuple[dict, int | None]:
        """The match (and priority) that identifies the entry to check."""
        table = self.table(command.table, command.source)
        priority = command.priority if table.needs_priority else None
        return self.match(table, command.keys, command.source), priority


_KIND_NAMES = {_EXACT: "exact", _LPM: "lpm", _TERNARY: "ternary", _RANGE: "range",
               _OPTIONAL: "optional"}
