"""Malformed and mutated P4Runtime requests for test_request_fuzz.py, each
with the status code the P4Runtime specification (p4.org, v1.4/v1.5)
requires for it, valid requests to mix in, and a model of the state the
valid ones leave behind.

Every malformed update is a valid one with exactly one thing wrong, so the
specification names one status for it; where it names none (an unknown
table id, say) the server's choice is checked as it is, and the comment by
the case says so. Cases whose status depends on the state (INSERT of an
existing entry, MODIFY/DELETE of a missing one, a full table) are computed
against the model, and claim the model slots they depend on: a batch never
holds two claims on the same slot, except the duplicate-update groups,
whose outcome is checked against every order the server may have chosen
(spec, "Batching and Ordering of Updates": a batch may be processed in any
order, as if serially).

Spec sections cited below are those of P4Runtime-Spec.adoc.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Callable

import grpc
from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4data_pb2
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r

from p4rt_client import encode

C = {code.name: code.value[0] for code in grpc.StatusCode}
OK = C["OK"]
UNKNOWN = C["UNKNOWN"]
INVALID_ARGUMENT = C["INVALID_ARGUMENT"]
NOT_FOUND = C["NOT_FOUND"]
ALREADY_EXISTS = C["ALREADY_EXISTS"]
PERMISSION_DENIED = C["PERMISSION_DENIED"]
RESOURCE_EXHAUSTED = C["RESOURCE_EXHAUSTED"]
FAILED_PRECONDITION = C["FAILED_PRECONDITION"]
OUT_OF_RANGE = C["OUT_OF_RANGE"]
UNIMPLEMENTED = C["UNIMPLEMENTED"]
INTERNAL = C["INTERNAL"]
CODE_NAMES = {value: name for name, value in C.items()}

# t4p4s/runtime/include/t4p4s/control_api.h: sessions 0..32767
MAX_CLONE_SESSIONS = 32768
PORT_BITS = 9                    # v1model's egress port
SMALL_TABLE = 16                 # tables this small are filled to the brim
INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE

_KINDS = {p4info_pb2.MatchField.EXACT: "exact", p4info_pb2.MatchField.LPM: "lpm",
          p4info_pb2.MatchField.TERNARY: "ternary", p4info_pb2.MatchField.RANGE: "range",
          p4info_pb2.MatchField.OPTIONAL: "optional"}


# ---- the program, from its P4Info ---------------------------------------

@dataclass(frozen=True)
class FieldInfo:
    id: int
    name: str
    bitwidth: int
    kind: str


@dataclass
class ActionInfo:
    id: int
    name: str
    params: list[tuple[int, int]]          # (param id, bitwidth)


@dataclass
class TableInfo:
    id: int
    name: str
    fields: list[FieldInfo]
    entry_actions: list[int]               # allowed in entries
    default_only: list[int]                # @defaultonly
    default_actions: list[int]             # allowed as the default action
    size: int
    const_entries: bool
    const_default: bool
    needs_priority: bool
    direct_counter: bool

    def field(self, kind: str) -> FieldInfo | None:
        return next((f for f in self.fields if f.kind == kind), None)


@dataclass
class ArrayInfo:
    id: int
    size: int
    bitwidth: int = 0                      # registers


class Schema:
    def __init__(self, p4info: p4info_pb2.P4Info):
        self.p4info = p4info
        self.actions = {a.preamble.id: ActionInfo(
            a.preamble.id, a.preamble.name, [(p.id, p.bitwidth) for p in a.params])
            for a in p4info.actions}
        direct = {d.direct_table_id for d in p4info.direct_counters}
        self.tables = []
        for t in p4info.tables:
            refs = list(t.action_refs)
            self.tables.append(TableInfo(
                t.preamble.id, t.preamble.name,
                [FieldInfo(f.id, f.name, f.bitwidth, _KINDS[f.match_type])
                 for f in t.match_fields],
                [r.id for r in refs if r.scope != p4info_pb2.ActionRef.DEFAULT_ONLY],
                [r.id for r in refs if r.scope == p4info_pb2.ActionRef.DEFAULT_ONLY],
                [r.id for r in refs if r.scope != p4info_pb2.ActionRef.TABLE_ONLY],
                t.size, t.is_const_table, t.const_default_action_id != 0,
                any(f.match_type in (p4info_pb2.MatchField.TERNARY,
                                     p4info_pb2.MatchField.RANGE,
                                     p4info_pb2.MatchField.OPTIONAL)
                    for f in t.match_fields),
                t.preamble.id in direct))
        self.table = {t.id: t for t in self.tables}
        self.writable = [t for t in self.tables if not t.const_entries]
        self.const_tables = [t for t in self.tables if t.const_entries]
        self.counters = [ArrayInfo(c.preamble.id, c.size) for c in p4info.counters]
        self.direct_counter_ids = [c.preamble.id for c in p4info.direct_counters]
        self.registers = [ArrayInfo(r.preamble.id, r.size,
                                    r.type_spec.bitstring.bit.bitwidth)
                          for r in p4info.registers]
        self.known_ids = ({t.id for t in self.tables} | set(self.actions) |
                          {c.id for c in self.counters} | set(self.direct_counter_ids) |
                          {r.id for r in self.registers})


# ---- the model ----------------------------------------------------------

class IndexedDict:
    """A dict with O(1) random choice of a key."""

    def __init__(self):
        self.d: dict = {}
        self.keys: list = []
        self.pos: dict = {}

    def __len__(self):
        return len(self.d)

    def __contains__(self, key):
        return key in self.d

    def get(self, key):
        return self.d.get(key)

    def set(self, key, value):
        if value is None:
            self.remove(key)
            return
        if key not in self.d:
            self.pos[key] = len(self.keys)
            self.keys.append(key)
        self.d[key] = value

    def remove(self, key):
        if key not in self.d:
            return
        del self.d[key]
        i = self.pos.pop(key)
        last = self.keys.pop()
        if i < len(self.keys):
            self.keys[i] = last
            self.pos[last] = i

    def choice(self, rng: random.Random):
        return self.keys[rng.randrange(len(self.keys))] if self.keys else None

    def items(self):
        return self.d.items()


@dataclass
class Stored:
    """A table entry as a Read returns it (without counter_data), and its
    direct counter (packets, bytes), None for a table without one."""
    entry: p4r.TableEntry
    counter: tuple[int, int] | None


class Model:
    """What the valid writes left. Slots: ("entry", table id, key),
    ("default", table id), ("counter", counter id, index),
    ("register", register id, index), ("clone", session id)."""

    def __init__(self, schema: Schema):
        self.entries = {t.id: IndexedDict() for t in schema.tables}
        self.defaults: dict[int, p4r.TableEntry] = {}
        self.program_defaults: dict[int, p4r.TableEntry] = {}
        self.counters = {c.id: [(0, 0)] * c.size for c in schema.counters}
        self.registers = {r.id: [0] * r.size for r in schema.registers}
        self.clones = IndexedDict()

    def get(self, slot):
        kind = slot[0]
        if kind == "entry":
            return self.entries[slot[1]].get(slot[2])
        if kind == "default":
            return self.defaults[slot[1]]
        if kind == "counter":
            return self.counters[slot[1]][slot[2]]
        if kind == "register":
            return self.registers[slot[1]][slot[2]]
        return self.clones.get(slot[1])

    def set(self, slot, value):
        kind = slot[0]
        if kind == "entry":
            self.entries[slot[1]].set(slot[2], value)
        elif kind == "default":
            self.defaults[slot[1]] = value
        elif kind == "counter":
            self.counters[slot[1]][slot[2]] = value
        elif kind == "register":
            self.registers[slot[1]][slot[2]] = value
        else:
            self.clones.set(slot[1], value)

    # what Reads must return, as normalized bytes
    def table_entries(self) -> list[bytes]:
        return sorted(normalized(s.entry) for t in self.entries.values()
                      for _, s in t.items())

    def default_entries(self) -> list[bytes]:
        return sorted(normalized(e) for e in self.defaults.values())

    def direct_counter_entries(self) -> list[bytes]:
        return sorted(normalized(direct_counter_entity(s)) for t in self.entries.values()
                      for _, s in t.items() if s.counter is not None)

    def counter_entries(self) -> list[bytes]:
        return sorted(normalized(counter_entity(cid, i, v))
                      for cid, cells in self.counters.items() for i, v in enumerate(cells))

    def register_entries(self) -> list[bytes]:
        return sorted(normalized(register_entity(rid, i, v))
                      for rid, cells in self.registers.items() for i, v in enumerate(cells))

    def clone_entries(self) -> list[bytes]:
        return sorted(normalized(clone_entity(s, *v)) for s, v in self.clones.items())


def normalized(message) -> bytes:
    """Deterministic bytes of an entity or table entry, with the match
    fields of table entries in field-id order (the spec does not order
    them)."""
    if isinstance(message, p4r.Entity):
        which = message.WhichOneof("entity")
        if which == "table_entry" or which == "direct_counter_entry":
            message = p4r.Entity.FromString(message.SerializeToString())
            entry = (message.table_entry if which == "table_entry"
                     else message.direct_counter_entry.table_entry)
            _sort_match(entry)
    elif isinstance(message, p4r.TableEntry):
        if len(message.match) > 1:
            message = p4r.TableEntry.FromString(message.SerializeToString())
            _sort_match(message)
        return p4r.Entity(table_entry=message).SerializeToString(deterministic=True)
    return message.SerializeToString(deterministic=True)


def _sort_match(entry: p4r.TableEntry):
    if len(entry.match) > 1:
        fields = sorted(entry.match, key=lambda m: m.field_id)
        fields = [p4r.FieldMatch.FromString(m.SerializeToString()) for m in fields]
        del entry.match[:]
        entry.match.extend(fields)


def direct_counter_entity(stored: Stored) -> p4r.Entity:
    e = stored.entry
    key = p4r.TableEntry(table_id=e.table_id, match=e.match, priority=e.priority)
    return p4r.Entity(direct_counter_entry=p4r.DirectCounterEntry(
        table_entry=key, data=p4r.CounterData(packet_count=stored.counter[0],
                                              byte_count=stored.counter[1])))


def counter_entity(counter_id: int, index: int, value) -> p4r.Entity:
    return p4r.Entity(counter_entry=p4r.CounterEntry(
        counter_id=counter_id, index=p4r.Index(index=index),
        data=p4r.CounterData(packet_count=value[0], byte_count=value[1])))


def register_entity(register_id: int, index: int, value: int) -> p4r.Entity:
    return p4r.Entity(register_entry=p4r.RegisterEntry(
        register_id=register_id, index=p4r.Index(index=index),
        data=p4data_pb2.P4Data(bitstring=encode(value, 64))))


def clone_entity(session: int, port: int, truncate: int) -> p4r.Entity:
    entity = p4r.Entity()
    s = entity.packet_replication_engine_entry.clone_session_entry
    s.session_id, s.packet_length_bytes = session, truncate
    s.replicas.add(egress_port=port)
    return entity


# ---- cases --------------------------------------------------------------

Step = Callable[[list], tuple[int, list]]


@dataclass
class Case:
    """One update of a Write batch or one entity of a Read batch."""
    category: str
    message: object                     # p4r.Update or p4r.Entity
    expected: int
    slots: tuple = ()
    step: Step | None = None            # states of slots -> (code, new states)
    claims: tuple = ()
    valid: bool = False                 # a valid request mixed in
    read_back: tuple = ()               # reads: the entities it returns


@dataclass
class Group:
    """Updates of one batch on the same slot (duplicates)."""
    category: str
    cases: list[Case]


@dataclass
class Batch:
    items: list = field(default_factory=list)
    claimed: set = field(default_factory=set)
    inserts: dict = field(default_factory=dict)    # table id -> fresh keys inserted

    def free(self, *claims) -> bool:
        return not any(c in self.claimed for c in claims)

    def add(self, item):
        self.items.append(item)
        cases = item.cases if isinstance(item, Group) else [item]
        for case in cases:
            self.claimed.update(case.claims)

    def flat(self) -> list[Case]:
        out = []
        for item in self.items:
            out.extend(item.cases if isinstance(item, Group) else [item])
        return out


def outcomes(group: Group, model: Model) -> list[tuple[list[int], object]]:
    """Every (codes in batch order, final state) the group can end in, one
    per order of its updates (its cases share one slot)."""
    slot = group.cases[0].slots[0]
    results = []
    for order in itertools.permutations(range(len(group.cases))):
        state = model.get(slot)
        codes = [0] * len(group.cases)
        for i in order:
            codes[i], (state,) = group.cases[i].step([state])
        results.append((codes, state))
    return results


# ---- the generator ------------------------------------------------------

def prefix_mask(bitwidth: int, length: int) -> int:
    return ((1 << length) - 1) << (bitwidth - length)


class Mutator:
    """Builds cases against the model, with one random generator (seeded
    by the test) so that a run can be repeated."""

    def __init__(self, schema: Schema, model: Model, rng: random.Random):
        self.s = schema
        self.m = model
        self.rng = rng
        # how full each table is kept (well below its size, except the small
        # ones, which are filled to show RESOURCE_EXHAUSTED)
        self.target = {table.id: (table.size if table.size <= SMALL_TABLE
                                  else min(table.size // 4, 1500))
                       for table in schema.writable}

    # -- values ------------------------------------------------------------

    def unknown_id(self, prefix: int | None = None) -> int:
        while True:
            if prefix is not None and self.rng.random() < 0.7:
                v = prefix << 24 | self.rng.getrandbits(24)
            else:
                v = self.rng.getrandbits(32)
            if v and v not in self.s.known_ids:
                return v

    def unknown_small_id(self, known) -> int:
        while True:
            v = self.rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 255, self.rng.getrandbits(32)])
            if v not in known:
                return v

    def pad(self) -> int:
        """Leading zero bytes to add: valid (spec, "Bytestrings"), read back
        canonical."""
        return self.rng.choice((0, 0, 0, 1, 3))

    def too_wide(self, bitwidth: int) -> bytes:
        """A bytestring whose value does not fit in bitwidth bits:
        OUT_OF_RANGE (spec, "Bytestrings"); sometimes with leading zeros."""
        rng = self.rng
        if rng.random() < 0.4:
            wide = encode(1 << bitwidth | rng.getrandbits(bitwidth), bitwidth)
        else:    # more bytes than the width, the first one not 0
            n = (bitwidth + 7) // 8 + (1 if rng.random() < 0.6 else rng.randint(1, 30))
            wide = bytes([rng.randint(1, 255)]) + rng.randbytes(n - 1)
        return b"\x00" * self.pad() + wide

    # -- keys and entries --------------------------------------------------

    def random_key(self, table: TableInfo) -> tuple:
        rng = self.rng
        parts = []
        for f in table.fields:
            w = f.bitwidth
            if f.kind == "exact":
                parts.append((f.id, "exact", rng.getrandbits(w), None))
            elif f.kind == "lpm":
                length = rng.randint(1, w)
                parts.append((f.id, "lpm", rng.getrandbits(w) & prefix_mask(w, length),
                              length))
            elif f.kind == "ternary":
                if rng.random() < 0.25:
                    continue                            # don't care: omitted
                mask = rng.getrandbits(w) or 1
                parts.append((f.id, "ternary", rng.getrandbits(w) & mask, mask))
            elif f.kind == "range":
                low, high = sorted((rng.getrandbits(w), rng.getrandbits(w)))
                if (low, high) == (0, (1 << w) - 1):
                    high -= 1
                parts.append((f.id, "range", low, high))
            elif f.kind == "optional":
                if rng.random() < 0.3:
                    continue
                parts.append((f.id, "optional", rng.getrandbits(w), None))
        priority = rng.randint(1, 5000) if table.needs_priority else 0
        return tuple(parts), priority

    def fill_match(self, entry: p4r.TableEntry, table: TableInfo, key: tuple, pad: int = 0):
        parts, priority = key
        entry.priority = priority
        widths = {f.id: f.bitwidth for f in table.fields}
        zeros = b"\x00" * pad
        for fid, kind, a, b in parts:
            w = widths[fid]
            m = entry.match.add(field_id=fid)
            if kind == "exact":
                m.exact.value = zeros + encode(a, w)
            elif kind == "lpm":
                m.lpm.value, m.lpm.prefix_len = zeros + encode(a, w), b
            elif kind == "ternary":
                # the value is never longer than the mask (spec, "Match Format")
                m.ternary.value, m.ternary.mask = encode(a, w), zeros + encode(b, w)
            elif kind == "range":
                m.range.low, m.range.high = zeros + encode(a, w), zeros + encode(b, w)
            else:
                m.optional.value = zeros + encode(a, w)

    def random_action(self, table: TableInfo, default: bool = False) -> tuple:
        aid = self.rng.choice(table.default_actions if default else table.entry_actions)
        return aid, tuple((pid, self.rng.getrandbits(w))
                          for pid, w in self.s.actions[aid].params)

    def fill_action(self, action: p4r.Action, spec: tuple, pad: int = 0):
        aid, params = spec
        action.action_id = aid
        widths = dict(self.s.actions[aid].params)
        for pid, value in params:
            action.params.add(param_id=pid, value=b"\x00" * pad + encode(value, widths[pid]))

    def canonical_entry(self, table, key, action, metadata=b"", cookie=0) -> p4r.TableEntry:
        e = p4r.TableEntry(table_id=table.id, metadata=metadata, controller_metadata=cookie)
        self.fill_match(e, table, key)
        self.fill_action(e.action.action, action)
        return e

    def metadata(self) -> tuple[bytes, int]:
        r = self.rng.random()
        meta = self.rng.randbytes(self.rng.randint(1, 24)) if r < 0.3 else b""
        cookie = self.rng.getrandbits(64) if self.rng.random() < 0.2 else 0
        return meta, cookie

    def table_update(self, kind, table, key, action=None, pad=0, metadata=b"",
                     cookie=0) -> p4r.Update:
        u = p4r.Update(type=kind)
        e = u.entity.table_entry
        e.table_id = table.id
        self.fill_match(e, table, key, pad)
        if action is not None:
            self.fill_action(e.action.action, action, pad)
        if metadata:
            e.metadata = metadata
        if cookie:
            e.controller_metadata = cookie
        return u

    def fresh_key(self, table: TableInfo, batch: Batch):
        entries = self.m.entries[table.id]
        for _ in range(20):
            key = self.random_key(table)
            slot = ("entry", table.id, key)
            if key not in entries and batch.free(slot):
                return key, slot
        return None, None

    def existing_key(self, table: TableInfo, batch: Batch):
        entries = self.m.entries[table.id]
        for _ in range(8):
            key = entries.choice(self.rng)
            if key is None:
                return None, None
            slot = ("entry", table.id, key)
            if batch.free(slot):
                return key, slot
        return None, None

    def writable_table(self, batch: Batch, inserting: bool = False) -> TableInfo:
        while True:
            table = self.rng.choice(self.s.writable)
            if table.size <= SMALL_TABLE and not batch.free(("capacity", table.id)):
                continue
            if inserting and table.size > SMALL_TABLE and \
                    len(self.m.entries[table.id]) + batch.inserts.get(table.id, 0) \
                    >= table.size // 2:
                continue
            return table

    def claims_for(self, table: TableInfo, slot) -> tuple:
        if table.size <= SMALL_TABLE:
            return (slot, ("capacity", table.id))
        return (slot,)

    # -- steps: how an update changes its slot ------------------------------

    def insert_step(self, table: TableInfo, new: Stored) -> Step:
        entries = self.m.entries[table.id]

        def step(states):
            (current,) = states
            if current is not None:
                return ALREADY_EXISTS, [current]
            if table.size <= SMALL_TABLE and len(entries) >= table.size:
                return RESOURCE_EXHAUSTED, [None]
            return OK, [new]
        return step

    @staticmethod
    def modify_step(entry: p4r.TableEntry | None, counter=None) -> Step:
        """entry None: no action (only the direct counter changes, or
        nothing); counter None: the counter is left as it is."""
        def step(states):
            (current,) = states
            if current is None:
                return NOT_FOUND, [None]
            return OK, [Stored(entry if entry is not None else current.entry,
                               counter if counter is not None else current.counter)]
        return step

    @staticmethod
    def delete_step(states):
        (current,) = states
        return (NOT_FOUND, [None]) if current is None else (OK, [None])

    # -- valid table writes (and INSERT of existing, MODIFY/DELETE of missing)

    def table_op(self, batch: Batch, kind: int | None = None, existing: bool | None = None,
                 table: TableInfo | None = None) -> Case | None:
        rng = self.rng
        if table is None:
            table = self.writable_table(batch, inserting=True)
        entries = self.m.entries[table.id]
        if kind is None:
            fill = len(entries) / max(1, self.target[table.id])
            r = rng.random()
            p_insert = min(0.8, max(0.15, 0.85 - 0.5 * fill))
            kind = INSERT if r < p_insert else (MODIFY if r < p_insert + 0.45 * (1 - p_insert)
                                                else DELETE)
        if existing is None:
            existing = kind != INSERT
            if rng.random() < 0.12:
                existing = not existing            # the existence errors
        key, slot = (self.existing_key if existing else self.fresh_key)(table, batch)
        if key is None:
            return None
        pad = self.pad()
        counter = None
        if kind == DELETE:
            update = self.table_update(DELETE, table, key, pad=pad)
            step = self.delete_step
            category = "delete" if existing else "delete of a missing entry"
        else:
            action = self.random_action(table)
            meta, cookie = self.metadata()
            update = self.table_update(kind, table, key, action, pad, meta, cookie)
            canonical = self.canonical_entry(table, key, action, meta, cookie)
            if table.direct_counter and rng.random() < 0.3:
                counter = (rng.getrandbits(40), rng.getrandbits(48))
                update.entity.table_entry.counter_data.packet_count = counter[0]
                update.entity.table_entry.counter_data.byte_count = counter[1]
            if kind == INSERT:
                new = Stored(canonical, (counter or (0, 0)) if table.direct_counter else None)
                step = self.insert_step(table, new)
                category = "insert of an existing entry" if existing else "insert"
                if not existing:
                    batch.inserts[table.id] = batch.inserts.get(table.id, 0) + 1
            else:
                step = self.modify_step(canonical, counter)
                category = "modify" if existing else "modify of a missing entry"
        expected = step([self.m.get(slot)])[0]
        if expected == RESOURCE_EXHAUSTED:
            category = "insert into a full table"
        return Case(category, update, expected, (slot,), step, self.claims_for(table, slot),
                    valid=expected == OK)

    def table_modify_without_action(self, batch: Batch) -> Case | None:
        """MODIFY with no action: a no-op, or only the direct counter
        (spec, "Action Specification", "Direct Resources")."""
        table = self.writable_table(batch)
        existing = self.rng.random() < 0.85
        key, slot = (self.existing_key if existing else self.fresh_key)(table, batch)
        if key is None:
            return None
        update = self.table_update(MODIFY, table, key, pad=self.pad())
        counter = None
        if table.direct_counter and self.rng.random() < 0.7:
            counter = (self.rng.getrandbits(40), self.rng.getrandbits(40))
            update.entity.table_entry.counter_data.packet_count = counter[0]
            update.entity.table_entry.counter_data.byte_count = counter[1]
        step = self.modify_step(None, counter)
        expected = step([self.m.get(slot)])[0]
        return Case("modify without an action" if existing else "modify of a missing entry",
                    update, expected, (slot,), step, self.claims_for(table, slot),
                    valid=expected == OK)

    def delete_with_garbage(self, batch: Batch) -> Case | None:
        """A DELETE considers only the key: "All other fields must be
        ignored, even if they have nonsensical values (such as an invalid
        action field)" (spec, "TableEntry")."""
        table = self.writable_table(batch)
        existing = self.rng.random() < 0.8
        key, slot = (self.existing_key if existing else self.fresh_key)(table, batch)
        if key is None:
            return None
        update = self.table_update(DELETE, table, key, pad=self.pad())
        e = update.entity.table_entry
        what = self.rng.choice(("action", "params", "metadata", "counter", "meter"))
        if what == "action":
            e.action.action.action_id = self.unknown_id(0x01)
        elif what == "params":
            aid, _ = self.random_action(table)
            e.action.action.action_id = aid
            e.action.action.params.add(param_id=self.rng.getrandbits(32),
                                       value=self.rng.randbytes(9))
        elif what == "metadata":
            e.metadata, e.controller_metadata = self.rng.randbytes(30), 7
        elif what == "counter":     # on a table with no direct counter too
            e.counter_data.packet_count = -5
        else:                        # the target has no meters at all
            e.meter_config.cir = 100
        expected = self.delete_step([self.m.get(slot)])[0]
        return Case(f"delete ignoring its {what}", update, expected, (slot,),
                    self.delete_step, self.claims_for(table, slot), valid=expected == OK)

    # -- default entries ------------------------------------------------------

    def default_update(self, table: TableInfo, kind=MODIFY, action=None) -> p4r.Update:
        u = p4r.Update(type=kind)
        e = u.entity.table_entry
        e.table_id, e.is_default_action = table.id, True
        if action is not None:
            self.fill_action(e.action.action, action, self.pad())
        return u

    def default_op(self, batch: Batch) -> Case | None:
        """MODIFY of a default entry: a new action, or none (back to the
        program's) (spec, "Default Entry")."""
        table = self.rng.choice([t for t in self.s.tables if not t.const_default])
        slot = ("default", table.id)
        if not batch.free(slot):
            return None
        if self.rng.random() < 0.3:
            update, new = self.default_update(table), self.m.program_defaults[table.id]
        else:
            action = self.random_action(table, default=True)
            update = self.default_update(table, action=action)
            new = p4r.TableEntry(table_id=table.id, is_default_action=True)
            self.fill_action(new.action.action, action)
        return Case("modify of a default entry", update, OK, (slot,),
                    lambda states: (OK, [new]), (slot,), valid=True)

    # -- malformed table entries ---------------------------------------------

    def with_action(self, batch: Batch, defaults: bool = True):
        """A valid update that carries an action and whose status depends
        on nothing but that action: INSERT of a fresh key, MODIFY of an
        existing entry, or MODIFY of a (non-const) default entry. Returns
        (table, update, claims) or None."""
        r = self.rng.random()
        if defaults and r < 0.15:
            table = self.rng.choice([t for t in self.s.tables if not t.const_default])
            slot = ("default", table.id)
            if not batch.free(slot):
                return None
            return table, self.default_update(table, action=self.random_action(
                table, default=True)), (slot,)
        table = self.writable_table(batch)
        if r < 0.6:
            key, slot = self.fresh_key(table, batch)
            kind = INSERT
        else:
            key, slot = self.existing_key(table, batch)
            kind = MODIFY
        if key is None:
            return None
        update = self.table_update(kind, table, key, self.random_action(table), self.pad())
        return table, update, self.claims_for(table, slot)

    def any_table_update(self, batch: Batch):
        """A valid table update of any type on a random key, for mutations
        of the key (whose status then does not depend on the state)."""
        table = self.writable_table(batch)
        key = self.random_key(table)
        kind = self.rng.choice((INSERT, MODIFY, DELETE))
        action = self.random_action(table) if kind != DELETE else None
        return table, key, self.table_update(kind, table, key, action, self.pad())

    def bad_table_id(self, batch):
        # The spec names no code for an unknown table id; NOT_FOUND is
        # gRPC's for "some requested entity was not found" (server's choice).
        _, _, update = self.any_table_update(batch)
        update.entity.table_entry.table_id = self.unknown_id(0x02)
        return Case("unknown table id", update, NOT_FOUND)

    def bad_action_id(self, batch):
        # spec, "Action Specification": an action_id that is not one of the
        # table's actions is INVALID_ARGUMENT
        got = self.with_action(batch)
        if got is None:
            return None
        table, update, claims = got
        action = update.entity.table_entry.action.action
        if self.rng.random() < 0.5:
            action.action_id = self.unknown_id(0x01)
            category = "unknown action id"
        else:
            others = [a for a in self.s.actions if a not in table.entry_actions
                      and a not in table.default_only]
            del action.params[:]
            action.action_id = self.rng.choice(others)
            for pid, w in self.s.actions[action.action_id].params:
                action.params.add(param_id=pid, value=encode(self.rng.getrandbits(w), w))
            category = "action of another table"
        return Case(category, update, INVALID_ARGUMENT, claims=claims)

    def bad_params(self, batch):
        got = self.with_action(batch)
        if got is None:
            return None
        table, update, claims = got
        action = update.entity.table_entry.action.action
        info = self.s.actions[action.action_id]
        known = {pid for pid, _ in info.params}
        choices = ["extra"] + (["unknown", "missing", "twice", "wide", "empty"]
                               if info.params else [])
        what = self.rng.choice(choices)
        expected = INVALID_ARGUMENT        # spec, "Action Specification"
        if what == "extra":
            action.params.add(param_id=self.unknown_small_id(known),
                              value=encode(self.rng.getrandbits(8), 8))
            category = "extra action parameter"
        elif what == "unknown":
            p = self.rng.choice(action.params)
            p.param_id = self.unknown_small_id(known)
            category = "unknown parameter id"
        elif what == "missing":
            del action.params[self.rng.randrange(len(action.params))]
            category = "missing action parameter"
        elif what == "twice":
            action.params.add().CopyFrom(self.rng.choice(action.params))
            category = "action parameter given twice"
        else:
            # A value that does not fit, or an empty one: OUT_OF_RANGE
            # (spec, "Bytestrings": "When the server rejects a binary
            # string due to any of the previous criteria, it returns an
            # OUT_OF_RANGE error"; "Action Specification" says
            # INVALID_ARGUMENT for a value not in that format: the
            # bytestring section is the specific one, and what the server
            # and its other tests follow).
            i = self.rng.randrange(len(action.params))
            width = dict(info.params)[action.params[i].param_id]
            action.params[i].value = self.too_wide(width) if what == "wide" else b""
            expected = OUT_OF_RANGE
            category = ("action parameter wider than its bitwidth" if what == "wide"
                        else "empty action parameter")
        return Case(category, update, expected, claims=claims)

    def bad_match(self, batch):
        """One thing wrong in the key: the status cannot depend on the
        state. INVALID_ARGUMENT per spec, "Match Format", except values
        that do not fit or are empty: OUT_OF_RANGE ("Bytestrings")."""
        table, key, update = self.any_table_update(batch)
        e = update.entity.table_entry
        fields = {f.id: f for f in table.fields}
        known = set(fields)
        rng = self.rng
        present = list(e.match)
        kinds = ["unknown field", "field twice", "wrong kind", "kind unset", "priority"]
        if table.field("exact"):
            kinds.append("missing exact")
        by_kind = {fields[m.field_id].kind for m in present}
        kinds += ["too wide", "empty"] if by_kind & {"exact", "optional", "lpm", "ternary"} \
            else ["too wide"] if present else []
        if "lpm" in by_kind:
            kinds += ["lpm prefix", "lpm bits"]
        if "ternary" in by_kind:
            kinds += ["ternary bits", "ternary mask 0"]
        if "range" in by_kind:
            kinds += ["range order", "range everything"]
        what = rng.choice(kinds)

        def pick(*wanted):
            return rng.choice([m for m in e.match if fields[m.field_id].kind in wanted])

        expected, category = INVALID_ARGUMENT, what
        if what == "unknown field":
            m = e.match.add(field_id=self.unknown_small_id(known))
            m.exact.value = b"\x01"
            category = "unknown match field id"
        elif what == "field twice":
            if not present:
                return None
            e.match.add().CopyFrom(rng.choice(present))
            category = "match field given twice"
        elif what == "wrong kind":
            if not present:
                return None
            m = rng.choice(e.match)
            kind = fields[m.field_id].kind
            other = rng.choice([k for k in ("exact", "lpm", "ternary", "range", "optional")
                                if k != kind])
            value = b"\x01"
            m.ClearField(kind)
            if other == "exact":
                m.exact.value = value
            elif other == "lpm":
                m.lpm.value, m.lpm.prefix_len = b"\x00", 1
            elif other == "ternary":
                m.ternary.value, m.ternary.mask = value, value
            elif other == "range":
                m.range.low, m.range.high = b"\x00", value
            else:
                m.optional.value = value
            category = "match of the wrong kind"
        elif what == "kind unset":
            if not present:
                return None
            m = rng.choice(e.match)
            m.ClearField(fields[m.field_id].kind)
            category = "field match without a kind"
        elif what == "missing exact":
            exact = [i for i, m in enumerate(e.match) if fields[m.field_id].kind == "exact"]
            del e.match[rng.choice(exact)]
            category = "missing exact match field"
        elif what == "priority":
            # spec, "TableEntry": priority must be non-zero for ternary,
            # range and optional keys, zero otherwise
            e.priority = 0 if table.needs_priority else rng.randint(1, 1 << 30)
            category = "priority where none is allowed" if not table.needs_priority \
                else "missing priority"
        elif what == "too wide":
            expected = OUT_OF_RANGE
            m = rng.choice(e.match)
            f = fields[m.field_id]
            wide = self.too_wide(f.bitwidth)
            if f.kind == "exact":
                m.exact.value = wide
            elif f.kind == "optional":
                m.optional.value = wide
            elif f.kind == "lpm":
                m.lpm.value = wide
                m.lpm.prefix_len = f.bitwidth   # no bit is beyond the prefix
            elif f.kind == "ternary":
                # value and mask both too wide, the value within the mask
                m.ternary.value = wide
                m.ternary.mask = encode(int.from_bytes(wide, "big") |
                                        ((1 << f.bitwidth) - 1), f.bitwidth)
            else:
                m.range.high = wide             # low <= high still
            category = f"{f.kind} value wider than its field"
        elif what == "empty":
            expected = OUT_OF_RANGE
            m = pick("exact", "optional", "lpm", "ternary")
            f = fields[m.field_id]
            if f.kind == "exact":
                m.exact.value = b""
            elif f.kind == "optional":
                m.optional.value = b""
            elif f.kind == "lpm":
                m.lpm.value = b""
            else:
                m.ternary.value = b""
            category = "empty match value"
        elif what == "lpm prefix":
            m = pick("lpm")
            w = fields[m.field_id].bitwidth
            length = rng.choice((0, -1, -rng.randint(2, 1 << 30), w + 1, rng.randint(w + 2, 1 << 30)))
            m.lpm.prefix_len = length
            if length == 0:
                m.lpm.value = b"\x00"          # a don't care lpm must be omitted
            category = "lpm prefix length out of range"
        elif what == "lpm bits":
            m = pick("lpm")
            w = fields[m.field_id].bitwidth
            length = rng.randint(1, w - 1)
            value = rng.getrandbits(w) & prefix_mask(w, length)
            value |= 1 << rng.randrange(w - length)
            m.lpm.value, m.lpm.prefix_len = encode(value, w), length
            category = "lpm value beyond its prefix"
        elif what == "ternary bits":
            m = pick("ternary")
            w = fields[m.field_id].bitwidth
            mask = rng.getrandbits(w)
            while mask == (1 << w) - 1 or mask == 0:
                mask = rng.getrandbits(w)
            outside = ~mask & ((1 << w) - 1)
            value = (rng.getrandbits(w) & mask) | (1 << rng.choice(
                [i for i in range(w) if outside >> i & 1]))
            m.ternary.value, m.ternary.mask = encode(value, w), encode(mask, w)
            category = "ternary value outside its mask"
        elif what == "ternary mask 0":
            m = pick("ternary")
            m.ternary.value, m.ternary.mask = b"\x00", b"\x00" * rng.randint(1, 3)
            category = "ternary mask 0"
        elif what == "range order":
            m = pick("range")
            w = fields[m.field_id].bitwidth
            high = rng.getrandbits(w - 1)
            m.range.low, m.range.high = encode(high + rng.randint(1, 1 << (w - 1)), w), \
                encode(high, w)
            category = "range low > high"
        else:
            m = pick("range")
            w = fields[m.field_id].bitwidth
            m.range.low, m.range.high = b"\x00", encode((1 << w) - 1, w)
            category = "range covering everything"
        return Case(category, update, expected)

    def bad_entry(self, batch):
        """Entry-level errors, each INVALID_ARGUMENT or PERMISSION_DENIED as
        the spec says."""
        rng = self.rng
        what = rng.choice(("no action", "update type", "no entity", "profile", "is_const",
                           "idle timeout", "counter", "meter", "negative counter",
                           "defaultonly"))
        if what == "no action":
            # spec, "Action Specification": set for every INSERT
            table = self.writable_table(batch)
            key, slot = self.fresh_key(table, batch)
            if key is None:
                return None
            return Case("insert without an action", self.table_update(INSERT, table, key),
                        INVALID_ARGUMENT, claims=self.claims_for(table, slot))
        if what == "update type":
            _, _, update = self.any_table_update(batch)
            update.type = rng.choice((p4r.Update.UNSPECIFIED, 4, 17, rng.getrandbits(30)))
            return Case("update type not INSERT, MODIFY or DELETE", update, INVALID_ARGUMENT)
        if what == "no entity":
            # spec, "Wildcard Reads": the entity oneof must always be set
            return Case("update without an entity",
                        p4r.Update(type=rng.choice((INSERT, MODIFY, DELETE))),
                        INVALID_ARGUMENT)
        if what == "defaultonly":
            # spec, "Action Specification": a valid action out of its scope
            # is PERMISSION_DENIED
            tables = [t for t in self.s.writable if t.default_only]
            table = rng.choice(tables)
            if rng.random() < 0.5:
                key, slot = self.fresh_key(table, batch)
                kind = INSERT
            else:
                key, slot = self.existing_key(table, batch)
                kind = MODIFY
            if key is None:
                return None
            aid = rng.choice(table.default_only)
            action = (aid, tuple((pid, rng.getrandbits(w))
                                 for pid, w in self.s.actions[aid].params))
            return Case("@defaultonly action in an entry",
                        self.table_update(kind, table, key, action),
                        PERMISSION_DENIED, claims=self.claims_for(table, slot))
        if what == "negative counter":
            tables = [t for t in self.s.writable if t.direct_counter]
            table = rng.choice(tables)
            key, slot = self.fresh_key(table, batch)
            if key is None:
                return None
            update = self.table_update(INSERT, table, key, self.random_action(table))
            update.entity.table_entry.counter_data.packet_count = -rng.randint(1, 1 << 62)
            # The server's choice (the spec has no word on negative counts).
            return Case("negative direct counter value", update, INVALID_ARGUMENT,
                        claims=self.claims_for(table, slot))
        got = self.with_action(batch, defaults=what in ("idle timeout",))
        if what == "is_const":
            # spec, "TableEntry": is_const must be false in any INSERT,
            # MODIFY or DELETE, else INVALID_ARGUMENT; a DELETE of an existing
            # entry too
            if rng.random() < 0.3:
                table = self.writable_table(batch)
                key, slot = self.existing_key(table, batch)
                if key is None:
                    return None
                update = self.table_update(DELETE, table, key)
                claims = self.claims_for(table, slot)
            elif got is None or got[1].entity.table_entry.is_default_action:
                return None
            else:
                _, update, claims = got
            update.entity.table_entry.is_const = True
            return Case("is_const set in a write", update, INVALID_ARGUMENT, claims=claims)
        if got is None:
            return None
        table, update, claims = got
        e = update.entity.table_entry
        if what == "profile":
            # spec, "Action Specification": the oneof must match the
            # table's kind (these are direct tables)
            e.action.ClearField("action")
            r = rng.random()
            if r < 0.4:
                e.action.action_profile_member_id = rng.getrandbits(32) or 1
            elif r < 0.8:
                e.action.action_profile_group_id = rng.getrandbits(32) or 1
            else:
                a = e.action.action_profile_action_set.action_profile_actions.add(weight=1)
                self.fill_action(a.action, self.random_action(table))
            return Case("action profile member or group in a direct table", update,
                        INVALID_ARGUMENT, claims=claims)
        if what == "idle timeout":
            # spec, "Idle-timeout": no table here supports it
            if rng.random() < 0.6:
                e.idle_timeout_ns = rng.getrandbits(40) or 1
            else:
                e.time_since_last_hit.elapsed_ns = rng.getrandbits(20)
            return Case("idle timeout on a table without it", update, INVALID_ARGUMENT,
                        claims=claims)
        if what == "counter":
            if table.direct_counter:
                return None
            e.counter_data.packet_count = 1
            # spec, "Direct Resources": a direct resource configuration for
            # an action that does not execute one is INVALID_ARGUMENT
            return Case("counter data on a table without a direct counter", update,
                        INVALID_ARGUMENT, claims=claims)
        e.meter_config.cir, e.meter_config.pir = 1000, 2000
        return Case("meter config on a table without a direct meter", update,
                    INVALID_ARGUMENT, claims=claims)

    def bad_default(self, batch):
        """spec, "Default Entry": INSERT and DELETE are INVALID_ARGUMENT, as
        is a match or a priority; a const default is PERMISSION_DENIED."""
        rng = self.rng
        what = rng.choice(("insert", "delete", "match", "priority", "const"))
        if what == "const":
            table = rng.choice([t for t in self.s.tables if t.const_default])
            action = self.random_action(table, default=True) if rng.random() < 0.7 else None
            return Case("modify of a const default entry",
                        self.default_update(table, action=action), PERMISSION_DENIED)
        table = rng.choice([t for t in self.s.tables if not t.const_default])
        if what in ("insert", "delete"):
            update = self.default_update(
                table, INSERT if what == "insert" else DELETE,
                self.random_action(table, default=True) if what == "insert" else None)
            return Case(f"{what} of a default entry", update, INVALID_ARGUMENT)
        update = self.default_update(table, action=self.random_action(table, default=True))
        e = update.entity.table_entry
        if what == "match":
            self.fill_match(e, table, (self.random_key(table)[0] or (
                (table.fields[0].id, "exact", 1, None),), 0))
            if not e.match:
                return None
        else:
            e.priority = rng.randint(1, 1 << 30)
        return Case(f"default entry with a {what}", update, INVALID_ARGUMENT)

    def const_table_write(self, batch):
        """spec, "Constant Tables": any write but a MODIFY of direct
        resources is PERMISSION_DENIED; one with an action too."""
        table = self.rng.choice(self.s.const_tables)
        const_keys = list(self.m.entries[table.id].keys)
        kind = self.rng.choice((INSERT, MODIFY, DELETE))
        if kind == INSERT:
            while True:
                key = self.random_key(table)
                if key not in const_keys:
                    break
        else:
            key = self.rng.choice(const_keys)
        action = self.random_action(table) if kind != DELETE else None
        return Case("write to a const table", self.table_update(kind, table, key, action),
                    PERMISSION_DENIED)

    # -- duplicates ------------------------------------------------------------

    def duplicates(self, batch) -> Group | None:
        """2 or 3 updates of one entry (or clone session) in one batch."""
        rng = self.rng
        n = rng.choice((2, 2, 3))
        if rng.random() < 0.8:
            table = self.writable_table(batch, inserting=True)
            if table.size <= SMALL_TABLE:
                return None
            existing = rng.random() < 0.5
            key, slot = (self.existing_key if existing else self.fresh_key)(table, batch)
            if key is None:
                return None
            cases = []
            for _ in range(n):
                kind = rng.choice((INSERT, MODIFY, DELETE))
                if kind == DELETE:
                    cases.append(Case("duplicate", self.table_update(DELETE, table, key),
                                      -1, (slot,), self.delete_step, (slot,)))
                    continue
                action = self.random_action(table)
                meta, cookie = self.metadata()
                canonical = self.canonical_entry(table, key, action, meta, cookie)
                update = self.table_update(kind, table, key, action, self.pad(), meta, cookie)
                step = self.insert_step(table, Stored(canonical, (0, 0) if table.direct_counter
                                                      else None)) \
                    if kind == INSERT else self.modify_step(canonical)
                cases.append(Case("duplicate", update, -1, (slot,), step, (slot,)))
            batch.inserts[table.id] = batch.inserts.get(table.id, 0) + 1
            return Group("duplicate updates of one entry", cases)
        session = rng.randint(1, 64)
        slot = ("clone", session)
        if not batch.free(slot):
            return None
        cases = [self.clone_case(session, rng.choice((INSERT, MODIFY, DELETE)), slot)
                 for _ in range(n)]
        return Group("duplicate updates of one clone session", cases)

    # -- counters, registers, direct counters, clone sessions -------------------

    def counter_update(self, counter_id, index=None, data=None, kind=MODIFY) -> p4r.Update:
        u = p4r.Update(type=kind)
        c = u.entity.counter_entry
        c.counter_id = counter_id
        if index is not None:
            c.index.index = index
        if data is not None:
            c.data.packet_count, c.data.byte_count = data
        return u

    def cells(self, batch, kind: str, array):
        """One cell of a counter or register array, or (1 in 10) all of
        them (index unset): (index or None, slots), or None when the batch
        already writes one of them."""
        if self.rng.random() < 0.1:
            index, slots = None, tuple((kind, array.id, i) for i in range(array.size))
        else:
            index = self.rng.randrange(array.size)
            slots = ((kind, array.id, index),)
        return (index, slots) if batch.free(*slots) else None

    def index_out_of_range(self, size: int) -> tuple[int, int]:
        """An index below or beyond an array of `size` cells, and its status."""
        if self.rng.random() < 0.5:
            return -self.rng.randint(1, 1 << 62), INVALID_ARGUMENT
        return self.rng.randint(size, 1 << 62), OUT_OF_RANGE

    def bad_index(self, what: str, kind: str, make_update, array, value):
        """What counters and registers share (spec, "CounterEntry" and
        "RegisterEntry"): INSERT and DELETE are INVALID_ARGUMENT, a negative
        index INVALID_ARGUMENT, one beyond the array OUT_OF_RANGE."""
        rng = self.rng
        if what == "type":
            return Case(f"{kind} insert or delete", make_update(
                array.id, rng.randrange(array.size), value, rng.choice((INSERT, DELETE))),
                INVALID_ARGUMENT)
        if what == "negative index":
            return Case(f"negative {kind} index", make_update(
                array.id, -rng.randint(1, 1 << 62), value), INVALID_ARGUMENT)
        return Case(f"{kind} index beyond the array", make_update(
            array.id, rng.randint(array.size, 1 << 62), value), OUT_OF_RANGE)

    def counter_op(self, batch):
        """spec, "CounterEntry": MODIFY sets the cell (every cell when the
        index is unset); "the counter value is not modified if this
        Protobuf field [data] is not set"."""
        rng = self.rng
        counter = rng.choice(self.s.counters)
        r = rng.random()
        data = None if r < 0.2 else (rng.getrandbits(40), rng.getrandbits(50))
        cells = self.cells(batch, "counter", counter)
        if cells is None:
            return None
        index, slots = cells
        update = self.counter_update(counter.id, index, data)

        def step(states):
            return OK, [data if data is not None else s for s in states]
        return Case("counter modify" if data is not None else "counter modify without data",
                    update, OK, slots, step, slots, valid=True)

    def bad_counter(self, batch):
        rng = self.rng
        counter = rng.choice(self.s.counters)
        data = (rng.getrandbits(20), rng.getrandbits(20))
        what = rng.choice(("id", "direct id", "type", "negative index", "index", "value"))
        if what == "id":
            # the spec names no code for an unknown id (server: NOT_FOUND)
            return Case("unknown counter id",
                        self.counter_update(self.unknown_id(0x12), rng.randrange(8), data),
                        NOT_FOUND)
        if what == "direct id":
            return Case("direct counter id in a CounterEntry",
                        self.counter_update(rng.choice(self.s.direct_counter_ids), 0, data),
                        NOT_FOUND)
        if what in ("type", "negative index", "index"):
            return self.bad_index(what, "counter", self.counter_update, counter, data)
        # the server's choice: negative counts are not counts
        return Case("negative counter value", self.counter_update(
            counter.id, rng.randrange(counter.size),
            (-rng.randint(1, 1 << 62), 0) if rng.random() < 0.5 else (0, -1)),
            INVALID_ARGUMENT)

    def register_update(self, register_id, index=None, value=None, kind=MODIFY):
        u = p4r.Update(type=kind)
        r = u.entity.register_entry
        r.register_id = register_id
        if index is not None:
            r.index.index = index
        if value is not None:
            r.data.bitstring = value
        return u

    def register_op(self, batch):
        rng = self.rng
        reg = rng.choice(self.s.registers)
        value = rng.getrandbits(reg.bitwidth)
        cells = self.cells(batch, "register", reg)
        if cells is None:
            return None
        index, slots = cells
        update = self.register_update(reg.id, index,
                                      b"\x00" * self.pad() + encode(value, reg.bitwidth))
        return Case("register modify", update, OK, slots,
                    lambda states: (OK, [value] * len(states)), slots, valid=True)

    def bad_register(self, batch):
        """spec, "RegisterEntry": negative index INVALID_ARGUMENT, beyond the
        array OUT_OF_RANGE, data not of the type INVALID_ARGUMENT; a value
        that does not fit OUT_OF_RANGE ("Bytestrings")."""
        rng = self.rng
        reg = rng.choice(self.s.registers)
        value = encode(rng.getrandbits(reg.bitwidth), reg.bitwidth)
        what = rng.choice(("id", "type", "negative index", "index", "wide", "empty",
                           "not a bitstring"))
        if what == "id":
            return Case("unknown register id", self.register_update(
                self.unknown_id(0x16), 0, value), NOT_FOUND)
        if what in ("type", "negative index", "index"):
            return self.bad_index(what, "register", self.register_update, reg, value)
        if what == "wide":
            return Case("register value wider than its type", self.register_update(
                reg.id, rng.randrange(reg.size), self.too_wide(reg.bitwidth)), OUT_OF_RANGE)
        if what == "empty":
            return Case("empty register value", self.register_update(
                reg.id, rng.randrange(reg.size), b""), OUT_OF_RANGE)
        update = self.register_update(reg.id, rng.randrange(reg.size))
        r = rng.random()
        if r < 0.3:
            update.entity.register_entry.data.bool = True
        elif r < 0.6:
            update.entity.register_entry.data.struct.members.add(bitstring=b"\x01")
        elif r < 0.8:
            update.entity.register_entry.data.enum = "X"
        # else: no data at all
        return Case("register data not a bitstring", update, INVALID_ARGUMENT)

    def direct_counter_update(self, table, key, data=None, kind=MODIFY):
        u = p4r.Update(type=kind)
        d = u.entity.direct_counter_entry
        d.table_entry.table_id = table.id
        self.fill_match(d.table_entry, table, key, self.pad())
        if data is not None:
            d.data.packet_count, d.data.byte_count = data
        return u

    def direct_counter_op(self, batch):
        """spec, "DirectCounterEntry": MODIFY of an existing entry's cell
        (data unset: not modified); NOT_FOUND for a missing entry;
        INSERT and DELETE INVALID_ARGUMENT."""
        rng = self.rng
        table = rng.choice([t for t in self.s.writable if t.direct_counter])
        existing = rng.random() < 0.75
        key, slot = (self.existing_key if existing else self.fresh_key)(table, batch)
        if key is None:
            return None
        data = None if rng.random() < 0.2 else (rng.getrandbits(40), rng.getrandbits(48))
        if rng.random() < 0.1:
            return Case("direct counter insert or delete", self.direct_counter_update(
                table, key, data, rng.choice((INSERT, DELETE))), INVALID_ARGUMENT,
                claims=(slot,))
        step = self.modify_step(None, data)
        expected = step([self.m.get(slot)])[0]
        category = ("direct counter modify" + (" without data" if data is None else "")
                    if existing else "direct counter of a missing entry")
        return Case(category, self.direct_counter_update(table, key, data), expected,
                    (slot,), step, (slot,), valid=expected == OK)

    def bad_direct_counter(self, batch):
        rng = self.rng
        if rng.random() < 0.5:
            table = rng.choice([t for t in self.s.writable if not t.direct_counter])
            # the server's choice: the table has no such resource
            return Case("direct counter of a table without one", self.direct_counter_update(
                table, self.random_key(table), (1, 1)), INVALID_ARGUMENT)
        table = rng.choice([t for t in self.s.writable if t.direct_counter])
        update = self.direct_counter_update(table, self.random_key(table), (1, 1))
        update.entity.direct_counter_entry.table_entry.table_id = self.unknown_id(0x02)
        return Case("direct counter of an unknown table", update, NOT_FOUND)

    def clone_update(self, session, kind, port=None, truncate=0):
        u = p4r.Update(type=kind)
        s = u.entity.packet_replication_engine_entry.clone_session_entry
        s.session_id = session
        if port is not None:
            s.packet_length_bytes = truncate
            if self.rng.random() < 0.3:
                s.replicas.add(port=b"\x00" * self.pad() + encode(port, PORT_BITS))
            else:
                s.replicas.add(egress_port=port)
        return u

    def clone_case(self, session, kind, slot) -> Case:
        port, truncate = self.rng.getrandbits(PORT_BITS), self.rng.choice(
            (0, 0, self.rng.randint(1, 9000)))
        update = self.clone_update(session, kind, port if kind != DELETE else None, truncate)
        if kind == DELETE:
            step = self.delete_step
        elif kind == INSERT:
            def step(states):
                return (ALREADY_EXISTS, states) if states[0] is not None \
                    else (OK, [(port, truncate)])
        else:
            def step(states):
                return (NOT_FOUND, states) if states[0] is None else (OK, [(port, truncate)])
        return Case("clone session", update, step([self.m.get(slot)])[0], (slot,), step,
                    (slot,))

    def clone_op(self, batch):
        """spec, "CloneSessionEntry" with "Write RPC"'s INSERT/MODIFY/DELETE
        statuses."""
        rng = self.rng
        session = rng.randint(1, 64) if rng.random() < 0.9 else rng.randint(1, MAX_CLONE_SESSIONS - 1)
        slot = ("clone", session)
        if not batch.free(slot):
            return None
        exists = self.m.clones.get(session) is not None
        kind = rng.choice((INSERT, MODIFY, DELETE))
        case = self.clone_case(session, kind, slot)
        case.valid = case.expected == OK
        case.category = {(INSERT, False): "clone session insert",
                         (INSERT, True): "insert of an existing clone session",
                         (MODIFY, True): "clone session modify",
                         (MODIFY, False): "modify of a missing clone session",
                         (DELETE, True): "clone session delete",
                         (DELETE, False): "delete of a missing clone session"}[kind, exists]
        return case

    def bad_clone(self, batch):
        rng = self.rng
        what = rng.choice(("0", "large", "port", "port bytes", "length", "type", "instance",
                           "multicast"))
        session = rng.randint(100, 200)
        if what == "0":
            # spec, "CloneSessionEntry": session_id 0 is INVALID_ARGUMENT
            return Case("clone session 0", self.clone_update(
                0, rng.choice((INSERT, MODIFY, DELETE)), rng.getrandbits(PORT_BITS)),
                INVALID_ARGUMENT)
        if what == "large":
            # beyond the target's sessions: the server's choice
            return Case("clone session beyond the target's", self.clone_update(
                rng.randint(MAX_CLONE_SESSIONS, (1 << 32) - 1),
                rng.choice((INSERT, MODIFY, DELETE)), 1), OUT_OF_RANGE)
        if what == "type":
            return Case("clone session update type unset", self.clone_update(
                session, p4r.Update.UNSPECIFIED, 1), INVALID_ARGUMENT)
        if what == "multicast":
            kind = rng.choice((INSERT, MODIFY, DELETE))
            u = p4r.Update(type=kind)
            g = u.entity.packet_replication_engine_entry.multicast_group_entry
            g.multicast_group_id = rng.randint(1, 1000)
            g.replicas.add(egress_port=1)
            if kind == INSERT:
                # spec, "MulticastGroupEntry": (port, instance) pairs unique
                g.replicas.add(egress_port=1)
                return Case("multicast group with a replica twice", u, INVALID_ARGUMENT)
            # the fuzz creates no multicast group
            return Case("write of a missing multicast group", u, NOT_FOUND)
        update = self.clone_update(session, rng.choice((INSERT, MODIFY)), 1)
        s = update.entity.packet_replication_engine_entry.clone_session_entry
        if what == "port":
            s.replicas[0].egress_port = rng.randint(1 << PORT_BITS, (1 << 32) - 1)
            return Case("clone port wider than the port type", update, OUT_OF_RANGE)
        if what == "port bytes":
            s.replicas[0].port = self.too_wide(PORT_BITS)
            return Case("clone port bytes wider than the port type", update, OUT_OF_RANGE)
        if what == "length":
            # the server's choice: a negative length truncates nothing
            s.packet_length_bytes = -rng.randint(1, 1 << 31)
            return Case("negative clone packet length", update, INVALID_ARGUMENT)
        # spec, "CloneSessionEntry": an instance beyond what the target's
        # EgressInstance_t allows (here only 0) is INVALID_ARGUMENT
        s.replicas[0].instance = rng.randint(1, (1 << 32) - 1)
        return Case("clone replica instance not 0", update, INVALID_ARGUMENT)

    # -- reads -----------------------------------------------------------------

    def read_case(self, batch) -> Case | None:
        """One entity of a Read batch: a valid read of one entry, cell or
        session, or a bogus one."""
        rng = self.rng
        what = rng.choice(("entry", "entry", "cell", "clone", "direct", "table id",
                           "action filter", "all tables with a match", "bad match",
                           "counter id", "counter index", "register id", "register index",
                           "direct table", "direct missing", "no entity", "multicast"))
        if what == "entry":
            table = rng.choice(self.s.tables)
            entries = self.m.entries[table.id]
            key = entries.choice(rng) if rng.random() < 0.7 else None
            if key is None:
                key = self.random_key(table)
                if not key[0]:      # an all don't care key reads the whole table
                    return None
            q = p4r.Entity()
            self.fill_match(q.table_entry, table, key, self.pad())
            q.table_entry.table_id = table.id
            stored = entries.get(key)
            back = ()
            if stored is not None:
                back = stored.entry
                if stored.counter is not None and rng.random() < 0.5:
                    q.table_entry.counter_data.SetInParent()
                    back = p4r.TableEntry.FromString(back.SerializeToString())
                    back.counter_data.SetInParent()
                    back.counter_data.packet_count, back.counter_data.byte_count = \
                        stored.counter
                back = (p4r.Entity(table_entry=back),)
            return Case("read of one entry", q, OK, valid=True, read_back=back)
        if what == "cell":
            if rng.random() < 0.5:
                c = rng.choice(self.s.counters)
                i = rng.randrange(c.size)
                return Case("read of one counter cell", p4r.Entity(counter_entry=p4r.CounterEntry(
                    counter_id=c.id, index=p4r.Index(index=i))), OK, valid=True,
                    read_back=(counter_entity(c.id, i, self.m.counters[c.id][i]),))
            r = rng.choice(self.s.registers)
            i = rng.randrange(r.size)
            return Case("read of one register cell", p4r.Entity(
                register_entry=p4r.RegisterEntry(register_id=r.id, index=p4r.Index(index=i))),
                OK, valid=True, read_back=(register_entity(r.id, i, self.m.registers[r.id][i]),))
        if what == "clone":
            session = rng.randint(1, 64)
            q = p4r.Entity()
            q.packet_replication_engine_entry.clone_session_entry.session_id = session
            v = self.m.clones.get(session)
            return Case("read of one clone session", q, OK, valid=True,
                        read_back=(clone_entity(session, *v),) if v else ())
        if what == "direct":
            table = rng.choice([t for t in self.s.writable if t.direct_counter])
            key = self.m.entries[table.id].choice(rng)
            if key is None:
                return None
            q = p4r.Entity()
            d = q.direct_counter_entry.table_entry
            d.table_id = table.id
            self.fill_match(d, table, key, self.pad())
            return Case("read of one direct counter", q, OK, valid=True,
                        read_back=(direct_counter_entity(self.m.entries[table.id].get(key)),))
        if what == "direct missing":
            # spec, "DirectCounterEntry": "If no such entry is found, the
            # server returns the error code NOT_FOUND"
            table = rng.choice([t for t in self.s.writable if t.direct_counter])
            key = self.random_key(table)
            if key in self.m.entries[table.id]:
                return None
            q = p4r.Entity()
            d = q.direct_counter_entry.table_entry
            d.table_id = table.id
            self.fill_match(d, table, key)
            return Case("read of the direct counter of a missing entry", q, NOT_FOUND)
        if what == "table id":
            return Case("read of an unknown table", p4r.Entity(table_entry=p4r.TableEntry(
                table_id=self.unknown_id(0x02))), NOT_FOUND)
        if what == "action filter":
            table = rng.choice(self.s.tables)
            q = p4r.Entity(table_entry=p4r.TableEntry(table_id=table.id))
            q.table_entry.action.action.action_id = self.unknown_id(0x01)
            return Case("read filtered on an unknown action", q, NOT_FOUND)
        if what == "all tables with a match":
            # spec, "Wildcard Reads" (TableEntry): with table_id 0 "no other
            # filter can be used" (server: INVALID_ARGUMENT for a match or
            # is_default_action)
            q = p4r.Entity(table_entry=p4r.TableEntry())
            if rng.random() < 0.5:
                q.table_entry.match.add(field_id=1).exact.value = b"\x01"
            else:
                q.table_entry.is_default_action = True
            return Case("read of all tables with a match", q, INVALID_ARGUMENT)
        if what == "bad match":
            case = self.bad_match(Batch())
            if case is None or case.category == "missing priority":
                return None      # priority 0 in a read means any priority
            q = p4r.Entity(table_entry=case.message.entity.table_entry)
            q.table_entry.ClearField("action")
            q.table_entry.ClearField("metadata")
            q.table_entry.ClearField("controller_metadata")
            if not q.table_entry.match:
                return None      # no match at all reads the whole table
            return Case("read with a bad match: " + case.category, q, case.expected)
        if what == "counter id":
            return Case("read of an unknown counter", p4r.Entity(counter_entry=p4r.CounterEntry(
                counter_id=self.unknown_id(0x12))), NOT_FOUND)
        if what == "counter index":
            c = rng.choice(self.s.counters)
            i, code = self.index_out_of_range(c.size)
            return Case("read of a counter index out of range", p4r.Entity(
                counter_entry=p4r.CounterEntry(counter_id=c.id, index=p4r.Index(index=i))), code)
        if what == "register id":
            return Case("read of an unknown register", p4r.Entity(
                register_entry=p4r.RegisterEntry(register_id=self.unknown_id(0x16))), NOT_FOUND)
        if what == "register index":
            r = rng.choice(self.s.registers)
            i, code = self.index_out_of_range(r.size)
            return Case("read of a register index out of range", p4r.Entity(
                register_entry=p4r.RegisterEntry(register_id=r.id, index=p4r.Index(index=i))),
                code)
        if what == "direct table":
            if rng.random() < 0.5:
                table = rng.choice([t for t in self.s.tables if not t.direct_counter])
                return Case("read of direct counters of a table without", p4r.Entity(
                    direct_counter_entry=p4r.DirectCounterEntry(
                        table_entry=p4r.TableEntry(table_id=table.id))), INVALID_ARGUMENT)
            return Case("read of direct counters of an unknown table", p4r.Entity(
                direct_counter_entry=p4r.DirectCounterEntry(
                    table_entry=p4r.TableEntry(table_id=self.unknown_id(0x02)))), NOT_FOUND)
        if what == "no entity":
            # spec, "Wildcard Reads": "The entity oneof field in the Entity
            # message must always be set, or the server must return an
            # INVALID_ARGUMENT error"
            return Case("read of an empty entity", p4r.Entity(), INVALID_ARGUMENT)
        q = p4r.Entity()
        q.packet_replication_engine_entry.multicast_group_entry.multicast_group_id = \
            rng.randint(1, (1 << 16) - 1)
        return Case("read of a multicast group (the fuzz creates none)", q, NOT_FOUND)

    # -- batches -----------------------------------------------------------------

    def write_generators(self):
        """(weight, generator): valid ones about a quarter of the updates."""
        return [
            (14, self.table_op), (2, self.table_modify_without_action),
            (2, self.delete_with_garbage), (2, self.default_op), (2, self.counter_op),
            (2, self.register_op), (2, self.direct_counter_op), (3, self.clone_op),
            (4, self.duplicates),
            (4, self.bad_table_id), (8, self.bad_action_id), (10, self.bad_params),
            (24, self.bad_match), (12, self.bad_entry), (4, self.bad_default),
            (3, self.const_table_write), (4, self.bad_counter), (4, self.bad_register),
            (2, self.bad_direct_counter), (4, self.bad_clone),
        ]

    def write_batch(self, size: int) -> Batch:
        gens = self.write_generators()
        weights = list(itertools.accumulate(w for w, _ in gens))
        funcs = [g for _, g in gens]
        batch = Batch()
        n = 0
        while n < size:
            gen = self.rng.choices(funcs, cum_weights=weights)[0]
            item = gen(batch)
            if item is None:
                continue
            batch.add(item)
            n += len(item.cases) if isinstance(item, Group) else 1
        return batch

    def failing_batch(self, size: int) -> Batch:
        """A batch none of whose updates may succeed: it changes nothing,
        whatever else is in flight."""
        gens = self.write_generators()
        weights = list(itertools.accumulate(w for w, _ in gens))
        funcs = [g for _, g in gens]
        batch = Batch()
        while len(batch.items) < size:
            item = self.rng.choices(funcs, cum_weights=weights)[0](batch)
            if item is not None and not isinstance(item, Group) and item.expected != OK:
                batch.add(item)
        return batch

    def read_batch(self, size: int) -> list[Case]:
        cases = []
        while len(cases) < size:
            case = self.read_case(None)
            if case is not None:
                cases.append(case)
        return cases


# ---- table entries back to keys (to resynchronize the model) ----------------

def key_of(schema: Schema, entry: p4r.TableEntry) -> tuple:
    table = schema.table[entry.table_id]
    kinds = {f.id: f.kind for f in table.fields}
    parts = []
    for m in sorted(entry.match, key=lambda m: m.field_id):
        kind = kinds[m.field_id]
        v = lambda b: int.from_bytes(b, "big")  # noqa: E731
        if kind == "exact":
            parts.append((m.field_id, kind, v(m.exact.value), None))
        elif kind == "lpm":
            parts.append((m.field_id, kind, v(m.lpm.value), m.lpm.prefix_len))
        elif kind == "ternary":
            parts.append((m.field_id, kind, v(m.ternary.value), v(m.ternary.mask)))
        elif kind == "range":
            parts.append((m.field_id, kind, v(m.range.low), v(m.range.high)))
        else:
            parts.append((m.field_id, kind, v(m.optional.value), None))
    return tuple(parts), entry.priority


# ---- whole RPCs: raw bytes, sessions, pipeline configs ---------------------

SERVICE = "/p4.v1.P4Runtime/"
REQUEST_TYPES = {
    "Write": p4r.WriteRequest,
    "Read": p4r.ReadRequest,
    "SetForwardingPipelineConfig": p4r.SetForwardingPipelineConfigRequest,
    "GetForwardingPipelineConfig": p4r.GetForwardingPipelineConfigRequest,
    "Capabilities": p4r.CapabilitiesRequest,
}


@dataclass
class CallCase:
    """One RPC sent as raw bytes, answered with one status."""
    category: str
    method: str
    body: bytes
    expected: int
    valid: bool = False


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _length_delimited(field_number: int, payload: bytes) -> bytes:
    return _varint(field_number << 3 | 2) + _varint(len(payload)) + payload


def _varint_at(data: bytes, i: int):
    """(value, next index, bytes used), or None when truncated."""
    value = shift = used = 0
    while i < len(data):
        byte = data[i]
        value |= (byte & 0x7F) << shift
        i, shift, used = i + 1, shift + 7, used + 1
        if not byte & 0x80:
            return value, i, used
    return None


def parsers_may_disagree(data: bytes, descriptor, depth: int = 0) -> bool:
    """Whether the bytes hold a wire-format construct on which protobuf
    parsers are known to differ, so that the server's C++ parser and this
    test's (upb) may not agree on whether the request parses: a tag varint
    longer than 5 bytes or above 2^32 - 1 (upb refuses it, C++ takes it), a
    varint longer than 10 bytes or overflowing 64 bits, groups, a string
    that is not UTF-8. Such bodies are not sent (they test the parsers, not
    the server). Walks the fields the descriptor knows, recursively."""
    i = 0
    fields = descriptor.fields_by_number
    while i < len(data):
        read = _varint_at(data, i)
        if read is None:
            return False                  # cut short: no parser takes it
        tag, i, used = read
        if used > 5 or tag > 0xFFFFFFFF:
            return True
        wire, number = tag & 7, tag >> 3
        if wire == 0:
            read = _varint_at(data, i)
            if read is None:
                return False
            _, i, used = read
            if used > 10 or (used == 10 and data[i - 1] > 1):
                return True
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            read = _varint_at(data, i)
            if read is None:
                return False
            length, i, used = read
            if used > 5 or i + length > len(data):
                return used > 5
            payload = data[i:i + length]
            i += length
            field = fields.get(number)
            if field is not None and field.message_type is not None and depth < 50:
                if parsers_may_disagree(payload, field.message_type, depth + 1):
                    return True
            elif field is not None and field.type == field.TYPE_STRING:
                try:
                    payload.decode("utf-8")
                except UnicodeDecodeError:
                    return True
        elif wire in (3, 4):
            return True
        else:
            return False                  # wire types 6, 7: no parser takes them
    return False


class Sessions:
    """Whole-RPC cases for a target of device id `device`, whose primary
    (role "") has election id `primary`; `backup` is a live backup's."""

    def __init__(self, mutator: Mutator, device: int, primary: int, backup: int):
        self.mut = mutator
        self.rng = mutator.rng
        self.device = device
        self.primary = primary
        self.backup = backup
        self.p4info = mutator.s.p4info

    def other_device(self) -> int:
        while True:
            d = self.rng.choice((0, self.device + 1, self.rng.getrandbits(64)))
            if d != self.device:
                return d

    def unknown_role(self) -> str:
        return self.rng.choice(("r", "backup", "x" * self.rng.randint(1, 300),
                                "role-%d" % self.rng.getrandbits(32)))

    def not_primary(self) -> tuple[int, int]:
        """(high, low) of an election id that is not the primary's: unset
        (no arbitration), lower, the backup's, or higher (no stream)."""
        return self.rng.choice(((0, 0), (0, self.rng.randint(1, self.primary - 1)),
                                (0, self.backup), (0, self.primary + self.rng.randint(1, 9)),
                                (self.rng.randint(1, 5), self.primary)))

    def valid_updates(self) -> list[p4r.Update]:
        """Updates that would change the state: none may be applied."""
        batch = Batch()
        updates = []
        while len(updates) < self.rng.randint(1, 8):
            case = self.mut.table_op(batch, kind=INSERT, existing=False)
            if case is not None:
                updates.append(case.message)
        return updates

    # -- what a request that parses must be answered, before any update or
    #    entity is looked at (None: it would be processed: not sent)

    def write_status(self, r: p4r.WriteRequest) -> int | None:
        # spec, "Write RPC": device_id or role unknown NOT_FOUND; not the
        # primary PERMISSION_DENIED; "Batch Atomicity": an atomicity the
        # server does not support UNIMPLEMENTED
        if r.device_id != self.device or r.role:
            return NOT_FOUND
        if (r.election_id.high, r.election_id.low) != (0, self.primary):
            return PERMISSION_DENIED
        if r.atomicity in (p4r.WriteRequest.ROLLBACK_ON_ERROR,
                           p4r.WriteRequest.DATAPLANE_ATOMIC):
            return UNIMPLEMENTED
        return None

    def read_status(self, r: p4r.ReadRequest) -> int | None:
        return NOT_FOUND if r.device_id != self.device else None

    def set_status(self, r: p4r.SetForwardingPipelineConfigRequest) -> int | None:
        if r.device_id != self.device or r.role:
            return NOT_FOUND
        if (r.election_id.high, r.election_id.low) != (0, self.primary):
            return PERMISSION_DENIED
        return None

    def status_of(self, method: str, body: bytes) -> int | None:
        """The status of a raw body: INTERNAL when it does not parse (gRPC's
        code for "Error parsing request proto", doc/statuscodes.md; the
        P4Runtime spec has none), else as the request's fields say."""
        if parsers_may_disagree(body, REQUEST_TYPES[method].DESCRIPTOR):
            return None
        try:
            request = REQUEST_TYPES[method].FromString(body)
        except Exception:            # google.protobuf.message.DecodeError
            return INTERNAL
        if method == "Write":
            return self.write_status(request)
        if method == "Read":
            return self.read_status(request)
        if method == "SetForwardingPipelineConfig":
            return self.set_status(request)
        if method == "GetForwardingPipelineConfig":
            return NOT_FOUND if request.device_id != self.device else OK
        return OK

    def write_request(self, updates=None, **fields) -> p4r.WriteRequest:
        fields.setdefault("device_id", self.device)
        r = p4r.WriteRequest(**fields)
        if "election_id" not in fields:
            r.election_id.low = self.primary
        r.updates.extend(self.valid_updates() if updates is None else updates)
        return r

    # -- generators

    def rejected_write(self) -> CallCase:
        """Valid updates in a Write that must be refused as a whole."""
        rng = self.rng
        what = rng.choice(("device", "role", "election", "election", "atomicity"))
        if what == "device":
            r = self.write_request(device_id=self.other_device())
            category = "write to another device id"
        elif what == "role":
            r = self.write_request(role=self.unknown_role())
            category = "write for a role nobody arbitrated"
        elif what == "election":
            high, low = self.not_primary()
            r = self.write_request(election_id=p4r.Uint128(high=high, low=low))
            category = {(0, 0): "write without arbitration",
                        (0, self.backup): "write from a backup"}.get(
                (high, low), "write with a lower election id" if (high, low) < (0, self.primary)
                else "write with a higher election id than the primary's")
        else:
            r = self.write_request(atomicity=rng.choice((p4r.WriteRequest.ROLLBACK_ON_ERROR,
                                                         p4r.WriteRequest.DATAPLANE_ATOMIC)))
            category = "write with an unsupported atomicity"
        body = r.SerializeToString()
        return CallCase(category, "Write", body, self.status_of("Write", body))

    def rejected_read(self) -> CallCase:
        r = p4r.ReadRequest(device_id=self.other_device())
        r.entities.add().table_entry.SetInParent()
        if self.rng.random() < 0.5:
            r.entities.add().counter_entry.SetInParent()
        return CallCase("read of another device id", "Read", r.SerializeToString(), NOT_FOUND)

    def mutated_p4info(self) -> p4info_pb2.P4Info:
        p = p4info_pb2.P4Info()
        p.CopyFrom(self.p4info)
        rng = self.rng
        what = rng.randrange(9)
        if what == 0:
            rng.choice(p.tables).size += rng.randint(1, 100)
        elif what == 1:
            rng.choice(p.actions).preamble.name += "_x"
        elif what == 2:
            a = rng.choice([a for a in p.actions if a.params])
            del a.params[rng.randrange(len(a.params))]
        elif what == 3:
            t = rng.choice(p.tables)
            t.match_fields.add(id=len(t.match_fields) + 1, name="extra", bitwidth=8,
                               match_type=p4info_pb2.MatchField.EXACT)
        elif what == 4:
            f = rng.choice(rng.choice(p.tables).match_fields)
            f.bitwidth += rng.randint(1, 64)
        elif what == 5:
            rng.choice(p.tables).preamble.id ^= 1 << rng.randrange(24)
        elif what == 6:
            del p.tables[rng.randrange(len(p.tables))]
        elif what == 7:
            p.pkg_info.name = "another"
        else:
            p.registers[0].size += 1
        return p

    def pipeline(self) -> CallCase | None:
        """spec, "SetForwardingPipelineConfig RPC"."""
        rng = self.rng
        Req = p4r.SetForwardingPipelineConfigRequest
        r = Req(device_id=self.device)
        r.election_id.low = self.primary
        what = rng.choice(("mutated", "mutated", "no config", "action", "commit config",
                           "commit unsaved", "device", "role", "election", "bytes",
                           "verify"))
        expected = INVALID_ARGUMENT
        if what == "mutated":
            # a config the target cannot realize: INVALID_ARGUMENT
            r.action = rng.choice((Req.VERIFY, Req.VERIFY_AND_SAVE, Req.VERIFY_AND_COMMIT,
                                   Req.RECONCILE_AND_COMMIT))
            r.config.p4info.CopyFrom(self.mutated_p4info())
            category = "pipeline config with another P4Info"
        elif what == "no config":
            r.action = rng.choice((Req.VERIFY, Req.VERIFY_AND_SAVE, Req.VERIFY_AND_COMMIT,
                                   Req.RECONCILE_AND_COMMIT))
            if rng.random() < 0.5:
                r.config.p4_device_config = b"blob"     # a config without a P4Info
            category = "pipeline config without a P4Info"
        elif what == "action":
            r.action = rng.choice((Req.UNSPECIFIED, 6, 99, rng.getrandbits(30)))
            r.config.p4info.CopyFrom(self.p4info)
            category = "pipeline config with an unknown action"
        elif what == "commit config":
            r.action = Req.COMMIT
            r.config.p4info.CopyFrom(self.p4info)
            category = "pipeline COMMIT with a config"
        elif what == "commit unsaved":
            # nothing is ever saved by this test: NOT_FOUND
            r.action = Req.COMMIT
            expected = NOT_FOUND
            category = "pipeline COMMIT with nothing saved"
        elif what in ("device", "role", "election"):
            # a valid config that would reset the state
            r.action = Req.VERIFY_AND_COMMIT
            r.config.p4info.CopyFrom(self.p4info)
            if what == "device":
                r.device_id = self.other_device()
                category = "pipeline config for another device id"
            elif what == "role":
                r.role = self.unknown_role()
                category = "pipeline config for a role nobody arbitrated"
            else:
                high, low = self.not_primary()
                r.election_id.high, r.election_id.low = high, low
                category = "pipeline config from a non-primary"
            expected = NOT_FOUND if what != "election" else PERMISSION_DENIED
        elif what == "bytes":
            # the P4Info field of the config as random bytes: unparsable
            # (INTERNAL) or a P4Info that is not the target's
            # (INVALID_ARGUMENT)
            r.action = Req.VERIFY
            junk = rng.randbytes(rng.randint(1, 200))
            if rng.random() < 0.5:     # a real P4Info with its end cut or bytes changed
                raw = bytearray(self.p4info.SerializeToString())
                for _ in range(rng.randint(1, 4)):
                    raw[rng.randrange(len(raw))] = rng.getrandbits(8)
                junk = bytes(raw[:rng.randint(1, len(raw))])
            body = r.SerializeToString() + _length_delimited(5, _length_delimited(1, junk))
            if parsers_may_disagree(body, Req.DESCRIPTOR):
                return None
            parsed = self.status_of("SetForwardingPipelineConfig", body)
            if parsed is None:
                try:
                    same = Req.FromString(body).config.p4info == self.p4info
                except Exception:
                    same = False
                parsed = OK if same else INVALID_ARGUMENT
            return CallCase("pipeline config with P4Info bytes mangled",
                            "SetForwardingPipelineConfig", body, parsed)
        else:
            r.action = Req.VERIFY
            r.config.p4info.CopyFrom(self.p4info)
            return CallCase("pipeline VERIFY of the target's own P4Info",
                            "SetForwardingPipelineConfig", r.SerializeToString(), OK,
                            valid=True)
        return CallCase(category, "SetForwardingPipelineConfig", r.SerializeToString(),
                        expected)

    def raw(self) -> CallCase | None:
        """Random bytes, or a valid request's bytes mangled, as the body of
        any unary RPC."""
        rng = self.rng
        method = rng.choice(("Write", "Write", "Read", "SetForwardingPipelineConfig",
                             "GetForwardingPipelineConfig", "Capabilities"))
        if rng.random() < 0.5:
            body = rng.randbytes(rng.randint(0, 300))
            category = "random bytes as a request"
        else:
            body = bytearray(self.valid_body(method))
            for _ in range(rng.randint(1, 6)):
                r = rng.random()
                if r < 0.5 and body:
                    body[rng.randrange(len(body))] ^= 1 << rng.randrange(8)
                elif r < 0.7 and body:
                    del body[rng.randrange(len(body)):]
                elif r < 0.85:
                    i = rng.randint(0, len(body))
                    body[i:i] = rng.randbytes(rng.randint(1, 8))
                elif body:
                    body[rng.randrange(len(body))] = 0xFF
            body = bytes(body)
            category = "a request's bytes mangled"
        expected = self.status_of(method, body)
        if expected is None:
            return None             # it would be processed for real
        return CallCase(f"{category} ({method})", method, body, expected)

    def valid_body(self, method: str) -> bytes:
        if method == "Write":
            return self.write_request().SerializeToString()
        if method == "Read":
            r = p4r.ReadRequest(device_id=self.device)
            r.entities.add().table_entry.table_id = self.rng.choice(self.mut.s.tables).id
            return r.SerializeToString()
        if method == "SetForwardingPipelineConfig":
            r = p4r.SetForwardingPipelineConfigRequest(
                device_id=self.device, action=p4r.SetForwardingPipelineConfigRequest.VERIFY)
            r.election_id.low = self.primary
            r.config.p4info.CopyFrom(self.p4info)
            return r.SerializeToString()
        if method == "GetForwardingPipelineConfig":
            return p4r.GetForwardingPipelineConfigRequest(
                device_id=self.device, response_type=1).SerializeToString()
        return b""

    def call_cases(self, n: int) -> list[CallCase]:
        gens = ((8, self.raw), (3, self.rejected_write), (1, self.rejected_read),
                (3, self.pipeline))
        weights = list(itertools.accumulate(w for w, _ in gens))
        out = []
        while len(out) < n:
            case = self.rng.choices([g for _, g in gens], cum_weights=weights)[0]()
            if case is not None:
                out.append(case)
        return out

    # -- StreamChannel: each scenario on a stream of its own

    def arbitration(self, election: int | None, device: int | None = None,
                    role: str | None = None, config: bool = False) -> bytes:
        u = p4r.MasterArbitrationUpdate(device_id=self.device if device is None else device)
        if election is not None:
            u.election_id.low = election
        if role is not None:
            u.role.name = role
        if config:
            u.role.config.Pack(p4r.Uint128(low=1))
        return p4r.StreamMessageRequest(arbitration=u).SerializeToString()

    def backup_id(self) -> int:
        while True:
            e = self.rng.randint(1, self.primary - 1)
            if e != self.backup:
                return e

    def stream_scenario(self) -> tuple[str, list[bytes], int, int]:
        """(category, messages, arbitration responses expected before the
        end (each ALREADY_EXISTS: a backup), the stream's end status), per
        spec, "Rules for Handling MasterArbitrationUpdate Messages"."""
        rng = self.rng
        what = rng.randrange(8)
        if what == 0:
            return ("stream: first arbitration for another device",
                    [self.arbitration(self.backup_id(), device=self.other_device())],
                    0, NOT_FOUND)
        if what == 1:
            return ("stream: the primary's election id again",
                    [self.arbitration(self.primary)], 0, INVALID_ARGUMENT)
        if what == 2:
            return ("stream: a role config the target does not know",
                    [self.arbitration(self.backup_id(), config=True)], 0, INVALID_ARGUMENT)
        backup = self.arbitration(self.backup_id())
        if what == 3:
            return ("stream: a backup changes its device id",
                    [backup, self.arbitration(self.backup_id(), device=self.other_device())],
                    1, FAILED_PRECONDITION)
        if what == 4:
            return ("stream: a backup changes its role",
                    [backup, self.arbitration(self.backup_id(), role=self.unknown_role())],
                    1, FAILED_PRECONDITION)
        if what == 5:
            return ("stream: a backup takes the primary's election id",
                    [backup, self.arbitration(self.primary)], 1, INVALID_ARGUMENT)
        # The server's choice, documented with StreamChannel: a message that
        # does not parse ends the stream with INVALID_ARGUMENT.
        garbage = rng.choice((b"\x0f", b"\x0a\x05ab", b"\xff" * rng.randint(11, 40)))
        if what == 6:
            return ("stream: bytes that do not parse", [garbage], 0, INVALID_ARGUMENT)
        return ("stream: a backup sends bytes that do not parse", [backup, garbage], 1,
                INVALID_ARGUMENT)
